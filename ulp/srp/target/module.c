// SPDX-License-Identifier: GPL-2.0
/*
 * weft_srpt: the SRP target (Documentation/srp.md): a LIO fabric module
 * named "srpt", as the in-tree ib_srpt's, so targetcli drives it
 * unchanged, serving logins on every Weft CA port, and the device
 * management agent (IBA 16.3) on each of them, so that srp_daemon and
 * ibsrpdm find the ports as SRP I/O units.  Loads after weft_cm.
 */
#include <linux/module.h>

#include "../dm/dm_host.h"
#include "srpt_kapi.h"

static unsigned int rq_size = 128;
module_param(rq_size, uint, 0444);
MODULE_PARM_DESC(rq_size, "Request IUs (credits) per channel, 2..4096 (default 128)");

static unsigned int max_req_size = 8192;
module_param(max_req_size, uint, 0444);
MODULE_PARM_DESC(max_req_size, "Largest SRP request IU accepted, bytes, 96..65536 (default 8192, as in-tree srp_max_req_size)");

static unsigned int max_rsp_size = 256;
module_param(max_rsp_size, uint, 0444);
MODULE_PARM_DESC(max_rsp_size, "Largest SRP response IU sent (sense data included), bytes, 64..4096 (default 256)");

unsigned long weft_srpt_dropped_ius;
module_param_named(dropped_ius, weft_srpt_dropped_ius, ulong, 0444);
MODULE_PARM_DESC(dropped_ius, "Request IUs dropped unanswered: unknown type, or too short for a tag (read only)");

static int __init weft_srpt_init(void)
{
	int ret;

	if (rq_size < 2 || rq_size > 4096 || max_req_size < 96 || max_req_size > 65536 ||
	    max_rsp_size < 64 || max_rsp_size > 4096)
		return -EINVAL;
	/* LIO first: logins arriving once the client runs find the fabric. */
	ret = weft_srpt_fabric_register();
	if (ret) {
		pr_err("weft_srpt: cannot register the \"srpt\" LIO fabric (%d): is ib_srpt loaded?\n", ret);
		return ret;
	}
	ret = weft_srpt_client_register(rq_size, max_req_size, max_rsp_size);
	if (ret)
		goto out_fabric;
	/* Advertised last: an initiator that finds the IOC finds a listener. */
	ret = weft_srpt_dm_host_start();
	if (ret)
		goto out_client;
	return 0;

out_client:
	weft_srpt_client_unregister();
out_fabric:
	weft_srpt_fabric_unregister();
	return ret;
}

static void __exit weft_srpt_exit(void)
{
	weft_srpt_dm_host_stop();
	weft_srpt_client_unregister();
	weft_srpt_fabric_unregister();
}

module_init(weft_srpt_init);
module_exit(weft_srpt_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft InfiniBand stack: SRP target (LIO fabric \"srpt\", device management agent)");
