/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A soft HCA queue pair and its transport engine (IBA Vol 1 ch. 9).
 *
 * Each QP has one engine: it takes arriving packets from the QP's receive
 * queue (filled by Hca::receive under RCU), runs the responder (requests)
 * and the completer (ACKs, read and atomic responses), and the requester
 * (posted send WQEs).  At most one runner executes it at a time (run_bits_),
 * so transport state is touched by the engine alone and needs no lock;
 * lock_ guards only what post_send/post_recv/modify share with it (ring
 * indices, the state, the attributes as Modify QP last set them).
 * Completions are pushed with no lock held.
 *
 * Modify QP never writes engine state: it records what it changed under
 * lock_ (a new attribute generation, and the PSNs, retry counts or reset
 * it asks for) and the engine takes it up in sync(), under the same lock
 * it takes anyway to read the state, at the start of each packet and of
 * each requester pass.  The engine therefore works from its own copy of
 * the attributes (ea_), never torn by a concurrent RTS->RTS or SQD->SQD.
 *
 * Where it runs (RunCtx): in its work item, or inline in whoever gave it
 * work, so that an in-host message costs no context switch: post_send's
 * caller, or the transmit() of an engine sending it a packet by reference
 * (then it copies the payload from the sender's memory while that is
 * still guaranteed to be there).  An engine that is busy when work arrives
 * is asked to run again by its runner; one that cannot run inline is
 * listed for the outermost runner (RunList) or its work item is queued.
 */
#ifndef WEFT_HCA_QP_H
#define WEFT_HCA_QP_H

#include <weft/verbs/verbs.h>
#include <weft/work.h>

#include "fabric.h"
#include "hca.h"
#include "csum.h"
#include "packet.h"

namespace weft::hca {

inline constexpr uint32_t max_sge = verbs::RecvEntry::max_sge;
/* The largest message a WR may carry (the port's max_msg_sz). */
inline constexpr uint64_t max_msg_sz = 1ull << 31;
inline constexpr uint32_t psn_mask = 0xffffff;

/* IBA 9.7.1: PSNs compare modulo 2^24 within half the space. */
constexpr int32_t psn_diff(uint32_t a, uint32_t b)
{
	return static_cast<int32_t>((a - b) << 8) >> 8;
}

/* Packets of a message of @len bytes at @mtu; a zero-length one still takes one. */
constexpr uint32_t npackets(uint32_t len, uint32_t mtu)
{
	return len ? (len + mtu - 1) / mtu : 1;
}

/*
 * In-host bursts: the packets of a message from @i on, up to the next one
 * that asks for an ACK (every 64th), travel as one by-reference burst
 * (PacketBuf::burst).  With @ends, the FIRST and the LAST go in it too;
 * without (a LAST or FIRST whose headers differ from a MIDDLE's, READ
 * responses), only MIDDLE packets do.
 */
constexpr uint32_t burst_at(uint32_t i, uint32_t n, bool ends = false)
{
	uint32_t to_ack = 64 - i % 64;
	if (ends)
		return to_ack < n - i ? to_ack : n - i;
	if (i == 0 || i + 1 >= n)
		return 1;
	uint32_t to_last = n - 1 - i;
	return to_ack < to_last ? to_ack : to_last;
}

/* The operation part of a BTH opcode (IBA 9.2.1). */
constexpr uint8_t operation(uint8_t opcode)
{
	return opcode & 0x1f;
}

/* IBA 9.2.1: the opcodes a responder sends back to a requester. */
constexpr bool is_response(uint8_t opcode)
{
	uint8_t o = operation(opcode);
	return o >= iba::op::ReadResponseFirst && o <= iba::op::AtomicAcknowledge;
}

struct SendWqe {
	verbs::SendWr wr;
	verbs::Sge sge[max_sge];
	uint32_t length;    /* sum of the SGEs */
	uint32_t first_psn; /* assigned on first transmission */
	uint32_t last_psn;
	uint32_t sent;      /* READ/atomic: response bytes received */
	uint32_t resume;    /* SEND/WRITE: packet index a resend starts at */
	bool started;       /* PSNs assigned */
	bool done;          /* response complete (read/atomic) or ACKed */
	verbs::WcStatus status;
};

using RecvWqe = verbs::RecvEntry;

/* IBA 9.7.5.1.4: the responder keeps recent atomic results for duplicates. */
struct AtomicRecord {
	uint32_t psn;
	bool valid;
	uint64_t orig;
};

class SoftQp;

/* Engines that got packets during a run, for the outermost runner to run after it. */
struct RunList {
	static constexpr uint32_t max = 8;
	Ref<SoftQp> qps[max];
	uint32_t n = 0, next = 0;
	/* Completion events to other CPUs, raised once the last run ends. */
	verbs::CqEventBatch events;

