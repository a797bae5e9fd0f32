// SPDX-License-Identifier: GPL-2.0
/*
 * weft_srp's SCSI side (srp_kapi.h): one Scsi_Host per target port, its
 * queuecommand and error handlers, the in-tree host attributes, and the
 * srp_rport of scsi_transport_srp (IB-independent), whose timers and
 * sysfs (/sys/class/srp_remote_ports) handle path failures.
 */
#include <linux/blk-mq.h>
#include <linux/module.h>
#include <scsi/scsi.h>
#include <scsi/scsi_cmnd.h>
#include <scsi/scsi_device.h>
#include <scsi/scsi_eh.h>
#include <scsi/scsi_host.h>
#include <scsi/scsi_tcq.h>
#include <scsi/scsi_transport_srp.h>

#include "srp_kapi.h"

struct weft_srp_host {
	struct Scsi_Host *shost; /* hostdata holds a pointer back here */
	struct srp_rport *rport;
	void *ctx;
	u8 port_id[16];
	bool added;
};

struct device *weft_srp_port_dev_device(struct weft_srp_port_dev *d);

static int reconnect_delay = 10;
module_param(reconnect_delay, int, 0644);
MODULE_PARM_DESC(reconnect_delay, "Seconds between reconnect attempts after a path failure (default 10, as in-tree)");

static int fast_io_fail_tmo = 15;
module_param(fast_io_fail_tmo, int, 0644);
MODULE_PARM_DESC(fast_io_fail_tmo, "Seconds after a path failure before I/O fails; negative: never (default 15)");

static int dev_loss_tmo = 600;
module_param(dev_loss_tmo, int, 0644);
MODULE_PARM_DESC(dev_loss_tmo, "Seconds after a path failure before the target port is removed; negative: never (default 600)");

static struct scsi_transport_template *srp_transport;

static struct weft_srp_host *host_of(struct Scsi_Host *shost)
{
	return *(struct weft_srp_host **)shost_priv(shost);
}

static void *ctx_of_dev(struct device *dev)
{
	return host_of(class_to_shost(dev))->ctx;
}

/* --- commands ------------------------------------------------------------------ */

static int srp_queuecommand(struct Scsi_Host *shost, struct scsi_cmnd *scmnd)
{
	struct weft_srp_host *h = host_of(shost);
	struct weft_srp_cmd_info ci;
	u32 unique;
	int result = srp_chkready(h->rport);

	if (unlikely(result)) {
		scmnd->result = result;
		scsi_done(scmnd);
		return 0;
	}
	unique = blk_mq_unique_tag(scsi_cmd_to_rq(scmnd));
	ci.cdb = scmnd->cmnd;
	ci.cdb_len = scmnd->cmd_len;
	int_to_scsilun(scmnd->device->lun, (struct scsi_lun *)ci.lun);
	ci.dir = scmnd->sc_data_direction;
	ci.len = scsi_bufflen(scmnd);
	ci.nsg = scsi_sg_count(scmnd);
	ci.hwq = blk_mq_unique_tag_to_hwq(unique);
	ci.tag = blk_mq_unique_tag_to_tag(unique);
	return weft_srp_queuecommand(h->ctx, scmnd, &ci) ? SCSI_MLQUEUE_HOST_BUSY : 0;
}

uint32_t weft_srp_cmd_sg(void *p, uint32_t first, struct weft_srp_seg *segs, uint32_t max)
{
	struct scsi_cmnd *scmnd = p;
	struct scatterlist *sg;
	uint32_t n = scsi_sg_count(scmnd), i;

	scsi_for_each_sg(scmnd, sg, n, i) {
		if (i < first)
			continue;
		if (i - first >= max)
			break;
		segs[i - first].kva = (uintptr_t)sg_virt(sg);
		segs[i - first].len = sg->length;
	}
	return n;
}

void weft_srp_cmd_done(void *p, uint8_t host_byte, uint8_t status, const uint8_t *sense,
		       uint32_t sense_len, int32_t resid)
{
	struct scsi_cmnd *scmnd = p;

	scmnd->result = (host_byte << 16) | status;
	if (sense && sense_len)
		memcpy(scmnd->sense_buffer, sense, min_t(u32, sense_len, SCSI_SENSE_BUFFERSIZE));
	scsi_set_resid(scmnd, resid);
	scsi_done(scmnd);
}

