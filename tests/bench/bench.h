/* SPDX-License-Identifier: GPL-2.0 */
#ifndef WEFT_BENCH_H
#define WEFT_BENCH_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN
/* Run every measurement; 0 or -errno if the fabric could not be set up. */
int weft_bench_run(unsigned int seconds_per_point);
/* One measurement only, for profiling: "lat" (64 B SEND ping-pong) or "write64k". */
int weft_bench_one(const char *what, unsigned int seconds);
WEFT_C_END

#endif
