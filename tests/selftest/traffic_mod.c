// SPDX-License-Identifier: GPL-2.0
/* weft_selftest_traffic: module glue of the test traffic source (traffic.cpp). */
#include <linux/module.h>

int weft_selftest_traffic_run(void);

static int __init weft_selftest_traffic_init(void)
{
	return weft_selftest_traffic_run();
}

static void __exit weft_selftest_traffic_exit(void)
{
}

module_init(weft_selftest_traffic_init);
module_exit(weft_selftest_traffic_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft test only: move RC and UD traffic between weft0 and weft1 at load");