	/* False when full: the caller queues the QP's work item instead. */
	bool add(SoftQp &qp);
	/* Run them all (and whatever they list in turn), then drop them. */
	void run_all(bool can_sleep);
};

/* One run of an engine (see the top of this file). */
struct RunCtx {
	/* Process context holding nothing: may allocate with Gfp::Sleep and call handlers. */
	bool can_sleep;
	/* 0: outermost; 1: inline in a sender's transmit() (RCU held, never deeper). */
	uint8_t depth;
	RunList *later;
	/*
	 * Packets the requester may still send in this run.  Inline runs
	 * borrow the poster's context: past the budget the rest of a WQE is
	 * left to the work item, so posting 8 MiB does not mean copying it all
	 * in the caller (softirq, perhaps).
	 */
	uint32_t budget = can_sleep ? ~0u : inline_budget;
	static constexpr uint32_t inline_budget = 256;
};

class SoftQp final : public verbs::Qp {
public:
	SoftQp(Hca &h, verbs::Pd &pd, const verbs::QpInitAttr &init, uint32_t qpn,
	       Array<SendWqe> sq, Array<RecvWqe> rq, Array<AtomicRecord> history);
	~SoftQp() override;

	Result<void> post_send(const verbs::SendWr &wr) override;
	Result<void> post_recv(const verbs::RecvWr &wr) override;
	verbs::QpState state() const override;
	void query(verbs::QpAttr &out) const override;
	Result<void> modify(const verbs::QpAttr &attr, uint32_t mask, verbs::QpState from) override;
	void shutdown() override;
	Result<void> attach_mcast(const verbs::Gid &mgid, uint16_t mlid) override;
	Result<void> detach_mcast(const verbs::Gid &mgid, uint16_t mlid) override;

	/* Log the engine's state (diagnostics for tests and bug reports). */
	void dump(const char *why);

	/* A packet for this QP arrived on @port (never sleeps). */
	void enqueue(Own<PacketBuf> pkt);

	/*
	 * Run the engine here unless another runner has it (that one runs
	 * again for us) or the QP is being destroyed; true if it ran.
	 */
	bool run_engine(RunCtx &ctx);

	Hca &hca;

private:
	static void run(Work &w);
	static void timer_fired(DelayedWork &w);
	/* Post Send's last step: onto the send queue (@w checked), and run. */
	Result<void> queue_send(const SendWqe &w);
	void kick();
	void engine();
	bool acquire();
	bool release();
	/* Run the engine now if we are in a run that may, else leave it to the work item. */
	void run_or_kick();
	/* An asynchronous event, raised now when the run may call handlers, else from the work item. */
	void raise_event(verbs::EventType t);
	void raise_pending();
	Gfp gfp() const { return cur_ && cur_->can_sleep && cur_->depth == 0 ? Gfp::Sleep : Gfp::Atomic; }
	bool can_call_handlers() const { return cur_ && cur_->can_sleep && cur_->depth == 0; }
	/* Completion events wait for the end of the outermost run (one interrupt a burst). */
	verbs::CqEventBatch *held_events() const { return cur_ ? &cur_->later->events : nullptr; }

