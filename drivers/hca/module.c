// SPDX-License-Identifier: GPL-2.0
/*
 * weft_hca: the soft HCA driver.  So far it holds the IBA packet layer
 * (opcode table, parse/build); devices, the switch and the fabric follow.
 */
#include <linux/module.h>

static int __init weft_hca_init(void)
{
	return 0;
}

static void __exit weft_hca_exit(void)
{
}

module_init(weft_hca_init);
module_exit(weft_hca_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft InfiniBand stack: soft HCA (IBA packet layer)");
