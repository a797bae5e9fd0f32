// SPDX-License-Identifier: GPL-2.0
/*
 * weft_mad: the MAD layer (IBA Vol 1 ch. 13-14).  So far the directed-route
 * processing of the subnet management interface (smi.cpp); the MAD
 * service, GSI/SMI QPs, SMA and PMA build on it (issue 4).
 */
#include <linux/module.h>

static int __init weft_mad_init(void)
{
	return 0;
}

static void __exit weft_mad_exit(void)
{
}

module_init(weft_mad_init);
module_exit(weft_mad_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft: MAD layer (directed-route SMI so far)");
