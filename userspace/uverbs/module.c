// SPDX-License-Identifier: GPL-2.0
/*
 * weft_uverbs: user-space verbs with the in-tree uverbs ABI (version 6):
 * RDMA netlink (NETLINK_RDMA: devices, ports, the uverbs char device and
 * the driver id that binds the stock rxe provider), the infiniband_verbs
 * class and /dev/infiniband/uverbsN with the write() command ABI
 * (Documentation/uverbs.md).  Refuses to load beside the in-tree ib_core,
 * which owns the same netlink protocol.
 */
#include <linux/module.h>

#include "nl_kapi.h"
#include "uverbs_kapi.h"
#include "uverbs_module.h"

static int __init weft_uverbs_init(void)
{
	int ret = weft_uverbs_core_init();

	if (ret)
		return ret;
	ret = weft_uverbs_nl_init();
	if (ret)
		goto err_core;
	ret = weft_uverbs_class_init();
	if (ret)
		goto err_nl;
	ret = weft_uverbs_client_register();
	if (ret)
		goto err_class;
	return 0;

err_class:
	weft_uverbs_class_exit();
err_nl:
	weft_uverbs_nl_exit();
err_core:
	weft_uverbs_core_exit();
	return ret;
}

static void __exit weft_uverbs_exit(void)
{
	weft_uverbs_client_unregister();
	weft_uverbs_class_exit();
	weft_uverbs_nl_exit();
	weft_uverbs_core_exit();
}

module_init(weft_uverbs_init);
module_exit(weft_uverbs_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft InfiniBand stack: user-space verbs (RDMA netlink, uverbsN)");
