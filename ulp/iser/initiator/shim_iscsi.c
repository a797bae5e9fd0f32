// SPDX-License-Identifier: GPL-2.0
/*
 * weft_iser's kernel side (iser_kapi.h): the iscsi_transport "iser" with
 * libiscsi doing the iSCSI work, its Scsi_Host template (proc_name
 * "iscsi_iser": iscsid finds the transport of a host by it), endpoints,
 * and the task callbacks that hand PDUs to the C++ connection.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <scsi/iscsi_proto.h>
#include <scsi/libiscsi.h>
#include <scsi/scsi_cmnd.h>
#include <scsi/scsi_device.h>
#include <scsi/scsi_host.h>
#include <scsi/scsi_transport_iscsi.h>

#include "iser_kapi.h"

/* A task's dd_data: the headers slot (iSER header, then libiscsi's BHS). */
struct weft_iser_task {
	u8 hdrs[WEFT_ISER_HDRS_LEN] __aligned(8);
	bool command_sent;
};

static unsigned int iscsi_max_lun = 512;
module_param_named(max_lun, iscsi_max_lun, uint, 0444);
MODULE_PARM_DESC(max_lun, "Largest LUN scanned (default 512, as in-tree)");

static unsigned int iser_max_sectors = 1024;
module_param_named(max_sectors, iser_max_sectors, uint, 0444);
MODULE_PARM_DESC(max_sectors, "Largest command in 512-byte sectors, 64..8192 (default 1024, as in-tree; limited to what one fast registration covers: 4088)");

static bool iser_pi_enable;
module_param_named(pi_enable, iser_pi_enable, bool, 0444);
MODULE_PARM_DESC(pi_enable, "T10-PI: not supported by Weft (no signature MRs); Y only warns (default N)");

static bool iser_always_register = true;
module_param_named(always_register, iser_always_register, bool, 0444);
MODULE_PARM_DESC(always_register, "Accepted for compatibility: Weft always fast-registers each command's data (N is not supported)");

static struct scsi_transport_template *iser_scsi_transport;
static struct iscsi_transport weft_iser_transport;

static void *conn_ctx(struct iscsi_conn *conn)
{
	return *(void **)conn->dd_data;
}

/* --- the shim, called by the C++ side ---------------------------------------------- */

int weft_iser_shim_complete_pdu(void *iconn, const void *bhs, const void *data, uint32_t dlength)
{
	int rc;

	/* libiscsi's receive side runs with bottom halves off (its back_lock is a plain spin lock). */
	local_bh_disable();
	rc = iscsi_complete_pdu(iconn, (struct iscsi_hdr *)bhs, (char *)data, dlength);
	local_bh_enable();
	return rc == ISCSI_ERR_NO_SCSI_CMD ? 0 : rc;
}

void weft_iser_shim_conn_failure(void *iconn, bool datalen_err)
{
	iscsi_conn_failure(iconn, datalen_err ? ISCSI_ERR_DATALEN : ISCSI_ERR_CONN_FAILED);
}

void weft_iser_shim_put_task(void *task)
{
	local_bh_disable();
	iscsi_put_task(task);
	local_bh_enable();
}

void weft_iser_shim_cmd_sg(void *p, uint32_t first, struct weft_iser_seg *segs, uint32_t max)
{
	struct scsi_cmnd *sc = ((struct iscsi_task *)p)->sc;
	struct scatterlist *sg;
	uint32_t i;

	scsi_for_each_sg(sc, sg, scsi_sg_count(sc), i) {
		if (i >= first + max)
			break;
		if (i >= first)
			segs[i - first] = (struct weft_iser_seg){ (uintptr_t)sg_virt(sg), sg->length };
	}
}

int weft_iser_shim_rsp_slot(void *iconn, const void *bhs)
{
	const struct iscsi_hdr *h = bhs;
	struct iscsi_conn *conn = iconn;
	struct iscsi_task *task;
	int slot = -1;

	if ((h->opcode & ISCSI_OPCODE_MASK) != ISCSI_OP_SCSI_CMD_RSP)
		return -1;
	spin_lock_bh(&conn->session->back_lock);
	task = iscsi_itt_to_ctask(conn, h->itt);
	if (task)
		slot = task->itt;
	spin_unlock_bh(&conn->session->back_lock);
	return slot;
}

