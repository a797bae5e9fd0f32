/* SPDX-License-Identifier: GPL-2.0 */
#ifndef WEFT_SELFTEST_ULP_H
#define WEFT_SELFTEST_ULP_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN
int weft_selftest_ulp_start(void);
void weft_selftest_ulp_stop(void);
/* Progress, for the module's read-only parameters. */
extern uint64_t weft_ulp_messages, weft_ulp_errors;
WEFT_C_END

#endif
