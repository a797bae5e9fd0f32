// SPDX-License-Identifier: GPL-2.0
/*
 * weft_verbs: the verbs mid-layer.  Device registry and clients, the verbs
 * objects with their IBA semantics and resource tracking, and the
 * `infiniband` sysfs class.
 */
#include <linux/module.h>

#include "ib_sysfs.h"
#include "verbs_module.h"

static int __init weft_verbs_init(void)
{
	int ret = weft_ib_sysfs_class_init();

	if (ret)
		return ret;
	weft_verbs_registry_init();
	return 0;
}

static void __exit weft_verbs_exit(void)
{
	weft_verbs_registry_exit();
	weft_ib_sysfs_class_exit();
}

module_init(weft_verbs_init);
module_exit(weft_verbs_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft InfiniBand stack: verbs mid-layer");
