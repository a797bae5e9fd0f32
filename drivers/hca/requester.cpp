// SPDX-License-Identifier: GPL-2.0
/*
 * RC and UC requester and completer (IBA 9.7.2-9.7.6, 9.8).  WQEs are sent
 * whole, PSNs assigned once; ACKs retire them in order; NAKs and the local
 * ACK timeout go back to the WQE holding the PSN and resend from there
 * (the responder treats what it already has as duplicates).
 */
#include "qp.h"

namespace weft::hca {

using verbs::QpType;
using verbs::WcStatus;
using verbs::WrOpcode;
using namespace iba::op;

namespace {

bool is_read_or_atomic(WrOpcode op)
{
	return op == WrOpcode::RdmaRead || op == WrOpcode::AtomicCmpSwap ||
	       op == WrOpcode::AtomicFetchAdd;
}

/* IBA 9.2.1: the opcode of packet @i of @n of a SEND or WRITE. */
uint8_t data_opcode(WrOpcode op, uint32_t i, uint32_t n)
{
	bool send = op == WrOpcode::Send || op == WrOpcode::SendWithImm || op == WrOpcode::SendWithInv;
	bool imm = op == WrOpcode::SendWithImm || op == WrOpcode::RdmaWriteWithImm;
	bool inv = op == WrOpcode::SendWithInv;
	if (n == 1)
		return send ? (imm ? SendOnlyImm : inv ? SendOnlyInv : SendOnly)
			    : (imm ? WriteOnlyImm : WriteOnly);
	if (i == 0)
		return send ? SendFirst : WriteFirst;
	if (i + 1 < n)
		return send ? SendMiddle : WriteMiddle;
	return send ? (imm ? SendLastImm : inv ? SendLastInv : SendLast)
		    : (imm ? WriteLastImm : WriteLast);
}

bool is_local(WrOpcode op)
{
	return op == WrOpcode::RegMr || op == WrOpcode::LocalInv || op == WrOpcode::BindMw;
}

/* IBA 9.3.6: the AETH syndrome's class bits (ACK, RNR NAK, NAK). */
constexpr uint8_t syn_kind(uint8_t s) { return (s >> 5) & 3; }
constexpr uint8_t kind_ack = 0, kind_rnr = 1, kind_nak = 3;

} // namespace

SoftQp::Sent SoftQp::send_one(SendWqe &w)
{
	const uint32_t mtu = mtu_bytes();
	const WrOpcode op = w.wr.opcode;
	/* IBA 9.7.1: a READ uses one PSN per response packet, an atomic one. */
	uint32_t n = op == WrOpcode::AtomicCmpSwap || op == WrOpcode::AtomicFetchAdd
			     ? 1
			     : npackets(w.length, mtu);
	if (!w.started) {
		w.first_psn = next_psn();
		w.last_psn = (w.first_psn + n - 1) & psn_mask;
		set_next_psn(w.first_psn + n);
		w.started = true;
		if (is_read_or_atomic(op))
			rd_atomic_out_++;
	}
	const iba::Transport tr = type == QpType::Uc ? iba::Transport::Uc : iba::Transport::Rc;
	PacketSpec s;
	set_addressing(s, ea_.ah_attr, pkey());
	s.dqp = ea_.dest_qp_num;
	SgFill g = sg_fill_of(hca, pd, w);
	Result<void> r = ok();
	if (is_read_or_atomic(op)) {
		s.psn = w.first_psn;
		s.ackreq = true;
		s.va = op == WrOpcode::RdmaRead ? w.wr.rdma.remote_addr : w.wr.atomic.remote_addr;
		s.rkey = op == WrOpcode::RdmaRead ? w.wr.rdma.rkey : w.wr.atomic.rkey;
		s.dmalen = op == WrOpcode::RdmaRead ? w.length : 8;
		s.swap_add = op == WrOpcode::AtomicCmpSwap ? w.wr.atomic.swap : w.wr.atomic.compare_add;
		s.compare = w.wr.atomic.compare_add;
		s.opcode = iba::opcode(tr, op == WrOpcode::RdmaRead	   ? ReadRequest
					   : op == WrOpcode::AtomicCmpSwap ? CompareSwap
									   : FetchAdd);
		w.sent = 0; /* bytes of response received */
		r = transmit(s);
		if (!r && r.error().code() == err::ENOMEM && gfp() == Gfp::Atomic) {
			w.resume = 0;
			return Sent::Later;
		}
	} else {
		/* IBA 10.7.3.1: the gather list is checked here, so its errors stay local. */
		r = sg_check(hca, pd, g.sg, 0, w.length);
		/* A resend starts at the first packet not acknowledged (IBA 9.7.5.2.1). */
		uint32_t from = w.resume < n ? w.resume : 0;
		w.resume = 0;
		/* A plain SEND's FIRST, MIDDLE and LAST headers are alike: one burst (IBA 9.2.1). */
		const bool ends = op == WrOpcode::Send;
		for (uint32_t i = from, k; i < n && r; i += k) {
			uint32_t off = i * mtu;
			k = burst_at(i, n, ends);
			if (cur_->budget < k) {
				w.resume = i;
				return Sent::Later;
			}
			cur_->budget -= k;
			s.burst = k;
			s.opcode = iba::opcode(tr, data_opcode(op, i, n));
			s.mid_op = iba::opcode(tr, data_opcode(op, 1, 3)); /* a MIDDLE's */
			s.last_op = iba::opcode(tr, data_opcode(op, i + k - 1, n));
			s.psn = (w.first_psn + i) & psn_mask;
			bool last = i + k == n;
			/* IBA 9.7.2: ask for an ACK at message end and now and then. */
			s.ackreq = type == QpType::Rc && (last || ((i + k - 1) % 64) == 63);
			s.se = last && (w.wr.send_flags & verbs::send_flag::solicited);
			s.imm = w.wr.imm_data;
			s.inv_rkey = w.wr.invalidate_rkey;
			s.va = w.wr.rdma.remote_addr;
			s.rkey = w.wr.rdma.rkey;
			s.dmalen = w.length;
			g.off = off;
			s.fill = sg_fill;
			s.fill_ctx = &g;
			s.fill_len = min(mtu, w.length - min(off, w.length));
			s.burst_len = min(size_t(k) * mtu, size_t(w.length - min(off, w.length)));
			r = transmit(s);
			/* Out of atomic memory inline: the work item resumes here, and may sleep. */
			if (!r && r.error().code() == err::ENOMEM && gfp() == Gfp::Atomic) {
				w.resume = i;
				return Sent::Later;
			}
		}
	}
	if (!r) {
		int e = r.error().code();
		w.status = e == err::EACCES || e == err::EFAULT || e == err::EMSGSIZE
				   ? WcStatus::LocProtErr
				   : WcStatus::LocQpOpErr;
		return Sent::Failed;
	}
	return Sent::Done;
}

void SoftQp::requester()
{
	bool ud = type != QpType::Rc && type != QpType::Uc;
	if (type == QpType::Rc && sq_head_ != sq_next_ && deadline_ &&
	    static_cast<int64_t>(weft_jiffies() - deadline_) >= 0)
		on_timeout();
	if (rnr_wait_.load(Order::Relaxed) || sync() == verbs::QpState::Err)
		return;
	for (;;) {
		SendWqe *w;
		{
			SpinGuardBh g(lock_);
			if (sq_next_ == sq_tail_)
				break;
			w = &sq_[sq_next_ % sq_.size()];
			/* IBA 10.3.1 SQD: finish what started, begin nothing new. */
			if (state_ == verbs::QpState::Sqd && !w->started)
				break;
		}
		if (w->done) {
			sq_next_++;
			continue;
		}
		if (w->wr.opcode == WrOpcode::Malformed) {
			/* IBA 11.6.2: the WQE cannot be executed: Local QP Operation Error. */
			w->status = WcStatus::LocQpOpErr;
			w->done = true;
			sq_next_++;
			to_error();
			return;
		}
		if (is_local(w->wr.opcode)) {
			/* IBA 10.6.3.5-6, 10.6.7.2: executed in order by the send queue, no packet. */
			const WrOpcode op = w->wr.opcode;
			auto r = op == WrOpcode::RegMr
					 ? hca.fast_register(*w->wr.reg.mr, pd, w->wr.reg.key, w->wr.reg.access)
				 : op == WrOpcode::BindMw ? hca.bind_mw(*this, w->wr)
							  : hca.invalidate(w->wr.invalidate_rkey, pd);
			/* IBA 11.6.2: a failed bind is a Memory Window Bind Error. */
			w->status = r ? WcStatus::Success
				    : op == WrOpcode::BindMw ? WcStatus::MwBindErr
							     : WcStatus::LocProtErr;
			w->done = true;
			sq_next_++;
			if (!r) {
				to_error();
				return;
			}
			if (ud) {
				complete_send(*w, WcStatus::Success);
				SpinGuardBh g(lock_);
				pop_sq_locked();
			} else {
				retire();
			}
			continue;
		}
		if (ud) {
			WcStatus st = ud_send(*w);
			complete_send(*w, st);
			SpinGuardBh g(lock_);
			pop_sq_locked();
			sq_next_++;
			if (st != WcStatus::Success)
				break;
			continue;
		}
		bool ra = is_read_or_atomic(w->wr.opcode);
		uint32_t depth = ea_.max_rd_atomic ? ea_.max_rd_atomic : 1;
		/* IBA 9.4.4, 10.8.3.3: initiator depth and the fence. */
		if (!w->started && ((ra && rd_atomic_out_ >= depth) ||
				    ((w->wr.send_flags & verbs::send_flag::fence) && rd_atomic_out_)))
			break;
		Sent sent = send_one(*w);
		if (sent == Sent::Later) {
			kick();
			break;
		}
		if (sent == Sent::Failed) {
			w->done = true;
			to_error();
			return;
		}
		sq_next_++;
		if (type == QpType::Uc) {
			/* IBA 9.8.2: UC completes once sent; nothing comes back. */
			w->done = true;
			retire();
		}
	}
	arm_retry_timer(); /* RC only; UD and UC have nothing to time */
}

void SoftQp::retire()
{
	for (;;) {
		SendWqe *w;
		{
			SpinGuardBh g(lock_);
			if (sq_head_ == sq_next_)
				break;
			w = &sq_[sq_head_ % sq_.size()];
			if (!w->done)
				break;
		}
		if (w->status != WcStatus::Success)
			break; /* the flush completes it with its error */
		complete_send(*w, WcStatus::Success);
		SpinGuardBh g(lock_);
		pop_sq_locked();
	}
}

void SoftQp::arm_retry_timer()
{
	if (type != QpType::Rc || sq_head_ == sq_next_) {
		deadline_ = 0;
		return;
	}
	uint64_t us = verbs::ack_timeout_us(ea_.timeout);
	if (!us)
		return; /* IBA 9.7.6.1.3: 0 disables the timer */
	unsigned long ms = static_cast<unsigned long>(us / 1000) + 1;
	uint64_t now = weft_jiffies();
	deadline_ = now + weft_msecs_to_jiffies(static_cast<unsigned int>(ms));
	/*
	 * One timer in flight at a time: re-arming it for every packet is
	 * most of the cost of a small message.  A pending timer that fires
	 * before the deadline finds nothing due and is armed again from here,
	 * so a timeout is detected between one and two timeouts late.
	 */
	if (timer_due_ && static_cast<int64_t>(now - timer_due_) < 0)
		return;
	timer_due_ = deadline_;
	timer_.modify(ms);
}

/* Resend from the WQE holding @psn (IBA 9.7: go-back-N retry). */
void SoftQp::go_back(uint32_t psn)
{
	for (uint32_t i = sq_head_; i != sq_next_; i++) {
		SendWqe &w = sq_[i % sq_.size()];
		if (!w.done && psn_diff(psn, w.last_psn) <= 0) {
			uint32_t sent_upto = sq_next_;
			sq_next_ = i;
			int32_t at = psn_diff(psn, w.first_psn);
			w.resume = at > 0 ? static_cast<uint32_t>(at) : 0;
			/* Later WQEs resend whole: their packets may all be lost. */
			for (uint32_t j = i + 1; j != sent_upto; j++)
				sq_[j % sq_.size()].resume = 0;
			return;
		}
	}
}

/* IBA 9.7.6.1.3: local ACK timeout; retry_cnt tries, then the error. */
void SoftQp::on_timeout()
{
	SendWqe &w = sq_[sq_head_ % sq_.size()];
	if (retries_left_ == 0) {
		w.status = WcStatus::RetryExcErr;
		w.done = true;
		to_error();
		return;
	}
	retries_left_--;
	go_back(w.first_psn);
}

void SoftQp::completer(Packet &p)
{
	if (type != QpType::Rc)
		return;
	const uint32_t psn = p.psn();
	const uint8_t op = operation(p.bth->opcode.get());
	SendWqe *target = nullptr;
	for (uint32_t i = sq_head_; i != sq_next_; i++) {
		SendWqe &w = sq_[i % sq_.size()];
		if (psn_diff(psn, w.first_psn) >= 0 && psn_diff(psn, w.last_psn) <= 0) {
			target = &w;
			break;
		}
	}
	/* IBA 9.7: a response implicitly acknowledges every SEND/WRITE before it. */
	uint32_t acked_upto = psn;
	if (op == Acknowledge) {
		uint8_t syn = iba::Aeth::Syndrome::get(p.aeth->syn_msn);
		if (syn_kind(syn) != kind_ack) {
			if (syn_kind(syn) == kind_rnr && target) {
				/* IBA 9.7.5.2.8: wait the timer, resend; 7 retries forever. */
				if (ea_.rnr_retry != 7 && rnr_left_-- == 0) {
					target->status = WcStatus::RnrRetryExcErr;
					target->done = true;
					to_error();
					return;
				}
				go_back(psn);
				rnr_wait_.store(true, Order::Relaxed);
				unsigned int ms = static_cast<unsigned int>(verbs::rnr_timer_us(syn & 0x1f) / 1000 + 1);
				timer_due_ = weft_jiffies() + weft_msecs_to_jiffies(ms);
				timer_.modify(ms);
				return;
			}
			if (syn_kind(syn) == kind_nak) {
				uint8_t code = syn & 0x1f;
				if (code == 0) { /* PSN sequence error: resend from there */
					go_back(psn);
					return;
				}
				if (target) {
					target->status = code == 1   ? WcStatus::RemInvReqErr
							 : code == 2 ? WcStatus::RemAccessErr
								     : WcStatus::RemOpErr;
					target->done = true;
				}
				acked_upto = (psn - 1) & psn_mask;
			}
		}
	}
	/* Coalesced ACKs in the middle of a long message are progress too. */
	bool progress = psn_diff(acked_upto, acked_psn_) > 0 && psn_diff(acked_upto, next_psn()) < 0;
	if (progress)
		acked_psn_ = acked_upto;
	for (uint32_t i = sq_head_; i != sq_next_; i++) {
		SendWqe &w = sq_[i % sq_.size()];
		if (is_read_or_atomic(w.wr.opcode) && !w.done)
			break;
		if (psn_diff(acked_upto, w.last_psn) < 0)
			break;
		progress |= !w.done;
		w.done = true;
	}
	if (target && !target->done && (op == ReadResponseFirst || op == ReadResponseMiddle ||
					 op == ReadResponseLast || op == ReadResponseOnly)) {
		uint32_t expect = (target->first_psn + target->sent / mtu_bytes()) & psn_mask;
		/* A burst of responses partly placed already: place the rest. */
		if (p.burst > 1 && psn_diff(expect, psn) > 0 && psn_diff(expect, p.last_psn()) <= 0)
			p.skip(static_cast<uint32_t>(psn_diff(expect, psn)));
		if (p.psn() == expect) {
			progress = true;
			SgRef sg{target->sge, static_cast<uint32_t>(target->wr.sg.size())};
			auto r = sg_scatter(hca, pd, sg, target->sent, p.data);
			target->sent += static_cast<uint32_t>(p.data.size());
			if (!r) {
				target->status = WcStatus::LocProtErr;
				target->done = true;
			} else if (op == ReadResponseLast || op == ReadResponseOnly) {
				target->done = true;
				if (target->sent != target->length)
					target->status = WcStatus::BadRespErr;
			}
			if (target->done)
				rd_atomic_out_--;
		}
	}
	if (target && !target->done && op == AtomicAcknowledge && p.atomic_ack_eth) {
		uint64_t orig = p.atomic_ack_eth->orig.get();
		SgRef sg{target->sge, static_cast<uint32_t>(target->wr.sg.size())};
		auto r = sg_scatter(hca, pd, sg, 0, Payload::of(ConstBytes(reinterpret_cast<uint8_t *>(&orig), 8)));
		target->done = true;
		progress = true;
		if (!r)
			target->status = WcStatus::LocProtErr;
		rd_atomic_out_--;
	}
	/*
	 * IBA 9.7.6.1.3, 9.7.5.2.8: forward progress starts the retry counters
	 * over; a duplicate ACK that acknowledges nothing new does not.
	 */
	if (progress) {
		retries_left_ = ea_.retry_cnt;
		rnr_left_ = ea_.rnr_retry;
	}
	retire();
	if (target && target->done && target->status != WcStatus::Success) {
		to_error();
		return;
	}
	arm_retry_timer();
}

} // namespace weft::hca
