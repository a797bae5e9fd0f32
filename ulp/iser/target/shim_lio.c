// SPDX-License-Identifier: GPL-2.0
/*
 * weft_isert's LIO side (isert_kapi.h): the iscsit_transport "IB/iSER" of
 * type ISCSI_INFINIBAND that iscsi_target_mod finds when a portal's
 * enable_iser is set, and the LIO calls each iSCSI PDU needs (RFC 7143
 * semantics stay LIO's; RFC 7145's transport is the C++ side's).
 * iscsi_target_mod is IB-independent; the in-tree ib_isert is another
 * user of the same API, and LIO takes the first transport of a type.
 */
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <asm/unaligned.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <scsi/iscsi_proto.h>
#include <target/iscsi/iscsi_transport.h>
#include <target/target_core_base.h>
#include <target/target_core_fabric.h>

#include "isert_kapi.h"

/* The private area of every iscsit_cmd of an iSER connection. */
struct weft_isert_cmd {
	struct weft_isert_io io;
	struct iscsit_cmd *cmd;
	struct work_struct comp_work;
	bool ctrl_counted;
};

static struct workqueue_struct *login_wq, *comp_wq;

static struct weft_isert_cmd *priv_of(struct iscsit_cmd *cmd)
{
	return iscsit_priv_cmd(cmd);
}

static struct weft_isert_cmd *priv_of_io(struct weft_isert_io *io)
{
	return container_of(io, struct weft_isert_cmd, io);
}

static void to_addr(const struct sockaddr_storage *ss, struct weft_isert_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->family = ss->ss_family;
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)ss;

		a->port = ntohs(s->sin_port);
		memcpy(a->ip, &s->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)ss;

		a->port = ntohs(s->sin6_port);
		memcpy(a->ip, &s->sin6_addr, 16);
		a->scope_id = s->sin6_scope_id;
	}
}

