// SPDX-License-Identifier: GPL-2.0
/*
 * weft_cm: the InfiniBand communication manager (IBA Vol 1 ch. 12) for
 * kernel ULPs: connection state machines over GSI MADs (active.cpp,
 * passive.cpp, release.cpp), SIDR (sidr.cpp), the QP moved on the ULP's
 * behalf (qp.cpp), Ids and delivery (id.cpp), one agent per CA port
 * (port.cpp).  The API is include/weft/cm/cm.h.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "cm_module.h"

/* Read-only: Ids alive now (the ULPs' and those in time-wait); 0 when idle. */
static int weft_cm_ids_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%u\n", weft_cm_live_ids());
}

static const struct kernel_param_ops weft_cm_ids_ops = {
	.get = weft_cm_ids_get,
};
module_param_cb(ids, &weft_cm_ids_ops, NULL, 0444);
MODULE_PARM_DESC(ids, "CM ids alive (connections, listeners, time-wait)");

static int __init weft_cm_mod_init(void)
{
	return weft_cm_init();
}

static void __exit weft_cm_mod_exit(void)
{
	weft_cm_exit();
}

module_init(weft_cm_mod_init);
module_exit(weft_cm_mod_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft: InfiniBand communication manager (REQ/REP/RTU, DREQ/DREP, REJ, MRA, SIDR)");
