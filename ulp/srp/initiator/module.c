// SPDX-License-Identifier: GPL-2.0
/*
 * weft_srp: the SRP initiator (Documentation/srp.md): a SCSI low-level
 * driver per target port, added through /sys/class/infiniband_srp/
 * srp-<hca>-<port>/add_target as with the in-tree ib_srp (so srp_daemon
 * works unchanged), with path failures handled by scsi_transport_srp.
 * Loads after weft_mad (path queries) and weft_cm.
 */
#include <linux/module.h>

#include "srp_kapi.h"

static unsigned int weft_srp_cmd_sg_entries = 128;
module_param_named(cmd_sg_entries, weft_srp_cmd_sg_entries, uint, 0444);
MODULE_PARM_DESC(cmd_sg_entries, "Default scatterlist entries per command (the SCSI host's sg_tablesize), 1..255; each command's data is one fast registration and one descriptor (default 128)");

static unsigned int weft_srp_queue_size = 64;
module_param_named(queue_size, weft_srp_queue_size, uint, 0444);
MODULE_PARM_DESC(queue_size, "Default commands in flight per channel, 1..4096 (default 64, as in-tree)");

static unsigned int weft_srp_ch_count;
module_param_named(ch_count, weft_srp_ch_count, uint, 0444);
MODULE_PARM_DESC(ch_count, "Default channels per target port, 0: one per online CPU, up to 16 (default 0)");

static unsigned int weft_srp_max_sect = 1024;
module_param_named(max_sect, weft_srp_max_sect, uint, 0444);
MODULE_PARM_DESC(max_sect, "Default largest command in 512-byte sectors (default 1024, as in-tree)");

static int __init weft_srp_init(void)
{
	int ret;

	if (!weft_srp_cmd_sg_entries || weft_srp_cmd_sg_entries > 255 || !weft_srp_queue_size ||
	    weft_srp_queue_size > 4096 || weft_srp_ch_count > 16 || !weft_srp_max_sect)
		return -EINVAL;
	weft_srp_set_params(weft_srp_cmd_sg_entries, weft_srp_queue_size, weft_srp_ch_count,
			    weft_srp_max_sect);
	ret = weft_srp_transport_attach();
	if (ret)
		return ret;
	ret = weft_srp_class_register();
	if (ret) {
		pr_err("weft_srp: cannot register class infiniband_srp (%d): is ib_srp loaded?\n", ret);
		goto out_transport;
	}
	ret = weft_srp_client_register();
	if (ret)
		goto out_class;
	return 0;

out_class:
	weft_srp_class_unregister();
out_transport:
	weft_srp_transport_release();
	return ret;
}

static void __exit weft_srp_exit(void)
{
	weft_srp_client_unregister();
	weft_srp_class_unregister();
	weft_srp_transport_release();
}

module_init(weft_srp_init);
module_exit(weft_srp_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft InfiniBand stack: SRP initiator");
