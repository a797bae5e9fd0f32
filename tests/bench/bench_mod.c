// SPDX-License-Identifier: GPL-2.0
/*
 * weft_bench: measures the soft fabric at load (RC SEND/WRITE/READ
 * bandwidth, SEND ping-pong latency, the memcpy ceiling) between weft0 and
 * weft1 and prints one "WEFT-BENCH" line per figure.  Not a test: nothing
 * is asserted; tests/bench/run.sh turns the lines into a table.
 */
#include <linux/module.h>

#include "bench.h"

static unsigned int seconds_per_point = 1;
module_param(seconds_per_point, uint, 0444);
MODULE_PARM_DESC(seconds_per_point, "approximate run time of each measurement");

static int __init weft_bench_init(void)
{
	return weft_bench_run(seconds_per_point);
}

static void __exit weft_bench_exit(void)
{
}

module_init(weft_bench_init);
module_exit(weft_bench_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft InfiniBand stack: data path benchmark (not loaded by tests)");
