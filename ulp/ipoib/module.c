// SPDX-License-Identifier: GPL-2.0
/*
 * weft_ipoib: IP over InfiniBand (RFC 4391, 4392, 4755): an
 * ibN netdev for every CA port (Documentation/ipoib.md).  Loads after
 * weft_mad (its SA client answers the path queries and joins) and
 * weft_cm (connected mode).
 */
#include <linux/log2.h>
#include <linux/module.h>

#include "ipoib_kapi.h"
#include "ipoib_module.h"
#include "shim_priv.h"

static unsigned int send_queue_size = 128;
module_param(send_queue_size, uint, 0444);
MODULE_PARM_DESC(send_queue_size, "UD send ring entries per interface (power of 2, 2..8192; default 128)");

unsigned int weft_ipoib_recv_queue_size = 256;
module_param_named(recv_queue_size, weft_ipoib_recv_queue_size, uint, 0444);
MODULE_PARM_DESC(recv_queue_size, "UD receive ring entries per interface (power of 2, 2..8192; default 256)");

bool weft_ipoib_cm_enable = true;
module_param_named(cm_enable, weft_ipoib_cm_enable, bool, 0444);
MODULE_PARM_DESC(cm_enable, "Offer connected mode (RFC 4755): the C flag in the address, the mode file takes \"connected\" (default Y)");

unsigned int weft_ipoib_cm_srq_size = 128;
module_param_named(cm_srq_size, weft_ipoib_cm_srq_size, uint, 0444);
MODULE_PARM_DESC(cm_srq_size, "Connected-mode receive buffers (64 KiB each) per interface, 2..4096 (default 128)");

unsigned int weft_ipoib_cm_max_conns = 64;
module_param_named(cm_max_conns, weft_ipoib_cm_max_conns, uint, 0444);
MODULE_PARM_DESC(cm_max_conns, "Connected-mode peers one interface sends to, 1..1024 (default 64)");

unsigned int weft_ipoib_dest_idle_secs = 60;
module_param_named(dest_idle_secs, weft_ipoib_dest_idle_secs, uint, 0644);
MODULE_PARM_DESC(dest_idle_secs, "Forget a destination (path, address handle, send-only join, RC connection) not sent to for this long, 0: never (default 60)");

static bool ring_size_ok(unsigned int n)
{
	return n >= 2 && n <= 8192 && is_power_of_2(n);
}

static int __init weft_ipoib_init(void)
{
	int ret;

	if (!ring_size_ok(send_queue_size) || !ring_size_ok(weft_ipoib_recv_queue_size) ||
	    weft_ipoib_cm_srq_size < 2 || weft_ipoib_cm_srq_size > 4096 || !weft_ipoib_cm_max_conns ||
	    weft_ipoib_cm_max_conns > 1024)
		return -EINVAL;
	weft_ipoib_debugfs_init();
	ret = weft_ipoib_client_register(send_queue_size, weft_ipoib_recv_queue_size);
	if (ret) {
		weft_ipoib_debugfs_exit();
		return ret;
	}
	/* "ipoib" link ops for P_Key children (fails if Linux's ib_ipoib has the kind). */
	ret = weft_ipoib_link_register();
	if (ret) {
		weft_ipoib_client_unregister();
		weft_ipoib_debugfs_exit();
	}
	return ret;
}

static void __exit weft_ipoib_exit(void)
{
	/* Children first (dellink), then the ports' own interfaces. */
	weft_ipoib_link_unregister();
	weft_ipoib_client_unregister();
	weft_ipoib_shim_icmp_exit();
	weft_ipoib_debugfs_exit();
}

module_init(weft_ipoib_init);
module_exit(weft_ipoib_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft InfiniBand stack: IP over InfiniBand (datagram and connected mode)");
