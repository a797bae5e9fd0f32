/* SPDX-License-Identifier: GPL-2.0 */
/*
 * weft_iser: the iSER initiator (RFC 7145) under libiscsi.  A Conn is one
 * iSER connection: an RDMA CM Id (TCP port space), a verbs Context of its
 * own on the device the address resolved to (PD, DMA MR, CQ, RC QP), the
 * login receive buffer and, in full feature phase, a ring of receive
 * buffers.  Every PDU goes as one SEND of the task's 76-byte headers and
 * its data segment; solicited data moves by the target's RDMA READ and
 * WRITE against the command's own fast registration (reg.cpp): one
 * fast-reg MR per task slot, registered with a new key and only the
 * direction's remote rights ahead of the command SEND, invalidated when
 * libiscsi cleans the task up (or by the target's Send with Invalidate).
 * The DMA MR has local rights only: headers, receive buffers, login data.
 *
 * Lifetimes.  A Conn is counted: one reference for the iscsi endpoint
 * (ep_connect .. ep_disconnect), one for the binding to an iscsi_conn
 * (bind .. stop_conn).  shutdown() takes the verbs objects and the Id
 * down once, from whichever comes first of ep_disconnect, stop_conn and
 * DEVICE_REMOVAL: pointers are handed over under lock_, so exactly one
 * caller destroys each.  Senders (libiscsi's xmit, atomic context) post
 * under lock_ (bottom halves off: nothing takes it in hard interrupt
 * context) and find the QP gone after shutdown().
 */
#ifndef WEFT_ISER_INITIATOR_H
#define WEFT_ISER_INITIATOR_H

#include <weft/rdma_cm/rdma_cm.h>
#include <weft/verbs/verbs.h>

#include "iser_kapi.h"
#include "pdu.h"

namespace weft::iser {

struct Params {
	uint32_t max_sectors;
};
extern Params params;

/* Sizes (RFC 7145 9.1: headers + data segment). */
inline constexpr uint32_t ffp_rx_data = 128;			   /* in-tree ISER_RECV_DATA_SEG_LEN */
inline constexpr uint32_t ffp_rx_len = wire::hdrs_len + ffp_rx_data; /* 204 */
inline constexpr uint32_t login_rx_data = 32768; /* a SendTargets answer up to LIO's limit */
inline constexpr uint32_t login_rx_len = wire::hdrs_len + login_rx_data;
inline constexpr uint32_t max_cmds = 128;
inline constexpr uint32_t rx_ring = max_cmds + 16; /* responses, NOP-Ins, async events */
/* Per command LOCAL_INV, REG_MR, SEND and its unsolicited Data-Outs; control PDUs. */
inline constexpr uint32_t sq_depth = 2048;
inline constexpr uint32_t page_size = 4096; /* the page lists' (and the host's virt boundary) */

class Conn final : public RefCounted<Conn>, public rdma_cm::Handler {
public:
	enum class State : uint8_t { Connecting, Up, Down };

	Conn();
	WEFT_NOCOPY(Conn);
	~Conn();

	Result<void> connect(const rdma_cm::SockAddr &dst);
	int poll_up(int timeout_ms);
	/* Verbs objects and Id gone, no PDU to libiscsi after; idempotent. */
	void shutdown();
	Result<rdma_cm::SockAddr> peer();
	bool up();

	Result<void> bind(void *iconn);
	void unbind();

	int send_control(void *task, uint8_t *hdrs, const void *data, uint32_t len, bool login_task,
			 bool to_ffp, bool no_response);
	int send_command(void *task, uint8_t *hdrs, const weft_iser_cmd &c);
	Result<void> send_data_outs(void *task, const weft_iser_cmd &c);
	/* What one registration covers (limits for the Scsi_Host). */
	void limits(struct weft_iser_limits &out);
	/* The task in @slot is done: its registration goes (IBA 10.6.3.6). */
	void task_done(uint32_t slot);

	int event(const rdma_cm::Event &e) override;

private:
	/* wr_id: the kind in the top bits, a pointer or an index below. */
	static constexpr uint64_t wr_rx = 1ull << 63, wr_login = 1ull << 62, wr_put = 1ull << 61,
				  wr_free = 1ull << 60, wr_mask = wr_free - 1;

	Result<void> setup_verbs(rdma_cm::Id &id);
	void release_verbs();
	void fail(int err);
	void lost(bool datalen);
	Result<void> post_rx_locked(uint32_t i);
	Result<void> post_login_rx_locked();
	Result<void> post_send_locked(uint64_t wr_id, const uint8_t *hdrs, uintptr_t data, uint32_t len,
				      uint32_t lkey);
	/* reg.cpp: fast registration per task slot. */
	Result<void> alloc_regs(verbs::Context &ctx, const verbs::Device &dev);
	Result<void> post_local_locked(verbs::WrOpcode op, uint32_t slot, uint32_t key, uint32_t access);
	Result<uint64_t> register_locked(void *task, const weft_iser_cmd &c, uint32_t access);
	bool remote_invalidated(void *iconn, const uint8_t *bhs, const verbs::Wc &wc);
	static void cq_event(verbs::Cq &cq, void *arg);
	static void poll_work(Work &w);
	void poll();
	void completion(const verbs::Wc &wc);
	void received(const uint8_t *buf, uint32_t cap, const verbs::Wc &wc);

	rdma_cm::SockAddr dst_{};
	WaitQueue waitq_;
	Mutex release_mutex_; /* one shutdown() at a time */
	Work poll_work_;

	SpinLock lock_; /* guards what follows */
	State state_ = State::Connecting;
	int err_ = 0;
	rdma_cm::Id *id_ = nullptr;
	verbs::Context *ctx_ = nullptr;
	verbs::Pd *pd_ = nullptr;
	verbs::Mr *mr_ = nullptr;
	verbs::Cq *cq_ = nullptr;
	verbs::Qp *qp_ = nullptr;
	void *iconn_ = nullptr;
	bool ffp_ = false, login_posted_ = false;
	Array<uint8_t> login_rx_; /* login_rx_len */
	Array<uint8_t> rx_;	  /* rx_ring x ffp_rx_len, from bind */
	/* reg.cpp: one fast-reg MR per task slot (max_cmds), from setup_verbs. */
	bool remote_inv_ = false;	/* the REP: the target may Send with Invalidate */
	uint32_t fr_pages_max_ = 0;	/* pages per MR */
	Array<verbs::Mr *> fr_;		/* freed with the Context */
	Array<uint32_t> fr_key_;	/* each slot's key, as last registered */
	Array<uint8_t> fr_live_;	/* 1: registered, not invalidated since */
	Array<uint64_t> fr_iova_;	/* each slot's region start, as last registered */
	Array<uint64_t> fr_pages_;	/* the page list being built (under lock_) */
};

} // namespace weft::iser

#endif
