// SPDX-License-Identifier: GPL-2.0
/* Multicast attachment and delivery at a CA port (IBA 10.5, 11.3.1). */
#include "mcast.h"
#include "qp.h"

namespace weft::hca {

McastTable::Group *McastTable::find(const verbs::Gid &mgid, uint16_t mlid)
{
	for (Group &g : groups_)
		if (g.count && g.mlid == mlid && g.mgid == mgid)
			return &g;
	return nullptr;
}

Result<void> McastTable::attach(SoftQp &qp, const verbs::Gid &mgid, uint16_t mlid)
{
	SpinGuardBh l(lock_);
	Group *g = find(mgid, mlid);
	if (!g) {
		for (Group &e : groups_) {
			if (!e.count) {
				g = &e;
				g->mgid = mgid;
				g->mlid = mlid;
				break;
			}
		}
		if (!g)
			return Error(err::ENOMEM);
	}
	for (uint32_t i = 0; i < g->count; i++)
		if (g->qps[i] == &qp)
			return Error(err::EEXIST);
	if (g->count == max_attach)
		return Error(err::ENOMEM);
	g->qps[g->count++] = &qp;
	return ok();
}

Result<void> McastTable::detach(SoftQp &qp, const verbs::Gid &mgid, uint16_t mlid)
{
	SpinGuardBh l(lock_);
	Group *g = find(mgid, mlid);
	for (uint32_t i = 0; g && i < g->count; i++) {
		if (g->qps[i] == &qp) {
			g->qps[i] = g->qps[--g->count];
			return ok();
		}
	}
	return Error(err::EINVAL);
}

void McastTable::detach_all(SoftQp &qp)
{
	SpinGuardBh l(lock_);
	for (Group &g : groups_)
		for (uint32_t i = 0; i < g.count;)
			if (g.qps[i] == &qp)
				g.qps[i] = g.qps[--g.count];
			else
				i++;
}

/* IBA 8.4.1 / 10.5: multicast packets carry a GRH whose DGID names the group. */
bool McastTable::deliver(const Packet &p, PacketBuf &pkt)
{
	if (!p.grh)
		return false;
	verbs::Gid dgid;
	__builtin_memcpy(dgid.raw, p.grh->dgid, 16);
	SoftQp *targets[max_attach];
	uint32_t n = 0;
	{
		SpinGuardBh l(lock_);
		Group *g = find(dgid, p.lrh->dlid.get());
		for (uint32_t i = 0; g && i < g->count; i++)
			if (g->qps[i]->get_unless_zero())
				targets[n++] = g->qps[i];
	}
	for (uint32_t i = 0; i < n; i++) {
		auto copy = pkt.clone(Gfp::Atomic);
		if (copy)
			targets[i]->enqueue(copy.take());
		targets[i]->put();
	}
	return n > 0;
}

} // namespace weft::hca