	/* engine.cpp: shared pieces */
	/* Engine side: take up what Modify QP recorded; the current state. */
	verbs::QpState sync();
	void reset_engine();
	void apply_locked(const verbs::QpAttr &a, uint32_t mask, verbs::QpState next);
	void to_error();
	void flush();
	void complete_send(SendWqe &w, verbs::WcStatus st);
	/* False if it could not be reported (the QP went to Error, fatal()). */
	bool complete_recv(const RecvWqe &r, const verbs::Wc &wc, bool solicited);
	bool take_recv(RecvWqe &out);
	void set_addressing(PacketSpec &s, const verbs::AhAttr &ah, uint16_t pkey);
	Result<void> transmit(PacketSpec &s);
	void fatal();
	void wait_idle();
	uint16_t pkey() const;
	uint32_t mtu_bytes() const;

	/* ud.cpp */
	verbs::WcStatus ud_send(SendWqe &w);
	verbs::WcStatus ud_send_lso(SendWqe &w);
	void ud_spec(const SendWqe &w, PacketSpec &s);
	verbs::WcStatus ud_transmit(PacketSpec &s);
	void ud_receive(const Packet &p, PacketBuf &buf);
	bool ud_place(const Packet &p, const Payload &data, uint16_t pkey_index, Port &in);
	uint32_t next_psn() const { return next_psn_.load(Order::Relaxed); }
	void set_next_psn(uint32_t v) { next_psn_.store(v & psn_mask, Order::Relaxed); }
	uint32_t epsn() const { return epsn_.load(Order::Relaxed); }
	void set_epsn(uint32_t v) { epsn_.store(v & psn_mask, Order::Relaxed); }
	/* The engine's port (its copy of the QP's, for one consistent run). */
	uint8_t eport() const { return ea_.port_num; }
	/* A message found no receive WQE (hw_counters/out_of_buffer). */
	void count_out_of_buffer();

	/* requester.cpp (RC and UC) */
	void requester();
	enum class Sent : uint8_t { Done, Later, Failed };
	Sent send_one(SendWqe &w);
	void completer(Packet &p);
	void retire();
	void go_back(uint32_t psn);
	void arm_retry_timer();
	void on_timeout();

	/* responder.cpp (RC and UC) */
	void responder(Packet &p);
	void send_ack(uint8_t syndrome, uint32_t psn);
	void nak(uint8_t syndrome);
	bool resp_send(const Packet &p);
	bool resp_write(const Packet &p);
	void resp_read(const Packet &p, uint32_t psn);
	bool resp_atomic(const Packet &p, bool duplicate);

	/* Shared with post/modify: under lock_. */
	mutable SpinLock lock_;
	verbs::QpState state_ = verbs::QpState::Reset;
	verbs::QpAttr attr_;	 /* as Modify QP last set them (query reads these) */
	uint32_t attr_gen_ = 0;	 /* bumped by every Modify QP */
	/* Engine state Modify QP asked to change, for sync() (pend:: bits). */
	uint32_t pend_ = 0;
	struct pend {
		static constexpr uint32_t reset = 1, rq_psn = 2, sq_psn = 4, retries = 8;
	};
	Array<SendWqe> sq_;
	Array<RecvWqe> rq_;
	uint32_t sq_head_ = 0, sq_tail_ = 0; /* free-running; slot = index % size */
	uint32_t rq_head_ = 0, rq_tail_ = 0;
	Atomic<bool> dying_; /* set under rx_lock_ by shutdown(); read by runners without it */
	/* The oldest send WQE is done with (a user QP's ring slot is freed with it). */
	void pop_sq_locked()
	{
		lock_.assert_held();
		sq_head_++;
		if (user)
			user->send_retired();
	}
	bool flushed_ = false;

	/* Arriving packets. */
	SpinLock rx_lock_;
	PacketQueue rxq_;