bool weft_iser_shim_next_data_out(void *p, void *bhs, uint32_t *off, uint32_t *len)
{
	struct iscsi_task *task = p;
	struct iscsi_r2t_info *r2t = &task->unsol_r2t;
	struct iscsi_data *hdr = bhs;

	if (!iscsi_task_has_unsol_data(task))
		return false;
	iscsi_prep_data_out_pdu(task, r2t, hdr);
	*off = be32_to_cpu(hdr->offset);
	*len = r2t->data_count;
	r2t->sent += r2t->data_count;
	return true;
}

/* --- endpoints ------------------------------------------------------------------- */

static struct iscsi_endpoint *iser_ep_connect(struct Scsi_Host *shost, struct sockaddr *dst,
					      int non_blocking)
{
	struct weft_iser_addr a = {};
	struct iscsi_endpoint *ep;
	void *conn;
	int err = 0;

	if (dst->sa_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)dst;

		a.family = AF_INET;
		a.port = ntohs(in->sin_port);
		memcpy(a.ip, &in->sin_addr, 4);
	} else if (dst->sa_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)dst;

		a.family = AF_INET6;
		a.port = ntohs(in6->sin6_port);
		memcpy(a.ip, &in6->sin6_addr, 16);
		a.scope_id = in6->sin6_scope_id;
	} else {
		return ERR_PTR(-EAFNOSUPPORT);
	}
	ep = iscsi_create_endpoint(sizeof(void *));
	if (!ep)
		return ERR_PTR(-ENOMEM);
	conn = weft_iser_ep_connect(&a, &err);
	if (!conn) {
		iscsi_destroy_endpoint(ep);
		return ERR_PTR(err);
	}
	*(void **)ep->dd_data = conn;
	if (!non_blocking && weft_iser_ep_poll(conn, 30000) != 1) {
		weft_iser_ep_disconnect(conn);
		iscsi_destroy_endpoint(ep);
		return ERR_PTR(-ECONNREFUSED);
	}
	return ep;
}

static int iser_ep_poll(struct iscsi_endpoint *ep, int timeout_ms)
{
	return weft_iser_ep_poll(*(void **)ep->dd_data, timeout_ms);
}

static void iser_ep_disconnect(struct iscsi_endpoint *ep)
{
	weft_iser_ep_disconnect(*(void **)ep->dd_data);
	iscsi_destroy_endpoint(ep);
}

static int iser_get_ep_param(struct iscsi_endpoint *ep, enum iscsi_param param, char *buf)
{
	struct sockaddr_storage ss = {};
	struct weft_iser_addr a;
	int ret;

	if (param != ISCSI_PARAM_CONN_PORT && param != ISCSI_PARAM_CONN_ADDRESS)
		return -ENOSYS;
	ret = weft_iser_ep_peer(*(void **)ep->dd_data, &a);
	if (ret)
		return ret;
	if (a.family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(a.port);
		memcpy(&in->sin_addr, a.ip, 4);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(a.port);
		memcpy(&in6->sin6_addr, a.ip, 16);
		in6->sin6_scope_id = a.scope_id;
	}
	return iscsi_conn_get_addr_param(&ss, param, buf);
}

/* --- sessions and connections ----------------------------------------------------- */

static struct scsi_host_template iser_sht;

static struct iscsi_cls_session *iser_session_create(struct iscsi_endpoint *ep, uint16_t cmds_max,
						     uint16_t qdepth, uint32_t initial_cmdsn)
{
	struct iscsi_cls_session *cls_session;
	struct weft_iser_limits lim;
	struct Scsi_Host *shost;

	/* Tools before open-iscsi 2.0-870 create sessions without an endpoint: not supported. */
	if (!ep || weft_iser_limits(*(void **)ep->dd_data, &lim))
		return NULL;
	/* xmit runs in queuecommand's context under the session's forward lock: it cannot sleep. */
	shost = iscsi_host_alloc(&iser_sht, 0, false);
	if (!shost)
		return NULL;
	shost->transportt = iser_scsi_transport;
	shost->cmd_per_lun = qdepth;
	shost->max_lun = iscsi_max_lun;
	shost->max_id = 0;
	shost->max_channel = 0;
	shost->max_cmd_len = 16;
	shost->sg_tablesize = lim.sg_tablesize;
	shost->can_queue = min_t(u32, cmds_max, lim.max_cmds);
	shost->max_sectors = lim.max_sectors;
	/* Every scatterlist a page list, as one fast registration per command needs (reg.cpp). */
	shost->virt_boundary_mask = SZ_4K - 1;
	if (iscsi_host_add(shost, NULL))
		goto free_host;
	cls_session = iscsi_session_setup(&weft_iser_transport, shost, shost->can_queue, 0,
					  sizeof(struct weft_iser_task), initial_cmdsn, 0);
	if (cls_session)
		return cls_session;
	iscsi_host_remove(shost, false);
free_host:
	iscsi_host_free(shost);
	return NULL;
}

