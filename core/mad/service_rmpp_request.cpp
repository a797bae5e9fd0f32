// SPDX-License-Identifier: GPL-2.0
/*
 * The MAD service's reassembly of unsolicited multi-segment RMPP requests
 * (IBA 13.6.5.2): a GetMulti MultiPathRecord with more GIDs than one MAD
 * holds, sent to OpenSM's SA agent, say.  Each transfer is keyed by its
 * sender's TID, class, LID and QP, ACKed per window, bounded per port and
 * per agent, ABORTed when it stops coming, and delivered whole to the
 * agent serving it (AgentHandler::recv_message).  The protocol logic is
 * rmpp.cpp's Receiver, as for responses (service_rmpp.cpp).
 */
#include <weft/mad/service.h>

#include "rmpp.h"

namespace weft::mad {

namespace {

uint64_t now_ms()
{
	return weft_ktime_ns() / 1000000;
}

/* After delivery, repeats (the final ACK was lost) are ACKed again for a while (in-tree: 10 s). */
constexpr uint64_t rmpp_linger_ms = 10000;

} // namespace

/* IBA 13.6.1: a transfer is its sender's TID, class and address. */
MadService::RmppRecv *MadService::rmpp_recv_find_locked(const Mad &m, const MadAddr &from)
{
	rmpp_lock_.assert_held();
	for (RmppRecv &r : rmpp_recvs_)
		if (r.hdr.tid.get() == m.hdr().tid.get() && r.hdr.mgmt_class.get() == m.hdr().mgmt_class.get() &&
		    r.from.lid == from.lid && r.from.qpn == from.qpn)
			return &r;
	return nullptr;
}

/*
 * A first segment starts a transfer for the RMPP agent that serves it,
 * within the per-port and per-agent limits; past them, or out of memory,
 * @refused is set, @reply is the STOP (ResX) and nullptr comes back.  So
 * does a segment that starts nothing (not the first, or nobody serves
 * it), with no reply.
 */
MadService::RmppRecv *MadService::rmpp_recv_start_locked(const Mad &m, const MadAddr &from, Mad &reply,
							  bool &refused)
{
	rmpp_lock_.assert_held();
	if (rmpp::header(m.bytes).seg_num.get() != 1)
		return nullptr; /* not here, or no longer: ended, refused or timed out */
	uint32_t agent_id;
	{
		SpinGuardBh g(lock_);
		bool known = false;
		Agent *a = find_agent_locked(m, known);
		if (!a || !a->rmpp)
			return nullptr;
		agent_id = a->id_;
	}
	uint32_t active = 0, mine = 0, complete = 0;
	RmppRecv *oldest_complete = nullptr;
	for (RmppRecv &o : rmpp_recvs_) {
		if (o.complete) {
			complete++;
			oldest_complete = oldest_complete ? oldest_complete : &o;
			continue;
		}
		active++;
		mine += o.agent_id == agent_id;
	}
	if (complete >= max_rmpp_recvs)
		rmpp_recv_free_locked(*oldest_complete); /* forgotten early: only repeats needed it */
	RmppRecv *r = nullptr;
	rmpp::Receiver *rx = nullptr;
	if (active < max_rmpp_recvs && mine < max_rmpp_recvs_per_agent) {
		rx = new (Gfp::Sleep) rmpp::Receiver(rmpp::max_message(m.hdr().mgmt_class.get()));
		r = rx ? new (Gfp::Sleep) RmppRecv : nullptr;
	}
	if (!r) {
		delete rx;
		rmpp::Receiver no_room(0);
		no_room.give_up(iba::rmpp_status::resources);
		no_room.refusal(m, reply);
		refused = true;
		return nullptr;
	}
	r->rx = rx;
	__builtin_memcpy(&r->hdr, m.bytes, sizeof(r->hdr));
	r->from = from;
	r->agent_id = agent_id;
	r->deadline = now_ms() + rmpp_recv_timeout_ms_;
	r->complete = false;
	rmpp_recvs_.push_back(*r);
	rmpp_recv_arm_locked();
	return r;
}

void MadService::rmpp_recv_free_locked(RmppRecv &r)
{
	rmpp_lock_.assert_held();
	rmpp_recv_bytes_ -= r.rx->held();
	rmpp_recvs_.remove(r);
	delete r.rx;
	delete &r;
}

void MadService::rmpp_recv_arm_locked()
{
	rmpp_lock_.assert_held();
	uint64_t first = ~0ull;
	for (RmppRecv &r : rmpp_recvs_)
		first = min(first, r.deadline);
	arm_at(rmpp_recv_timer_, first);
}

/*
 * One segment into its transfer: true with @reply to send (ACK, STOP,
 * ABORT); @msg gets the message when it completes.  The port's budget
 * is checked before the buffer grows.
 */
bool MadService::rmpp_recv_step_locked(RmppRecv &r, const Mad &m, Mad &reply, Array<uint8_t> &msg,
				       size_t &len)
{
	using Step = rmpp::Receiver::Step;
	rmpp_lock_.assert_held();
	if (r.complete) {
		r.rx->ack(m, reply); /* a repeat: the sender missed the final ACK */
		return true;
	}
	const size_t held = r.rx->held(), want = r.rx->wants(m);
	const Step step = want && rmpp_recv_bytes_ - held + want > rmpp_recv_budget_
				  ? r.rx->give_up(iba::rmpp_status::resources)
				  : r.rx->add(m, Gfp::Sleep);
	rmpp_recv_bytes_ = rmpp_recv_bytes_ - held + r.rx->held();
	switch (step) {
	case Step::Wait:
		return false;
	case Step::Ack:
		r.rx->ack(m, reply);
		return true;
	case Step::Done:
		r.rx->ack(m, reply);
		rmpp_recv_bytes_ -= r.rx->held();
		msg = r.rx->take(len);
		r.complete = true;
		r.deadline = now_ms() + min<uint64_t>(rmpp_linger_ms, rmpp_recv_timeout_ms_);
		rmpp_recv_arm_locked();
		return true;
	case Step::Abort:
		r.rx->refusal(m, reply);
		drop(); /* refused: counted, and the sender is told */
		rmpp_recv_free_locked(r);
		return true;
	}
	return false;
}

/* The whole request to the agent serving it now (it may have gone meanwhile). */
void MadService::rmpp_deliver(Array<uint8_t> &msg, size_t len, const MadAddr &from)
{
	Mad first{};
	__builtin_memcpy(first.bytes, msg.data(), min(len, iba::mad_size));
	Agent *a;
	{
		SpinGuardBh g(lock_);
		bool known = false;
		a = find_agent_locked(first, known);
		if (a)
			a->active_++;
	}
	if (!a) {
		drop();
		return;
	}
	if (!a->handler.recv_message(*a, msg, len, from))
		drop();
	put_agent(*a);
}

/* A DATA segment of an unsolicited request: into its transfer, ACKed per window. */
bool MadService::rmpp_request_segment(const Mad &m, const MadAddr &from)
{
	Mad reply;
	bool send_reply = false;
	Array<uint8_t> msg;
	size_t len = 0;
	{
		MutexGuard g(rmpp_lock_);
		RmppRecv *r = rmpp_recv_find_locked(m, from);
		if (!r) {
			r = rmpp_recv_start_locked(m, from, reply, send_reply);
			if (!r)
				drop();
		}
		if (r)
			send_reply = rmpp_recv_step_locked(*r, m, reply, msg, len);
	}
	if (send_reply)
		(void)transport_.transmit(reply, from);
	if (msg.size())
		rmpp_deliver(msg, len, from);
	return true;
}

/* IBA 13.6.5.2: a transfer not complete in time is ABORTed (T2L); a delivered one forgotten. */
void MadService::rmpp_recv_tick(DelayedWork &w)
{
	MadService *svc = container_of(&w, &MadService::rmpp_recv_timer_);
	for (;;) {
		Mad abort;
		MadAddr to;
		bool send = false;
		{
			MutexGuard g(svc->rmpp_lock_);
			const uint64_t now = now_ms();
			RmppRecv *due = nullptr;
			for (RmppRecv &r : svc->rmpp_recvs_)
				if (r.deadline <= now && !due)
					due = &r;
			if (!due) {
				svc->rmpp_recv_arm_locked();
				return;
			}
			if (!due->complete) {
				Mad seg{};
				__builtin_memcpy(seg.bytes, &due->hdr, sizeof(due->hdr));
				due->rx->give_up(iba::rmpp_status::total_time);
				due->rx->refusal(seg, abort);
				to = due->from;
				send = true;
				svc->drop();
			}
			svc->rmpp_recv_free_locked(*due);
		}
		if (send)
			(void)svc->transport_.transmit(abort, to);
	}
}

uint32_t MadService::rmpp_receiving()
{
	MutexGuard g(rmpp_lock_);
	uint32_t n = 0;
	for (RmppRecv &r : rmpp_recvs_)
		n += !r.complete;
	return n;
}

size_t MadService::rmpp_receiving_bytes()
{
	MutexGuard g(rmpp_lock_);
	return rmpp_recv_bytes_;
}

} // namespace weft::mad
