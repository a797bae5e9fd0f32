// SPDX-License-Identifier: GPL-2.0
/*
 * weft_mad: the MAD layer (IBA Vol 1 ch. 13-14).  So far the directed-route
 * processing of the subnet management interface (smi.cpp) and the MAD
 * service with its agents (service.cpp), carried over a port's QP1
 * (qp_transport.cpp); QP0, the SMA and the PMA build on them (issue 4).
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
MODULE_DESCRIPTION("Weft: MAD layer (directed-route SMI and MAD service so far)");
