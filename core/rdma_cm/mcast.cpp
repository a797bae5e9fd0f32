// SPDX-License-Identifier: GPL-2.0
/*
 * Multicast for UD Ids: an IP group is mapped to an MGID as IPoIB maps it
 * (RFC 4391 §4; with the RDMA CM's signature 0x01 in place of 0x1b in the
 * UDP port space, so IPoIB's and the RDMA CM's groups of one address
 * differ, as in-tree), joined through the SA client (IBA 15.2.5.17) on a
 * work item, and the owner told MULTICAST_JOIN with the group's address
 * vector (MLID, GRH to the MGID), QPN 0xffffff and Q_Key, or
 * MULTICAST_ERROR.  Attaching the owner's QP to the group is the owner's.
 */
#include <weft/mad/sa.h>

#include "rcm.h"

namespace weft::rdma_cm {


namespace {

constexpr uint32_t udp_qkey = 0x01234567;
constexpr uint8_t link_local_scope = 2;

} // namespace

/* RFC 4391 §4 (IPv4) and RFC 4391 §4 / in-tree ipv6_ib_mc_map (IPv6): the group's MGID. */
verbs::Gid mcast_mgid(const SockAddr &g, PortSpace ps, uint16_t pkey)
{
	verbs::Gid m{};
	m.raw[0] = 0xff;
	m.raw[1] = 0x10 | link_local_scope;
	m.raw[2] = g.family == af_inet ? 0x40 : 0x60;
	m.raw[3] = ps == PortSpace::Udp ? 0x01 : 0x1b;
	m.raw[4] = static_cast<uint8_t>((pkey | 0x8000) >> 8);
	m.raw[5] = static_cast<uint8_t>(pkey);
	if (g.family == af_inet) {
		m.raw[12] = g.ip[0] & 0x0f;
		__builtin_memcpy(m.raw + 13, g.ip + 1, 3);
	} else {
		__builtin_memcpy(m.raw + 6, g.ip + 6, 10);
	}
	return m;
}

namespace {

Mc *find_locked(Id &id, const SockAddr &g)
{
	for (Mc &mc : id.mcs)
		if (same_ip(mc.group, g))
			return &mc;
	return nullptr;
}

} // namespace

void Mc::run(Work &w)
{
	Mc &mc = *container_of(&w, &Mc::work);
	Id &id = mc.id;
	Ref<verbs::Device> dev;
	uint8_t port;
	uint16_t pkey;
	{
		MutexGuard g(rcm->lock);
		if (!id.dev) {
			dev.reset();
		} else {
			dev = id.dev->dev;
		}
		port = id.port;
		pkey = id.pkey;
	}
	Event e{};
	e.mc_context = mc.ctx;
	if (!dev) {
		e.type = EventType::MulticastError;
		e.status = -err::ENODEV;
		deliver(id, e);
		id.put();
		return;
	}
	iba::McMemberRecord want{};
	verbs::Gid mgid = mcast_mgid(mc.group, id.ps, pkey);
	__builtin_memcpy(want.mgid, mgid.raw, 16);
	want.qkey.set(udp_qkey);
	want.pkey.set(pkey | 0x8000);
	iba::McMemberRecord::Scope::set(want.scope_state, link_local_scope);
	iba::McMemberRecord::JoinState::set(want.scope_state, mc.join_state);
	namespace c = iba::mcr_comp;
	uint64_t mask = c::mgid | c::qkey | c::pkey | c::tclass | c::sl | c::flow | c::scope | c::join_state;
	auto m = mad::sa::join(*dev, port, want, mask);
	if (!m) {
		e.type = EventType::MulticastError;
		e.status = -m.error().code();
	} else {
		mc.m = m.value();
		const iba::McMemberRecord &r = mad::sa::record(*mc.m);
		e.type = EventType::MulticastJoin;
		e.ud.ah.dlid = r.mlid.get();
		e.ud.ah.sl = static_cast<uint8_t>(iba::McMemberRecord::Sl::get(r.sl_flow_hop));
		e.ud.ah.port = port;
		e.ud.ah.global = true;
		__builtin_memcpy(e.ud.ah.dgid.raw, r.mgid, 16);
		e.ud.ah.hop_limit = static_cast<uint8_t>(r.sl_flow_hop.get() & 0xff);
		e.ud.ah.traffic_class = r.tclass.get();
		e.ud.qp_num = 0xffffff;
		e.ud.qkey = r.qkey.get();
	}
	deliver(id, e);
	id.put();
}

Result<void> join_multicast(Id &id, const SockAddr &group, uint8_t join_state, void *mc_context)
{
	if (id.qp_type != verbs::QpType::Ud)
		return Error(err::EINVAL);
	if (group.family != af_inet && group.family != af_inet6)
		return Error(err::EAFNOSUPPORT);
	if (!join_state || join_state > iba::join::send_only_full)
		return Error(err::EINVAL);
	auto *mc = new (Gfp::Sleep) Mc(id, group, join_state, mc_context);
	if (!mc)
		return Error(err::ENOMEM);
	MutexGuard g(rcm->lock);
	if (!id.dev || id.state == IdState::DeviceGone) {
		delete mc;
		return Error(err::EINVAL);
	}
	if (find_locked(id, group)) {
		delete mc;
		return Error(err::EADDRINUSE);
	}
	id.mcs.push_back(*mc);
	id.get(); /* the work's */
	mc->work.queue();
	return ok();
}

namespace {

void free_mc(Mc &mc)
{
	if (mc.work.cancel_sync())
		mc.id.put();
	if (mc.m)
		mad::sa::leave(mc.m);
	delete &mc;
}

} // namespace

Result<void> leave_multicast(Id &id, const SockAddr &group)
{
	Mc *mc;
	{
		MutexGuard g(rcm->lock);
		mc = find_locked(id, group);
		if (!mc)
			return Error(err::EADDRNOTAVAIL);
		id.mcs.remove(*mc);
	}
	free_mc(*mc);
	return ok();
}

void leave_all(Id &id)
{
	for (;;) {
		Mc *mc;
		{
			MutexGuard g(rcm->lock);
			mc = id.mcs.pop_front();
		}
		if (!mc)
			return;
		free_mc(*mc);
	}
}

} // namespace weft::rdma_cm
