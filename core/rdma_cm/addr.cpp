// SPDX-License-Identifier: GPL-2.0
/*
 * Address and route resolution, one Id at a time on its own work:
 *   1. resolve_addr(): bound (an ephemeral port if need be), AddrQuery.
 *   2. the route lookup in the Id's namespace names the ib interface and
 *      the next hop; ARP/ND is asked and the lookup polled until its
 *      neighbour entry is valid or the timeout passes.
 *   3. the interface's GID names the device and port (RFC 4391 §9.1.1: the
 *      hardware address is QPN and GID); the peer's GID is the
 *      neighbour's: AddrResolved.
 *   4. resolve_route(): a PathRecord from the SA (IBA 15.2.5.16) for the
 *      two GIDs in the interface's partition: RouteResolved.
 * Failures leave the Id where it was before the step (in-tree meaning).
 */
#include <weft/mad/sa.h>

#include "rcm.h"

namespace weft::rdma_cm {

namespace {

constexpr uint32_t poll_ms = 10;

verbs::Gid gid_of(const uint8_t *p)
{
	verbs::Gid g;
	__builtin_memcpy(g.raw, p, 16);
	return g;
}

void fail(Id &id, IdState back, EventType t, int err)
{
	{
		MutexGuard g(rcm->lock);
		id.state = back;
	}
	Event e{};
	e.type = t;
	e.status = -err;
	deliver(id, e);
}

/* 127/8 and ::1: the first active CA port, talking to itself (as in-tree's loopback binding). */
int loopback_locked(Id &id)
{
	for (RcmDevice &d : rcm->devices) {
		for (uint8_t p = 1; !d.gone && p <= d.dev->num_ports(); p++) {
			verbs::PortAttr pa;
			auto g = d.dev->query_gid(p, 0);
			if (!d.dev->query_port(p, pa) || pa.state != verbs::PortState::Active || !g)
				continue;
			attach_dev_locked(id, d, p);
			id.sgid = id.dgid = g.value();
			id.pkey = 0xffff;
			return 0;
		}
	}
	return err::ENODEV;
}

/* 2-3; true when done (resolved or failed), false to poll again. */
bool addr_step(Id &id)
{
	SockAddr src, dst;
	{
		MutexGuard g(rcm->lock);
		src = id.src;
		dst = id.dst;
	}
	weft_rcm_addr ks = to_kapi(src), kd = to_kapi(dst), kout;
	weft_rcm_ibdev d;
	uint8_t hw[20];
	int ret = 0;
	if (!dst.loopback())
		ret = weft_rcm_route(id.net, src.any() ? nullptr : &ks, &kd, &d, &kout, hw);
	if (ret == -err::EAGAIN) {
		if (now_ms() < id.deadline_ms)
			return false;
		ret = -err::ETIMEDOUT;
	}
	if (!ret) {
		MutexGuard g(rcm->lock);
		if (dst.loopback()) {
			ret = -loopback_locked(id);
			if (!ret && src.any())
				__builtin_memcpy(id.src.ip, dst.ip, 16);
		} else {
			uint8_t port;
			RcmDevice *rd = find_by_gid_locked(gid_of(d.gid), port);
			if (!rd || (id.dev && id.dev.get() != rd)) {
				ret = -err::ENODEV;
			} else {
				attach_dev_locked(id, *rd, port);
				id.sgid = gid_of(d.gid);
				id.dgid = gid_of(hw + 4);
				id.peer_qpn = ((hw[1] << 16) | (hw[2] << 8) | hw[3]) & 0xffffff;
				id.pkey = d.pkey;
				id.ifindex = d.ifindex;
				if (src.any()) {
					__builtin_memcpy(id.src.ip, kout.ip, 16);
					id.src.scope_id = kout.scope_id;
				}
			}
		}
		if (!ret)
			id.state = IdState::AddrResolved;
	}
	if (ret) {
		fail(id, IdState::Idle, EventType::AddrError, -ret);
		return true;
	}
	Event e{};
	e.type = EventType::AddrResolved;
	deliver(id, e);
	return true;
}

void route_step(Id &id)
{
	Ref<verbs::Device> dev;
	uint8_t port;
	verbs::Gid dgid;
	uint16_t pkey;
	{
		MutexGuard g(rcm->lock);
		if (!id.dev)
			return;
		dev = id.dev->dev;
		port = id.port;
		dgid = id.dgid;
		pkey = id.pkey;
	}
	auto pr = mad::sa::resolve_path(*dev, port, dgid, pkey);
	if (!pr) {
		fail(id, IdState::AddrResolved, EventType::RouteError, pr.error().code());
		return;
	}
	{
		MutexGuard g(rcm->lock);
		id.route = pr.value();
		id.has_route = true;
		id.state = IdState::RouteResolved;
	}
	Event e{};
	e.type = EventType::RouteResolved;
	deliver(id, e);
}

} // namespace

void resolve_work(DelayedWork &w)
{
	Id &id = *container_of(&w, &Id::resolve);
	IdState st;
	{
		MutexGuard g(rcm->lock);
		st = id.state;
	}
	if (st == IdState::AddrQuery) {
		if (!addr_step(id)) {
			id.resolve.queue(poll_ms); /* keeps the work's reference */
			return;
		}
	} else if (st == IdState::RouteQuery) {
		route_step(id);
	}
	id.put();
}

Result<void> resolve_addr(Id &id, const SockAddr *src, const SockAddr &dst, uint32_t timeout_ms)
{
	if (dst.family != af_inet && dst.family != af_inet6)
		return Error(err::EAFNOSUPPORT);
	if (src && src->family && src->family != dst.family)
		return Error(err::EINVAL);
	MutexGuard g(rcm->lock);
	if (id.state != IdState::Idle)
		return Error(err::EINVAL);
	if (!id.bound) {
		SockAddr any;
		any.family = dst.family;
		WEFT_TRY(bind_locked(id, src && src->family ? *src : any));
	}
	id.dst = dst;
	id.state = IdState::AddrQuery;
	id.deadline_ms = now_ms() + (timeout_ms ? timeout_ms : 2000);
	id.get(); /* the work's */
	id.resolve.queue(0);
	return ok();
}

Result<void> resolve_route(Id &id, uint32_t timeout_ms)
{
	MutexGuard g(rcm->lock);
	if (id.state != IdState::AddrResolved || !id.dev)
		return Error(err::EINVAL);
	id.state = IdState::RouteQuery;
	id.route_timeout_ms = timeout_ms;
	id.get();
	id.resolve.queue(0);
	return ok();
}

/* --- address changes: ADDR_CHANGE to the Ids on the interface ----------- */

namespace {

struct Change {
	Net *net;
	int ifindex;
	bool all;
	SockAddr addr;
};

constexpr size_t max_changes = 16;

struct Changes {
	Changes() : lock(WEFT_LOCK_CLASS("weft_rdma_cm_changes")), work(run, WEFT_LOCK_CLASS("weft_rdma_cm_change_work")) {}
	WEFT_NOCOPY(Changes);
	static void run(Work &w);

