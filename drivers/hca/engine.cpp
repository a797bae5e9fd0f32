// SPDX-License-Identifier: GPL-2.0
/*
 * Soft HCA QPs, the engine: who runs it and where (see qp.h), taking up
 * Modify QP's changes, arrivals, completions and the flush of the Error
 * state, and the packet building that the transports (ud.cpp,
 * requester.cpp, responder.cpp) share.
 */
#include "qp.h"

namespace weft::hca {

using verbs::QpState;
using verbs::QpType;
using verbs::WcOpcode;
using verbs::WcStatus;
using verbs::WrOpcode;

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

/*
 * Engine side: what Modify QP recorded, taken up between packets (see
 * qp.h), and the state.  Once per packet: the common case is one compare
 * under the lock that reading the state takes anyway.
 */
QpState SoftQp::sync()
{
	SpinGuardBh g(lock_);
	if (ea_gen_ == attr_gen_)
		return state_;
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
	case WrOpcode::BindMw:
		return WcOpcode::BindMw;
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
	if (user)
		return user->take_recv(out);
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
	/* A user RQ: at most one ring's worth, whatever the process keeps posting. */
	for (uint32_t n = user ? user->recv_depth() : ~0u; !srq && n && take_recv(r); n--)
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
			pop_sq_locked();
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
	return p ? p->pkeys[i].load(Order::Relaxed) : 0xffff;
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
	s.slid = static_cast<uint16_t>((p ? p->lid.load(Order::Relaxed) : 0) | ah.src_path_bits);
	s.sl = ah.sl;
	s.vl = type == QpType::Smi ? 15 : 0; /* IBA 7.6.5: SMPs on VL15; data on VL0 */
	s.pkey = pk;
	s.sgid = s.dgid = nullptr;
	if (ah.global && p) {
		/* IBA 8.3.1: our GID 0, as query_gid reports it (the SM may set another GIDPrefix). */
		sgid_ = p->gid();
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

namespace {

bool transport_matches(QpType type, uint8_t opcode)
{
	const auto t = static_cast<iba::Transport>(opcode & 0xe0);
	switch (type) {
	case QpType::Rc: return t == iba::Transport::Rc;
	case QpType::Uc: return t == iba::Transport::Uc;
	default: return t == iba::Transport::Ud; /* UD, and QP0/QP1 (IBA 13.5.1: UD) */
	}
}

} // namespace

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
		/* IBA 9.2.1: the opcode's top bits name its transport; another QP type's is not for us. */
		if (!transport_matches(type, p.bth->opcode.get())) {
			if (Port *in = hca.port(eport()))
				PortCounters::bump(in->counters.no_dest_qp, pkt->burst);
			continue;
		}
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