	/* Engine-only transport state. */
	verbs::QpAttr ea_;	/* the engine's copy of attr_, taken by sync() */
	uint32_t ea_gen_ = 0;
	uint32_t sq_next_ = 0;	/* next WQE to (re)transmit */
	Atomic<uint32_t> next_psn_; /* requester's next new PSN (query reads it) */
	uint32_t acked_psn_ = 0; /* highest PSN acknowledged so far */
	uint32_t rd_atomic_out_ = 0;
	uint8_t retries_left_ = 0, rnr_left_ = 0;
	uint64_t deadline_ = 0; /* local ACK timeout, in jiffies */
	uint64_t timer_due_ = 0; /* when the armed timer fires, in jiffies (0: none) */
	Atomic<bool> rnr_wait_; /* cleared by the RNR timer */
	/* responder */
	Atomic<uint32_t> epsn_; /* expected PSN (query reads it) */
	uint32_t msn_ = 0;
	bool nak_sent_ = false;
	bool last_wqe_reported_ = false;
	bool comm_est_raised_ = false;
	bool fatal_raised_ = false;
	bool in_send_ = false, in_write_ = false;
	RecvWqe cur_recv_{};
	uint32_t recv_off_ = 0;
	CsumAcc recv_csum_; /* the SEND being received (wc_flag::csum) */
	Ref<verbs::Mr> write_mr_;
	uint32_t write_need_ = 0; /* rights rechecked on write_mr_ (Device::lookup_remote) */
	uint64_t write_va_ = 0;
	uint32_t write_left_ = 0, write_total_ = 0;
	Array<AtomicRecord> history_;
	uint32_t history_next_ = 0;
	verbs::Gid sgid_{}, dgid_{}; /* GRH addresses of the packet being built */

	/* Engine ownership: one runner; others set again for it (acquire/release). */
	static constexpr uint32_t run_running = 1, run_again = 2;
	Atomic<uint32_t> run_bits_;
	RunCtx *cur_ = nullptr; /* the run in progress (engine-only) */
	/* Events an inline run could not raise (bit per EventType), for the work item. */
	uint32_t pending_events_ = 0;

	Work work_;
	DelayedWork timer_;
};

/* Copy between registered memory named by SGEs and a flat buffer (sg.cpp). */
struct SgRef {
	const verbs::Sge *sge;
	uint32_t n;
};
Result<void> sg_gather(verbs::Device &dev, verbs::Pd &pd, SgRef sg, size_t off, Bytes dst,
		       CsumAcc *acc = nullptr);
/*
 * Place @src's bytes at @off of the SGE list (local write access needed);
 * with @acc, summed as they are copied (csum.h).
 */
Result<void> sg_scatter(verbs::Device &dev, verbs::Pd &pd, SgRef sg, size_t off, const Payload &src,
			CsumAcc *acc = nullptr);
/* That [off, off+len) of the list is registered memory of @pd (what sg_gather would read). */
Result<void> sg_check(verbs::Device &dev, verbs::Pd &pd, SgRef sg, size_t off, size_t len);
size_t sg_length(SgRef sg);
/* Place @src at @va of @mr, checking @need (RDMA WRITE at the responder). */
Result<void> mr_place(const verbs::Mr &mr, uint64_t va, const Payload &src, uint32_t need);

/*
 * PacketSpec::fill from an SGE list at an offset: one copy, memory to
 * wire.  With @csum (send_flag::csum) the checksum is inserted: by the
 * receiver on the in-host path (CsumAcc), else here into the packet.
 */
struct SgFill {
	verbs::Device *dev;
	verbs::Pd *pd;
	SgRef sg;
	size_t off;
	bool csum = false;
	CsumInsert ins;
	uint32_t msg_len = 0;
};
Result<void> sg_fill(void *sg_fill_ctx, size_t off, Bytes dst, CsumAcc *acc);
/* The Internet checksum sum of [off, off + len) of the list, its first byte taken as even. */
Result<uint32_t> sg_sum(verbs::Device &dev, verbs::Pd &pd, SgRef sg, size_t off, size_t len);
/* The SgFill of a send WQE's gather list (its checksum request included). */
SgFill sg_fill_of(verbs::Device &dev, verbs::Pd &pd, const SendWqe &w);

} // namespace weft::hca

#endif
