// SPDX-License-Identifier: GPL-2.0
/*
 * weft_verbs: the verbs mid-layer.  Device registry and clients, the verbs
 * objects with their IBA semantics and resource tracking, and the
 * `infiniband` sysfs class.
 */
#include <linux/module.h>

#include "ib_sysfs.h"

static int __init weft_verbs_init(void)
{
	return weft_ib_sysfs_class_init();
}

static void __exit weft_verbs_exit(void)
{
	weft_ib_sysfs_class_exit();
}

module_init(weft_verbs_init);
module_exit(weft_verbs_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft InfiniBand stack: verbs mid-layer");