static void iser_session_destroy(struct iscsi_cls_session *cls_session)
{
	struct Scsi_Host *shost = iscsi_session_to_shost(cls_session);

	iscsi_session_teardown(cls_session);
	iscsi_host_remove(shost, false);
	iscsi_host_free(shost);
}

static struct iscsi_cls_conn *iser_conn_create(struct iscsi_cls_session *cls_session, uint32_t conn_idx)
{
	struct iscsi_cls_conn *cls_conn = iscsi_conn_setup(cls_session, sizeof(void *), conn_idx);
	struct iscsi_conn *conn;

	if (!cls_conn)
		return NULL;
	conn = cls_conn->dd_data;
	/* What a full feature receive buffer holds after the headers (Documentation/iser.md). */
	conn->max_recv_dlength = 128;
	*(void **)conn->dd_data = NULL;
	return cls_conn;
}

static int iser_conn_bind(struct iscsi_cls_session *cls_session, struct iscsi_cls_conn *cls_conn,
			  uint64_t transport_eph, int is_leading)
{
	struct iscsi_conn *conn = cls_conn->dd_data;
	struct iscsi_endpoint *ep;
	void *c;
	int ret = iscsi_conn_bind(cls_session, cls_conn, is_leading);

	if (ret)
		return ret;
	/* The handle comes from user space: only a live endpoint counts. */
	ep = iscsi_lookup_endpoint(transport_eph);
	if (!ep)
		return -EINVAL;
	c = *(void **)ep->dd_data;
	ret = weft_iser_bind(c, conn);
	if (!ret)
		*(void **)conn->dd_data = c;
	iscsi_put_endpoint(ep);
	return ret;
}

static void iser_conn_stop(struct iscsi_cls_conn *cls_conn, int flag)
{
	struct iscsi_conn *conn = cls_conn->dd_data;
	void *c = conn_ctx(conn);

	/* No PDU reaches libiscsi from here on; then libiscsi fails what is left. */
	if (c)
		weft_iser_unbind(c);
	iscsi_conn_stop(cls_conn, flag);
	*(void **)conn->dd_data = NULL;
}

/* RFC 7145 6.1, 6.6: no digests and no markers on iSER. */
static int iser_set_param(struct iscsi_cls_conn *cls_conn, enum iscsi_param param, char *buf, int buflen)
{
	int value = 0;

	switch (param) {
	case ISCSI_PARAM_MAX_RECV_DLENGTH:
		return 0; /* the receive buffers' size stays */
	case ISCSI_PARAM_HDRDGST_EN:
	case ISCSI_PARAM_DATADGST_EN:
	case ISCSI_PARAM_IFMARKER_EN:
	case ISCSI_PARAM_OFMARKER_EN:
		if (sscanf(buf, "%d", &value) == 1 && value) {
			pr_err("weft_iser: digests and markers are not used with iSER (param %d)\n", param);
			return -EPROTO;
		}
		return 0;
	default:
		return iscsi_set_param(cls_conn, param, buf, buflen);
	}
}

static void iser_get_stats(struct iscsi_cls_conn *cls_conn, struct iscsi_stats *stats)
{
	struct iscsi_conn *conn = cls_conn->dd_data;

	stats->txdata_octets = conn->txdata_octets;
	stats->rxdata_octets = conn->rxdata_octets;
	stats->scsicmd_pdus = conn->scsicmd_pdus_cnt;
	stats->dataout_pdus = conn->dataout_pdus_cnt;
	stats->scsirsp_pdus = conn->scsirsp_pdus_cnt;
	stats->datain_pdus = 0; /* RDMA WRITE instead */
	stats->r2t_pdus = 0;	/* RDMA READ instead */
	stats->tmfcmd_pdus = conn->tmfcmd_pdus_cnt;
	stats->tmfrsp_pdus = conn->tmfrsp_pdus_cnt;
	stats->custom_length = 0;
}

