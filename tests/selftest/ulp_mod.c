// SPDX-License-Identifier: GPL-2.0
/*
 * weft_selftest_ulp: module glue of the test ULP (ulp.cpp), which keeps RC
 * traffic running between weft0 and weft1 so that tests can remove devices
 * and unload modules under traffic.  /sys/module/weft_selftest_ulp/
 * parameters/{messages,errors} show its progress.
 */
#include <linux/module.h>

#include "ulp.h"

module_param_named(messages, weft_ulp_messages, ullong, 0444);
MODULE_PARM_DESC(messages, "messages exchanged so far (read only)");
module_param_named(errors, weft_ulp_errors, ullong, 0444);
MODULE_PARM_DESC(errors, "failed or corrupted exchanges (read only)");

static int __init weft_selftest_ulp_init(void)
{
	return weft_selftest_ulp_start();
}

static void __exit weft_selftest_ulp_exit(void)
{
	weft_selftest_ulp_stop();
}

module_init(weft_selftest_ulp_init);
module_exit(weft_selftest_ulp_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft test only: a verbs client keeping RC traffic running");
