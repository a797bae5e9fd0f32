// SPDX-License-Identifier: GPL-2.0
/*
 * weft_bench: measures the soft fabric (RC SEND/WRITE/READ bandwidth, SEND
 * ping-pong latency, the memcpy ceiling) between weft0 and weft1 and prints
 * one "WEFT-BENCH" line per figure, then "WEFT-BENCH done <errno>".  Not a
 * test: nothing is asserted; tests/bench/run.sh turns the lines into a
 * table.  The run happens in a work item, not in the init call, so that a
 * minute-long measurement is not one long finit_module system call.
 */
#include <linux/module.h>
#include <linux/printk.h>
#include <linux/workqueue.h>

#include "bench.h"

static unsigned int seconds_per_point = 1;
module_param(seconds_per_point, uint, 0444);
MODULE_PARM_DESC(seconds_per_point, "approximate run time of each measurement");

static char *only;
module_param(only, charp, 0444);
MODULE_PARM_DESC(only, "one measurement: lat or write64k (to profile), or memcpy (the copy ceiling alone)");

static void weft_bench_work(struct work_struct *w)
{
	int r = only ? weft_bench_one(only, seconds_per_point) : weft_bench_run(seconds_per_point);

	pr_info("weft_bench: WEFT-BENCH done %d\n", r);
}

static DECLARE_WORK(weft_bench, weft_bench_work);

static int __init weft_bench_init(void)
{
	/* Unbound: a busy-polling item on a per-CPU pool would starve the QP engines. */
	queue_work(system_unbound_wq, &weft_bench);
	return 0;
}

static void __exit weft_bench_exit(void)
{
	cancel_work_sync(&weft_bench);
}

module_init(weft_bench_init);
module_exit(weft_bench_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft InfiniBand stack: data path benchmark (not loaded by tests)");