	SpinLock lock;
	Change q[max_changes]; /* under lock */
	size_t n = 0;	       /* under lock */
	bool overflow = false; /* under lock: tell every Id with an interface */
	bool stopping = false; /* under lock */
	uint64_t generation = 0; /* only the work touches it */
	Work work;
};

Changes *changes;

bool affected(const Id &id, const Change &c)
{
	if (id.net != c.net || id.ifindex != c.ifindex || id.state == IdState::Idle ||
	    id.state == IdState::DeviceGone)
		return false;
	return c.all || same_ip(id.src, c.addr);
}

/* Each change is one generation: an Id hears of it once, the lock dropped
 * around every delivery (the ULP's handler may destroy Ids). */
void tell(const Change *c)
{
	uint64_t gen = ++changes->generation;
	for (;;) {
		Ref<Id> found;
		{
			MutexGuard g(rcm->lock);
			for (Id &id : rcm->all) {
				if (id.ifindex && id.change_told != gen && (!c || affected(id, *c))) {
					found = Ref<Id>::share(&id);
					break;
				}
			}
			if (!found)
				return;
			found->change_told = gen;
		}
		Event e{};
		e.type = EventType::AddrChange;
		deliver(*found, e);
	}
}

void Changes::run(Work &)
{
	for (;;) {
		Change c;
		bool all;
		{
			SpinGuardIrq g(changes->lock);
			all = exchange(changes->overflow, false);
			if (!all && !changes->n)
				return;
			if (!all) {
				c = changes->q[0];
				for (size_t i = 1; i < changes->n; i++)
					changes->q[i - 1] = changes->q[i];
				changes->n--;
			}
		}
		tell(all ? nullptr : &c);
	}
}

} // namespace

Result<void> addr_changes_init()
{
	changes = new (Gfp::Sleep) Changes();
	return changes ? ok() : Result<void>(Error(err::ENOMEM));
}

void addr_changes_exit()
{
	if (!changes)
		return;
	{
		SpinGuardIrq g(changes->lock);
		changes->stopping = true;
	}
	changes->work.cancel_sync();
	delete changes;
	changes = nullptr;
}

} // namespace weft::rdma_cm

void weft_rcm_addr_changed(void *net, int ifindex, const struct weft_rcm_addr *a)
{
	using namespace weft::rdma_cm;
	if (!changes)
		return;
	{
		weft::SpinGuardIrq g(changes->lock);
		if (changes->stopping)
			return;
		if (changes->n == max_changes) {
			changes->overflow = true;
		} else {
			Change &c = changes->q[changes->n++];
			c.net = static_cast<Net *>(net);
			c.ifindex = ifindex;
			c.all = !a;
			if (a)
				c.addr = from_kapi(*a);
		}
	}
	changes->work.queue();
}
