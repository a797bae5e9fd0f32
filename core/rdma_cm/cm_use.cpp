// SPDX-License-Identifier: GPL-2.0
/*
 * The IB CM Id of an RDMA CM Id's connection and its users.  The owner's
 * calls (conn.cpp) make their IB CM call outside Rcm::lock, while
 * teardown (destroy, a listener's owner refusing a request, device
 * removal) may be done with the IB CM Id at the same time.  So a call
 * takes a use with the pointer, under the lock, and teardown retires the
 * IB CM Id in two phases before it is destroyed: the pointer is cleared
 * under the lock, so no call starts using it, then the uses taken before
 * are waited for.  A call that comes later finds no IB CM Id (EINVAL).
 */
#include "rcm.h"

namespace weft::rdma_cm {

constinit Atomic<CmCallHook> cm_call_hook;

void CmUse::take_locked(Id &id)
{
	rcm->lock.assert_held();
	reset();
	if (!id.cm_id)
		return;
	id.cm_uses.fetch_add(1, Order::Relaxed);
	id_ = &id;
	c_ = id.cm_id;
}

void CmUse::reset()
{
	Id *id = exchange(id_, nullptr);
	c_ = nullptr;
	/* retire_cm_id() may destroy the IB CM Id as soon as it sees 0. */
	if (id && id->cm_uses.fetch_sub(1, Order::Release) == 1)
		rcm->cm_idle.wake_all();
}

cm::Id *retire_cm_id(Id &id, cm::Id *only)
{
	cm::Id *c;
	{
		MutexGuard g(rcm->lock);
		if (only && id.cm_id != only)
			return nullptr;
		c = exchange(id.cm_id, nullptr);
	}
	if (c)
		(void)rcm->cm_idle.wait([&id] { return !id.cm_uses.load(Order::Acquire); });
	return c;
}

void drop_cm_id(Id &id, cm::Id *only)
{
	if (cm::Id *c = retire_cm_id(id, only))
		cm::destroy(c); /* tells the peer (REJ, DREQ) and waits for its handler */
}

} // namespace weft::rdma_cm
