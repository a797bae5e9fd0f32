// SPDX-License-Identifier: GPL-2.0
/*
 * Service ID resolution (IBA 12.11): a UD client asks which QP and Q_Key
 * serve a service ID.
 *   1. sidr_request(): SIDR_REQ (its RequestID is our local ID),
 *      SidrReqSent, resent every timeout_ms up to max_cm_retries times,
 *      then Unreachable.
 *   2. Passive: a listener gets SidrRequest on a new Id (SidrReqRcvd); no
 *      listener means SIDR_REP "service ID not supported".
 *   3. sidr_reply(): SIDR_REP; the passive Id is done (Idle).
 *   4. SIDR_REP received: SidrReply, Idle.
 */
#include "cm_priv.h"
#include "wire.h"

namespace weft::cm {

namespace {

void format_sidr_rep(mad::Mad &m, uint64_t tid, uint32_t request_id, uint64_t service_id, uint8_t status,
		     uint32_t qpn, uint32_t qkey, ConstBytes pdata)
{
	using R = iba::cm::SidrRep;
	format_hdr(m, iba::cm::attr::sidr_rep, tid);
	R &r = body<R>(m);
	r.request_id.set(request_id);
	r.status.set(status);
	R::Qpn::set(r.qpn_vendor, qpn & 0xffffff);
	r.service_id.set(service_id);
	r.qkey.set(qkey);
	__builtin_memcpy(r.private_data, pdata.data(), pdata.size());
}

void send_sidr_rep_locked(Id &id, uint8_t status, uint32_t qpn, uint32_t qkey, ConstBytes pdata)
{
	cm->lock.assert_held();
	mad::Mad m;
	format_sidr_rep(m, id.tid, id.remote_id, id.service_id, status, qpn, qkey, pdata);
	if (id.port)
		send_raw_locked(*id.port, m, id.peer);
}

} // namespace

Result<void> sidr_request(Id &id, const SidrParam &p)
{
	if (p.private_data.size() > iba::cm::pdata::sidr_req || !p.path.dlid.get() || !p.timeout_ms)
		return Error(err::EINVAL);
	auto pkey = find_pkey(*id.dev, p.port, p.path.pkey.get());
	if (!pkey)
		return Error(err::EINVAL);
	MutexGuard g(cm->lock);
	if (id.state != State::Idle || id.ulp_gone)
		return Error(err::EINVAL);
	CmPort *port = find_port_locked(*id.dev, p.port);
	if (!port)
		return Error(err::ENODEV);
	table_add_locked(id);
	id.port = port;
	id.service_id = p.service_id;
	id.tid = (uint64_t(id.local_id) << 32) | 0x5d;
	uint8_t sl = static_cast<uint8_t>(iba::PathRecord::Sl::get(p.path.qos_sl));
	id.peer = mad::MadAddr{p.path.dlid.get(), iba::gsi_qpn, iba::gsi_qkey, pkey.value(), sl};
	using R = iba::cm::SidrReq;
	format_hdr(id.msg, iba::cm::attr::sidr_req, id.tid);
	R &r = body<R>(id.msg);
	r.request_id.set(id.local_id);
	r.pkey = p.path.pkey;
	r.service_id.set(p.service_id);
	__builtin_memcpy(r.private_data, p.private_data.data(), p.private_data.size());
	id.has_msg = true;
	id.state = State::SidrReqSent;
	id.max_cm_retries = id.tries_left = p.max_cm_retries;
	id.resend_ms = p.timeout_ms;
	send_msg_locked(id);
	arm_locked(id, id.resend_ms);
	return ok();
}

void on_sidr_req(CmPort &p, const mad::Mad &m, const mad::MadAddr &from)
{
	using R = iba::cm::SidrReq;
	const R &req = body<R>(m);
	Ref<Id> fresh;
	{
		MutexGuard g(cm->lock);
		Id *listener = nullptr;
		for (Id &id : cm->ids) {
			if (id.state == State::SidrReqRcvd && id.remote_id == req.request_id.get() &&
			    id.peer.lid == from.lid)
				return; /* a resend while the owner decides */
			if (id.state == State::Listen && id.dev.get() == &p.dev && !id.ulp_gone &&
			    (req.service_id.get() & id.service_mask) == id.service_id)
				listener = &id;
		}
		Id *id = listener ? new (Gfp::Sleep) Id(p.dev, *listener->handler, listener->context) : nullptr;
		if (!id) {
			/* 2: nobody serves it (or no memory to ask the one who does). */
			mad::Mad rep;
			format_sidr_rep(rep, m.hdr().tid.get(), req.request_id.get(), req.service_id.get(),
					listener ? iba::cm::sidr::rejected : iba::cm::sidr::unsupported_sid, 0, 0, {});
			send_raw_locked(p, rep, from);
			return;
		}
		fresh = Ref<Id>::adopt(id);
		cm->all.push_back(*id);
		id->port = &p;
		id->remote_id = req.request_id.get();
		id->tid = m.hdr().tid.get();
		id->service_id = req.service_id.get();
		/* IBA 12.11: SIDR_REP goes back the way the request came, through its GRH if any. */
		id->peer = from;
		id->peer.qpn = iba::gsi_qpn;
		id->peer.qkey = iba::gsi_qkey;
		id->state = State::SidrReqRcvd;
		table_add_locked(*id);
		Pending *ev = queue_locked(*id, EventType::SidrRequest);
		if (!ev) {
			owner_gone_locked(*id);
			sidr_refuse_locked(*id);
			return;
		}
		ev->listener = Ref<Id>::share(listener);
		ev->sidr.service_id = id->service_id;
		ev->sidr.pkey = wire::sidr_req(m).pkey;
		ev->sidr.port = p.num;
		ConstBytes pd = wire::private_data(m, wire::Kind::SidrReq);
		ev->set_pdata(pd.data(), pd.size());
		fresh->get(); /* the owner's */
	}
	deliver(*fresh);
}

Result<void> sidr_reply(Id &id, uint8_t status, uint32_t qpn, uint32_t qkey, ConstBytes pdata)
{
	if (pdata.size() > iba::cm::pdata::sidr_rep)
		return Error(err::EINVAL);
	MutexGuard g(cm->lock);
	if (id.state != State::SidrReqRcvd)
		return Error(err::EINVAL);
	send_sidr_rep_locked(id, status, qpn, qkey, pdata);
	to_idle_locked(id);
	return ok();
}

void sidr_refuse_locked(Id &id)
{
	cm->lock.assert_held();
	send_sidr_rep_locked(id, iba::cm::sidr::rejected, 0, 0, {});
	to_idle_locked(id);
}

void on_sidr_rep(CmPort &p, const mad::Mad &m, const mad::MadAddr &)
{
	using R = iba::cm::SidrRep;
	const R &rep = body<R>(m);
	Ref<Id> d;
	{
		MutexGuard g(cm->lock);
		Id *id = find_local_locked(rep.request_id.get());
		if (!id || id->port != &p || id->state != State::SidrReqSent) {
			cm->stats.dropped++;
			return;
		}
		d = Ref<Id>::share(id);
		if (Pending *ev = queue_locked(*id, EventType::SidrReply)) {
			ev->sidr = wire::sidr_rep(m);
			ConstBytes pd = wire::private_data(m, wire::Kind::SidrRep);
			ev->set_pdata(pd.data(), pd.size());
		}
		to_idle_locked(*id);
	}
	deliver(*d);
}

} // namespace weft::cm