/* --- tasks ----------------------------------------------------------------------- */

static int iser_alloc_pdu(struct iscsi_task *task, uint8_t opcode)
{
	struct weft_iser_task *t = task->dd_data;

	task->hdr = (struct iscsi_hdr *)(t->hdrs + WEFT_ISER_HDRS_LEN - sizeof(struct iscsi_hdr));
	task->hdr_max = sizeof(struct iscsi_hdr);
	return 0;
}

static int iser_init_task(struct iscsi_task *task)
{
	struct weft_iser_task *t = task->dd_data;

	t->command_sent = false;
	return 0;
}

/* A normal session's login request that leads to full feature phase (RFC 7143 11.12.3). */
static bool login_to_ffp(struct iscsi_task *task)
{
	struct iscsi_hdr *h = task->hdr;

	return !task->conn->session->discovery_sess && (h->opcode & ISCSI_OPCODE_MASK) == ISCSI_OP_LOGIN &&
	       (h->flags & ISCSI_FLAG_LOGIN_TRANSIT) &&
	       ISCSI_LOGIN_NEXT_STAGE(h->flags) == ISCSI_FULL_FEATURE_PHASE;
}

/* The command's data: its scatterlist, registered by the C++ side (reg.cpp). */
static void cmd_of(struct iscsi_task *task, struct weft_iser_cmd *c)
{
	struct scsi_cmnd *sc = task->sc;

	memset(c, 0, sizeof(*c));
	c->slot = task->itt;
	c->len = scsi_bufflen(sc);
	c->nsg = scsi_sg_count(sc);
	if (!c->len || !c->nsg || sc->sc_data_direction == DMA_NONE)
		return;
	c->dir = sc->sc_data_direction == DMA_TO_DEVICE ? WEFT_ISER_DIR_WRITE : WEFT_ISER_DIR_READ;
	if (c->dir == WEFT_ISER_DIR_WRITE) {
		c->imm_len = task->imm_count;
		c->unsol_len = task->unsol_r2t.data_length;
	}
}

static int iser_xmit_task(struct iscsi_task *task)
{
	struct weft_iser_task *t = task->dd_data;
	void *c = conn_ctx(task->conn);
	struct weft_iser_cmd cmd;
	int ret;

	if (!c)
		return -ENOTCONN;
	if (!task->sc)
		return weft_iser_send_control(c, task, t->hdrs, task->data, task->data_count,
					      task == task->conn->login_task, login_to_ffp(task),
					      task->hdr->itt == RESERVED_ITT);
	cmd_of(task, &cmd);
	if (!t->command_sent) {
		ret = weft_iser_send_command(c, task, t->hdrs, &cmd);
		if (ret)
			return ret;
		t->command_sent = true;
	}
	if (iscsi_task_has_unsol_data(task))
		return weft_iser_send_data_outs(c, task, &cmd);
	return 0;
}

/* Before the command completes (iscsi_free_task): its registration goes. */
static void iser_cleanup_task(struct iscsi_task *task)
{
	void *c = conn_ctx(task->conn);

	if (task->sc && c)
		weft_iser_task_done(c, task->itt);
}

/* --- the transport --------------------------------------------------------------- */

