// SPDX-License-Identifier: GPL-2.0
/*
 * weft_ucma: the RDMA CM for user space, /dev/infiniband/rdma_cm with the
 * in-tree rdma_cm write() ABI (version 4), so that librdmacm and its tools
 * (rping, ucmatose, udaddy, mckey, cmtime, perftest -R) run unchanged over
 * weft_rdma_cm (Documentation/ucma.md).  Nothing to set up but the device:
 * every file carries its own Ids.
 */
#include <linux/module.h>

#include "ucma_kapi.h"

static int __init weft_ucma_init(void)
{
	return weft_ucma_misc_register();
}

static void __exit weft_ucma_exit(void)
{
	weft_ucma_misc_deregister();
}

module_init(weft_ucma_init);
module_exit(weft_ucma_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft InfiniBand stack: user-space RDMA CM (/dev/infiniband/rdma_cm)");
