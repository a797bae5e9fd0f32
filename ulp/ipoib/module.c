// SPDX-License-Identifier: GPL-2.0
/*
 * weft_ipoib: IP over InfiniBand (RFC 4391, 4392) in datagram mode: an
 * ibN netdev for every CA port (Documentation/ipoib.md).  Loads after
 * weft_mad: its SA client answers the path queries and joins.
 */
#include <linux/log2.h>
#include <linux/module.h>

#include "ipoib_module.h"
#include "shim_priv.h"

static unsigned int send_queue_size = 128;
module_param(send_queue_size, uint, 0444);
MODULE_PARM_DESC(send_queue_size, "UD send ring entries per interface (power of 2, 2..8192; default 128)");

static unsigned int recv_queue_size = 256;
module_param(recv_queue_size, uint, 0444);
MODULE_PARM_DESC(recv_queue_size, "UD receive ring entries per interface (power of 2, 2..8192; default 256)");

static bool ring_size_ok(unsigned int n)
{
	return n >= 2 && n <= 8192 && is_power_of_2(n);
}

static int __init weft_ipoib_init(void)
{
	int ret;

	if (!ring_size_ok(send_queue_size) || !ring_size_ok(recv_queue_size))
		return -EINVAL;
	ret = weft_ipoib_client_register(send_queue_size, recv_queue_size);
	if (ret)
		return ret;
	/* "ipoib" link ops for P_Key children (fails if Linux's ib_ipoib has the kind). */
	ret = weft_ipoib_link_register();
	if (ret)
		weft_ipoib_client_unregister();
	return ret;
}

static void __exit weft_ipoib_exit(void)
{
	/* Children first (dellink), then the ports' own interfaces. */
	weft_ipoib_link_unregister();
	weft_ipoib_client_unregister();
}

module_init(weft_ipoib_init);
module_exit(weft_ipoib_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft InfiniBand stack: IP over InfiniBand (datagram mode)");
