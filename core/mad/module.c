// SPDX-License-Identifier: GPL-2.0
/*
 * weft_mad: the MAD layer (IBA Vol 1 ch. 13-14): the MAD service with its
 * agents (service.cpp), each CA port's SMI on QP0 with directed-route
 * processing (smi.cpp) and GSI on QP1 (port_mad.cpp, qp_transport.cpp),
 * created for every CA by a verbs client (client.cpp).
 */
#include <linux/module.h>

#include "mad_module.h"

static int __init weft_mad_init(void)
{
	return weft_mad_client_init();
}

static void __exit weft_mad_exit(void)
{
	weft_mad_client_exit();
}

module_init(weft_mad_init);
module_exit(weft_mad_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft: MAD layer (MAD service, SMI on QP0, GSI on QP1)");
