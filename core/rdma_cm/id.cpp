// SPDX-License-Identifier: GPL-2.0
/*
 * Ids: creation, handler calls, and the two-phase teardown (stop: no
 * handler call after destroying is set; drain: resolution work, the IB CM
 * Id and the shared listeners released outside the lock; then free).
 */
#include "rcm.h"

namespace weft::rdma_cm {

const Logger log("weft_rdma_cm");
Rcm *rcm;

uint64_t now_ms()
{
	return weft_ktime_ns() / 1000000;
}

namespace {

void teardown(Id &id);

void reap_work(Work &)
{
	for (;;) {
		Id *id;
		{
			SpinGuard g(rcm->reap_lock);
			id = rcm->reap.pop_front();
		}
		if (!id)
			return;
		teardown(*id);
		id->put(); /* destroy_later()'s */
	}
}

} // namespace

Rcm::Rcm() :
	lock(WEFT_LOCK_CLASS("weft_rdma_cm")), next_port(0),
	reap_lock(WEFT_LOCK_CLASS("weft_rdma_cm_reap")),
	reaper(reap_work, WEFT_LOCK_CLASS("weft_rdma_cm_reaper")), freed(WEFT_LOCK_CLASS("weft_rdma_cm_freed")),
	cm_idle(WEFT_LOCK_CLASS("weft_rdma_cm_cm_idle"))
{
	/* In-tree's ephemeral range is the host's; any start in it will do. */
	next_port = static_cast<uint16_t>(32768 + (weft_random_u32() % 28232));
}

Id::Id(Net *n, PortSpace p, verbs::QpType t, rdma_cm::Handler &h, void *ctx) :
	net(n), ps(p), qp_type(t), handler_lock(WEFT_LOCK_CLASS("weft_rdma_cm_handler")), handler(&h),
	context(ctx), resolve(resolve_work, WEFT_LOCK_CLASS("weft_rdma_cm_resolve"))
{
	rcm->live.fetch_add(1, Order::Relaxed);
}

Id::~Id()
{
	{
		MutexGuard g(rcm->lock);
		rcm->all.remove(*this);
	}
	weft_rcm_net_put(net);
	rcm->live.fetch_sub(1, Order::Release);
	rcm->freed.wake_all();
}

void deliver(Id &id, Event &e)
{
	e.id = &id;
	int r;
	{
		MutexGuard g(id.handler_lock);
		if (id.destroying)
			return;
		r = id.handler->event(e);
		if (r)
			id.destroying = true;
	}
	if (r) {
		destroy_later(id);
		/* The owner's reference: the Id is not the owner's to destroy() any more (rdma_cm.h). */
		id.put();
	}
}

void destroy_later(Id &id)
{
	id.get();
	{
		SpinGuard g(rcm->reap_lock);
		rcm->reap.push_back(id);
	}
	rcm->reaper.queue();
}

namespace {

/* Stop, drain, then the caller drops the last reference. */
void teardown(Id &id)
{
	if (id.resolve.cancel_sync())
		id.put(); /* the pending work's reference; the caller holds another */
	List<CmListener, &CmListener::node> unused;
	{
		MutexGuard g(rcm->lock);
		unlisten_locked(id, unused);
		unbind_locked(id);
	}
	free_listeners(unused);
	leave_all(id);
	drop_cm_id(id);
	{
		MutexGuard g(rcm->lock);
		if (id.dev) {
			if (id.dev_node.linked())
				id.dev->ids.remove(id);
			id.dev.reset();
		}
		id.qp = nullptr;
		id.torn_down.store(true, Order::Release);
	}
	rcm->freed.wake_all();
}

} // namespace

Result<Id *> create_id(Net *net, PortSpace ps, verbs::QpType type, Handler &h, void *context)
{
	switch (ps) {
	case PortSpace::Tcp:
	case PortSpace::Ib:
		if (type != verbs::QpType::Rc && type != verbs::QpType::Uc)
			return Error(err::EINVAL);
		break;
	case PortSpace::Udp:
	case PortSpace::Ipoib:
		if (type != verbs::QpType::Ud)
			return Error(err::EINVAL);
		break;
	default:
		return Error(err::EINVAL);
	}
	if (!net)
		return Error(err::EINVAL);
	auto *id = new (Gfp::Sleep) Id(net, ps, type, h, context);
	if (!id)
		return Error(err::ENOMEM);
	weft_rcm_net_get(net);
	MutexGuard g(rcm->lock);
	rcm->all.push_back(*id);
	return id;
}

void destroy(Id *id)
{
	{
		MutexGuard g(id->handler_lock); /* waits for a running handler call */
		id->destroying = true;
	}
	teardown(*id);
	id->put();
}

void *context(const Id &id)
{
	return id.context;
}

void set_handler(Id &id, Handler &h, void *ctx)
{
	/* Called from a handler of @id (which holds handler_lock) or before any event. */
	id.handler = &h;
	id.context = ctx;
}

Result<void> set_tos(Id &id, uint8_t tos)
{
	MutexGuard g(rcm->lock);
	id.tos = tos;
	return ok();
}

Result<void> set_reuseaddr(Id &id, bool on)
{
	MutexGuard g(rcm->lock);
	if (id.bound && id.state != IdState::Idle)
		return Error(err::EINVAL);
	id.reuseaddr = on;
	return ok();
}

Result<void> set_afonly(Id &id, bool on)
{
	MutexGuard g(rcm->lock);
	if (id.bound)
		return Error(err::EINVAL);
	id.afonly = on;
	return ok();
}

Result<void> set_ack_timeout(Id &id, uint8_t timeout)
{
	if (timeout > 31)
		return Error(err::EINVAL);
	MutexGuard g(rcm->lock);
	id.ack_timeout = timeout;
	return ok();
}

Info info(const Id &id)
{
	MutexGuard g(rcm->lock);
	Info i;
	i.ps = id.ps;
	i.qp_type = id.qp_type;
	i.src = id.src;
	i.dst = id.dst;
	i.dev = id.dev ? id.dev->dev.get() : nullptr;
	i.port = id.port;
	i.pkey = id.pkey;
	i.sgid = id.sgid;
	i.dgid = id.dgid;
	i.has_route = id.has_route;
	i.route = id.route;
	i.qp_num = id.qp ? id.qp->qpn : id.qp_num;
	return i;
}

Stats stats()
{
	MutexGuard g(rcm->lock);
	Stats s = rcm->stats;
	s.ids = rcm->live.load(Order::Acquire);
	s.listeners = static_cast<uint32_t>(rcm->listeners.size());
	return s;
}

const char *event_name(EventType t)
{
	static const char *const names[] = {
		"ADDR_RESOLVED", "ADDR_ERROR",	   "ROUTE_RESOLVED", "ROUTE_ERROR",	  "CONNECT_REQUEST",
		"CONNECT_RESPONSE", "CONNECT_ERROR", "UNREACHABLE",   "REJECTED",	  "ESTABLISHED",
		"DISCONNECTED",	    "DEVICE_REMOVAL", "MULTICAST_JOIN", "MULTICAST_ERROR", "ADDR_CHANGE",
		"TIMEWAIT_EXIT",
	};
	auto i = static_cast<size_t>(t);
	return i < sizeof(names) / sizeof(names[0]) ? names[i] : "?";
}

Net *current_net()
{
	return static_cast<Net *>(weft_rcm_net_current());
}

Net *init_net()
{
	return static_cast<Net *>(weft_rcm_net_init());
}

void put_net(Net *n)
{
	weft_rcm_net_put(n);
}

} // namespace weft::rdma_cm
