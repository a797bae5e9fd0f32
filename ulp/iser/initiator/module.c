// SPDX-License-Identifier: GPL-2.0
/*
 * weft_iser: the iSER initiator (RFC 7145, Documentation/iser.md): the
 * iscsi_transport "iser" that open-iscsi's `iscsiadm -I iser` uses, over
 * Weft's RDMA CM and verbs.  libiscsi and scsi_transport_iscsi (both
 * IB-independent) do the iSCSI work.
 */
#include <linux/module.h>

#include "iser_kapi.h"

static int __init weft_iser_init(void)
{
	int ret = weft_iser_module_init();

	if (ret)
		return ret;
	ret = weft_iser_transport_register();
	if (ret)
		weft_iser_module_exit();
	return ret;
}

static void __exit weft_iser_exit(void)
{
	weft_iser_transport_unregister();
	weft_iser_module_exit();
}

module_init(weft_iser_init);
module_exit(weft_iser_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft InfiniBand stack: iSER initiator");
