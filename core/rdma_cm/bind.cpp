// SPDX-License-Identifier: GPL-2.0
/*
 * The port spaces (IBA A11.2): which Ids hold which port of which address,
 * per network namespace, and the ephemeral ports bind() picks.
 */
#include "rcm.h"

namespace weft::rdma_cm {

bool SockAddr::any() const
{
	for (size_t i = 0; i < ip_len(); i++)
		if (ip[i])
			return false;
	return true;
}

bool SockAddr::loopback() const
{
	if (family == af_inet)
		return ip[0] == 127;
	for (size_t i = 0; i < 15; i++)
		if (ip[i])
			return false;
	return ip[15] == 1;
}

bool same_ip(const SockAddr &a, const SockAddr &b)
{
	return a.family == b.family && __builtin_memcmp(a.ip, b.ip, a.ip_len()) == 0;
}

weft_rcm_addr to_kapi(const SockAddr &a)
{
	weft_rcm_addr k{};
	k.family = a.family;
	k.port = a.port;
	__builtin_memcpy(k.ip, a.ip, 16);
	k.scope_id = a.scope_id;
	return k;
}

SockAddr from_kapi(const weft_rcm_addr &k)
{
	SockAddr a;
	a.family = k.family;
	a.port = k.port;
	__builtin_memcpy(a.ip, k.ip, 16);
	a.scope_id = k.scope_id;
	return a;
}

namespace {

constexpr uint16_t ephemeral_lo = 32768, ephemeral_hi = 60999;

/*
 * Whether two bindings of one port cover a common address.  A wildcard
 * covers the other family too unless both sides are afonly (in-tree's
 * rule, like a dual-stack socket without IPV6_V6ONLY).
 */
bool overlap(const Id &a, const SockAddr &addr, bool afonly)
{
	if (a.src.family == addr.family)
		return a.src.any() || addr.any() || same_ip(a.src, addr);
	if (a.afonly && afonly)
		return false;
	return a.src.any() || addr.any();
}

bool conflicts_locked(const Id &id, const SockAddr &addr, uint16_t port)
{
	for (Id &o : rcm->binds) {
		if (&o == &id || o.net != id.net || o.ps != id.ps || o.src.port != port)
			continue;
		if (!overlap(o, addr, id.afonly))
			continue;
		if (id.reuseaddr && o.reuseaddr && o.state != IdState::Listen)
			continue;
		return true;
	}
	return false;
}

Result<uint16_t> ephemeral_locked(const Id &id, const SockAddr &addr)
{
	for (uint32_t n = 0; n <= ephemeral_hi - ephemeral_lo; n++) {
		uint16_t p = rcm->next_port;
		rcm->next_port = p >= ephemeral_hi ? ephemeral_lo : p + 1;
		if (!conflicts_locked(id, addr, p))
			return p;
	}
	return Error(err::EADDRNOTAVAIL);
}

} // namespace

Result<void> bind_locked(Id &id, const SockAddr &addr)
{
	rcm->lock.assert_held();
	if (addr.family != af_inet && addr.family != af_inet6)
		return Error(err::EAFNOSUPPORT);
	if (id.bound || id.state != IdState::Idle)
		return Error(err::EINVAL);
	if (!addr.any() && !addr.loopback()) {
		weft_rcm_addr k = to_kapi(addr);
		weft_rcm_ibdev d;
		WEFT_TRY(from_errno(weft_rcm_local_ib(id.net, &k, &d)));
		verbs::Gid gid;
		__builtin_memcpy(gid.raw, d.gid, 16);
		uint8_t port;
		RcmDevice *dev = find_by_gid_locked(gid, port);
		if (!dev)
			return Error(err::ENODEV);
		attach_dev_locked(id, *dev, port);
		id.sgid = gid;
		id.pkey = d.pkey;
		id.ifindex = d.ifindex;
	}
	uint16_t port = addr.port;
	if (!port) {
		auto p = ephemeral_locked(id, addr);
		if (!p)
			return p.error();
		port = p.value();
	} else if (conflicts_locked(id, addr, port)) {
		return Error(err::EADDRINUSE);
	}
	id.src = addr;
	id.src.port = port;
	id.bound = true;
	rcm->binds.push_back(id);
	return ok();
}

void unbind_locked(Id &id)
{
	if (!id.bound)
		return;
	rcm->binds.remove(id);
	id.bound = false;
}

Ref<Id> find_listener_locked(Net *net, PortSpace ps, const SockAddr &dst, RcmDevice &dev)
{
	Id *wild = nullptr;
	for (Id &o : rcm->binds) {
		if (o.state != IdState::Listen || o.ps != ps || o.src.port != dst.port)
			continue;
		if (net && o.net != net)
			continue;
		if (o.dev && o.dev.get() != &dev)
			continue;
		if (same_ip(o.src, dst))
			return Ref<Id>::share(&o);
		if (!wild && o.src.any() && (o.src.family == dst.family || !o.afonly))
			wild = &o;
	}
	return Ref<Id>::share(wild);
}

Result<void> bind(Id &id, const SockAddr &addr)
{
	MutexGuard g(rcm->lock);
	return bind_locked(id, addr);
}

} // namespace weft::rdma_cm
