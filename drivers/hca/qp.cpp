// SPDX-License-Identifier: GPL-2.0
/*
 * Soft HCA QPs: the verbs side (post, modify, query, destroy) and the
 * engine loop that the transport files (ud.cpp, rc_*.cpp) plug into.
 */
#include <weft/log.h>

#include "lso.h"
#include "qp.h"

namespace weft::hca {

using verbs::QpState;
using verbs::QpType;
using verbs::WcOpcode;
using verbs::WcStatus;
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

void SoftQp::run(Work &w)
{
	RunList later;
	RunCtx ctx{true, 0, &later};
	container_of(&w, &SoftQp::work_)->run_engine(ctx);
	later.run_all(true);
}

/* Take the engine if nobody runs it; else ask the runner to run again. */
bool SoftQp::acquire()
{
	uint32_t s = run_bits_.load(Order::Relaxed);
	for (;;) {
		uint32_t next = (s & run_running) ? (s | run_again) : run_running;
		if (run_bits_.compare_exchange(s, next, Order::SeqCst, Order::Relaxed))
			return !(s & run_running);
	}
}

/* Give the engine up; false if a run was asked for meanwhile (run again, still owning it). */
bool SoftQp::release()
{
	uint32_t s = run_bits_.load(Order::Relaxed);
	for (;;) {
		uint32_t next = (s & run_again) ? run_running : 0;
		if (run_bits_.compare_exchange(s, next, Order::SeqCst, Order::Relaxed))
			return next == 0;
	}
}

bool SoftQp::run_engine(RunCtx &ctx)
{
	if (!acquire())
		return false;
	/* Pairs with shutdown(): it sets dying_, then waits for run_running to clear. */
	if (dying_.load(Order::SeqCst)) {
		run_bits_.store(0, Order::Release);
		return false;
	}
	do {
		cur_ = &ctx;
		engine();
		cur_ = nullptr;
	} while (!release());
	return true;
}

void SoftQp::run_or_kick()
{
	RunList later;
	RunCtx ctx{false, 0, &later};
	run_engine(ctx);
	later.run_all(false);
}

bool RunList::add(SoftQp &qp)
{
	for (uint32_t i = next; i < n; i++)
		if (qps[i].get() == &qp)
			return true;
	if (n == max)
		return false;
	qps[n++] = Ref<SoftQp>::share(&qp);
	return true;
}

void RunList::run_all(bool can_sleep)
{
	/* Runs may list more engines; the list's size bounds how many. */
	for (; next < n; next++) {
		RunCtx ctx{can_sleep, 0, this};
		qps[next]->run_engine(ctx);
	}
	for (uint32_t i = 0; i < n; i++)
		qps[i].reset();
	n = next = 0;
	events.fire();
}

void SoftQp::raise_event(verbs::EventType t)
{
	if (can_call_handlers()) {
		if (t == verbs::EventType::SrqLimitReached)
			srq->raise_limit();
		else
			raise(t);
		return;
	}
	pending_events_ |= 1u << static_cast<uint32_t>(t);
	kick();
}

void SoftQp::raise_pending()
{
	uint32_t bits = exchange(pending_events_, 0u);
	for (uint32_t t = 0; bits; t++, bits >>= 1)
		if (bits & 1)
			raise_event(static_cast<verbs::EventType>(t));
}

void SoftQp::timer_fired(DelayedWork &w)
{
	SoftQp *qp = container_of(&w, &SoftQp::timer_);
	/* An RNR wait ends when its timer fires (IBA 9.7.5.2.8). */
	qp->rnr_wait_.store(false, Order::Relaxed);
	qp->kick();
}

void SoftQp::kick()
{
	SpinGuardBh g(rx_lock_);
	if (!dying_.load(Order::Relaxed))
		work_.queue(Fabric::get().engine_wq);
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
	for (size_t i = 0; i < wr.sg.size(); i++) {
		w.sge[i] = wr.sg[i];
		w.length += wr.sg[i].length;
	}
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
	{
		SpinGuardBh g(lock_);
		if (state_ == QpState::Reset || state_ == QpState::Init || state_ == QpState::Rtr)
			return Error(err::EINVAL);
		if (sq_tail_ - sq_head_ >= cap.max_send_wr)
			return Error(err::ENOMEM);
		SendWqe &slot = sq_[sq_tail_ % sq_.size()];
		slot = w;
		slot.wr.sg = Span<const verbs::Sge>(slot.sge, wr.sg.size());
		sq_tail_++;
	}
	/* Run it here: no context switch between posting and the wire. */
	run_or_kick();
	return ok();
}

Result<void> SoftQp::post_recv(const verbs::RecvWr &wr)
{
	/* IBA 11.4.1.2: a QP on an SRQ has no receive queue of its own. */
	if (srq || wr.sg.size() > cap.max_recv_sge || wr.sg.size() > max_sge)
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

/* Engine side: what Modify QP recorded, taken up between packets (see qp.h). */
void SoftQp::sync_locked()
{
	lock_.assert_held();
	if (ea_gen_ == attr_gen_)
		return;
	ea_gen_ = attr_gen_;
	ea_ = attr_;
	uint32_t p = exchange(pend_, 0u);
	if (p & pend::reset)
		reset_engine();
	if (p & pend::rq_psn)
		set_epsn(attr_.rq_psn);
	if (p & pend::sq_psn) {
		set_next_psn(attr_.sq_psn);
		acked_psn_ = (next_psn() - 1) & psn_mask;
	}
	if (p & pend::retries) {
		retries_left_ = ea_.retry_cnt;
		rnr_left_ = ea_.rnr_retry;
	}
}

QpState SoftQp::sync()
{
	SpinGuardBh g(lock_);
	sync_locked();
	return state_;
}

/* IBA 10.3.1 Reset: the transport state of a fresh QP (the PSNs are set again on the way up). */
void SoftQp::reset_engine()
{
	sq_next_ = 0;
	rd_atomic_out_ = 0;
	in_send_ = in_write_ = nak_sent_ = false;
	rnr_wait_.store(false, Order::Relaxed);
	deadline_ = timer_due_ = 0;
	last_wqe_reported_ = false;
	comm_est_raised_ = false;
	fatal_raised_ = false;
	msn_ = 0;
	history_next_ = 0;
	for (AtomicRecord &r : history_)
		r.valid = false;
	write_mr_.reset();
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

void SoftQp::enqueue(Own<PacketBuf> pkt)
{
	RunCtx *from = exchange(pkt->from, nullptr);
	/*
	 * Sent by reference from an outermost run: take the engine and run it
	 * here, inside the sender's transmit(), so the payload is copied
	 * straight from the sender's memory.  Only a try: an engine busy
	 * elsewhere gets the packet materialized and queued.
	 */
	if (from && from->depth == 0 && pkt->by_ref()) {
		uint32_t idle = 0;
		if (run_bits_.compare_exchange(idle, run_running, Order::SeqCst, Order::Relaxed)) {
			{
				SpinGuardBh g(rx_lock_);
				if (!dying_.load(Order::Relaxed))
					rxq_.push_back(*pkt.release());
			}
			RunCtx ctx{false, 1, from->later};
			do {
				cur_ = &ctx;
				if (!dying_.load(Order::SeqCst))
					engine();
				cur_ = nullptr;
			} while (!release());
			return;
		}
	}
	/* Kept for later: the payload must be in the packet, a burst in its real packets. */
	PacketQueue q;
	const uint32_t n = pkt->burst;
	for (uint32_t i = 0; i < n; i++) {
		Own<PacketBuf> one;
		if (n == 1) {
			one = move(pkt);
		} else {
			auto seg = pkt->segment(i, Gfp::Atomic);
			if (seg)
				one = seg.take();
		}
		if (!one || !one->materialize()) {
			/* No memory, or the sender's memory went away under it: a lost packet. */
			if (Port *p = hca.port(port()))
				PortCounters::bump(p->counters.rcv_errors);
			continue;
		}
		one->from = nullptr;
		q.push_back(*one.release());
	}
	{
		SpinGuardBh g(rx_lock_);
		while (PacketBuf *b = q.pop_front()) {
			if (dying_.load(Order::Relaxed))
				delete b;
			else
				rxq_.push_back(*b);
		}
		if (dying_.load(Order::Relaxed))
			return;
	}
	if (!from || !from->later->add(*this))
		work_.queue(Fabric::get().engine_wq);
}

/* IBA 10.3.1 Error state: the engine flushes every outstanding WR. */
void SoftQp::to_error()
{
	{
		SpinGuardBh g(lock_);
		if (state_ == QpState::Err)
			return;
		state_ = QpState::Err;
		flushed_ = false;
	}
	/* Errors reach the consumer as error completions (IBA 11.6.2); no async event. */
	kick(); /* the engine flushes on its next pass */
}

static WcOpcode wc_opcode(WrOpcode op)
{
	switch (op) {
	case WrOpcode::RdmaWrite:
	case WrOpcode::RdmaWriteWithImm:
		return WcOpcode::RdmaWrite;
	case WrOpcode::RdmaRead:
		return WcOpcode::RdmaRead;
	case WrOpcode::AtomicCmpSwap:
		return WcOpcode::CompSwap;
	case WrOpcode::AtomicFetchAdd:
		return WcOpcode::FetchAdd;
	case WrOpcode::RegMr:
		return WcOpcode::RegMr;
	case WrOpcode::LocalInv:
		return WcOpcode::LocalInv;
	case WrOpcode::Lso:
		return WcOpcode::Lso;
	default:
		return WcOpcode::Send;
	}
}

/* IBA 10.7.2: unsignalled WRs complete silently unless they fail. */
void SoftQp::complete_send(SendWqe &w, WcStatus st)
{
	if (st == WcStatus::Success && !sq_sig_all && !(w.wr.send_flags & verbs::send_flag::signaled))
		return;
	verbs::Wc wc;
	wc.wr_id = w.wr.wr_id;
	wc.status = st;
	wc.opcode = wc_opcode(w.wr.opcode);
	wc.qp_num = qpn;
	wc.byte_len = w.length;
	wc.port_num = eport();
	if (!send_cq.push(wc, false, can_call_handlers(), held_events()))
		fatal();
}

/*
 * IBA 11.6.3.1 Local Work Queue Catastrophic Error: the QP cannot report
 * completions (its CQ overran) or hit an internal failure; it goes to the
 * Error state and its consumer is told.
 */
void SoftQp::fatal()
{
	if (fatal_raised_)
		return;
	fatal_raised_ = true;
	raise_event(verbs::EventType::QpFatal);
	to_error();
}

bool SoftQp::complete_recv(const RecvWqe &r, const verbs::Wc &wc_in, bool solicited)
{
	verbs::Wc wc = wc_in;
	wc.wr_id = r.wr_id;
	wc.qp_num = qpn;
	wc.port_num = eport();
	if (recv_cq.push(wc, solicited, can_call_handlers(), held_events()))
		return true;
	fatal();
	return false;
}

bool SoftQp::take_recv(RecvWqe &out)
{
	if (srq) {
		bool limit = false;
		bool got = srq->take(out, limit);
		if (limit)
			raise_event(verbs::EventType::SrqLimitReached);
		return got;
	}
	SpinGuardBh g(lock_);
	if (rq_head_ == rq_tail_)
		return false;
	out = rq_[rq_head_ % rq_.size()];
	rq_head_++;
	return true;
}

void SoftQp::flush()
{
	verbs::Wc wc;
	wc.status = WcStatus::WrFlushErr;
	wc.opcode = WcOpcode::Recv;
	if (in_send_ || in_write_) {
		if (in_send_)
			complete_recv(cur_recv_, wc, false);
		in_send_ = in_write_ = false;
		write_mr_.reset();
	}
	RecvWqe r;
	while (!srq && take_recv(r))
		complete_recv(r, wc, false);
	/* IBA 11.6.3.1: an SRQ's QP reports that it will consume no more WQEs. */
	if (srq && !last_wqe_reported_) {
		last_wqe_reported_ = true;
		raise_event(verbs::EventType::QpLastWqeReached);
	}
	for (;;) {
		SendWqe w;
		{
			SpinGuardBh g(lock_);
			if (sq_head_ == sq_tail_)
				break;
			w = sq_[sq_head_ % sq_.size()];
			sq_head_++;
		}
		complete_send(w, w.status != WcStatus::Success ? w.status : WcStatus::WrFlushErr);
	}
	SpinGuardBh g(lock_);
	sq_next_ = sq_head_;
	rd_atomic_out_ = 0;
}

uint16_t SoftQp::pkey() const
{
	Port *p = hca.port(eport());
	uint16_t i = ea_.pkey_index < Port::pkey_table_len ? ea_.pkey_index : 0;
	return p ? __atomic_load_n(&p->pkeys[i], __ATOMIC_RELAXED) : 0xffff;
}

uint32_t SoftQp::mtu_bytes() const
{
	if (type == QpType::Rc || type == QpType::Uc)
		return static_cast<uint32_t>(iba::mtu_bytes(ea_.path_mtu));
	return 4096; /* IBA 9.8.1: UD packets up to the port MTU */
}

void SoftQp::set_addressing(PacketSpec &s, const verbs::AhAttr &ah, uint16_t pk)
{
	Port *p = hca.port(eport());
	s.dlid = ah.dlid;
	s.slid = static_cast<uint16_t>((p ? p->lid : 0) | ah.src_path_bits);
	s.sl = ah.sl;
	s.vl = type == QpType::Smi ? 15 : 0; /* IBA 7.6.5: SMPs on VL15; data on VL0 */
	s.pkey = pk;
	s.sgid = s.dgid = nullptr;
	if (ah.global && p) {
		sgid_ = verbs::Gid::make(Hca::subnet_prefix, p->guid);
		dgid_ = ah.dgid;
		s.sgid = sgid_.raw;
		s.dgid = dgid_.raw;
		s.hoplmt = ah.hop_limit;
		s.tclass = ah.traffic_class;
		s.flow = ah.flow_label;
	}
}

/*
 * Build and send one packet.  A payload from registered memory goes by
 * reference when this is an engine run (the receiver copies it, or
 * whatever keeps the packet materializes it, before transmit returns);
 * the caller has checked that memory, so the copy finds it registered.
 */
Result<void> SoftQp::transmit(PacketSpec &s)
{
	Port *p = hca.port(eport());
	if (!p)
		return Error(err::ENODEV);
	s.defer_fill = s.fill && s.fill_len && cur_;
	if (s.burst > 1 && !s.defer_fill)
		return Error(err::EINVAL); /* a burst exists only by reference */
	size_t len = WEFT_TRY(packet_length(s));
	Own<PacketBuf> buf = WEFT_TRY(PacketBuf::alloc(gfp(), static_cast<uint32_t>(len)));
	buf->len = static_cast<uint32_t>(WEFT_TRY(build(Bytes(buf->data(), len), s, false)));
	if (s.defer_fill) {
		/* IBA 9.2.4, 7.8: payload, pad to 4 bytes, ICRC (4), VCRC (2) end the packet. */
		size_t pad = (4 - s.fill_len % 4) % 4;
		buf->ref = Payload{ConstBytes(), s.fill, s.fill_ctx,
				   s.burst_len ? s.burst_len : s.fill_len * s.burst, 0};
		buf->ref_at = static_cast<uint32_t>(len - 6 - pad - s.fill_len);
		buf->burst = s.burst;
		buf->each = static_cast<uint32_t>(s.fill_len);
		buf->mid_op = s.burst > 1 ? s.mid_op : s.opcode;
		buf->last_op = s.burst > 1 ? s.last_op : s.opcode;
		if (s.burst > 1)
			PortCounters::bump(Fabric::get().burst_packets, s.burst);
	}
	/*
	 * Every packet of an engine run says so, not only those by reference:
	 * an ACK from a responder run inline in its requester's transmit then
	 * goes on that run's list and is taken in the same context, instead
	 * of through the engine's work item (a worker wakeup per message).
	 */
	buf->from = cur_;
	PortCounters::bump(s.dlid >= 0xc000 && s.dlid != 0xffff ? p->counters.multicast_xmit
								 : p->counters.unicast_xmit, s.burst);
	p->transmit(move(buf));
	return ok();
}

void SoftQp::engine()
{
	for (;;) {
		Own<PacketBuf> pkt;
		{
			SpinGuardBh g(rx_lock_);
			pkt = Own<PacketBuf>(rxq_.pop_front());
		}
		if (!pkt)
			break;
		QpState st = sync();
		/* IBA 10.3.1: Reset and Init QPs, and Err QPs, discard arrivals. */
		if (st == QpState::Reset || st == QpState::Init || st == QpState::Err)
			continue;
		/* Parsed once, on arrival at the HCA (Hca::receive). */
		Result<Packet> parsed = pkt->parsed ? Result<Packet>(pkt->view) : parse(pkt->bytes());
		if (!parsed)
			continue;
		Packet &p = parsed.value();
		if (pkt->by_ref()) {
			p.data = pkt->ref;
			p.payload = ConstBytes(); /* not there: readers use p.data */
			p.burst = pkt->burst;
			p.each = pkt->each;
			p.mid_op = pkt->mid_op;
			p.last_op = pkt->last_op;
		}
		if (type == QpType::Rc || type == QpType::Uc) {
			if (is_response(p.bth->opcode.get()))
				completer(p);
			else
				responder(p);
		} else {
			ud_receive(p, *pkt);
		}
	}
	if (pending_events_ && can_call_handlers())
		raise_pending();
	QpState st = sync();
	if (st == QpState::Err) {
		bool need;
		{
			SpinGuardBh g(lock_);
			need = !flushed_ || sq_head_ != sq_tail_ || rq_head_ != rq_tail_;
			flushed_ = true;
		}
		if (need)
			flush();
		return;
	}
	if (st == QpState::Rts || st == QpState::Sqd)
		requester();
}

} // namespace weft::hca
