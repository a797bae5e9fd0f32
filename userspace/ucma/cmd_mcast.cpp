// SPDX-License-Identifier: GPL-2.0
/*
 * Multicast: JOIN_IP_MCAST, JOIN_MCAST and LEAVE_MCAST (in-tree
 * ucma_process_join(), ucma_leave_multicast()).  A group is numbered like
 * an Id; its MULTICAST_JOIN/ERROR events carry its number and uid.  The
 * Ctx's list owns a group: whoever takes it off that list (LEAVE_MCAST or
 * the Id's teardown) frees it, after purging its queued events.  A group
 * joins and leaves the Id's list and its file's list together, under the
 * Id's hlock, as MIGRATE_ID moves both (file.h).
 */
#include "commands.h"
#include "translate.h"

namespace weft::ucma {

namespace {

/* IBA 15.2.5.17 JoinState bits: FullMember (bit 0), SendOnlyFullMember (bit 3). */
constexpr uint8_t join_full = 1u << 0, join_sendonly_full = 1u << 3;

Result<void> join(Call &c, uint32_t num, uint64_t uid, uint64_t response,
		  const rdma_cm::SockAddr &group, uint8_t join_state)
{
	return with_id(c, num, true, [&](Ctx &x, rdma_cm::Id &id) -> Result<void> {
		auto *m = new (Gfp::Sleep) Multicast(x, uid, group);
		if (!m)
			return Error(err::ENOMEM);
		{
			MutexGuard h(x.hlock);
			x.mcs.push_back(*m);
			x.file->add_multicast(*m);
		}
		auto r = rdma_cm::join_multicast(id, group, join_state, m);
		if (r) {
			const abi::IdResp resp{m->num};
			r = Call::respond(response, &resp, sizeof(resp));
			if (!r)
				(void)rdma_cm::leave_multicast(id, group);
		}
		if (!r) {
			/* Still ours: LEAVE_MCAST could not name it before the response. */
			{
				MutexGuard h(x.hlock);
				x.mcs.remove(*m);
				x.file->unlink_multicast(*m);
				(void)x.file->purge_multicast(*m);
			}
			delete m;
		}
		return r;
	});
}

} // namespace

Result<void> cmd_join_ip_mcast(Call &c)
{
	abi::JoinIpMcast req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	const rdma_cm::SockAddr group = WEFT_TRY(sockaddr_in(&req.addr, sizeof(req.addr)));
	return join(c, req.id, req.uid, req.response, group, join_full);
}

Result<void> cmd_join_mcast(Call &c)
{
	abi::JoinMcast req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	if (!req.addr_size || req.addr_size != addr_size(req.addr.family))
		return Error(err::EINVAL);
	uint8_t state;
	if (req.join_flags == abi::join_full_member)
		state = join_full;
	else if (req.join_flags == abi::join_sendonly_full_member)
		state = join_sendonly_full;
	else
		return Error(err::EINVAL);
	const rdma_cm::SockAddr group = WEFT_TRY(sockaddr_in(&req.addr, req.addr_size));
	return join(c, req.id, req.uid, req.response, group, state);
}

Result<void> cmd_leave_mcast(Call &c)
{
	abi::DestroyId req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	Multicast *m = nullptr;
	Ref<Ctx> x = WEFT_TRY(c.file.find_multicast(req.id, m));
	{
		/*
		 * Ours only if still on the Id's list (compared, not dereferenced,
		 * until found); then the Id is not torn down and its file lists it.
		 */
		MutexGuard h(x->hlock);
		bool found = false;
		for (Multicast &g : x->mcs)
			found = found || &g == m;
		if (!found || x->file != &c.file)
			return Error(err::ENOENT);
		x->mcs.remove(*m);
		x->file->unlink_multicast(*m);
	}
	{
		MutexGuard g(x->lock);
		if (x->id)
			(void)rdma_cm::leave_multicast(*x->id, m->addr);
	}
	/* The handler drops events of a group off the list; those queued go now. */
	uint32_t reported = m->events_reported;
	{
		MutexGuard h(x->hlock);
		if (x->file)
			reported = x->file->purge_multicast(*m);
	}
	const abi::EventsResp resp{reported};
	delete m;
	return Call::respond(req.response, &resp, sizeof(resp));
}

} // namespace weft::ucma
