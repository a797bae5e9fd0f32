// SPDX-License-Identifier: GPL-2.0
/*
 * weft_srpt: the SRP target of Weft (Documentation/srp.md).  For now the
 * module skeleton and the device management agent (IBA 16.3) on every CA
 * port, so that srp_daemon and ibsrpdm find the ports as SRP I/O units;
 * the LIO fabric module joins here.  Loads after weft_mad.
 *
 * Teardown is two-phase inside weft_srpt_dm_host_stop(): each port stops
 * advertising the agent, then its agent is unregistered (waiting for an
 * answer in flight) and freed.
 */
#include <linux/module.h>

#include "../dm/dm_host.h"

static int __init weft_srpt_init(void)
{
	return weft_srpt_dm_host_start();
}

static void __exit weft_srpt_exit(void)
{
	weft_srpt_dm_host_stop();
}

module_init(weft_srpt_init);
module_exit(weft_srpt_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft InfiniBand stack: SRP target (device management agent)");
