// SPDX-License-Identifier: GPL-2.0
/*
 * The MAD service's side of RMPP (IBA 13.6): segmented sends with their
 * windows and timers, reassembly of segmented responses into the request
 * that asked for them, and ACKs; unsolicited multi-segment requests are
 * service_rmpp_request.cpp's.  The protocol logic is in rmpp.cpp.
 */
#include <weft/mad/service.h>

#include "rmpp.h"

namespace weft::mad {

namespace {

uint64_t now_ms()
{
	return weft_ktime_ns() / 1000000;
}

bool is_response(const Mad &m)
{
	return m.hdr().method.get() & 0x80;
}

} // namespace

/* Process context, after the request (if any) went on the outstanding list. */
Result<void> MadService::rmpp_send(Agent &, SendReq &r)
{
	ConstBytes msg = r.long_msg.size() ? r.long_msg : ConstBytes(r.mad.bytes, iba::mad_size);
	Own<rmpp::Sender> sender = WEFT_TRY(rmpp::Sender::make(msg));
	sender->set_tid(r.mad.hdr().tid.get()); /* as send() named it */
	auto *s = new (Gfp::Sleep) RmppSend;
	if (!s)
		return Error(err::ENOMEM);
	s->sender = sender.release();
	s->to = r.to;
	s->timeout_ms = r.timeout_ms ? r.timeout_ms : rmpp::default_timeout_ms;
	s->tries_left = r.timeout_ms ? r.retries : rmpp::default_retries;
	s->users = 1;
	s->done = false;
	{
		MutexGuard g(rmpp_lock_);
		rmpp_sends_.push_back(*s);
	}
	rmpp_pump(*s);
	rmpp_put(*s);
	return ok();
}

/*
 * Send what the window allows, and give the other side until the
 * deadline to answer.  The caller holds a use of @s; segments go out
 * without the lock, since an ACK may come back inside transmit().
 */
void MadService::rmpp_pump(RmppSend &s)
{
	Mad seg;
	for (;;) {
		uint32_t n;
		{
			MutexGuard g(rmpp_lock_);
			n = s.done ? 0 : s.sender->take_next();
			if (!n) {
				s.deadline = now_ms() + s.timeout_ms;
				rmpp_timer_.modify(s.timeout_ms);
				return;
			}
		}
		s.sender->build(n, seg); /* the message never changes once made */
		(void)transport_.transmit(seg, s.to); /* a lost segment is recovered by the timer */
	}
}

/* Off the list: no ACK or timer finds it again; the last user frees it. */
void MadService::rmpp_finish_locked(RmppSend &s)
{
	rmpp_lock_.assert_held();
	if (s.done)
		return;
	s.done = true;
	rmpp_sends_.remove(s);
}

void MadService::rmpp_put(RmppSend &s)
{
	{
		MutexGuard g(rmpp_lock_);
		if (--s.users || !s.done)
			return;
	}
	delete s.sender;
	delete &s;
}

/* IBA 13.6.5.1: no ACK in time: the window again, until the retries run out. */
void MadService::rmpp_tick(DelayedWork &w)
{
	MadService *svc = container_of(&w, &MadService::rmpp_timer_);
	for (;;) {
		RmppSend *due = nullptr;
		uint64_t now = now_ms(), next = ~0ull;
		{
			MutexGuard g(svc->rmpp_lock_);
			for (RmppSend &s : svc->rmpp_sends_) {
				if (s.deadline > now) {
					next = min(next, s.deadline);
				} else if (!s.tries_left) {
					svc->drop();
					svc->rmpp_finish_locked(s);
					if (!s.users) {
						delete s.sender;
						delete &s;
					}
				} else if (!due) {
					s.tries_left--;
					s.sender->rewind();
					s.users++;
					due = &s;
				}
			}
			if (!due) {
				if (next != ~0ull)
					svc->rmpp_timer_.modify(
						static_cast<unsigned long>(next > now ? next - now : 0));
				return;
			}
		}
		svc->rmpp_pump(*due);
		svc->rmpp_put(*due);
	}
}

void MadService::rmpp_ack_arrived(const Mad &m)
{
	const iba::RmppHeader &h = rmpp::header(m.bytes);
	const bool stop = h.type.get() == iba::rmpp_type::stop || h.type.get() == iba::rmpp_type::abort;
	RmppSend *more = nullptr;
	bool ours = false;
	{
		MutexGuard g(rmpp_lock_);
		RmppSend *s = nullptr;
		for (RmppSend &o : rmpp_sends_)
			if (o.sender->tid() == m.hdr().tid.get() &&
			    o.sender->mgmt_class() == m.hdr().mgmt_class.get())
				s = &o;
		ours = s;
		if (!s) {
			/* Not a transfer we send: perhaps the sender of one we receive giving up. */
		} else if (h.type.get() != iba::rmpp_type::ack) {
			/* IBA 13.6.5: STOP or ABORT from the receiver ends the transfer. */
			rmpp_finish_locked(*s);
		} else {
			switch (s->sender->ack(h.seg_num.get(), h.paylen_newwin.get())) {
			case rmpp::Sender::Ack::Done:
				rmpp_finish_locked(*s);
				break;
			case rmpp::Sender::Ack::Progress:
				s->tries_left = rmpp::default_retries;
				s->users++;
				more = s;
				break;
			case rmpp::Sender::Ack::Ignored:
				break;
			}
		}
		if (s && s->done && !s->users) {
			delete s->sender;
			delete s;
			return;
		}
	}
	if (!ours && !(stop && rmpp_receiver_stopped(m)))
		drop();
	if (more) {
		rmpp_pump(*more);
		rmpp_put(*more);
	}
}

/*
 * The outstanding request a response segment (or its sender's STOP/ABORT)
 * belongs to; with @from, only if it came back the way the request left.
 */
SendReq *MadService::rmpp_request_locked(const Mad &m, const MadAddr *from)
{
	lock_.assert_held();
	const uint64_t tid = m.hdr().tid.get();
	SendReq *r = nullptr;
	for (SendReq &o : outstanding_)
		if (o.mad.hdr().tid.get() == tid && o.agent_->id_ == uint32_t(tid >> 32) &&
		    o.mad.hdr().mgmt_class.get() == m.hdr().mgmt_class.get() && (!from || came_back(o, m, *from)))
			r = &o;
	return r;
}

/*
 * A segment of the response to one of our requests: into that request's
 * reassembly.  The buffer grows with the segments; the memory for growing
 * is taken before the lock (this is process context), so a long table
 * needs no large atomic allocation.
 */
void MadService::rmpp_response_segment(const Mad &m, const MadAddr &from)
{
	size_t want = 0;
	{
		SpinGuardBh g(lock_);
		SendReq *r = rmpp_request_locked(m, &from);
		if (!r || (!r->rx_ && !(r->rx_ = new (Gfp::Atomic)
					      rmpp::Receiver(rmpp::max_message(m.hdr().mgmt_class.get()))))) {
			drop();
			return;
		}
		want = r->rx_->wants(m);
	}
	Array<uint8_t> spare;
	if (want) {
		/* Failing here is fine: add() tries atomically, then refuses with STOP. */
		auto buf = Array<uint8_t>::make(Gfp::Sleep, want, Sized::ByInput);
		if (buf)
			spare = buf.take();
	}
	Mad reply;
	bool send_reply = false;
	SendReq *done = nullptr;
	{
		SpinGuardBh g(lock_);
		SendReq *r = rmpp_request_locked(m, &from);
		if (!r || !r->rx_) { /* ended meanwhile */
			drop();
			return;
		}
		if (spare.size())
			r->rx_->spare(move(spare));
		auto step = r->rx_->add(m, Gfp::Atomic);
		send_reply = step != rmpp::Receiver::Step::Wait;
		if (step == rmpp::Receiver::Step::Abort)
			r->rx_->refusal(m, reply);
		else if (send_reply)
			r->rx_->ack(m, reply);
		r->deadline_ = now_ms() + r->timeout_ms; /* the response is coming: IBA 13.6.3.2 */
		if (step == rmpp::Receiver::Step::Done || step == rmpp::Receiver::Step::Abort) {
			int status = err::EPROTO;
			if (step == rmpp::Receiver::Step::Done) {
				r->long_response = r->rx_->take(r->long_len);
				__builtin_memcpy(r->response.bytes, r->long_response.data(),
						 min(r->long_len, iba::mad_size));
				status = 0;
			} else {
				drop(); /* refused: counted, and the sender is told */
			}
			r->from = from;
			if (end_locked(*r, status))
				done = r;
		}
	}
	if (send_reply)
		(void)transport_.transmit(reply, from);
	if (!done)
		return;
	Agent &a = *done->agent_;
	a.handler.send_done(a, *done);
	put_agent(a);
}

/* IBA 13.6.5.2: the sender of a response we are reassembling gave up (STOP or ABORT). */
bool MadService::rmpp_receiver_stopped(const Mad &m)
{
	SendReq *done = nullptr;
	{
		SpinGuardBh g(lock_);
		SendReq *r = rmpp_request_locked(m);
		if (!r || !r->rx_)
			return false;
		if (end_locked(*r, err::EPROTO))
			done = r;
	}
	if (done) {
		Agent &a = *done->agent_;
		a.handler.send_done(a, *done);
		put_agent(a);
	}
	return true;
}

/*
 * RMPP MADs for this service (IBA 13.6): true if taken here, false if
 * they go on as plain MADs (not RMPP, or for an agent that does its own).
 */
bool MadService::rmpp_receive(const Mad &m, const MadAddr &from)
{
	if (!rmpp::active(m.bytes))
		return false;
	const iba::RmppHeader &h = rmpp::header(m.bytes);
	if (h.type.get() != iba::rmpp_type::data) {
		rmpp_ack_arrived(m); /* ACK, STOP, ABORT: for a sender, or STOP/ABORT for a receiver */
		return true;
	}
	const uint64_t tid = m.hdr().tid.get();
	bool rmpp_agent = false;
	{
		SpinGuardBh g(lock_);
		if (is_response(m)) {
			for (SendReq &o : outstanding_)
				if (o.mad.hdr().tid.get() == tid && o.agent_->id_ == uint32_t(tid >> 32))
					rmpp_agent = o.agent_->rmpp;
		} else {
			for (Agent &a : agents_)
				rmpp_agent |= a.rmpp && a.mgmt_class == m.hdr().mgmt_class.get();
		}
	}
	if (!rmpp_agent)
		return false;
	if (is_response(m)) {
		rmpp_response_segment(m, from);
		return true;
	}
	if (h.seg_num.get() != 1 || !(iba::RmppHeader::Flags::get(h.rtime_flags) & iba::rmpp_flag::last))
		return rmpp_request_segment(m, from);
	/* A request in one segment is a plain request once acknowledged. */
	rmpp::Receiver one(rmpp::max_message(m.hdr().mgmt_class.get()));
	Mad reply;
	auto step = one.add(m, Gfp::Sleep);
	if (step == rmpp::Receiver::Step::Done)
		one.ack(m, reply);
	else
		drop();
	if (step == rmpp::Receiver::Step::Abort)
		one.refusal(m, reply);
	if (step == rmpp::Receiver::Step::Done || step == rmpp::Receiver::Step::Abort)
		(void)transport_.transmit(reply, from);
	return step == rmpp::Receiver::Step::Done ? false : true;
}

} // namespace weft::mad
