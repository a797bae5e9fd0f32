// SPDX-License-Identifier: GPL-2.0
/* weft_selftest_sa: module glue of the SA client check (sa.cpp). */
#include <linux/module.h>

int weft_selftest_sa_run(void);

static int __init weft_selftest_sa_init(void)
{
	return weft_selftest_sa_run();
}

static void __exit weft_selftest_sa_exit(void)
{
}

module_init(weft_selftest_sa_init);
module_exit(weft_selftest_sa_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft test only: the kernel SA client against OpenSM's SA at load");