static umode_t iser_attr_is_visible(int param_type, int param)
{
	if (param_type == ISCSI_HOST_PARAM) {
		switch (param) {
		case ISCSI_HOST_PARAM_NETDEV_NAME:
		case ISCSI_HOST_PARAM_HWADDRESS:
		case ISCSI_HOST_PARAM_INITIATOR_NAME:
			return 0444;
		default:
			return 0;
		}
	}
	if (param_type != ISCSI_PARAM)
		return 0;
	switch (param) {
	case ISCSI_PARAM_MAX_RECV_DLENGTH:
	case ISCSI_PARAM_MAX_XMIT_DLENGTH:
	case ISCSI_PARAM_HDRDGST_EN:
	case ISCSI_PARAM_DATADGST_EN:
	case ISCSI_PARAM_CONN_ADDRESS:
	case ISCSI_PARAM_CONN_PORT:
	case ISCSI_PARAM_EXP_STATSN:
	case ISCSI_PARAM_PERSISTENT_ADDRESS:
	case ISCSI_PARAM_PERSISTENT_PORT:
	case ISCSI_PARAM_PING_TMO:
	case ISCSI_PARAM_RECV_TMO:
	case ISCSI_PARAM_INITIAL_R2T_EN:
	case ISCSI_PARAM_MAX_R2T:
	case ISCSI_PARAM_IMM_DATA_EN:
	case ISCSI_PARAM_FIRST_BURST:
	case ISCSI_PARAM_MAX_BURST:
	case ISCSI_PARAM_PDU_INORDER_EN:
	case ISCSI_PARAM_DATASEQ_INORDER_EN:
	case ISCSI_PARAM_TARGET_NAME:
	case ISCSI_PARAM_TPGT:
	case ISCSI_PARAM_USERNAME:
	case ISCSI_PARAM_PASSWORD:
	case ISCSI_PARAM_USERNAME_IN:
	case ISCSI_PARAM_PASSWORD_IN:
	case ISCSI_PARAM_FAST_ABORT:
	case ISCSI_PARAM_ABORT_TMO:
	case ISCSI_PARAM_LU_RESET_TMO:
	case ISCSI_PARAM_TGT_RESET_TMO:
	case ISCSI_PARAM_IFACE_NAME:
	case ISCSI_PARAM_INITIATOR_NAME:
	case ISCSI_PARAM_DISCOVERY_SESS:
		return 0444;
	default:
		return 0;
	}
}

static struct scsi_host_template iser_sht = {
	.module = THIS_MODULE,
	.name = "iSCSI Initiator over iSER",
	.queuecommand = iscsi_queuecommand,
	.change_queue_depth = scsi_change_queue_depth,
	.sg_tablesize = 128, /* the connection's limit replaces it (weft_iser_limits) */
	.cmd_per_lun = 512,
	.eh_timed_out = iscsi_eh_cmd_timed_out,
	.eh_abort_handler = iscsi_eh_abort,
	.eh_device_reset_handler = iscsi_eh_device_reset,
	.eh_target_reset_handler = iscsi_eh_recover_target,
	.target_alloc = iscsi_target_alloc,
	.proc_name = "iscsi_iser",
	.this_id = -1,
	.track_queue_depth = 1,
	.cmd_size = sizeof(struct iscsi_cmd),
};

static struct iscsi_transport weft_iser_transport = {
	.owner = THIS_MODULE,
	.name = "iser",
	.caps = CAP_RECOVERY_L0 | CAP_MULTI_R2T | CAP_TEXT_NEGO,
	.create_session = iser_session_create,
	.destroy_session = iser_session_destroy,
	.create_conn = iser_conn_create,
	.bind_conn = iser_conn_bind,
	.unbind_conn = iscsi_conn_unbind,
	.destroy_conn = iscsi_conn_teardown,
	.attr_is_visible = iser_attr_is_visible,
	.set_param = iser_set_param,
	.get_conn_param = iscsi_conn_get_param,
	.get_ep_param = iser_get_ep_param,
	.get_session_param = iscsi_session_get_param,
	.start_conn = iscsi_conn_start,
	.stop_conn = iser_conn_stop,
	.get_host_param = iscsi_host_get_param,
	.set_host_param = iscsi_host_set_param,
	.send_pdu = iscsi_conn_send_pdu,
	.get_stats = iser_get_stats,
	.init_task = iser_init_task,
	.xmit_task = iser_xmit_task,
	.cleanup_task = iser_cleanup_task,
	.alloc_pdu = iser_alloc_pdu,
	.session_recovery_timedout = iscsi_session_recovery_timedout,
	.ep_connect = iser_ep_connect,
	.ep_poll = iser_ep_poll,
	.ep_disconnect = iser_ep_disconnect,
};

int weft_iser_transport_register(void)
{
	if (iser_pi_enable)
		pr_warn("weft_iser: T10-PI requested but not supported, continuing without T10-PI\n");
	if (!iser_always_register)
		pr_warn("weft_iser: always_register=N is not supported, every command's data is still registered\n");
	if (iser_max_sectors < 64 || iser_max_sectors > 8192)
		return -EINVAL;
	weft_iser_set_params(iser_max_sectors);
	iser_scsi_transport = iscsi_register_transport(&weft_iser_transport);
	if (!iser_scsi_transport) {
		pr_err("weft_iser: cannot register the iscsi transport \"iser\": is ib_iser loaded?\n");
		return -EEXIST;
	}
	return 0;
}

void weft_iser_transport_unregister(void)
{
	iscsi_unregister_transport(&weft_iser_transport);
}
