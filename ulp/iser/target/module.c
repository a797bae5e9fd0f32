// SPDX-License-Identifier: GPL-2.0
/*
 * weft_isert: the iSER transport of LIO's iSCSI target over Weft
 * (Documentation/iser.md).  targetcli's "enable_iser true" on a portal
 * makes iscsi_target_mod request_module("ib_isert") (dist/weft.conf
 * aliases it to this module) and then look the transport up by type.
 * Loads after weft_rdma_cm; LIO holds the module while a portal has iSER.
 */
#include <linux/module.h>

#include "isert_kapi.h"

/* Read-only counters: connections accepted, refused, PDUs dropped, connections alive. */
static int stat_get(char *buf, const struct kernel_param *kp)
{
	struct weft_isert_stats s;
	unsigned long long v;

	weft_isert_get_stats(&s);
	switch ((long)kp->arg) {
	case 0: v = s.accepted; break;
	case 1: v = s.rejected; break;
	case 2: v = s.dropped; break;
	default: v = s.conns; break;
	}
	return sysfs_emit(buf, "%llu\n", v);
}

static const struct kernel_param_ops stat_ops = { .get = stat_get };
module_param_cb(accepted, &stat_ops, (void *)0, 0444);
MODULE_PARM_DESC(accepted, "Connections accepted (read-only)");
module_param_cb(rejected, &stat_ops, (void *)1, 0444);
MODULE_PARM_DESC(rejected, "Connection requests refused (read-only)");
module_param_cb(dropped, &stat_ops, (void *)2, 0444);
MODULE_PARM_DESC(dropped, "Received PDUs dropped as malformed or refused by LIO (read-only)");
module_param_cb(conns, &stat_ops, (void *)3, 0444);
MODULE_PARM_DESC(conns, "Connections alive (read-only)");

static int __init weft_isert_mod_init(void)
{
	int ret = weft_isert_init();

	if (ret)
		return ret;
	ret = weft_isert_lio_register();
	if (ret)
		weft_isert_exit();
	return ret;
}

static void __exit weft_isert_mod_exit(void)
{
	weft_isert_lio_unregister();
	weft_isert_exit();
}

module_init(weft_isert_mod_init);
module_exit(weft_isert_mod_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft InfiniBand stack: iSER transport of the LIO iSCSI target");
MODULE_SOFTDEP("pre: iscsi_target_mod");
