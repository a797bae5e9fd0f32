// SPDX-License-Identifier: GPL-2.0
/* weft_selftest_conn_events: module glue of the ConnEvents race check (conn_events.cpp). */
#include <linux/module.h>

int weft_selftest_conn_events_run(void);

static int __init weft_selftest_conn_events_init(void)
{
	return weft_selftest_conn_events_run();
}

static void __exit weft_selftest_conn_events_exit(void)
{
}

module_init(weft_selftest_conn_events_init);
module_exit(weft_selftest_conn_events_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft test only: the QP event glue's teardown race at load");
