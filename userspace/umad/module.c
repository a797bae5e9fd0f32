// SPDX-License-Identifier: GPL-2.0
/*
 * weft_umad: user-space MAD access with the in-tree user_mad ABI
 * (version 5): /dev/infiniband/umadN and issmN for every CA port, so that
 * libibumad, infiniband-diags and OpenSM run unchanged
 * (Documentation/umad.md).  Loads after weft_mad: its verbs client is
 * newer, so it is removed first and the MAD ports outlive its files.
 */
#include <linux/module.h>

#include "umad_kapi.h"
#include "umad_module.h"

static int __init weft_umad_init(void)
{
	int ret = weft_umad_class_init();

	if (ret)
		return ret;
	ret = weft_umad_client_register();
	if (ret)
		weft_umad_class_exit();
	return ret;
}

static void __exit weft_umad_exit(void)
{
	weft_umad_client_unregister();
	weft_umad_class_exit();
}

module_init(weft_umad_init);
module_exit(weft_umad_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft InfiniBand stack: user-space MAD access (umadN, issmN)");
