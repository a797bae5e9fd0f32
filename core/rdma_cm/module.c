// SPDX-License-Identifier: GPL-2.0
/*
 * weft_rdma_cm: the RDMA connection manager (IBA Annex A11): connections
 * addressed by IP address and port over the IB CM, for kernel ULPs and
 * for ucma.  The API is include/weft/rdma_cm/rdma_cm.h; the C++ parts are
 * id.cpp (Ids, handler calls, teardown), bind.cpp (port spaces), addr.cpp
 * (address and route resolution), conn.cpp (the IB CM side), device.cpp
 * (devices); shim_net.c is the IP stack's side.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "rcm_module.h"

static int weft_rcm_ids_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%u\n", weft_rcm_live_ids());
}

static const struct kernel_param_ops weft_rcm_ids_ops = {
	.get = weft_rcm_ids_get,
};
module_param_cb(ids, &weft_rcm_ids_ops, NULL, 0444);
MODULE_PARM_DESC(ids, "RDMA CM ids alive (0 when no ULP or process holds one)");

static int weft_rcm_listeners_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%u\n", weft_rcm_live_listeners());
}

static const struct kernel_param_ops weft_rcm_listeners_ops = {
	.get = weft_rcm_listeners_get,
};
module_param_cb(listeners, &weft_rcm_listeners_ops, NULL, 0444);
MODULE_PARM_DESC(listeners, "IB CM listeners shared by listening RDMA CM ids");

static int __init weft_rcm_mod_init(void)
{
	return weft_rcm_init();
}

static void __exit weft_rcm_mod_exit(void)
{
	weft_rcm_exit();
}

module_init(weft_rcm_mod_init);
module_exit(weft_rcm_mod_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft: RDMA connection manager (IP-addressed connections, IBA Annex A11)");