static int srp_eh_abort(struct scsi_cmnd *scmnd)
{
	struct weft_srp_host *h = host_of(scmnd->device->host);
	u32 unique = blk_mq_unique_tag(scsi_cmd_to_rq(scmnd));
	int ret = weft_srp_eh_abort(h->ctx, scmnd, blk_mq_unique_tag_to_hwq(unique),
				    blk_mq_unique_tag_to_tag(unique));

	if (!ret)
		return SUCCESS;
	return h->rport->state == SRP_RPORT_LOST ? FAST_IO_FAIL : FAILED;
}

static int srp_eh_device_reset(struct scsi_cmnd *scmnd)
{
	struct weft_srp_host *h = host_of(scmnd->device->host);
	struct scsi_lun lun;

	int_to_scsilun(scmnd->device->lun, &lun);
	return weft_srp_eh_lun_reset(h->ctx, lun.scsi_lun) ? FAILED : SUCCESS;
}

/* A target or host reset is a new login (SRP has no target reset function). */
static int srp_eh_reconnect(struct scsi_cmnd *scmnd)
{
	struct weft_srp_host *h = host_of(scmnd->device->host);

	return srp_reconnect_rport(h->rport) == 0 ? SUCCESS : FAILED;
}

/* --- the in-tree host attributes (srp_daemon reads them to skip known targets) --- */

#define SRP_INFO_ATTR(name, fmt, ...)                                                      \
	static ssize_t name##_show(struct device *dev, struct device_attribute *attr,      \
				   char *buf)                                              \
	{                                                                                  \
		struct weft_srp_target_info i;                                             \
		weft_srp_host_info(ctx_of_dev(dev), &i);                                 \
		return sysfs_emit(buf, fmt "\n", __VA_ARGS__);                             \
	}                                                                                  \
	static DEVICE_ATTR_RO(name)

SRP_INFO_ATTR(id_ext, "0x%016llx", i.id_ext);
SRP_INFO_ATTR(ioc_guid, "0x%016llx", i.ioc_guid);
SRP_INFO_ATTR(service_id, "0x%016llx", i.service_id);
SRP_INFO_ATTR(pkey, "0x%04x", i.pkey);
SRP_INFO_ATTR(sgid, "%pI6", i.sgid);
SRP_INFO_ATTR(dgid, "%pI6", i.dgid);
SRP_INFO_ATTR(orig_dgid, "%pI6", i.orig_dgid);
SRP_INFO_ATTR(req_lim, "%d", i.req_lim);
SRP_INFO_ATTR(zero_req_lim, "%d", i.zero_req_lim);
SRP_INFO_ATTR(local_ib_port, "%u", i.local_port);
SRP_INFO_ATTR(local_ib_device, "%s", i.local_dev);
SRP_INFO_ATTR(ch_count, "%u", i.ch_count);
SRP_INFO_ATTR(comp_vector, "%u", i.comp_vector);
SRP_INFO_ATTR(tl_retry_count, "%u", i.tl_retry_count);
SRP_INFO_ATTR(cmd_sg_entries, "%u", i.cmd_sg_entries);
SRP_INFO_ATTR(allow_ext_sg, "%s", i.allow_ext_sg ? "true" : "false");

static ssize_t delete_store(struct device *dev, struct device_attribute *attr, const char *buf,
			    size_t count)
{
	weft_srp_host_delete(ctx_of_dev(dev));
	return count;
}
static DEVICE_ATTR_WO(delete);

static struct attribute *srp_host_attrs[] = {
	&dev_attr_id_ext.attr,
	&dev_attr_ioc_guid.attr,
	&dev_attr_service_id.attr,
	&dev_attr_pkey.attr,
	&dev_attr_sgid.attr,
	&dev_attr_dgid.attr,
	&dev_attr_orig_dgid.attr,
	&dev_attr_req_lim.attr,
	&dev_attr_zero_req_lim.attr,
	&dev_attr_local_ib_port.attr,
	&dev_attr_local_ib_device.attr,
	&dev_attr_ch_count.attr,
	&dev_attr_comp_vector.attr,
	&dev_attr_tl_retry_count.attr,
	&dev_attr_cmd_sg_entries.attr,
	&dev_attr_allow_ext_sg.attr,
	&dev_attr_delete.attr,
	NULL,
};
ATTRIBUTE_GROUPS(srp_host);

static struct scsi_host_template weft_srp_template = {
	.module = THIS_MODULE,
	.name = "Weft InfiniBand SRP initiator",
	.proc_name = "weft_srp",
	.queuecommand = srp_queuecommand,
	.eh_timed_out = srp_timed_out,
	.eh_abort_handler = srp_eh_abort,
	.eh_device_reset_handler = srp_eh_device_reset,
	.eh_target_reset_handler = srp_eh_reconnect,
	.eh_host_reset_handler = srp_eh_reconnect,
	.skip_settle_delay = true,
	.this_id = -1,
	.can_queue = 64,
	.cmd_per_lun = 64,
	.sg_tablesize = 128,
	.shost_groups = srp_host_groups,
	.track_queue_depth = 1,
};

