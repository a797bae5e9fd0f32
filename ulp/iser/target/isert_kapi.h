/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between weft_isert's C++ (the iSER connections: listeners, QPs, receive
 * rings, SENDs and RDMA, conn.cpp/np.cpp) and its LIO side (shim_lio.c):
 * the iscsit_transport "IB/iSER" that iscsi_target_mod looks up by type
 * (ISCSI_INFINIBAND) when targetcli sets enable_iser on a portal.
 *
 * The shim owns every LIO object (iscsi_np, iscsit_conn, iscsit_cmd,
 * se_cmd) and calls LIO's helpers in the order LIO expects; it makes no
 * iSER decision.  The C++ side owns the wire: it never sees a kernel
 * struct, only the opaque pointers below and struct weft_isert_io, which
 * lives in each command's private area (iscsit_priv_cmd).
 */
#ifndef WEFT_ISERT_KAPI_H
#define WEFT_ISERT_KAPI_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

struct iscsi_np;
struct iscsit_conn;

/* RFC 7145 9.2: the iSER header (28) and the iSCSI BHS (48) of a PDU. */
#define WEFT_ISERT_HDRS_LEN 76
#define WEFT_ISERT_BHS_LEN 48

/* An IP socket address (sockaddr_in/in6 without the layout); ip in network order. */
struct weft_isert_addr {
	uint16_t family; /* AF_INET, AF_INET6 */
	uint16_t port;	 /* host order */
	uint8_t ip[16];
	uint32_t scope_id;
};

/* One piece of a command's data buffer (kernel addresses). */
struct weft_isert_seg {
	uintptr_t kva;
	uint32_t len;
};

/*
 * What one command (or control PDU) sends: in its iscsit_cmd's private
 * area, filled by the shim (BHS, data, the initiator's STags), posted and
 * completed by the C++ side.  Kept until the send completes.
 */
struct weft_isert_io {
	uint8_t hdrs[WEFT_ISERT_HDRS_LEN]; /* iSER header (the C++ side's) + BHS (the shim's) */
	const void *data;		   /* data segment after the BHS, or NULL */
	uint32_t data_len;		   /* its length, padded to 4 by the shim */
	uint32_t read_stag, write_stag;	   /* the initiator's, from the command's iSER header */
	uint64_t read_va, write_va;
	uint32_t n_wr; /* send queue slots this post took (the C++ side's) */
};

/* --- the C++ side, called by the shim ----------------------------------------------- */

/* Module init/exit. */
int weft_isert_init(void);
void weft_isert_exit(void);

/* Listen on @addr in the calling task's network namespace (iscsit_setup_np). */
int weft_isert_np_setup(struct iscsi_np *np, const struct weft_isert_addr *addr, void **np_ctx);
/*
 * Wait (interruptibly) for an established connection and give it to LIO's
 * @conn: 0 and *conn_ctx, the peer's and the local address; -ENODEV when
 * the wait was interrupted or the portal is going (weft_isert_np_stopping).
 */
int weft_isert_np_accept(void *np_ctx, struct iscsit_conn *conn, void **conn_ctx,
			 struct weft_isert_addr *peer, struct weft_isert_addr *local);
/* Stop listening; release every connection LIO never took. */
void weft_isert_np_free(void *np_ctx);

/*
 * The first login request (interruptible wait): its BHS in @bhs, up to
 * @max data bytes copied to @data, *data_len set.  -EINTR, -ENOTCONN.
 */
int weft_isert_login_first(void *c, uint8_t bhs[WEFT_ISERT_BHS_LEN], uint8_t *data, uint32_t max,
			   uint32_t *data_len);
/* Wait for the next login request (it was handed to weft_isert_login_next). */
int weft_isert_login_wait(void *c);
/*
 * Send a login response (BHS + @len bytes of @data).  Unless @failed the
 * login receive is re-posted first; with @complete the send is deferred
 * to weft_isert_full_feature (so the receive ring is posted before the
 * initiator learns the login succeeded).
 */