static void from_addr(const struct weft_isert_addr *a, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *s = (void *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(a->port);
		memcpy(&s->sin_addr, a->ip, 4);
	} else if (a->family == AF_INET6) {
		struct sockaddr_in6 *s = (void *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(a->port);
		memcpy(&s->sin6_addr, a->ip, 16);
		s->sin6_scope_id = a->scope_id;
	}
}

/* --- portals and logins ------------------------------------------------------------ */

static int isert_setup_np(struct iscsi_np *np, struct sockaddr_storage *ss)
{
	struct weft_isert_addr a;
	void *ctx;
	int ret;

	to_addr(ss, &a);
	if (a.family != AF_INET && a.family != AF_INET6)
		return -EAFNOSUPPORT;
	memcpy(&np->np_sockaddr, ss, sizeof(*ss));
	ret = weft_isert_np_setup(np, &a, &ctx);
	if (ret)
		return ret;
	np->np_context = ctx;
	return 0;
}

bool weft_isert_np_stopping(struct iscsi_np *np)
{
	bool stopping;

	spin_lock_bh(&np->np_thread_lock);
	stopping = np->np_thread_state >= ISCSI_NP_THREAD_RESET;
	spin_unlock_bh(&np->np_thread_lock);
	return stopping;
}

bool weft_isert_np_enabled(struct iscsi_np *np)
{
	bool on;

	spin_lock_bh(&np->np_thread_lock);
	on = np->enabled;
	spin_unlock_bh(&np->np_thread_lock);
	return on;
}

static int isert_accept_np(struct iscsi_np *np, struct iscsit_conn *conn)
{
	struct weft_isert_addr peer, local;
	void *ctx;
	int ret;

	ret = weft_isert_np_accept(np->np_context, conn, &ctx, &peer, &local);
	if (ret)
		return ret;
	/* LIO holds the module per portal only: a session may outlive its portal's iSER. */
	__module_get(THIS_MODULE);
	conn->context = ctx;
	conn->login_family = np->np_sockaddr.ss_family;
	from_addr(&peer, &conn->login_sockaddr);
	from_addr(&local, &conn->local_sockaddr);
	return 0;
}

static void isert_free_np(struct iscsi_np *np)
{
	weft_isert_np_free(np->np_context);
	np->np_context = NULL;
}

/* What the leading login request says about the session (RFC 7143 11.12). */
static void login_first(struct iscsi_login *login)
{
	const struct iscsi_login_req *req = (const void *)login->req;

	login->leading_connection = !req->tsih;
	login->current_stage = (req->flags & ISCSI_FLAG_LOGIN_CURRENT_STAGE_MASK) >> 2;
	login->version_min = req->min_version;
	login->version_max = req->max_version;
	memcpy(login->isid, req->isid, 6);
	login->cmd_sn = be32_to_cpu(req->cmdsn);
	login->init_task_tag = req->itt;
	login->initial_exp_statsn = be32_to_cpu(req->exp_statsn);
	login->cid = be16_to_cpu(req->cid);
	login->tsih = be16_to_cpu(req->tsih);
}

static int isert_get_login_rx(struct iscsit_conn *conn, struct iscsi_login *login)
{
	u32 len;
	int ret;

	/* Later requests were queued to login_work by weft_isert_login_next. */
	if (!login->first_request)
		return weft_isert_login_wait(conn->context);
	ret = weft_isert_login_first(conn->context, (u8 *)login->req, (u8 *)login->req_buf,
				     MAX_KEY_VALUE_PAIRS, &len);
	if (ret)
		return ret;
	login_first(login);
	return 0;
}

bool weft_isert_login_next(struct iscsit_conn *conn, const u8 *bhs, const u8 *data, u32 len)
{
	struct iscsi_login *login = conn->conn_login;

	if (!login || login->first_request)
		return false;
	memcpy(login->req, bhs, ISCSI_HDR_LEN);
	memcpy(login->req_buf, data, min_t(u32, len, MAX_KEY_VALUE_PAIRS));
	queue_delayed_work(login_wq, &conn->login_work, 0);
	return true;
}

static int isert_put_login_tx(struct iscsit_conn *conn, struct iscsi_login *login, u32 length)
{
	return weft_isert_login_tx(conn->context, (const u8 *)login->rsp, login->rsp_buf, length,
				   login->login_failed, login->login_complete);
}

static void isert_get_rx_pdu(struct iscsit_conn *conn)
{
	weft_isert_full_feature(conn->context);
}

void weft_isert_login_abandoned(struct iscsit_conn *conn)
{
	queue_delayed_work(login_wq, &conn->login_work, 0);
}

void weft_isert_conn_failed(struct iscsit_conn *conn)
{
	iscsit_cause_connection_reinstatement(conn, 0);
}

/* --- received PDUs (RFC 7143 11, as isert hands them to LIO) ------------------------- */

static struct iscsit_cmd *alloc_cmd(struct iscsit_conn *conn)
{
	struct iscsit_cmd *cmd = iscsit_allocate_cmd(conn, TASK_INTERRUPTIBLE);

	if (cmd) {
		memset(&priv_of(cmd)->io, 0, sizeof(priv_of(cmd)->io));
		priv_of(cmd)->cmd = cmd;
	}
	return cmd;
}

static int rx_scsi_cmd(struct iscsit_conn *conn, struct iscsit_cmd *cmd, u8 *bhs, const u8 *data)
{
	struct iscsi_scsi_req *hdr = (void *)bhs;
	bool dump_payload = false;
	u32 imm_len;
	int rc;

	rc = iscsit_setup_scsi_cmd(conn, cmd, bhs);
	if (rc < 0)
		return rc;
	imm_len = cmd->first_burst_len;
	rc = iscsit_process_scsi_cmd(conn, cmd, hdr);
	if (rc < 0)
		return 0;
	if (rc > 0) {
		dump_payload = true;
	} else if (cmd->immediate_data) {
		/* Copied: the receive buffer goes straight back to the ring. */
		sg_copy_from_buffer(cmd->se_cmd.t_data_sg, cmd->se_cmd.t_data_nents, data, imm_len);
		cmd->write_data_done += imm_len;
		if (cmd->write_data_done == cmd->se_cmd.data_length) {
			spin_lock_bh(&cmd->istate_lock);
			cmd->cmd_flags |= ICF_GOT_LAST_DATAOUT;
			cmd->i_state = ISTATE_RECEIVED_LAST_DATAOUT;
			spin_unlock_bh(&cmd->istate_lock);
		}
	} else {
		return 0;
	}
	rc = iscsit_sequence_cmd(conn, cmd, bhs, hdr->cmdsn);
	if (!rc && !dump_payload && cmd->unsolicited_data)
		iscsit_set_unsolicited_dataout(cmd);
	else if (dump_payload && cmd->immediate_data)
		target_put_sess_cmd(&cmd->se_cmd);
	return 0;
}

/* RFC 7145 7.3.4: unsolicited Data-Out travels by SEND; copied into the command's buffer. */
static int rx_data_out(struct iscsit_conn *conn, u8 *bhs, const u8 *data, u32 len)
{
	struct iscsit_cmd *cmd = NULL;
	int rc;

	rc = iscsit_check_dataout_hdr(conn, bhs, &cmd);
	if (rc < 0)
		return rc;
	if (!cmd)
		return 0;
	if (!cmd->unsolicited_data || cmd->write_data_done + len > cmd->se_cmd.data_length) {
		pr_warn_ratelimited("weft_isert: unexpected Data-Out for ITT 0x%08x\n",
				    be32_to_cpu((__force __be32)cmd->init_task_tag));
		return -EINVAL;
	}
	sg_pcopy_from_buffer(cmd->se_cmd.t_data_sg, cmd->se_cmd.t_data_nents, data, len,
			     cmd->write_data_done);
	return iscsit_check_dataout_payload(cmd, (struct iscsi_data *)bhs, false);
}

static int rx_text(struct iscsit_conn *conn, u8 *bhs, const u8 *data, u32 len)
{
	struct iscsi_text *hdr = (void *)bhs;
	struct iscsit_cmd *cmd;
	int rc;

	if (be32_to_cpu(hdr->ttt) != 0xFFFFFFFF)
		cmd = iscsit_find_cmd_from_itt(conn, hdr->itt);
	else
		cmd = alloc_cmd(conn);
	if (!cmd)
		return -ENOMEM;
	rc = iscsit_setup_text_cmd(conn, cmd, hdr);
	if (rc < 0)
		return rc;
	kfree(cmd->text_in_ptr);
	cmd->text_in_ptr = NULL;
	if (len) {
		cmd->text_in_ptr = kmemdup(data, len, GFP_KERNEL);
		if (!cmd->text_in_ptr)
			return -ENOMEM;
	}
	return iscsit_process_text_cmd(conn, cmd, hdr);
}

int weft_isert_rx(struct iscsit_conn *conn, const u8 *cbhs, const u8 *data, u32 len, u32 read_stag,
		  u64 read_va, u32 write_stag, u64 write_va)
{
	u8 bhs[ISCSI_HDR_LEN];
	u8 op = cbhs[0] & ISCSI_OPCODE_MASK;
	struct iscsit_cmd *cmd;

	/* LIO's helpers take a writable header; the receive buffer stays ours. */
	memcpy(bhs, cbhs, sizeof(bhs));
	/* RFC 7143 4.3: a discovery session carries Text and Logout only. */
	if (conn->sess->sess_ops->SessionType && op != ISCSI_OP_TEXT && op != ISCSI_OP_LOGOUT)
		return -EINVAL;
	switch (op) {
	case ISCSI_OP_SCSI_CMD:
		cmd = alloc_cmd(conn);
		if (!cmd)
			return -ENOMEM;
		priv_of(cmd)->io.read_stag = read_stag;
		priv_of(cmd)->io.read_va = read_va;
		priv_of(cmd)->io.write_stag = write_stag;
		priv_of(cmd)->io.write_va = write_va;
		return rx_scsi_cmd(conn, cmd, bhs, data);
	case ISCSI_OP_NOOP_OUT:
		cmd = alloc_cmd(conn);
		if (!cmd)
			return -ENOMEM;
		if (iscsit_setup_nop_out(conn, cmd, (struct iscsi_nopout *)bhs) < 0)
			return 0; /* rejected by LIO, which owns cmd now */
		return iscsit_process_nop_out(conn, cmd, (struct iscsi_nopout *)bhs);
	case ISCSI_OP_SCSI_DATA_OUT:
		return rx_data_out(conn, bhs, data, len);
	case ISCSI_OP_SCSI_TMFUNC:
		cmd = alloc_cmd(conn);
		if (!cmd)
			return -ENOMEM;
		return iscsit_handle_task_mgt_cmd(conn, cmd, bhs);
	case ISCSI_OP_LOGOUT:
		cmd = alloc_cmd(conn);
		if (!cmd)
			return -ENOMEM;
		return iscsit_handle_logout_cmd(conn, cmd, bhs);
	case ISCSI_OP_TEXT:
		return rx_text(conn, bhs, data, len);
	default:
		pr_warn_ratelimited("weft_isert: iSCSI opcode 0x%02x not taken\n", op);
		return -EINVAL;
	}
}

/* --- responses ------------------------------------------------------------------------ */

static void *bhs_of(struct iscsit_cmd *cmd)
{
	return &priv_of(cmd)->io.hdrs[WEFT_ISERT_HDRS_LEN - WEFT_ISERT_BHS_LEN];
}

static void set_data(struct iscsit_cmd *cmd, const void *data, u32 len)
{
	priv_of(cmd)->io.data = len ? data : NULL;
	priv_of(cmd)->io.data_len = ALIGN(len, 4);
}

/* RFC 7143 11.4.7.2: sense data is a 2-byte length, the sense, padding. */
static void build_rsp(struct iscsit_conn *conn, struct iscsit_cmd *cmd)
{
	struct iscsi_scsi_rsp *hdr = bhs_of(cmd);
	struct se_cmd *se = &cmd->se_cmd;

	set_data(cmd, NULL, 0);
	iscsit_build_rsp_pdu(cmd, conn, true, hdr);
	if (se->sense_buffer &&
	    (se->se_cmd_flags & (SCF_TRANSPORT_TASK_SENSE | SCF_EMULATED_TASK_SENSE))) {
		u32 len = se->scsi_sense_length + 2;

		put_unaligned_be16(se->scsi_sense_length, cmd->sense_buffer);
		memset(cmd->sense_buffer + len, 0, ALIGN(len, 4) - len);
		hton24(hdr->dlength, len);
		set_data(cmd, cmd->sense_buffer, len);
	}
}

static int isert_queue_status(struct iscsit_conn *conn, struct iscsit_cmd *cmd)
{
	build_rsp(conn, cmd);
	return weft_isert_send(conn->context, &priv_of(cmd)->io);
}

/* The command's data buffer as (kva, len) pieces; NULL on no memory. */
static struct weft_isert_seg *data_segs(struct se_cmd *se, u32 *n)
{
	struct weft_isert_seg *segs;
	struct scatterlist *sg;
	int i;

	segs = kmalloc_array(max_t(u32, se->t_data_nents, 1), sizeof(*segs), GFP_KERNEL);
	if (!segs)
		return NULL;
	for_each_sg(se->t_data_sg, sg, se->t_data_nents, i) {
		segs[i].kva = (uintptr_t)sg_virt(sg);
		segs[i].len = sg->length;
	}
	*n = se->t_data_nents;
	return segs;
}

/* RFC 7145 7.3.5: data-in by RDMA WRITE, the SCSI Response SENT behind it. */
static int isert_queue_data_in(struct iscsit_conn *conn, struct iscsit_cmd *cmd)
{
	struct weft_isert_seg *segs;
	u32 n = 0;
	int ret;

	build_rsp(conn, cmd);
	segs = data_segs(&cmd->se_cmd, &n);
	if (!segs)
		return -ENOMEM;
	ret = weft_isert_rdma(conn->context, &priv_of(cmd)->io, true, segs, n, 0,
			      cmd->se_cmd.data_length);
	kfree(segs);
	return ret;
}

/* RFC 7145 7.3.6: solicited data-out by RDMA READ (no R2T PDU). */
static int isert_get_dataout(struct iscsit_conn *conn, struct iscsit_cmd *cmd, bool recovery)
{
	struct weft_isert_seg *segs;
	u32 n = 0, done = cmd->write_data_done;
	int ret;

	segs = data_segs(&cmd->se_cmd, &n);
	if (!segs)
		return -ENOMEM;
	ret = weft_isert_rdma(conn->context, &priv_of(cmd)->io, false, segs, n, done,
			      cmd->se_cmd.data_length - done);
	kfree(segs);
	return ret;
}

static int send_ctrl(struct iscsit_conn *conn, struct iscsit_cmd *cmd)
{
	return weft_isert_send(conn->context, &priv_of(cmd)->io);
}

static int isert_immediate_queue(struct iscsit_conn *conn, struct iscsit_cmd *cmd, int state)
{
	switch (state) {
	case ISTATE_REMOVE:
		spin_lock_bh(&conn->cmd_lock);
		list_del_init(&cmd->i_conn_node);
		spin_unlock_bh(&conn->cmd_lock);
		weft_isert_sent(&priv_of(cmd)->io, false);
		return 0;
	case ISTATE_SEND_NOPIN_WANT_RESPONSE:
		set_data(cmd, NULL, 0);
		iscsit_build_nopin_rsp(cmd, conn, bhs_of(cmd), false);
		return send_ctrl(conn, cmd);
	default:
		pr_warn("weft_isert: unknown immediate state %d\n", state);
		return -EINVAL;
	}
}

static int isert_response_queue(struct iscsit_conn *conn, struct iscsit_cmd *cmd, int state)
{
	int ret;

	set_data(cmd, NULL, 0);
	switch (state) {
	case ISTATE_SEND_LOGOUTRSP:
		ret = iscsit_build_logout_rsp(cmd, conn, bhs_of(cmd));
		if (ret)
			return ret;
		ret = send_ctrl(conn, cmd);
		if (!ret)
			weft_isert_logout_posted(conn->context);
		return ret;
	case ISTATE_SEND_NOPIN:
		iscsit_build_nopin_rsp(cmd, conn, bhs_of(cmd), true);
		return send_ctrl(conn, cmd);
	case ISTATE_SEND_TASKMGTRSP:
		iscsit_build_task_mgt_rsp(cmd, conn, bhs_of(cmd));
		return send_ctrl(conn, cmd);
	case ISTATE_SEND_REJECT: {
		struct iscsi_reject *hdr = bhs_of(cmd);

		iscsit_build_reject(cmd, conn, hdr);
		hton24(hdr->dlength, ISCSI_HDR_LEN);
		set_data(cmd, cmd->buf_ptr, ISCSI_HDR_LEN);
		return send_ctrl(conn, cmd);
	}
	case ISTATE_SEND_TEXTRSP:
		ret = iscsit_build_text_rsp(cmd, conn, bhs_of(cmd), ISCSI_INFINIBAND);
		if (ret < 0)
			return ret;
		set_data(cmd, cmd->buf_ptr, ret);
		return send_ctrl(conn, cmd);
	case ISTATE_SEND_STATUS:
		return isert_queue_status(conn, cmd);
	default:
		pr_warn("weft_isert: unknown response state %d\n", state);
		return -EINVAL;
	}
}

/* --- completions: giving commands back to LIO ---------------------------------------- */

static void put_cmd(struct iscsit_cmd *cmd, bool comp_err)
{
	struct iscsit_conn *conn = cmd->conn;
	struct iscsi_text_rsp *hdr;

	switch (cmd->iscsi_opcode) {
	case ISCSI_OP_SCSI_CMD:
		spin_lock_bh(&conn->cmd_lock);
		if (!list_empty(&cmd->i_conn_node))
			list_del_init(&cmd->i_conn_node);
		spin_unlock_bh(&conn->cmd_lock);
		if (cmd->data_direction == DMA_TO_DEVICE) {
			iscsit_stop_dataout_timer(cmd);
			/* Handed to us by write_pending: that reference too. */
			if (comp_err && cmd->se_cmd.t_state == TRANSPORT_WRITE_PENDING)
				target_put_sess_cmd(&cmd->se_cmd);
		}
		transport_generic_free_cmd(&cmd->se_cmd, 0);
		break;
	case ISCSI_OP_SCSI_TMFUNC:
		spin_lock_bh(&conn->cmd_lock);
		if (!list_empty(&cmd->i_conn_node))
			list_del_init(&cmd->i_conn_node);
		spin_unlock_bh(&conn->cmd_lock);
		transport_generic_free_cmd(&cmd->se_cmd, 0);
		break;
	case ISCSI_OP_REJECT:
	case ISCSI_OP_NOOP_OUT:
	case ISCSI_OP_TEXT:
		hdr = bhs_of(cmd);
		/* RFC 7143 11.11.2: a text exchange with C set goes on with this command. */
		if (hdr->flags & ISCSI_FLAG_TEXT_CONTINUE)
			break;
		spin_lock_bh(&conn->cmd_lock);
		if (!list_empty(&cmd->i_conn_node))
			list_del_init(&cmd->i_conn_node);
		spin_unlock_bh(&conn->cmd_lock);
		/* A reject replaced the opcode of a command whose se_cmd LIO set up. */
		if (cmd->se_cmd.se_tfo) {
			transport_generic_free_cmd(&cmd->se_cmd, 0);
			break;
		}
		fallthrough;
	default:
		iscsit_release_cmd(cmd);
		break;
	}
}

/* Control responses finish in a work item: the logout's may close the connection. */
static void ctrl_comp(struct work_struct *w)
{
	struct weft_isert_cmd *p = container_of(w, struct weft_isert_cmd, comp_work);
	struct iscsit_cmd *cmd = p->cmd;
	struct iscsit_conn *conn = cmd->conn;
	void *ctx = conn->context;
	bool counted = p->ctrl_counted;

	switch (cmd->i_state) {
	case ISTATE_SEND_TASKMGTRSP:
		iscsit_tmr_post_handler(cmd, conn);
		fallthrough;
	case ISTATE_SEND_REJECT:
	case ISTATE_SEND_TEXTRSP:
		cmd->i_state = ISTATE_SENT_STATUS;
		put_cmd(cmd, false);
		break;
	case ISTATE_SEND_LOGOUTRSP:
		iscsit_logout_post_handler(cmd, conn);
		break;
	default:
		break;
	}
	if (counted)
		weft_isert_ctrl_hold(ctx, -1);
}

void weft_isert_sent(struct weft_isert_io *io, bool ok)
{
	struct weft_isert_cmd *p = priv_of_io(io);
	struct iscsit_cmd *cmd = p->cmd;

	if (ok) {
		switch (cmd->i_state) {
		case ISTATE_SEND_TASKMGTRSP:
		case ISTATE_SEND_LOGOUTRSP:
		case ISTATE_SEND_REJECT:
		case ISTATE_SEND_TEXTRSP:
			p->ctrl_counted = cmd->i_state != ISTATE_SEND_LOGOUTRSP;
			if (p->ctrl_counted)
				weft_isert_ctrl_hold(cmd->conn->context, 1);
			INIT_WORK(&p->comp_work, ctrl_comp);
			queue_work(comp_wq, &p->comp_work);
			return;
		default:
			cmd->i_state = ISTATE_SENT_STATUS;
			break;
		}
	}
	put_cmd(cmd, !ok);
}

void weft_isert_read_done(struct weft_isert_io *io, bool ok)
{
	struct iscsit_cmd *cmd = priv_of_io(io)->cmd;

	if (!ok) {
		put_cmd(cmd, true);
		return;
	}
	iscsit_stop_dataout_timer(cmd);
	cmd->write_data_done = 0;
	spin_lock_bh(&cmd->istate_lock);
	cmd->cmd_flags |= ICF_GOT_LAST_DATAOUT;
	cmd->i_state = ISTATE_RECEIVED_LAST_DATAOUT;
	spin_unlock_bh(&cmd->istate_lock);
	target_execute_cmd(&cmd->se_cmd);
}

static void isert_aborted_task(struct iscsit_conn *conn, struct iscsit_cmd *cmd)
{
	spin_lock_bh(&conn->cmd_lock);
	if (!list_empty(&cmd->i_conn_node))
		list_del_init(&cmd->i_conn_node);
	spin_unlock_bh(&conn->cmd_lock);
	if (cmd->data_direction == DMA_TO_DEVICE)
		iscsit_stop_dataout_timer(cmd);
}

/* Commands waiting for unsolicited Data-Out that will never come: dropped before the wait. */
static void put_unsol_pending(struct iscsit_conn *conn)
{
	struct iscsit_cmd *cmd, *tmp;
	LIST_HEAD(drop);

	spin_lock_bh(&conn->cmd_lock);
	list_for_each_entry_safe(cmd, tmp, &conn->conn_cmd_list, i_conn_node) {
		if ((cmd->cmd_flags & ICF_NON_IMMEDIATE_UNSOLICITED_DATA) &&
		    cmd->write_data_done < conn->sess->sess_ops->FirstBurstLength &&
		    cmd->write_data_done < cmd->se_cmd.data_length)
			list_move_tail(&cmd->i_conn_node, &drop);
	}
	spin_unlock_bh(&conn->cmd_lock);
	list_for_each_entry_safe(cmd, tmp, &drop, i_conn_node) {
		list_del_init(&cmd->i_conn_node);
		if (cmd->i_state != ISTATE_REMOVE)
			put_cmd(cmd, true);
	}
}

/* Disconnect and flush, then LIO's commands, the logout response, control completions. */
static void isert_wait_conn(struct iscsit_conn *conn)
{
	bool logout = weft_isert_wait_conn(conn->context);

	if (conn->sess) {
		put_unsol_pending(conn);
		target_stop_cmd_counter(conn->cmd_cnt);
		target_wait_for_cmds(conn->cmd_cnt);
	}
	if (logout)
		wait_for_completion_timeout(&conn->conn_logout_comp, SECONDS_FOR_LOGOUT_COMP * HZ);
	weft_isert_wait_ctrl(conn->context);
}

static void isert_free_conn(struct iscsit_conn *conn)
{
	weft_isert_free_conn(conn->context);
	conn->context = NULL;
	module_put(THIS_MODULE);
}

static enum target_prot_op isert_get_sup_prot_ops(struct iscsit_conn *conn)
{
	return TARGET_PROT_NORMAL; /* no signature MRs in Weft's verbs */
}

static struct iscsit_transport weft_isert_transport = {
	.name = "IB/iSER",
	.transport_type = ISCSI_INFINIBAND,
	.rdma_shutdown = true,
	.priv_size = sizeof(struct weft_isert_cmd),
	.owner = THIS_MODULE,
	.iscsit_setup_np = isert_setup_np,
	.iscsit_accept_np = isert_accept_np,
	.iscsit_free_np = isert_free_np,
	.iscsit_wait_conn = isert_wait_conn,
	.iscsit_free_conn = isert_free_conn,
	.iscsit_get_login_rx = isert_get_login_rx,
	.iscsit_put_login_tx = isert_put_login_tx,
	.iscsit_immediate_queue = isert_immediate_queue,
	.iscsit_response_queue = isert_response_queue,
	.iscsit_get_dataout = isert_get_dataout,
	.iscsit_queue_data_in = isert_queue_data_in,
	.iscsit_queue_status = isert_queue_status,
	.iscsit_aborted_task = isert_aborted_task,
	.iscsit_get_rx_pdu = isert_get_rx_pdu,
	.iscsit_get_sup_prot_ops = isert_get_sup_prot_ops,
};

int weft_isert_lio_register(void)
{
	login_wq = alloc_workqueue("weft_isert_login", WQ_UNBOUND, 0);
	comp_wq = alloc_workqueue("weft_isert_comp", WQ_UNBOUND, 0);
	if (!login_wq || !comp_wq) {
		if (login_wq)
			destroy_workqueue(login_wq);
		if (comp_wq)
			destroy_workqueue(comp_wq);
		return -ENOMEM;
	}
	iscsit_register_transport(&weft_isert_transport);
	return 0;
}

void weft_isert_lio_unregister(void)
{
	iscsit_unregister_transport(&weft_isert_transport);
	destroy_workqueue(comp_wq);
	destroy_workqueue(login_wq);
}