/* --- hosts and the rport ----------------------------------------------------------- */

struct weft_srp_host *weft_srp_host_alloc(void *ctx, const struct weft_srp_host_params *p, int *err)
{
	struct weft_srp_host *h = kzalloc(sizeof(*h), GFP_KERNEL);
	struct Scsi_Host *shost;

	if (!h) {
		*err = -ENOMEM;
		return NULL;
	}
	shost = scsi_host_alloc(&weft_srp_template, sizeof(h));
	if (!shost) {
		kfree(h);
		*err = -ENOMEM;
		return NULL;
	}
	*(struct weft_srp_host **)shost_priv(shost) = h;
	h->shost = shost;
	h->ctx = ctx;
	memcpy(h->port_id, p->port_id, sizeof(h->port_id));
	shost->transportt = srp_transport;
	shost->max_channel = 0;
	shost->max_id = 1;
	shost->max_lun = -1LL;
	shost->max_cmd_len = 16;
	shost->can_queue = p->can_queue;
	shost->cmd_per_lun = p->cmd_per_lun;
	shost->sg_tablesize = p->sg_tablesize;
	shost->max_sectors = p->max_sectors;
	/* Every scatterlist a page list, as fast registration needs (channel.cpp). */
	shost->virt_boundary_mask = SZ_4K - 1;
	shost->nr_hw_queues = p->nr_hw_queues;
	return h;
}

int weft_srp_host_add(struct weft_srp_host *h, struct weft_srp_port_dev *parent)
{
	struct srp_rport_identifiers ids;
	int ret = scsi_add_host(h->shost, weft_srp_port_dev_device(parent));

	if (ret)
		return ret;
	memcpy(ids.port_id, h->port_id, sizeof(ids.port_id));
	ids.roles = SRP_RPORT_ROLE_TARGET;
	h->rport = srp_rport_add(h->shost, &ids);
	if (IS_ERR(h->rport)) {
		ret = PTR_ERR(h->rport);
		h->rport = NULL;
		scsi_remove_host(h->shost);
		return ret;
	}
	h->rport->lld_data = h;
	h->added = true;
	scsi_scan_target(&h->shost->shost_gendev, 0, 0, SCAN_WILD_CARD, SCSI_SCAN_INITIAL);
	return 0;
}

void weft_srp_host_remove(struct weft_srp_host *h)
{
	if (!h->added)
		return;
	srp_rport_get(h->rport);
	srp_remove_host(h->shost);
	scsi_remove_host(h->shost);
	srp_stop_rport_timers(h->rport);
	srp_rport_put(h->rport);
	h->added = false;
}

void weft_srp_host_put(struct weft_srp_host *h)
{
	scsi_host_put(h->shost);
	kfree(h);
}

unsigned int weft_srp_host_no(struct weft_srp_host *h)
{
	return h->shost->host_no;
}

void weft_srp_host_lost(struct weft_srp_host *h)
{
	if (h->rport)
		srp_start_tl_fail_timers(h->rport);
}

static int srp_rport_reconnect(struct srp_rport *rport)
{
	struct weft_srp_host *h = rport->lld_data;

	return weft_srp_rport_reconnect(h->ctx);
}

static void srp_rport_terminate_io(struct srp_rport *rport)
{
	struct weft_srp_host *h = rport->lld_data;

	weft_srp_rport_terminate_io(h->ctx);
}

static void srp_rport_delete(struct srp_rport *rport)
{
	struct weft_srp_host *h = rport->lld_data;

	weft_srp_rport_delete(h->ctx);
}

static struct srp_function_template weft_srp_transport_functions = {
	.has_rport_state = true,
	.reset_timer_if_blocked = true,
	.reconnect_delay = &reconnect_delay,
	.fast_io_fail_tmo = &fast_io_fail_tmo,
	.dev_loss_tmo = &dev_loss_tmo,
	.reconnect = srp_rport_reconnect,
	.rport_delete = srp_rport_delete,
	.terminate_rport_io = srp_rport_terminate_io,
};

int weft_srp_transport_attach(void)
{
	if (srp_tmo_valid(reconnect_delay, fast_io_fail_tmo, dev_loss_tmo))
		return -EINVAL;
	srp_transport = srp_attach_transport(&weft_srp_transport_functions);
	return srp_transport ? 0 : -ENOMEM;
}

void weft_srp_transport_release(void)
{
	srp_release_transport(srp_transport);
}