int weft_isert_login_tx(void *c, const uint8_t bhs[WEFT_ISERT_BHS_LEN], const void *data,
			uint32_t len, bool failed, bool complete);
/*
 * LIO's RX thread (iscsit_get_rx_pdu): post the receive ring, send the
 * deferred final login response, then sleep until signalled: PDUs arrive
 * by completion, never by this thread.
 */
void weft_isert_full_feature(void *c);
/* SEND @io (iSER header filled here, BHS and data by the shim); completion: weft_isert_sent. */
int weft_isert_send(void *c, struct weft_isert_io *io);
/*
 * RDMA the command's data: @write: RDMA WRITE @len bytes of @segs to the
 * initiator's read STag/VA, then SEND @io's response (weft_isert_sent);
 * else RDMA READ @len bytes from its write STag/VA (already past the
 * unsolicited data) into @segs from byte @offset
 * (weft_isert_read_done).  -EAGAIN: no send queue room now, LIO retries.
 */
int weft_isert_rdma(void *c, struct weft_isert_io *io, bool write, const struct weft_isert_seg *segs,
		    uint32_t nsegs, uint32_t offset, uint32_t len);
/* Control responses in flight (held while their completion work runs). */
void weft_isert_ctrl_hold(void *c, int delta);
/* The initiator logged out: iscsit_wait_conn waits for this response's completion. */
void weft_isert_logout_posted(void *c);
/* iscsit_wait_conn: disconnect, wait for every WR to complete; whether a logout response went. */
bool weft_isert_wait_conn(void *c);
/* Then: wait for the control completions still running. */
void weft_isert_wait_ctrl(void *c);
/* iscsit_free_conn: release everything. */
void weft_isert_free_conn(void *c);

/* Counters for the module's read-only parameters. */
struct weft_isert_stats {
	uint64_t accepted, rejected, dropped, conns;
};
void weft_isert_get_stats(struct weft_isert_stats *s);

/* --- the shim, called by the C++ side (process context) ------------------------------ */

/* Module init/exit: the transport registered with LIO. */
int weft_isert_lio_register(void);
void weft_isert_lio_unregister(void);
/* Whether LIO is resetting or shutting the portal's login thread down. */
bool weft_isert_np_stopping(struct iscsi_np *np);
/* Whether the portal takes connections (its TPG enabled). */
bool weft_isert_np_enabled(struct iscsi_np *np);
/*
 * A login request after the first one: copied into LIO's login and its
 * login work queued.  False if LIO is still waiting for its first request
 * (weft_isert_login_first takes it then).
 */
bool weft_isert_login_next(struct iscsit_conn *conn, const uint8_t *bhs, const uint8_t *data,
			   uint32_t data_len);
/*
 * A full-feature PDU (BHS, data of @data_len bytes, checked to lie in
 * what was received; the STags of its iSER header): handed to LIO.
 * Negative: the connection must be reinstated.
 */
int weft_isert_rx(struct iscsit_conn *conn, const uint8_t *bhs, const uint8_t *data,
		  uint32_t data_len, uint32_t read_stag, uint64_t read_va, uint32_t write_stag,
		  uint64_t write_va);
/* @io's SEND completed (or was flushed: !@ok). */
void weft_isert_sent(struct weft_isert_io *io, bool ok);
/* @io's RDMA READ completed (or was flushed). */
void weft_isert_read_done(struct weft_isert_io *io, bool ok);
/* The transport failed under LIO's connection: reinstate it (does not wait). */
void weft_isert_conn_failed(struct iscsit_conn *conn);
/*
 * The connection went while LIO waits for its next login request: LIO's
 * login work is queued, finds no request (weft_isert_login_wait fails)
 * and drops the login, giving the TPG's login lock back (LIO's TCP
 * portals do the same from the socket's state change).
 */
void weft_isert_login_abandoned(struct iscsit_conn *conn);

WEFT_C_END

#endif
