// SPDX-License-Identifier: GPL-2.0
/*
 * How connections end (IBA 12.9.7 figure 144, 12.9.8): REJ while one is
 * set up, DREQ/DREP once it is up, time-wait before the QP may be reused,
 * the retransmission timers of every state, and what destroy() owes the
 * peer.  LAP (alternate paths, IBA 12.8) is answered "unsupported".
 *   1. disconnect(): DREQ, DreqSent with the DREQ timer, the QP to Error.
 *   2. DREQ received (Established, or a REP whose RTU was lost): DREP,
 *      Disconnected, time-wait.  A duplicate DREQ gets the DREP again; a
 *      DREQ for no connection still gets a DREP (12.9.8.4).
 *   3. DREP, or the DREQ timer out of retries: Disconnected, time-wait.
 *   4. Time-wait over: Idle, TimewaitExit.
 */
#include "cm_priv.h"
#include "wire.h"

namespace weft::cm {

namespace {

void format_drep(mad::Mad &m, uint64_t tid, uint32_t local, uint32_t remote)
{
	format_hdr(m, iba::cm::attr::drep, tid);
	auto &d = body<iba::cm::Drep>(m);
	d.local_comm_id.set(local);
	d.remote_comm_id.set(remote);
}

uint8_t rejected_msg(State s)
{
	switch (s) {
	case State::ReqRcvd:
	case State::MraReqSent: return iba::cm::msg::req;
	case State::RepRcvd:
	case State::MraRepSent: return iba::cm::msg::rep;
	default: return iba::cm::msg::other;
	}
}

/* 1: DREQ to the peer (a fresh TID: IBA 12.6.10 makes it a new exchange). */
void send_dreq_locked(Id &id, ConstBytes pdata)
{
	cm->lock.assert_held();
	format_hdr(id.msg, iba::cm::attr::dreq, id.tid + 1);
	auto &d = body<iba::cm::Dreq>(id.msg);
	d.local_comm_id.set(id.local_id);
	d.remote_comm_id.set(id.remote_id);
	iba::cm::Dreq::Qpn::set(d.remote_qpn, id.setup.remote_qpn);
	__builtin_memcpy(d.private_data, pdata.data(), pdata.size());
	id.has_msg = true;
	id.state = State::DreqSent;
	id.tries_left = id.max_cm_retries;
	id.resend_ms = iba::cm::timeout_ms(id.peer_cm_timeout) + round_trip_ms(id.pkt_life);
	send_msg_locked(id);
	arm_locked(id, id.resend_ms);
}

/*
 * A REJ(timeout) from a peer that gave up before it learnt our ID names
 * itself by CA GUID in the ARI and by its own ID (IBA 12.6.7.2).
 */
Id *timed_out_peer_locked(const iba::cm::Rej &rej)
{
	cm->lock.assert_held();
	if (rej.reason.get() != iba::cm::rej::timeout || iba::cm::Rej::AriLength::get(rej.ari_length) < 8)
		return nullptr;
	be64 guid;
	__builtin_memcpy(&guid, rej.ari, sizeof(guid));
	for (Id &id : cm->ids)
		if (id.state != State::Listen && id.remote_id == rej.local_comm_id.get() &&
		    id.remote_ca_guid == guid.get())
			return &id;
	return nullptr;
}

/* Retransmit the Id's message if tries are left (IBA 12.7.27 MaxCMRetries). */
bool retry_locked(Id &id)
{
	cm->lock.assert_held();
	if (!id.tries_left)
		return false;
	id.tries_left--;
	cm->stats.retransmitted++;
	send_msg_locked(id);
	arm_locked(id, id.resend_ms);
	return true;
}

} // namespace

void to_idle_locked(Id &id)
{
	cm->lock.assert_held();
	arm_locked(id, 0);
	id.state = State::Idle;
	id.has_msg = false;
	id.port = nullptr;
	table_remove_locked(id);
	id.local_id = 0; /* a reconnect gets a new one */
}

void enter_timewait_locked(Id &id)
{
	cm->lock.assert_held();
	/* IBA 12.9.8.1: long enough for any packet of the connection to die out, retries included. */
	uint32_t ms = round_trip_ms(id.pkt_life) + iba::cm::timeout_ms(id.setup.ack_timeout);
	id.state = State::TimeWait;
	arm_locked(id, min<uint32_t>(ms, 30000));
}

void send_rej_locked(Id &id, uint16_t reason, ConstBytes ari, ConstBytes pdata)
{
	cm->lock.assert_held();
	using R = iba::cm::Rej;
	mad::Mad m;
	format_hdr(m, iba::cm::attr::rej, id.tid);
	R &r = body<R>(m);
	r.local_comm_id.set(id.local_id);
	r.remote_comm_id.set(id.remote_id);
	R::Rejected::set(r.rejected, rejected_msg(id.state));
	r.reason.set(reason);
	if (reason == iba::cm::rej::timeout && ari.empty()) {
		/* IBA 12.6.7.2 table 109: a timeout names the CA GUID of its sender in the ARI. */
		be64 guid = be64::from(id.dev->attr().node_guid);
		__builtin_memcpy(r.ari, &guid, sizeof(guid));
		R::AriLength::set(r.ari_length, sizeof(guid));
	} else {
		R::AriLength::set(r.ari_length, static_cast<uint8_t>(ari.size()));
		__builtin_memcpy(r.ari, ari.data(), ari.size());
	}
	__builtin_memcpy(r.private_data, pdata.data(), pdata.size());
	if (id.port)
		send_raw_locked(*id.port, m, id.peer);
}

void abandon_locked(Id &id)
{
	cm->lock.assert_held();
	switch (id.state) {
	case State::Listen:
	case State::SidrReqSent: to_idle_locked(id); break;
	case State::ReqSent:
	case State::RepWait:
		send_rej_locked(id, iba::cm::rej::timeout, {}, {});
		to_idle_locked(id);
		break;
	case State::ReqRcvd:
	case State::MraReqSent:
		send_rej_locked(id, iba::cm::rej::consumer, {}, {});
		to_idle_locked(id);
		break;
	case State::RepSent:
	case State::MraRepRcvd:
	case State::RepRcvd:
	case State::MraRepSent:
		send_rej_locked(id, iba::cm::rej::consumer, {}, {});
		enter_timewait_locked(id);
		break;
	case State::Established: send_dreq_locked(id, {}); break;
	case State::SidrReqRcvd: sidr_refuse_locked(id); break;
	default: break; /* Idle; DreqSent and TimeWait run to their end without the owner */
	}
}

void expire_locked(Id &id)
{
	cm->lock.assert_held();
	switch (id.state) {
	case State::ReqSent:
	case State::RepWait:
		id.state = State::ReqSent;
		if (retry_locked(id))
			return;
		send_rej_locked(id, iba::cm::rej::timeout, {}, {});
		queue_locked(id, EventType::Unreachable, QpMove::Error);
		to_idle_locked(id);
		return;
	case State::RepSent:
	case State::MraRepRcvd:
		id.state = State::RepSent;
		if (retry_locked(id))
			return;
		send_rej_locked(id, iba::cm::rej::timeout, {}, {});
		queue_locked(id, EventType::Unreachable, QpMove::Error);
		enter_timewait_locked(id);
		return;
	case State::DreqSent:
		if (retry_locked(id))
			return;
		queue_locked(id, EventType::Disconnected);
		enter_timewait_locked(id);
		return;
	case State::TimeWait:
		queue_locked(id, EventType::TimewaitExit);
		to_idle_locked(id);
		return;
	case State::SidrReqSent:
		if (retry_locked(id))
			return;
		queue_locked(id, EventType::Unreachable);
		to_idle_locked(id);
		return;
	default: return;
	}
}

Result<void> disconnect(Id &id, ConstBytes pdata)
{
	if (pdata.size() > iba::cm::pdata::dreq)
		return Error(err::EINVAL);
	verbs::Qp *qp;
	{
		MutexGuard g(cm->lock);
		if (id.state != State::Established || id.ulp_gone)
			return Error(err::EINVAL);
		send_dreq_locked(id, pdata);
		qp = id.qp;
	}
	/* IBA 12.9.7: no more data on a connection being released. */
	if (qp)
		qp_to_error(*qp);
	return ok();
}

Result<void> reject(Id &id, uint16_t reason, ConstBytes ari, ConstBytes pdata)
{
	if (ari.size() > iba::cm::rej::ari_max || pdata.size() > iba::cm::pdata::rej)
		return Error(err::EINVAL);
	verbs::Qp *qp = nullptr;
	{
		MutexGuard g(cm->lock);
		switch (id.state) {
		case State::ReqRcvd:
		case State::MraReqSent:
			send_rej_locked(id, reason, ari, pdata);
			to_idle_locked(id);
			break;
		case State::RepRcvd:
		case State::MraRepSent:
			send_rej_locked(id, reason, ari, pdata);
			enter_timewait_locked(id);
			qp = id.qp;
			break;
		default: return Error(err::EINVAL);
		}
	}
	if (qp)
		qp_to_error(*qp);
	return ok();
}

void on_rej(CmPort &p, const mad::Mad &m, const mad::MadAddr &)
{
	using R = iba::cm::Rej;
	const R &rej = body<R>(m);
	Ref<Id> d;
	{
		MutexGuard g(cm->lock);
		Id *id = find_local_locked(rej.remote_comm_id.get());
		if (!id)
			id = timed_out_peer_locked(rej);
		/* Until the REP, the peer's ID is unknown; after it, it must match. */
		bool ours = id && id->port == &p &&
			    ((id->state == State::ReqSent || id->state == State::RepWait) ||
			     id->remote_id == rej.local_comm_id.get());
		if (!ours) {
			cm->stats.dropped++;
			return;
		}
		State s = id->state;
		if (s == State::Idle || s == State::Listen || s == State::TimeWait || s == State::SidrReqSent ||
		    s == State::SidrReqRcvd) {
			cm->stats.dropped++;
			return;
		}
		d = Ref<Id>::share(id);
		const wire::Rej f = wire::rej(m);
		if (Pending *ev = queue_locked(*id, EventType::Rejected, QpMove::Error)) {
			ev->reason = f.reason;
			ev->ari_len = static_cast<uint8_t>(min(f.ari.size(), sizeof(ev->ari)));
			__builtin_memcpy(ev->ari, f.ari.data(), ev->ari_len);
			ConstBytes pd = wire::private_data(m, wire::Kind::Rej);
			ev->set_pdata(pd.data(), pd.size());
		}
		/* A stale-connection REJ still leaves the QP to time-wait: the peer had it connected. */
		bool setup = s == State::ReqSent || s == State::RepWait || s == State::ReqRcvd ||
			     s == State::MraReqSent;
		if (setup && f.reason != iba::cm::rej::stale_conn)
			to_idle_locked(*id);
		else
			enter_timewait_locked(*id);
	}
	deliver(*d);
}

void on_dreq(CmPort &p, const mad::Mad &m, const mad::MadAddr &from)
{
	using D = iba::cm::Dreq;
	const D &dreq = body<D>(m);
	Ref<Id> d;
	{
		MutexGuard g(cm->lock);
		Id *id = find_local_locked(dreq.remote_comm_id.get());
		bool ours = id && id->port == &p && id->remote_id == dreq.local_comm_id.get() &&
			    (!id->qpn || wire::dreq_qpn(m) == id->qpn);
		mad::Mad drep;
		/* For a stranger, the ID it believes is ours: the only one it can match. */
		format_drep(drep, m.hdr().tid.get(), dreq.remote_comm_id.get(), dreq.local_comm_id.get());
		if (!ours || id->state == State::TimeWait) {
			send_raw_locked(p, drep, from); /* 2: duplicate, or no such connection */
			return;
		}
		State s = id->state;
		if (s != State::Established && s != State::RepSent && s != State::MraRepRcvd &&
		    s != State::DreqSent) {
			cm->stats.dropped++;
			return;
		}
		send_raw_locked(p, drep, id->peer);
		d = Ref<Id>::share(id);
		if (Pending *ev = queue_locked(*id, EventType::Disconnected, QpMove::Error)) {
			ConstBytes pd = wire::private_data(m, wire::Kind::Dreq);
			ev->set_pdata(pd.data(), pd.size());
		}
		enter_timewait_locked(*id);
	}
	deliver(*d);
}

void on_drep(CmPort &p, const mad::Mad &m, const mad::MadAddr &)
{
	const auto &drep = body<iba::cm::Drep>(m);
	Ref<Id> d;
	{
		MutexGuard g(cm->lock);
		Id *id = find_local_locked(drep.remote_comm_id.get());
		if (!id || id->port != &p || id->state != State::DreqSent ||
		    id->remote_id != drep.local_comm_id.get()) {
			cm->stats.dropped++;
			return;
		}
		d = Ref<Id>::share(id);
		if (Pending *ev = queue_locked(*id, EventType::Disconnected)) {
			ConstBytes pd = wire::private_data(m, wire::Kind::Drep);
			ev->set_pdata(pd.data(), pd.size());
		}
		enter_timewait_locked(*id);
	}
	deliver(*d);
}

void on_lap(CmPort &p, const mad::Mad &m, const mad::MadAddr &from)
{
	/* IBA 12.8.2: alternate paths are not supported; the requester learns so from the APR. */
	const wire::Ids lap = wire::ids(m, wire::Kind::Lap);
	MutexGuard g(cm->lock);
	Id *id = find_local_locked(lap.ours);
	mad::Mad apr;
	format_hdr(apr, iba::cm::attr::apr, m.hdr().tid.get());
	auto &a = body<iba::cm::Apr>(apr);
	a.local_comm_id.set(id ? id->local_id : 0);
	a.remote_comm_id.set(lap.sender);
	a.status.set(id ? iba::cm::apr::unsupported : iba::cm::apr::invalid_comm_id);
	send_raw_locked(p, apr, from);
}

} // namespace weft::cm
