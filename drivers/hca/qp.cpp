// SPDX-License-Identifier: GPL-2.0
/*
 * Soft HCA QPs, the verbs side: post, query, modify, multicast membership
 * and destroy (IBA 11.2.4-11.2.5, 11.3.1, 11.4).  What these share with
 * the engine (engine.cpp) and how, is at the top of qp.h.
 */
#include <weft/log.h>

#include "lso.h"
#include "qp.h"

namespace weft::hca {

using verbs::QpState;
using verbs::QpType;
using verbs::WrOpcode;

SoftQp::SoftQp(Hca &h, verbs::Pd &pd, const verbs::QpInitAttr &init, uint32_t num,
	       Array<SendWqe> sq, Array<RecvWqe> rq, Array<AtomicRecord> history)
	: verbs::Qp(h, pd, init, num), hca(h), lock_(WEFT_LOCK_CLASS("weft_hca_qp")),
	  sq_(move(sq)), rq_(move(rq)), rx_lock_(WEFT_LOCK_CLASS("weft_hca_qp_rx")),
	  history_(move(history)), work_(run, WEFT_LOCK_CLASS("weft_hca_qp_engine")),
	  timer_(timer_fired, WEFT_LOCK_CLASS("weft_hca_qp_timer"))
{
	/* IBA 10.2.5: QP1 always uses the well-known GSI Q_Key. */
	if (type == QpType::Gsi)
		attr_.qkey = 0x80010000;
	attr_.port_num = init.port; /* Smi/Gsi: their port from creation */
	ea_ = attr_;
}

SoftQp::~SoftQp()
{
	while (PacketBuf *b = rxq_.pop_front())
		delete b;
}

QpState SoftQp::state() const
{
	SpinGuardBh g(lock_);
	return state_;
}

/*
 * IBA 11.4.1.2 Query QP: the current attributes.  The PSNs are the
 * engine's now (the send PSN the next new request gets, the PSN the
 * responder expects next), not those last set by Modify QP: a consumer
 * can tell a connection that carried nothing since it last looked.
 */
void SoftQp::query(verbs::QpAttr &out) const
{
	SpinGuardBh g(lock_);
	out = attr_;
	out.state = out.cur_state = state_;
	out.cap = cap;
	/* PSNs Modify QP set and the engine has not taken up yet are the current ones. */
	const uint32_t p = ea_gen_ == attr_gen_ ? 0 : pend_;
	out.sq_psn = (p & pend::sq_psn) ? attr_.sq_psn & psn_mask : next_psn();
	if (type == QpType::Rc || type == QpType::Uc)
		out.rq_psn = (p & pend::rq_psn) ? attr_.rq_psn & psn_mask : epsn();
}

/* IBA 11.4.1.1 Post Send Request: checked here, executed by the engine. */
Result<void> SoftQp::post_send(const verbs::SendWr &wr)
{
	if (wr.sg.size() > cap.max_send_sge || wr.sg.size() > max_sge)
		return Error(err::EINVAL);
	bool ud = type == QpType::Ud || type == QpType::Gsi || type == QpType::Smi;
	switch (wr.opcode) {
	case WrOpcode::Send:
	case WrOpcode::SendWithImm:
		break;
	case WrOpcode::RdmaWrite:
	case WrOpcode::RdmaWriteWithImm:
		if (ud)
			return Error(err::EINVAL);
		break;
	case WrOpcode::RdmaRead:
	case WrOpcode::AtomicCmpSwap:
	case WrOpcode::AtomicFetchAdd:
	case WrOpcode::SendWithInv: /* IBA 10.6.3.6: RC only, as reads and atomics */
		if (type != QpType::Rc)
			return Error(err::EINVAL);
		break;
	case WrOpcode::RegMr:
		if (!wr.reg.mr)
			return Error(err::EINVAL);
		break;
	case WrOpcode::LocalInv:
		break;
	case WrOpcode::BindMw: /* IBA 10.6.7.2.2: on RC and UC QPs, no data */
		if ((type != QpType::Rc && type != QpType::Uc) || wr.sg.size())
			return Error(err::EINVAL);
		break;
	case WrOpcode::Malformed: {
		SendWqe w{};
		w.wr = wr;
		w.wr.sg = {};
		return queue_send(w);
	}
	case WrOpcode::Lso:
		if (type != QpType::Ud)
			return Error(err::EINVAL);
		break;
	default:
		return Error(err::EINVAL);
	}
	if (ud && !wr.ud.ah)
		return Error(err::EINVAL);
	if (wr.send_flags & verbs::send_flag::inline_data)
		return Error(err::EINVAL); /* max_inline_data is 0 */
	SendWqe w{};
	w.wr = wr;
	/* Summed wide: a user's SGE lengths must not wrap into a short message. */
	uint64_t total = 0;
	for (size_t i = 0; i < wr.sg.size(); i++) {
		w.sge[i] = wr.sg[i];
		total += wr.sg[i].length;
	}
	if (total > max_msg_sz)
		return Error(err::EINVAL);
	w.length = uint32_t(total);
	if (wr.opcode == WrOpcode::AtomicCmpSwap || wr.opcode == WrOpcode::AtomicFetchAdd) {
		/* IBA 9.4.5: atomics operate on 8 aligned bytes. */
		if (w.length != 8 || (wr.atomic.remote_addr & 7))
			return Error(err::EINVAL);
	}
	if (wr.opcode == WrOpcode::Lso) {
		WEFT_TRY(lso::check(wr, w.length));
	} else if (wr.send_flags & verbs::send_flag::csum) {
		/* Checksum offload: SENDs, even offsets, the field inside the message. */
		const uint32_t field = uint32_t(wr.csum_start) + wr.csum_offset;
		if ((wr.opcode != WrOpcode::Send && wr.opcode != WrOpcode::SendWithImm) ||
		    ((wr.csum_start | wr.csum_offset) & 1) || field + 2 > w.length)
			return Error(err::EINVAL);
	}
	return queue_send(w);
}

Result<void> SoftQp::queue_send(const SendWqe &w)
{
	{
		SpinGuardBh g(lock_);
		if (state_ == QpState::Reset || state_ == QpState::Init || state_ == QpState::Rtr)
			return Error(err::EINVAL);
		if (sq_tail_ - sq_head_ >= cap.max_send_wr)
			return Error(err::ENOMEM);
		SendWqe &slot = sq_[sq_tail_ % sq_.size()];
		slot = w;
		slot.wr.sg = Span<const verbs::Sge>(slot.sge, w.wr.sg.size());
		sq_tail_++;
	}
	/* Run it here: no context switch between posting and the wire. */
	run_or_kick();
	return ok();
}

Result<void> SoftQp::post_recv(const verbs::RecvWr &wr)
{
	/*
	 * IBA 11.4.1.2: a QP on an SRQ has no receive queue of its own; a
	 * user QP's is its ring, posted to by the process.
	 */
	if (srq || user || wr.sg.size() > cap.max_recv_sge || wr.sg.size() > max_sge)
		return Error(err::EINVAL);
	bool flush_now;
	{
		SpinGuardBh g(lock_);
		if (state_ == QpState::Reset)
			return Error(err::EINVAL);
		if (rq_tail_ - rq_head_ >= cap.max_recv_wr)
			return Error(err::ENOMEM);
		rq_[rq_tail_ % rq_.size()].set(wr);
		rq_tail_++;
		flush_now = state_ == QpState::Err;
	}
	if (flush_now)
		kick();
	return ok();
}

/*
 * IBA 10.3.1: the state change itself; attributes were validated by the
 * core against @from.  Re-checked here under lock_, where the engine's
 * own transitions (to Err) happen: a QP that moved since is left alone.
 */
static bool still_valid(verbs::QpState now, verbs::QpState from, verbs::QpState next)
{
	return now == from || next == QpState::Reset || next == QpState::Err;
}

Result<void> SoftQp::modify(const verbs::QpAttr &a, uint32_t mask, QpState from)
{
	QpState next = (mask & verbs::qp_attr::state) ? a.state : from;
	if (next == QpState::Reset) {
		/* Stop the engine before the queues it walks are wiped. */
		{
			SpinGuardBh g(lock_);
			if (!still_valid(state_, from, next))
				return Error(err::EINVAL);
			state_ = QpState::Reset;
		}
		timer_.cancel_sync();
		work_.flush();
		wait_idle();
	}
	{
		SpinGuardBh g(lock_);
		if (!still_valid(state_, from, next))
			return Error(err::EINVAL);
		apply_locked(a, mask, next);
	}
	if (next == QpState::Reset) {
		SpinGuardBh g(rx_lock_);
		while (PacketBuf *b = rxq_.pop_front())
			delete b;
	}
	kick();
	return ok();
}

/* Record a Modify QP: attributes, the engine state it resets, the new state (in that order). */
void SoftQp::apply_locked(const verbs::QpAttr &a, uint32_t mask, QpState next)
{
	using namespace verbs::qp_attr;
	lock_.assert_held();
	if (mask & access_flags)
		attr_.qp_access_flags = a.qp_access_flags;
	if (mask & pkey_index)
		attr_.pkey_index = a.pkey_index;
	if (mask & qkey)
		attr_.qkey = a.qkey;
	if (mask & av)
		attr_.ah_attr = a.ah_attr;
	if (mask & path_mtu)
		attr_.path_mtu = a.path_mtu;
	if (mask & timeout)
		attr_.timeout = a.timeout;
	if (mask & retry_cnt)
		attr_.retry_cnt = a.retry_cnt;
	if (mask & rnr_retry)
		attr_.rnr_retry = a.rnr_retry;
	if (mask & min_rnr_timer)
		attr_.min_rnr_timer = a.min_rnr_timer;
	if (mask & max_qp_rd_atomic)
		attr_.max_rd_atomic = a.max_rd_atomic;
	if (mask & max_dest_rd_atomic)
		attr_.max_dest_rd_atomic = a.max_dest_rd_atomic;
	if (mask & dest_qpn)
		attr_.dest_qp_num = a.dest_qp_num;
	if (mask & en_sqd_async_notify)
		attr_.en_sqd_async_notify = a.en_sqd_async_notify;
	if (next == QpState::Reset) {
		/* The queues are wiped here (the engine is idle); its own state at its next sync. */
		while (sq_head_ != sq_tail_)
			pop_sq_locked(); /* a user QP's ring slots go back to the process */
		sq_head_ = sq_tail_ = 0;
		rq_head_ = rq_tail_ = 0;
		flushed_ = false;
		pend_ = pend::reset;
		/* IBA 11.2.5.2: RESET->INIT binds a port again; until then the QP takes nothing. */
		if (type != QpType::Smi && type != QpType::Gsi) {
			attr_.port_num = 0;
			publish_port(0);
		}
	}
	if (mask & rq_psn) {
		attr_.rq_psn = a.rq_psn;
		pend_ |= pend::rq_psn;
	}
	if (mask & sq_psn) {
		attr_.sq_psn = a.sq_psn;
		pend_ |= pend::sq_psn;
	}
	if (next == QpState::Rts && state_ != QpState::Rts)
		pend_ |= pend::retries;
	if (next == QpState::Err && state_ != QpState::Err)
		flushed_ = false;
	attr_gen_++;
	/* IBA 11.2.5.2: the port is bound before a state that receives on it is visible. */
	if (mask & verbs::qp_attr::port) {
		attr_.port_num = a.port_num;
		publish_port(a.port_num);
	}
	state_ = next;
}

Result<void> SoftQp::attach_mcast(const verbs::Gid &mgid, uint16_t mlid)
{
	McastTable *t = hca.mcast(port());
	if (!t)
		return Error(err::EINVAL); /* IBA 11.3.1: the QP must be on a port (INIT) */
	return t->attach(*this, mgid, mlid);
}

Result<void> SoftQp::detach_mcast(const verbs::Gid &mgid, uint16_t mlid)
{
	McastTable *t = hca.mcast(port());
	return t ? t->detach(*this, mgid, mlid) : Error(err::EINVAL);
}

/* Destroy, phase one: no new packets or kicks, then wait out the engine. */
void SoftQp::shutdown()
{
	hca.remove_qp(*this);
	for (uint8_t p = 1; p <= hca.port_count(); p++)
		hca.mcast(p)->detach_all(*this);
	{
		SpinGuardBh g(rx_lock_);
		dying_.store(true, Order::SeqCst);
	}
	timer_.cancel_sync();
	work_.cancel_sync();
	wait_idle();
	write_mr_.reset();
	SpinGuardBh g(rx_lock_);
	while (PacketBuf *b = rxq_.pop_front())
		delete b;
}

void SoftQp::dump(const char *why)
{
	SpinGuardBh g(lock_);
	Logger("weft_hca").info("QP %u %s: state %s sq head %u next %u tail %u next_psn %u "
				"epsn %u msn %u rd_atomic_out %u retries %u rnr %u rnr_wait %d deadline %lld",
				qpn, why, verbs::qp_state_str(state_), sq_head_, sq_next_, sq_tail_,
				next_psn(), epsn(), msn_, rd_atomic_out_, retries_left_, rnr_left_,
				int(rnr_wait_.load(Order::Relaxed)),
				static_cast<long long>(deadline_ - weft_jiffies()));
}

/* Inline runs on other CPUs finish on their own; wait them out (process context). */
void SoftQp::wait_idle()
{
	while (run_bits_.load(Order::SeqCst) & run_running)
		weft_msleep(1);
}

} // namespace weft::hca
