/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between weft_iser's C++ (iSER connections over the RDMA CM: QP, receive
 * buffers, SENDs) and its kernel side, shim_iscsi.c: the iscsi_transport
 * "iser" of scsi_transport_iscsi and libiscsi, its Scsi_Host template,
 * endpoints, sessions, connections and tasks.
 *
 * The shim owns every kernel object and makes no iSER decision.  A C++
 * connection is named by an opaque pointer (@conn); libiscsi's objects by
 * theirs (@iconn: struct iscsi_conn, @task: struct iscsi_task).
 */
#ifndef WEFT_ISER_KAPI_H
#define WEFT_ISER_KAPI_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

/* A sockaddr_in/in6 without the layout: family 2 or 10, port host order, ip network order. */
struct weft_iser_addr {
	uint16_t family, port;
	uint8_t ip[16];
	uint32_t scope_id;
};

/* What a connection supports, for the session's Scsi_Host. */
struct weft_iser_limits {
	uint32_t max_cmds;     /* commands in flight (and task indices: below max_cmds) */
	uint32_t sg_tablesize; /* scatterlist entries per command (4 KiB virt boundary) */
	uint32_t max_sectors;  /* what one fast registration covers, capped by the parameter */
};

/* A SCSI command's data, as the shim found it: a scatterlist, or none. */
struct weft_iser_cmd {
	uint32_t slot;	     /* the task's index in its session (libiscsi's task->itt) */
	uint32_t nsg;	     /* scatterlist entries (weft_iser_shim_cmd_sg) */
	uint32_t len;	     /* the data's length (EDTL) */
	int dir;	     /* WEFT_ISER_DIR_* */
	uint32_t imm_len;    /* immediate data: the first imm_len bytes ride in the command SEND */
	uint32_t unsol_len;  /* more unsolicited data (Data-Out PDUs) after the immediate part */
};

/* One scatterlist entry: kernel address and length. */
struct weft_iser_seg {
	uintptr_t kva;
	uint32_t len;
};
#define WEFT_ISER_DIR_NONE 0
#define WEFT_ISER_DIR_WRITE 1
#define WEFT_ISER_DIR_READ 2

/* The headers slot of a task: 28-byte iSER header then the 48-byte BHS. */
#define WEFT_ISER_HDRS_LEN 76

/* --- the shim, called by the C++ side ----------------------------------------- */

/* A received iSCSI PDU (BHS and data segment) for libiscsi: 0 or an ISCSI_ERR_* code. */
int weft_iser_shim_complete_pdu(void *iconn, const void *bhs, const void *data, uint32_t dlength);
/* iscsi_conn_failure(ISCSI_ERR_CONN_FAILED) (or @datalen_err: ISCSI_ERR_DATALEN). */
void weft_iser_shim_conn_failure(void *iconn, bool datalen_err);
/* The send of a control PDU that gets no response completed: libiscsi's reference goes. */
void weft_iser_shim_put_task(void *task);
/*
 * The next unsolicited Data-Out of @task into @bhs (48 bytes): its
 * offset and length in @off/@len; false when none is left.
 */
bool weft_iser_shim_next_data_out(void *task, void *bhs, uint32_t *off, uint32_t *len);

/* Scatterlist entries @first.. of @task's command, up to @max of them. Atomic context. */
void weft_iser_shim_cmd_sg(void *task, uint32_t first, struct weft_iser_seg *segs, uint32_t max);
/*
 * The task index (task->itt) of the SCSI command a received SCSI Response
 * BHS answers, or -1 when it names none (remote invalidation's check).
 */
int weft_iser_shim_rsp_slot(void *iconn, const void *bhs);

/* shim_iscsi.c, for module.c: the transport "iser" (EEXIST while another has the name). */
int weft_iser_transport_register(void);
void weft_iser_transport_unregister(void);

/* --- the C++ side, called by the shim ------------------------------------------ */

void weft_iser_set_params(uint32_t max_sectors);
int weft_iser_module_init(void);
void weft_iser_module_exit(void);

/* ep_connect: a new connection (one reference for the endpoint), address resolution started. */
void *weft_iser_ep_connect(const struct weft_iser_addr *dst, int *err);
/* ep_poll: 1 connected, 0 not yet after @timeout_ms, -1 failed or interrupted. */
int weft_iser_ep_poll(void *conn, int timeout_ms);
/* ep_disconnect: terminate, release the verbs resources, drop the endpoint's reference. */
void weft_iser_ep_disconnect(void *conn);
/* The peer's address (-ENOTCONN without one). */
int weft_iser_ep_peer(void *conn, struct weft_iser_addr *out);
/* EINVAL unless the connection is up. */
int weft_iser_limits(void *conn, struct weft_iser_limits *out);

/* bind_conn: @iconn from now on (a reference for the binding); EINVAL unless up. */
int weft_iser_bind(void *conn, void *iconn);
/* stop_conn: no PDU reaches @iconn after this returns; the binding's reference goes. */
void weft_iser_unbind(void *conn);

/*
 * Send a control PDU (login, text, logout, NOP-Out, TMF, and SCSI
 * command PDUs through weft_iser_send_command): @hdrs (76 bytes, kept by
 * the task until the send completes), @data of @len bytes.  @login_task:
 * the single login/text task (its response gets the login buffer);
 * @to_ffp: a normal session's login request moving to full feature phase
 * (the receive ring goes up first; a discovery session keeps using the
 * login buffer); @no_response: the task is put when the send completes.
 * Atomic context.  0, -ENOTCONN, -ENOMEM, -ENOBUFS (send queue full).
 */
int weft_iser_send_control(void *conn, void *task, uint8_t *hdrs, const void *data, uint32_t len,
			   bool login_task, bool to_ffp, bool no_response);
/*
 * A SCSI command PDU: its data fast-registered (a new STag for the
 * task's slot, the direction's rights), the STags in the iSER header, its
 * immediate data.  Atomic context.  -EINVAL: the scatterlist is not a
 * page list or the slot is out of range (the command fails).
 */
int weft_iser_send_command(void *conn, void *task, uint8_t *hdrs, const struct weft_iser_cmd *c);
/* The unsolicited Data-Outs left (weft_iser_shim_next_data_out), one SEND each. Atomic context. */
int weft_iser_send_data_outs(void *conn, void *task, const struct weft_iser_cmd *c);
/* cleanup_task: the task's registration is invalidated (unless the target did). Atomic context. */
void weft_iser_task_done(void *conn, uint32_t slot);

WEFT_C_END

#endif
