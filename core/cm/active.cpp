// SPDX-License-Identifier: GPL-2.0
/*
 * The active side of connection establishment (IBA 12.9.5, figure 142):
 *   1. connect(): the QP to Init, REQ sent, ReqSent with the REQ timer
 *      (the peer's CM response time plus a round trip of the path).
 *   2. MRA(REQ): RepWait, the timer extended by its service timeout.
 *   3. REP: the QP to RTR and RTS, RepRcvd, the Reply event; when the
 *      handler accepts, RTU sent and Established.
 *   4. REQ timer out of retries: REJ(timeout) to the peer, Unreachable.
 * A duplicate REP after the RTU (the RTU was lost) gets the RTU again.
 */
#include "cm_priv.h"
#include "wire.h"

namespace weft::cm {

namespace {

void format_path(iba::cm::Path &out, const iba::PathRecord &pr, uint8_t ack_timeout)
{
	out.local_lid = pr.slid;
	out.remote_lid = pr.dlid;
	__builtin_memcpy(out.local_gid, pr.sgid, 16);
	__builtin_memcpy(out.remote_gid, pr.dgid, 16);
	iba::cm::Path::FlowLabel::set(out.flow_rate, iba::PathRecord::FlowLabel::get(pr.hop_flow_raw));
	iba::cm::Path::Rate::set(out.flow_rate, iba::PathRecord::Value::get(pr.rate));
	out.tclass = pr.tclass;
	out.hop_limit.set(static_cast<uint8_t>(iba::PathRecord::HopLimit::get(pr.hop_flow_raw)));
	iba::cm::Path::Sl::set(out.sl_local, static_cast<uint8_t>(iba::PathRecord::Sl::get(pr.qos_sl)));
	/* IBA 12.7.11: the peer is on this subnet when the GID prefixes match. */
	iba::cm::Path::SubnetLocal::set(out.sl_local, __builtin_memcmp(pr.sgid, pr.dgid, 8) == 0);
	iba::cm::Path::AckTimeout::set(out.ack_timeout, ack_timeout);
}

void format_req(Id &id, const ConnectParam &p)
{
	using R = iba::cm::Req;
	format_hdr(id.msg, iba::cm::attr::req, id.tid);
	R &r = body<R>(id.msg);
	r.local_comm_id.set(id.local_id);
	r.service_id.set(p.service_id);
	r.local_ca_guid.set(id.dev->attr().node_guid);
	R::Qpn::set(r.qpn_rr, id.qpn);
	R::ResponderResources::set(r.qpn_rr, p.responder_resources);
	R::InitiatorDepth::set(r.eecn_id, p.initiator_depth);
	R::RemoteCmTimeout::set(r.reecn_flags, p.remote_cm_response_timeout & 0x1f);
	R::TransportType::set(r.reecn_flags, id.qp_type == verbs::QpType::Rc ? 0 : 1);
	R::Psn::set(r.psn_flags, id.setup.local_psn);
	R::LocalCmTimeout::set(r.psn_flags, p.local_cm_response_timeout & 0x1f);
	R::RetryCount::set(r.psn_flags, p.retry_count & 7);
	r.pkey = p.path.pkey;
	R::Mtu::set(r.mtu_flags, static_cast<uint8_t>(id.setup.mtu));
	R::RnrRetry::set(r.mtu_flags, p.rnr_retry_count & 7);
	R::MaxCmRetries::set(r.retries_flags, p.max_cm_retries & 0xf);
	R::Srq::set(r.retries_flags, p.srq);
	format_path(r.primary, p.path, id.setup.ack_timeout);
	__builtin_memcpy(r.private_data, p.private_data.data(), p.private_data.size());
}

Result<void> check(const ConnectParam &p)
{
	verbs::QpType t = p.qp ? p.qp->type : p.qp_type;
	if ((t != verbs::QpType::Rc && t != verbs::QpType::Uc) || (!p.qp && !(p.qpn & 0xffffff)))
		return Error(err::EINVAL);
	if (p.private_data.size() > iba::cm::pdata::req || !p.path.dlid.get())
		return Error(err::EINVAL);
	uint8_t mtu = iba::PathRecord::Value::get(p.path.mtu);
	if (mtu < 1 || mtu > 5)
		return Error(err::EINVAL);
	return ok();
}

/* 3: after the Reply handler accepted: RTU, Established. */
void send_rtu(Id &id)
{
	{
		MutexGuard g(cm->lock);
		if (id.state != State::RepRcvd && id.state != State::MraRepSent)
			return;
		format_hdr(id.msg, iba::cm::attr::rtu, id.tid);
		auto &rtu = body<iba::cm::Rtu>(id.msg);
		rtu.local_comm_id.set(id.local_id);
		rtu.remote_comm_id.set(id.remote_id);
		id.has_msg = true;
		send_msg_locked(id); /* kept: a duplicate REP means it was lost */
		id.state = State::Established;
		queue_locked(id, EventType::Established);
	}
	deliver(id);
}

} // namespace

/* Called by deliver() once the Reply handler returned without refusing. */
void reply_accepted(Id &id)
{
	send_rtu(id);
}

Result<void> rtu(Id &id)
{
	{
		MutexGuard g(cm->lock);
		if (!id.manual_rtu || id.ulp_gone ||
		    (id.state != State::RepRcvd && id.state != State::MraRepSent))
			return Error(err::EINVAL);
	}
	send_rtu(id);
	return ok();
}

void qp_move_failed_locked(Id &id, const Pending &p)
{
	cm->lock.assert_held();
	cm->stats.dropped++;
	log.warn("cm id %08x: QP %06x would not move for event %u", id.local_id, id.qpn,
		 unsigned(p.type));
	if (id.state == State::RepRcvd) {
		send_rej_locked(id, iba::cm::rej::no_qp, {}, {});
		queue_locked(id, EventType::Unreachable, QpMove::Error);
		enter_timewait_locked(id);
	} else if (id.state == State::Established) {
		abandon_locked(id); /* DREQ; its DREP or timeout says Disconnected */
		if (Pending *q = queue_locked(id, EventType::Disconnected, QpMove::Error))
			q->silent = true;
	}
}

Result<void> connect(Id &id, const ConnectParam &p)
{
	WEFT_TRY(check(p));
	auto pkey = find_pkey(*id.dev, p.port, p.path.pkey.get());
	if (!pkey)
		return Error(err::EINVAL);
	QpSetup s;
	s.access = p.access;
	s.pkey_index = pkey.value();
	s.port = p.port;
	s.av.dlid = p.path.dlid.get();
	s.av.sl = static_cast<uint8_t>(iba::PathRecord::Sl::get(p.path.qos_sl));
	s.av.port = p.port;
	s.mtu = static_cast<iba::Mtu>(iba::PathRecord::Value::get(p.path.mtu));
	s.local_psn = weft_random_u32() & 0xffffff;
	s.responder_resources = p.responder_resources;
	s.initiator_depth = p.initiator_depth;
	s.min_rnr_timer = p.min_rnr_timer;
	s.retry_count = p.retry_count;
	/* IBA 12.7.34: the ACK timeout must cover the round trip, 2 * PacketLifeTime. */
	uint8_t pkt_life = iba::PathRecord::Value::get(p.path.pkt_life);
	s.ack_timeout = p.ack_timeout ? p.ack_timeout : static_cast<uint8_t>(min(pkt_life + 1, 31));
	/* Outside the CM lock: Modify QP takes the verbs context's. */
	if (p.qp)
		WEFT_TRY(qp_to_init(*p.qp, s));

	MutexGuard g(cm->lock);
	if (id.state != State::Idle || id.ulp_gone || id.qp)
		return Error(err::EINVAL);
	CmPort *port = find_port_locked(*id.dev, p.port);
	if (!port)
		return Error(err::ENODEV);
	id.setup = s;
	id.pkt_life = pkt_life;
	table_add_locked(id);
	id.port = port;
	id.qp = p.qp;
	id.qp_type = p.qp ? p.qp->type : p.qp_type;
	id.qpn = p.qp ? p.qp->qpn : p.qpn & 0xffffff;
	id.manual_rtu = p.manual_rtu;
	id.service_id = p.service_id;
	id.remote_id = 0;
	id.tid = (uint64_t(id.local_id) << 32) | (weft_random_u32() & 0xffff);
	id.peer = mad::MadAddr{p.path.dlid.get(), iba::gsi_qpn, iba::gsi_qkey, s.pkey_index, s.av.sl};
	id.peer_cm_timeout = p.remote_cm_response_timeout;
	id.max_cm_retries = id.tries_left = p.max_cm_retries & 0xf;
	id.resend_ms = iba::cm::timeout_ms(id.peer_cm_timeout) + round_trip_ms(id.pkt_life);
	format_req(id, p);
	id.has_msg = true;
	id.state = State::ReqSent;
	send_msg_locked(id);
	arm_locked(id, id.resend_ms);
	return ok();
}

void on_rep(CmPort &p, const mad::Mad &m, const mad::MadAddr &from)
{
	using R = iba::cm::Rep;
	const R &rep = body<R>(m);
	Ref<Id> d;
	{
		MutexGuard g(cm->lock);
		Id *id = find_local_locked(rep.remote_comm_id.get());
		if (!id || id->port != &p) {
			/* IBA 12.6.7.2: a REP for no connection of ours. */
			mad::Mad rej;
			format_hdr(rej, iba::cm::attr::rej, m.hdr().tid.get());
			auto &r = body<iba::cm::Rej>(rej);
			r.local_comm_id = rep.remote_comm_id; /* the ID the peer believes is ours */
			r.remote_comm_id = rep.local_comm_id;
			iba::cm::Rej::Rejected::set(r.rejected, iba::cm::msg::rep);
			r.reason.set(iba::cm::rej::invalid_comm_id);
			send_raw_locked(p, rej, from);
			cm->stats.dropped++;
			return;
		}
		if ((id->state == State::Established || id->state == State::MraRepSent) &&
		    id->remote_id == rep.local_comm_id.get()) {
			send_msg_locked(*id); /* step 3's RTU was lost, or the REP retried under our MRA */
			return;
		}
		if (id->state != State::ReqSent && id->state != State::RepWait) {
			cm->stats.dropped++;
			return;
		}
		arm_locked(*id, 0);
		const wire::Rep f = wire::rep(m);
		id->remote_id = rep.local_comm_id.get();
		id->remote_ca_guid = f.ca_guid;
		QpSetup &s = id->setup;
		s.remote_qpn = f.qpn;
		s.remote_psn = f.psn;
		s.rnr_retry = f.rnr_retry;
		/* IBA 12.7.29-30: each side reads at most as deep as the other can answer. */
		s.initiator_depth = min(s.initiator_depth, f.responder_resources);
		s.responder_resources = min(s.responder_resources, f.initiator_depth);
		d = Ref<Id>::share(id);
		id->state = State::RepRcvd;
		/* 3: deliver() moves the QP, then calls the Reply handler, then sends the RTU. */
		Pending *ev = queue_locked(*id, EventType::Reply, QpMove::RtrRts);
		if (!ev) {
			send_rej_locked(*id, iba::cm::rej::no_resources, {}, {});
			enter_timewait_locked(*id);
		} else {
			ConstBytes pd = wire::private_data(m, wire::Kind::Rep);
			ev->set_pdata(pd.data(), pd.size());
			ev->then_rtu = !id->manual_rtu;
		}
	}
	deliver(*d);
}

void on_mra(CmPort &p, const mad::Mad &m, const mad::MadAddr &)
{
	using M = iba::cm::Mra;
	const M &mra = body<M>(m);
	MutexGuard g(cm->lock);
	Id *id = find_local_locked(mra.remote_comm_id.get());
	if (!id || id->port != &p) {
		cm->stats.dropped++;
		return;
	}
	/* IBA 12.6.6: hold off retransmitting for the service timeout plus one packet lifetime. */
	const wire::Mra f = wire::mra(m);
	uint32_t wait = f.service_timeout_ms + iba::cm::timeout_ms(id->pkt_life);
	uint8_t which = f.mraed;
	if (which == iba::cm::msg::req && (id->state == State::ReqSent || id->state == State::RepWait)) {
		id->state = State::RepWait;
		arm_locked(*id, wait);
	} else if (which == iba::cm::msg::rep &&
		   (id->state == State::RepSent || id->state == State::MraRepRcvd) &&
		   id->remote_id == mra.local_comm_id.get()) {
		id->state = State::MraRepRcvd;
		arm_locked(*id, wait);
	} else {
		cm->stats.dropped++;
	}
}

} // namespace weft::cm
