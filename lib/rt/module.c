// SPDX-License-Identifier: GPL-2.0
/*
 * weft_rt: the kernel C++ runtime every Weft module links against.  It holds
 * the C shims (memory, locks, waiting, work, logging) and the C++ ABI
 * (operator new/delete), exported for the other modules; the C++ templates
 * themselves are header-only (include/weft/).
 */
#include <linux/module.h>

static int __init weft_rt_init(void)
{
	pr_info("weft_rt: Weft kernel C++ runtime loaded\n");
	return 0;
}

static void __exit weft_rt_exit(void)
{
	pr_info("weft_rt: unloaded\n");
}

module_init(weft_rt_init);
module_exit(weft_rt_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft InfiniBand stack: kernel C++ runtime");
MODULE_AUTHOR("The Weft developers");
