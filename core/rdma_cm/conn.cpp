// SPDX-License-Identifier: GPL-2.0
/*
 * Connections over the IB CM, as IBA Annex A11 lays them out:
 *   - the service ID is the port space and the destination port (A11.2.1);
 *   - the REQ (or SIDR_REQ) private data starts with the CMA header: the
 *     version, the IP version, the source port and both addresses (A11.6,
 *     in-tree struct cma_hdr), then the ULP's private data;
 *   - REP, REJ, RTU and DREQ private data are the ULP's alone.
 * Passive side: one IB CM listener per (device, service ID) shared by the
 * Ids listening on the port; a REQ finds its Id by namespace (the ib
 * interface that has the destination address), port and address.
 */
#include "rcm.h"

namespace weft::rdma_cm {

namespace {

/* IBA A11.6 table 2 (in-tree struct cma_hdr): 36 bytes. */
struct CmaHdr {
	uint8_t version;    /* 0 */
	uint8_t ip_version; /* bits 7:4: 4 or 6 */
	be16 src_port;
	uint8_t src[16]; /* IPv4: in the last 4 bytes */
	uint8_t dst[16];
};
static_assert(sizeof(CmaHdr) == cma_hdr_size);

constexpr uint32_t udp_qkey = 0x01234567; /* in-tree RDMA_UDP_QKEY */

void put_ip(uint8_t *out, const SockAddr &a)
{
	__builtin_memset(out, 0, 16);
	if (a.family == af_inet)
		__builtin_memcpy(out + 12, a.ip, 4);
	else
		__builtin_memcpy(out, a.ip, 16);
}

SockAddr get_ip(const uint8_t *in, uint8_t ipv, uint16_t port)
{
	SockAddr a;
	a.family = ipv == 4 ? af_inet : af_inet6;
	if (ipv == 4)
		__builtin_memcpy(a.ip, in + 12, 4);
	else
		__builtin_memcpy(a.ip, in, 16);
	a.port = port;
	return a;
}

/* The REQ's private data: header then the ULP's; its size or EINVAL. */
Result<size_t> format_pdata(uint8_t *buf, size_t max, const Id &id, ConstBytes user)
{
	if (user.size() > max - cma_hdr_size)
		return Error(err::EINVAL);
	auto *h = reinterpret_cast<CmaHdr *>(buf);
	h->version = 0;
	h->ip_version = static_cast<uint8_t>((id.src.family == af_inet ? 4 : 6) << 4);
	h->src_port.set(id.src.port);
	put_ip(h->src, id.src);
	put_ip(h->dst, id.dst);
	__builtin_memcpy(buf + cma_hdr_size, user.data(), user.size());
	return cma_hdr_size + user.size();
}

Result<uint16_t> pkey_index(verbs::Device &dev, uint8_t port, uint16_t pkey)
{
	verbs::PortAttr pa;
	WEFT_TRY(dev.query_port(port, pa));
	for (uint16_t i = 0; i < pa.pkey_tbl_len; i++) {
		auto v = dev.query_pkey(port, i);
		if (v && (v.value() & 0x7fff) == (pkey & 0x7fff) && (v.value() & 0x7fff))
			return i;
	}
	return Error(err::EINVAL);
}

/* The Init attributes before (or without) an IB CM Id: port, partition, rights or Q_Key. */
Result<uint32_t> init_attr(Id &id, verbs::QpAttr &a)
{
	Ref<verbs::Device> dev;
	uint8_t port;
	uint16_t pkey;
	{
		MutexGuard g(rcm->lock);
		if (!id.dev)
			return Error(err::EINVAL);
		dev = id.dev->dev;
		port = id.port;
		pkey = id.pkey;
	}
	uint16_t idx = WEFT_TRY(pkey_index(*dev, port, pkey));
	namespace qa = verbs::qp_attr;
	a.state = verbs::QpState::Init;
	a.pkey_index = idx;
	a.port_num = port;
	if (id.qp_type == verbs::QpType::Ud) {
		a.qkey = udp_qkey;
		return qa::state | qa::pkey_index | qa::port | qa::qkey;
	}
	a.qp_access_flags = verbs::access::local_write | verbs::access::remote_write |
			    verbs::access::remote_read | verbs::access::remote_atomic;
	return qa::state | qa::pkey_index | qa::port | qa::access_flags;
}

/* A UD peer's address vector from the route (in-tree cma_set_ud_path / ib_init_ah_from_path). */
verbs::AhAttr ah_from_route(const Id &id)
{
	verbs::AhAttr ah;
	ah.dlid = id.route.dlid.get();
	ah.sl = static_cast<uint8_t>(iba::PathRecord::Sl::get(id.route.qos_sl));
	ah.port = id.port;
	return ah;
}

void copy_ready(Id &id, const cm::Event &e)
{
	id.rep_len = static_cast<uint8_t>(min(e.private_data.size(), sizeof(id.rep_pdata)));
	__builtin_memcpy(id.rep_pdata, e.private_data.data(), id.rep_len);
}

} // namespace

/* --- listening ------------------------------------------------------------ */

void collect_idle_locked(List<CmListener, &CmListener::node> &unused);

Result<void> listen_on_locked(RcmDevice &d, uint64_t sid)
{
	for (CmListener &l : rcm->listeners) {
		if (l.dev.get() == &d && l.service_id == sid) {
			l.users++;
			return ok();
		}
	}
	auto *l = new (Gfp::Sleep) CmListener(d, sid);
	if (!l)
		return Error(err::ENOMEM);
	auto c = cm::create_id(*d.dev, *l, l);
	if (!c) {
		delete l;
		return c.error();
	}
	auto r = cm::listen(*c.value(), sid);
	if (!r) {
		cm::destroy(c.value());
		delete l;
		return r.error().code() == err::EBUSY ? Error(err::EADDRINUSE) : r.error();
	}
	l->cm_id = c.value();
	l->users = 1;
	rcm->listeners.push_back(*l);
	return ok();
}

void unlisten_locked(Id &id, List<CmListener, &CmListener::node> &unused)
{
	if (id.state != IdState::Listen)
		return;
	id.state = IdState::Idle;
	uint64_t sid = service_id(id.ps, id.src.port);
	for (CmListener &l : rcm->listeners)
		if (l.service_id == sid && (!id.dev || l.dev.get() == id.dev.get()))
			l.users--;
	collect_idle_locked(unused);
}

void collect_idle_locked(List<CmListener, &CmListener::node> &unused)
{
	for (;;) {
		CmListener *idle = nullptr;
		for (CmListener &l : rcm->listeners)
			if (!l.users) {
				idle = &l;
				break;
			}
		if (!idle)
			return;
		rcm->listeners.remove(*idle);
		unused.push_back(*idle);
	}
}

void free_listeners(List<CmListener, &CmListener::node> &unused)
{
	while (CmListener *l = unused.pop_front()) {
		cm::destroy(l->cm_id); /* waits for a REQ being handed over */
		delete l;
	}
}

namespace {

Result<void> listen_locked(Id &id, int backlog, List<CmListener, &CmListener::node> &unused)
{
	if (id.state == IdState::Listen) {
		id.backlog = backlog;
		return ok();
	}
	if (id.state != IdState::Idle)
		return Error(err::EINVAL);
	if (!id.bound) {
		SockAddr any;
		any.family = af_inet;
		WEFT_TRY(bind_locked(id, any));
	}
	uint64_t sid = service_id(id.ps, id.src.port);
	for (RcmDevice &d : rcm->devices) {
		if (d.gone || (id.dev && id.dev.get() != &d))
			continue;
		auto r = listen_on_locked(d, sid);
		if (!r) {
			/* Give back the uses taken on the devices before this one. */
			for (RcmDevice &u : rcm->devices) {
				if (&u == &d)
					break;
				if (u.gone || (id.dev && id.dev.get() != &u))
					continue;
				for (CmListener &l : rcm->listeners)
					if (l.dev.get() == &u && l.service_id == sid) {
						l.users--;
						break;
					}
			}
			collect_idle_locked(unused);
			return r.error();
		}
	}
	id.state = IdState::Listen;
	id.backlog = backlog;
	return ok();
}

} // namespace

Result<void> listen(Id &id, int backlog)
{
	List<CmListener, &CmListener::node> unused;
	Result<void> r;
	{
		MutexGuard g(rcm->lock);
		r = listen_locked(id, backlog, unused);
	}
	free_listeners(unused);
	return r;
}

/* --- the passive side: a REQ or SIDR_REQ for a listened port ----------------- */

namespace {

/* A new Id for the connection a request asks for; null if none listens. */
Ref<Id> new_conn_id(CmListener &l, const CmaHdr &h, uint64_t sid, const verbs::Gid &local_gid,
		    uint16_t pkey, uint8_t port, Ref<Id> &lis)
{
	auto ps = static_cast<PortSpace>((sid >> 16) & 0xffff);
	uint8_t ipv = h.ip_version >> 4;
	SockAddr dst = get_ip(h.dst, ipv, static_cast<uint16_t>(sid & 0xffff));
	SockAddr src = get_ip(h.src, ipv, h.src_port.get());
	weft_rcm_addr kd = to_kapi(dst);
	auto *net = static_cast<Net *>(weft_rcm_net_of(local_gid.raw, pkey, &kd));
	MutexGuard g(rcm->lock);
	lis = find_listener_locked(net, ps, dst, *l.dev);
	if (net)
		weft_rcm_net_put(net);
	if (!lis || l.dev->gone) {
		rcm->stats.rejected_no_listener++;
		return {};
	}
	auto *id = new (Gfp::Sleep) Id(lis->net, ps, lis->qp_type, *lis->handler, lis->context);
	if (!id)
		return {};
	weft_rcm_net_get(lis->net);
	rcm->all.push_back(*id);
	Ref<Id> c = Ref<Id>::adopt(id);
	c->src = dst;
	c->dst = src;
	c->state = IdState::Connect;
	attach_dev_locked(*c, *l.dev, port);
	c->sgid = local_gid;
	c->pkey = pkey;
	weft_rcm_ibdev d;
	if (!weft_rcm_local_ib(c->net, &kd, &d))
		c->ifindex = d.ifindex;
	rcm->stats.requests++;
	return c;
}

/* Hand the new Id to the listener's owner; false: refused (the caller rejects). */
bool offer(Id &lis, Id &c, rdma_cm::Event &ev)
{
	int r = -1;
	{
		MutexGuard g(lis.handler_lock);
		if (!lis.destroying) {
			c.handler = lis.handler;
			c.context = lis.context;
			ev.id = &c;
			ev.listen_id = &lis;
			r = c.handler->event(ev);
		}
	}
	if (!r)
		return true;
	{
		MutexGuard g(c.handler_lock);
		c.destroying = true;
	}
	/* The IB CM destroys its Id (and rejects) on our refusal: no call may be using it then. */
	(void)retire_cm_id(c);
	destroy_later(c);
	return false;
}

bool parse_hdr(ConstBytes pdata, CmaHdr &h)
{
	if (pdata.size() < cma_hdr_size)
		return false;
	__builtin_memcpy(&h, pdata.data(), cma_hdr_size);
	uint8_t ipv = h.ip_version >> 4;
	return h.version == 0 && (ipv == 4 || ipv == 6);
}

} // namespace

int CmListener::event(const cm::Event &e)
{
	if (e.type != cm::EventType::Request && e.type != cm::EventType::SidrRequest)
		return 0;
	CmaHdr h;
	if (!parse_hdr(e.private_data, h)) {
		MutexGuard g(rcm->lock);
		rcm->stats.bad_header++;
		return -1;
	}
	bool sidr = e.type == cm::EventType::SidrRequest;
	uint64_t sid = sidr ? e.sidr->service_id : e.req->service_id;
	verbs::Gid lgid{};
	uint16_t pkey = sidr ? e.sidr->pkey : e.req->pkey;
	uint8_t port = sidr ? e.sidr->port : e.req->port; /* the port the request came in on */
	if (sidr) {
		auto g = dev->dev->query_gid(port, 0);
		if (g)
			lgid = g.value();
	} else {
		lgid = e.req->local_gid;
	}
	Ref<Id> lis;
	Ref<Id> c = new_conn_id(*this, h, sid, lgid, pkey, port, lis);
	if (!c)
		return -1;
	rdma_cm::Event ev{};
	ev.type = EventType::ConnectRequest;
	ConstBytes user(e.private_data.data() + cma_hdr_size, e.private_data.size() - cma_hdr_size);
	if (sidr) {
		ev.ud.private_data = user;
	} else {
		MutexGuard g(rcm->lock);
		c->dgid = e.req->remote_gid;
		c->route.dlid.set(e.req->remote_lid);
		__builtin_memcpy(c->route.sgid, lgid.raw, 16);
		__builtin_memcpy(c->route.dgid, e.req->remote_gid.raw, 16);
		c->route.pkey.set(pkey);
		c->has_route = true;
		ev.conn.private_data = user;
		/*
		 * The listener's view, as in-tree gives it (IBA 12.7.27-28: what
		 * the requester may read from us is its initiator depth), so a
		 * ULP can echo the values in its accept.
		 */
		ev.conn.responder_resources = e.req->initiator_depth;
		ev.conn.initiator_depth = e.req->responder_resources;
		ev.conn.retry_count = e.req->retry_count;
		ev.conn.rnr_retry_count = e.req->rnr_retry_count;
		ev.conn.srq = e.req->srq;
		ev.conn.qp_num = e.req->remote_qpn;
	}
	{
		MutexGuard g(rcm->lock);
		c->cm_id = e.id;
	}
	cm::set_handler(*e.id, *c, c.get());
	if (!offer(*lis, *c, ev))
		return -1;
	c.leak(); /* the creation reference is the owner's now */
	return 0;
}

/* --- the IB CM's events for a connection ----------------------------------- */

int Id::event(const cm::Event &e)
{
	rdma_cm::Event ev{};
	switch (e.type) {
	case cm::EventType::Reply: {
		bool manual;
		{
			MutexGuard g(rcm->lock);
			copy_ready(*this, e);
			manual = !qp;
			responded = manual;
		}
		if (!manual)
			return 0; /* the IB CM sends the RTU; Established follows */
		ev.type = EventType::ConnectResponse;
		ev.conn.private_data = e.private_data;
		break;
	}
	case cm::EventType::Established: {
		MutexGuard g(rcm->lock);
		bool swallow = active && !qp; /* establish() was the owner's: no event (in-tree) */
		state = IdState::Established;
		if (swallow)
			return 0;
		if (active)
			ev.conn.private_data = ConstBytes(rep_pdata, rep_len);
		ev.type = EventType::Established;
		break;
	}
	case cm::EventType::Rejected:
		ev.type = EventType::Rejected;
		ev.status = e.reason;
		ev.conn.private_data = e.private_data;
		break;
	case cm::EventType::Unreachable:
		ev.type = EventType::Unreachable;
		ev.status = -err::ETIMEDOUT;
		break;
	case cm::EventType::Disconnected: {
		MutexGuard g(rcm->lock);
		state = IdState::Disconnected;
		ev.type = EventType::Disconnected;
		break;
	}
	case cm::EventType::TimewaitExit:
		ev.type = EventType::TimewaitExit;
		break;
	case cm::EventType::SidrReply:
		if (e.sidr->status != iba::cm::sidr::ok) {
			ev.type = EventType::Unreachable;
			ev.status = -err::EINVAL;
			break;
		}
		{
			MutexGuard g(rcm->lock);
			state = IdState::Established;
			ev.ud.ah = ah_from_route(*this);
		}
		ev.type = EventType::Established;
		ev.ud.qp_num = e.sidr->qpn;
		ev.ud.qkey = e.sidr->qkey;
		ev.ud.private_data = e.private_data;
		break;
	default:
		return 0;
	}
	deliver(*this, ev);
	return 0;
}

/* --- the owner's calls ------------------------------------------------------ */

Result<void> attach_qp(Id &id, verbs::Qp &qp)
{
	{
		MutexGuard g(rcm->lock);
		if (id.qp || !id.dev || &qp.pd.ctx.dev != id.dev->dev.get() || qp.type != id.qp_type)
			return Error(err::EINVAL);
		id.qp = &qp;
	}
	verbs::QpAttr a;
	auto mask = init_attr(id, a);
	Result<void> r = mask ? qp.pd.ctx.modify_qp(&qp, a, mask.value()) : Result<void>(mask.error());
	if (r && id.qp_type == verbs::QpType::Ud) {
		/* UD needs no peer: RTR and RTS at once (in-tree cma_init_ud_qp). */
		verbs::QpAttr b;
		b.state = verbs::QpState::Rtr;
		r = qp.pd.ctx.modify_qp(&qp, b, verbs::qp_attr::state);
		b.state = verbs::QpState::Rts;
		b.sq_psn = 0;
		if (r)
			r = qp.pd.ctx.modify_qp(&qp, b, verbs::qp_attr::state | verbs::qp_attr::sq_psn);
	}
	if (!r) {
		MutexGuard g(rcm->lock);
		id.qp = nullptr;
	}
	return r;
}

Result<void> init_qp_attr(Id &id, verbs::QpState state, verbs::QpAttr &attr, uint32_t &mask)
{
	namespace qa = verbs::qp_attr;
	if (id.qp_type == verbs::QpType::Ud) {
		if (state == verbs::QpState::Init) {
			mask = WEFT_TRY(init_attr(id, attr));
			return ok();
		}
		attr.state = state;
		mask = qa::state;
		if (state == verbs::QpState::Rts) {
			attr.sq_psn = 0;
			mask |= qa::sq_psn;
		}
		return state == verbs::QpState::Rtr || state == verbs::QpState::Rts ? ok() : Result<void>(Error(err::EINVAL));
	}
	CmUse c;
	{
		MutexGuard g(rcm->lock);
		c.take_locked(id);
	}
	if (!c) {
		if (state != verbs::QpState::Init)
			return Error(err::EINVAL);
		mask = WEFT_TRY(init_attr(id, attr));
		return ok();
	}
	at_cm_call(id);
	return cm::qp_attr(*c, state, attr, mask);
}

namespace {

/* No REQ (SIDR_REQ) went out: back to RouteResolved, unless teardown took the IB CM Id meanwhile. */
void undo_connect(Id &id, CmUse &c)
{
	cm::Id *mine = c.get();
	bool ours;
	{
		MutexGuard g(rcm->lock);
		ours = id.cm_id == mine;
		if (ours) {
			id.active = false;
			id.state = IdState::RouteResolved;
		}
	}
	c.reset();
	if (ours)
		drop_cm_id(id, mine);
}

} // namespace

Result<void> connect(Id &id, const ConnParam &p)
{
	bool ud = id.qp_type == verbs::QpType::Ud;
	uint8_t pdata[iba::cm::pdata::sidr_req];
	size_t max = ud ? iba::cm::pdata::sidr_req : iba::cm::pdata::req;
	Ref<verbs::Device> dev;
	CmUse c;
	cm::ConnectParam cp;
	cm::SidrParam sp;
	{
		MutexGuard g(rcm->lock);
		if (id.state != IdState::RouteResolved || !id.dev || !id.has_route || id.cm_id)
			return Error(err::EINVAL);
		if (!id.qp && !p.qp_num)
			return Error(err::EINVAL);
		size_t n = WEFT_TRY(format_pdata(pdata, max, id, p.private_data));
		dev = id.dev->dev;
		id.cm_id = WEFT_TRY(cm::create_id(*dev, id, &id));
		c.take_locked(id);
		id.active = true;
		id.qp_num = id.qp ? id.qp->qpn : p.qp_num;
		id.state = IdState::Connect;
		uint64_t sid = service_id(id.ps, id.dst.port);
		if (ud) {
			sp.port = id.port;
			sp.path = id.route;
			sp.service_id = sid;
			sp.private_data = ConstBytes(pdata, n);
		} else {
			cp.qp = id.qp;
			cp.port = id.port;
			cp.path = id.route;
			cp.service_id = sid;
			cp.private_data = ConstBytes(pdata, n);
			cp.responder_resources = p.responder_resources;
			cp.initiator_depth = p.initiator_depth;
			cp.retry_count = p.retry_count;
			cp.rnr_retry_count = p.rnr_retry_count;
			cp.srq = p.srq;
			cp.qpn = id.qp_num;
			cp.qp_type = id.qp_type;
			cp.manual_rtu = !id.qp;
			cp.ack_timeout = id.ack_timeout;
		}
	}
	at_cm_call(id);
	auto r = ud ? cm::sidr_request(*c, sp) : cm::connect(*c, cp);
	if (!r)
		undo_connect(id, c);
	return r;
}

Result<void> establish(Id &id)
{
	CmUse c;
	{
		MutexGuard g(rcm->lock);
		if (!id.active || !id.responded || id.state != IdState::Connect || !id.cm_id)
			return Error(err::EINVAL);
		id.responded = false;
		c.take_locked(id);
	}
	at_cm_call(id);
	return cm::rtu(*c);
}

Result<void> accept(Id &id, const ConnParam &p)
{
	CmUse c;
	cm::AcceptParam a;
	bool ud = id.qp_type == verbs::QpType::Ud;
	uint32_t qpn;
	bool is_rtu;
	{
		MutexGuard g(rcm->lock);
		is_rtu = id.active && id.responded;
	}
	if (is_rtu)
		return establish(id); /* ucma's ACCEPT on the active side (in-tree rdma_accept) */
	{
		MutexGuard g(rcm->lock);
		if (id.active || id.state != IdState::Connect || !id.cm_id)
			return Error(err::EINVAL);
		if (!id.qp && !p.qp_num)
			return Error(err::EINVAL);
		c.take_locked(id);
		qpn = id.qp ? id.qp->qpn : p.qp_num;
		id.qp_num = qpn;
		a.qp = id.qp;
		if (ud)
			id.state = IdState::Established;
	}
	at_cm_call(id);
	if (ud)
		return cm::sidr_reply(*c, iba::cm::sidr::ok, qpn, udp_qkey, p.private_data);
	a.private_data = p.private_data;
	a.responder_resources = p.responder_resources;
	a.initiator_depth = p.initiator_depth;
	a.rnr_retry_count = p.rnr_retry_count;
	a.srq = p.srq;
	a.qpn = qpn;
	a.qp_type = id.qp_type;
	return cm::accept(*c, a);
}

Result<void> reject(Id &id, ConstBytes private_data, uint16_t reason)
{
	CmUse c;
	{
		MutexGuard g(rcm->lock);
		if (id.active || id.state != IdState::Connect || !id.cm_id)
			return Error(err::EINVAL);
		c.take_locked(id);
		id.state = IdState::Disconnected;
	}
	at_cm_call(id);
	if (id.qp_type == verbs::QpType::Ud)
		return cm::sidr_reply(*c, iba::cm::sidr::rejected, 0, 0, private_data);
	return cm::reject(*c, reason, {}, private_data);
}

Result<void> notify_established(Id &id)
{
	CmUse c;
	{
		MutexGuard g(rcm->lock);
		if (!id.cm_id || id.qp_type == verbs::QpType::Ud)
			return Error(err::EINVAL);
		c.take_locked(id);
	}
	at_cm_call(id);
	cm::established(*c);
	return ok();
}

Result<void> disconnect(Id &id)
{
	CmUse c;
	{
		MutexGuard g(rcm->lock);
		if (!id.cm_id)
			return Error(err::EINVAL);
		if (id.state == IdState::Disconnected)
			return ok(); /* the peer's DREQ was answered already */
		c.take_locked(id);
	}
	if (id.qp_type == verbs::QpType::Ud)
		return ok();
	at_cm_call(id);
	auto r = cm::disconnect(*c);
	if (!r && r.error().code() == err::EINVAL)
		return ok(); /* already down on the IB CM's side */
	return r;
}

} // namespace weft::rdma_cm
