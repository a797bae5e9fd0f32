// SPDX-License-Identifier: GPL-2.0
/*
 * The passive side of connection establishment (IBA 12.9.5, figure 143):
 *   1. REQ: a duplicate is answered with the MRA if we sent one (REJ
 *      "stale" once in time-wait) and otherwise dropped; a REQ from a QP that
 *      already has a connection with us is refused as stale and that
 *      connection is released (IBA 12.9.8.3.1); a REQ nobody listens for
 *      gets REJ "invalid service ID".  Otherwise a new Id in ReqRcvd and
 *      the Request event on the listener's handler.
 *   2. The owner answers: send_mra() (MraReqSent), reject() (REJ, Idle)
 *      or accept(): the QP to Init, RTR and (unless asked not to) RTS,
 *      REP, RepSent with the REP timer.
 *   3. RTU, or data on the QP first (established()): the QP to RTS if it
 *      is not, Established.
 */
#include "cm_priv.h"
#include "wire.h"

namespace weft::cm {

namespace {

using Req = iba::cm::Req;

void rej_stranger(CmPort &p, const mad::Mad &m, const mad::MadAddr &from, uint16_t reason)
{
	mad::Mad rej;
	format_hdr(rej, iba::cm::attr::rej, m.hdr().tid.get());
	auto &r = body<iba::cm::Rej>(rej);
	r.remote_comm_id = body<Req>(m).local_comm_id;
	iba::cm::Rej::Rejected::set(r.rejected, iba::cm::msg::req);
	r.reason.set(reason);
	send_raw_locked(p, rej, from);
}

/* 1: a REQ we have seen: true if it was one. */
bool duplicate_locked(CmPort &p, const mad::Mad &m, const mad::MadAddr &from)
{
	cm->lock.assert_held();
	const Req &req = body<Req>(m);
	for (Id &id : cm->ids) {
		if (id.state == State::Listen || id.remote_id != req.local_comm_id.get() ||
		    id.remote_ca_guid != req.local_ca_guid.get())
			continue;
		/*
		 * Only an MRA is resent: a lost REP is resent by our own REP
		 * timer, and answering every retried REQ too would double the
		 * traffic of a congested port.
		 */
		if (id.state == State::MraReqSent)
			send_msg_locked(id);
		else if (id.state == State::TimeWait)
			rej_stranger(p, m, from, iba::cm::rej::stale_conn);
		return true;
	}
	return false;
}

/* 1: IBA 12.9.8.3.1: the peer's QP is connected to us already, so that connection is stale. */
Id *stale_locked(const wire::Req &req)
{
	cm->lock.assert_held();
	for (Id &id : cm->ids)
		if (id.state == State::Established && id.setup.remote_qpn == req.info.remote_qpn &&
		    id.remote_ca_guid == req.info.remote_ca_guid)
			return &id;
	return nullptr;
}

Id *listener_locked(CmPort &p, uint64_t service_id)
{
	cm->lock.assert_held();
	for (Id &id : cm->ids)
		if (id.state == State::Listen && id.dev.get() == &p.dev && !id.ulp_gone &&
		    (service_id & id.service_mask) == id.service_id)
			return &id;
	return nullptr;
}

void take_req(Id &id, CmPort &p, const mad::Mad &m, const wire::Req &req, const mad::MadAddr &from,
	      uint16_t pkey_index)
{
	const RequestInfo &ri = req.info;
	id.port = &p;
	id.remote_id = wire::ids(m, wire::Kind::Req).sender;
	id.remote_ca_guid = ri.remote_ca_guid;
	id.tid = m.hdr().tid.get();
	id.service_id = ri.service_id;
	id.peer = mad::MadAddr{from.lid, iba::gsi_qpn, iba::gsi_qkey, from.pkey_index, from.sl};
	QpSetup &s = id.setup;
	s.pkey_index = pkey_index;
	s.port = p.num;
	s.remote_qpn = ri.remote_qpn;
	s.remote_psn = req.remote_psn;
	s.mtu = ri.mtu;
	s.av.dlid = ri.remote_lid;
	s.av.sl = req.sl;
	s.av.port = p.num;
	/* Chosen now: an owner moving its own QP asks for RTS (qp_attr()) before accept(). */
	s.local_psn = weft_random_u32() & 0xffffff;
	s.access = verbs::access::local_write | verbs::access::remote_write |
		   verbs::access::remote_read | verbs::access::remote_atomic;
	/* The REQ's view, narrowed by accept() to what we offer. */
	s.responder_resources = ri.initiator_depth;
	s.initiator_depth = ri.responder_resources;
	s.ack_timeout = req.ack_timeout;
	s.retry_count = ri.retry_count;
	s.rnr_retry = ri.rnr_retry_count;
	id.pkt_life = req.pkt_life;
	id.peer_cm_timeout = req.peer_cm_timeout;
	id.max_cm_retries = req.max_cm_retries;
}

} // namespace

void on_req(CmPort &p, const mad::Mad &m, const mad::MadAddr &from)
{
	const wire::Req req = wire::req(m);
	auto pkey = find_pkey(p.dev, p.num, req.info.pkey);
	Ref<Id> fresh, stale;
	{
		MutexGuard g(cm->lock);
		if (duplicate_locked(p, m, from))
			return;
		if (Id *old = stale_locked(req)) {
			rej_stranger(p, m, from, iba::cm::rej::stale_conn);
			cm->stats.stale_rej++;
			stale = Ref<Id>::share(old);
			abandon_locked(*old); /* DREQ: the peer forgot it; its DREP or timeout says Disconnected */
			if (Pending *q = queue_locked(*old, EventType::Disconnected, QpMove::Error))
				q->silent = true;
		} else if (!req.valid || !pkey) {
			cm->stats.dropped++;
			rej_stranger(p, m, from, !pkey ? iba::cm::rej::invalid_gid : iba::cm::rej::invalid_lid);
		} else if (!req.rc_or_uc) {
			rej_stranger(p, m, from, iba::cm::rej::invalid_transport_type);
		} else if (Id *l = listener_locked(p, req.info.service_id)) {
			auto *id = new (Gfp::Sleep) Id(p.dev, *l->handler, l->context);
			if (!id) {
				rej_stranger(p, m, from, iba::cm::rej::no_resources);
				return;
			}
			fresh = Ref<Id>::adopt(id); /* becomes the owner's reference with the event */
			cm->all.push_back(*id);
			take_req(*id, p, m, req, from, pkey.value());
			id->state = State::ReqRcvd;
			table_add_locked(*id);
			Pending *ev = queue_locked(*id, EventType::Request);
			if (ev) {
				ev->listener = Ref<Id>::share(l);
				ev->req = req.info;
				ev->req.port = p.num;
				ConstBytes pd = wire::private_data(m, wire::Kind::Req);
				ev->set_pdata(pd.data(), pd.size());
				fresh->get(); /* deliver() below drops ours; the owner keeps one */
			} else {
				owner_gone_locked(*id);
				abandon_locked(*id);
			}
		} else {
			rej_stranger(p, m, from, iba::cm::rej::invalid_service_id);
		}
	}
	if (stale)
		deliver(*stale);
	if (fresh)
		deliver(*fresh);
}

Result<void> accept(Id &id, const AcceptParam &a)
{
	verbs::QpType t = a.qp ? a.qp->type : a.qp_type;
	if ((t != verbs::QpType::Rc && t != verbs::QpType::Uc) || (!a.qp && !(a.qpn & 0xffffff)) ||
	    a.private_data.size() > iba::cm::pdata::rep)
		return Error(err::EINVAL);
	QpSetup s;
	{
		MutexGuard g(cm->lock);
		if ((id.state != State::ReqRcvd && id.state != State::MraReqSent) || id.ulp_gone || !id.port)
			return Error(err::EINVAL);
		s = id.setup;
	}
	s.access = a.access;
	s.responder_resources = min(s.responder_resources, a.responder_resources);
	s.initiator_depth = min(s.initiator_depth, a.initiator_depth);
	s.min_rnr_timer = a.min_rnr_timer;
	/*
	 * Outside the CM lock: Modify QP takes the verbs context's.  By
	 * default RTS already, before the REP, as the in-tree RDMA CM does:
	 * data may arrive (and want an answer) before the RTU does.
	 */
	if (a.qp) {
		WEFT_TRY(qp_to_init(*a.qp, s));
		WEFT_TRY(qp_to_rtr(*a.qp, s));
		if (a.rts_now)
			WEFT_TRY(qp_to_rts(*a.qp, s));
	}

	MutexGuard g(cm->lock);
	/* The REQ's sender gave up meanwhile (REJ, ECONNRESET): the QP stays with its owner. */
	if ((id.state != State::ReqRcvd && id.state != State::MraReqSent) || id.ulp_gone || !id.port)
		return Error(err::ECONNRESET);
	id.setup = s;
	id.qp = a.qp;
	id.qp_type = t;
	id.qpn = a.qp ? a.qp->qpn : a.qpn & 0xffffff;

	using R = iba::cm::Rep;
	format_hdr(id.msg, iba::cm::attr::rep, id.tid);
	R &rep = body<R>(id.msg);
	rep.local_comm_id.set(id.local_id);
	rep.remote_comm_id.set(id.remote_id);
	R::Qpn::set(rep.qpn_vendor, id.qpn);
	R::Psn::set(rep.psn_vendor, s.local_psn);
	rep.responder_resources.set(s.responder_resources);
	rep.initiator_depth.set(s.initiator_depth);
	R::RnrRetry::set(rep.rnr_flags, a.rnr_retry_count & 7);
	R::Srq::set(rep.rnr_flags, a.srq);
	rep.local_ca_guid.set(id.dev->attr().node_guid);
	__builtin_memcpy(rep.private_data, a.private_data.data(), a.private_data.size());
	id.has_msg = true;
	id.state = State::RepSent;
	id.tries_left = id.max_cm_retries;
	id.resend_ms = iba::cm::timeout_ms(id.peer_cm_timeout) + round_trip_ms(id.pkt_life);
	send_msg_locked(id);
	arm_locked(id, id.resend_ms);
	return ok();
}

Result<void> send_mra(Id &id, uint8_t service_timeout, ConstBytes pdata)
{
	if (pdata.size() > iba::cm::pdata::mra || service_timeout > 31)
		return Error(err::EINVAL);
	MutexGuard g(cm->lock);
	uint8_t which;
	if (id.state == State::ReqRcvd || id.state == State::MraReqSent)
		which = iba::cm::msg::req;
	else if (id.state == State::RepRcvd || id.state == State::MraRepSent)
		which = iba::cm::msg::rep;
	else
		return Error(err::EINVAL);
	using M = iba::cm::Mra;
	format_hdr(id.msg, iba::cm::attr::mra, id.tid);
	M &mra = body<M>(id.msg);
	mra.local_comm_id.set(id.local_id);
	mra.remote_comm_id.set(id.remote_id);
	M::Mraed::set(mra.mraed, which);
	M::Timeout::set(mra.service_timeout, service_timeout);
	__builtin_memcpy(mra.private_data, pdata.data(), pdata.size());
	id.has_msg = true; /* resent for each duplicate of the REQ (REP) */
	id.state = which == iba::cm::msg::req ? State::MraReqSent : State::MraRepSent;
	send_msg_locked(id);
	return ok();
}

namespace {

/* 3: the connection is up on the passive side; deliver() takes the QP to RTS if accept() did not. */
bool go_established_locked(Id &id, ConstBytes pdata)
{
	cm->lock.assert_held();
	if (id.state != State::RepSent && id.state != State::MraRepRcvd)
		return false;
	arm_locked(id, 0);
	id.state = State::Established;
	if (Pending *ev = queue_locked(id, EventType::Established, QpMove::Rts))
		ev->set_pdata(pdata.data(), pdata.size());
	return true;
}

} // namespace

void on_rtu(CmPort &p, const mad::Mad &m, const mad::MadAddr &)
{
	const auto &rtu = body<iba::cm::Rtu>(m);
	Ref<Id> d;
	{
		MutexGuard g(cm->lock);
		Id *id = find_local_locked(rtu.remote_comm_id.get());
		if (!id || id->port != &p || id->remote_id != rtu.local_comm_id.get()) {
			cm->stats.dropped++;
			return;
		}
		if (!go_established_locked(*id, ConstBytes(rtu.private_data, sizeof(rtu.private_data))))
			return; /* a duplicate RTU */
		d = Ref<Id>::share(id);
	}
	deliver(*d);
}

void comm_est_work(Work &w)
{
	Id *id = container_of(&w, &Id::comm_est);
	bool up;
	{
		MutexGuard g(cm->lock);
		up = go_established_locked(*id, {});
	}
	if (up)
		deliver(*id);
	id->put();
}

void established(Id &id)
{
	/*
	 * Called from the QP's event handler, inside the HCA's engine, which
	 * the verbs context's lock waits for: no CM lock here, a work item.
	 */
	cm->comm_est.fetch_add(1, Order::Relaxed);
	id.get();
	if (!id.comm_est.queue())
		id.put();
}

} // namespace weft::cm
