// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: device removal against the owner's calls.  An owner that does
 * not destroy its Id on DEVICE_REMOVAL has its IB CM Id taken from it
 * (device.cpp), while a call of that owner may be using it outside the
 * RDMA CM's lock (conn.cpp).  The seam (rcm.h cm_call_hook) stops the
 * owner's disconnect() right before its IB CM call, starts the removal
 * from a work item and gives it every chance to destroy the IB CM Id;
 * the retire must instead wait for the call (cm_use.cpp).  Without that
 * wait the call goes on with a freed IB CM Id: KASAN reports it on the
 * debug kernel, and the case sees the removal finish inside the call.
 */
#include <weft/work.h>

#include "rig.h"

using namespace weft;
using namespace weft::rdma_cm;
using namespace weft::rdma_cm::testing;
using weft::test::Test;

namespace {

/* An owner that keeps its Id through DEVICE_REMOVAL. */
struct Owner final : Handler {
	Atomic<int> counts[16];
	int event(const Event &e) override
	{
		counts[int(e.type)].fetch_add(1, Order::Release);
		return 0;
	}
	int seen(EventType t) const { return counts[int(t)].load(Order::Acquire); }
};

struct Race {
	Rig *rig = nullptr;
	Id *target = nullptr;
	Atomic<bool> fired{false};
	bool retired = false;	 /* the removal cleared the Id's IB CM Id during the call */
	bool gone_in_call = false; /* ... and finished with the Id (destroyed it) during the call */
	Work work;
	Race() : work(remove, WEFT_LOCK_CLASS("weft_rdma_cm_test_remove")) {}
	static void remove(Work &w);
};

Race *race;

void Race::remove(Work &)
{
	race->rig->unregister();
}

/* Poll @pred for up to @ms of wall time (a sleep of 1 ms takes longer on a loaded host). */
template <typename Pred> bool wait_ms(Pred pred, uint64_t ms)
{
	uint64_t end = now_ms() + ms;
	while (!pred() && now_ms() < end)
		weft_msleep(1);
	return pred();
}

bool cm_id_cleared(Id &id)
{
	MutexGuard g(rcm->lock);
	return !id.cm_id;
}

/* The removal is done with the Id: after its IB CM Id, the device goes. */
bool detached(Id &id)
{
	MutexGuard g(rcm->lock);
	return !id.dev;
}

/* The owner's call holds the IB CM Id here: remove the device under it. */
void seam(Id &id)
{
	Race *r = race;
	if (!r || &id != r->target || r->fired.exchange(true, Order::AcqRel))
		return;
	r->work.queue();
	/* The removal waits owner_wait_ms for the owner, then retires the IB CM Id. */
	r->retired = wait_ms([&id] { return cm_id_cleared(id); }, 60000);
	/* A retire that does not wait for us would destroy it and detach the Id now. */
	r->gone_in_call = wait_ms([&id] { return detached(id); }, 2000);
	if (r->gone_in_call)
		weft_msleep(500); /* the IB CM's reaper frees its Id: let KASAN see the use */
}

void removal_waits_for_owner_call(Test &t)
{
	auto own = make_own<Rig>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, own);
	Rig &rig = *own.value();
	WEFT_ASSERT_OK(t, rig.up());
	Owner h;
	auto made = routed_id(rig, PortSpace::Tcp, verbs::QpType::Rc, h, 4791);
	WEFT_ASSERT_OK(t, made);
	Id *id = made.value();
	ConnParam p;
	p.qp_num = 0x2345; /* no QP attached: the REQ names one (as ucma's owners do) */
	WEFT_ASSERT_OK(t, connect(*id, p));

	auto rown = make_own<Race>(Gfp::Sleep); /* its work item off the stack */
	if (!rown) {
		destroy(id);
		WEFT_ASSERT_OK(t, rown);
	}
	Race &r = *rown.value();
	r.rig = &rig;
	r.target = id;
	race = &r;
	uint32_t old_wait = owner_wait_ms.exchange(100, Order::Relaxed);
	cm_call_hook.store(seam, Order::Release);
	/* Not Established on the IB CM's side: EINVAL there, which disconnect() takes as done. */
	WEFT_EXPECT_OK(t, disconnect(*id));
	cm_call_hook.store(nullptr, Order::Release);
	r.work.flush();
	race = nullptr;
	owner_wait_ms.store(old_wait, Order::Relaxed);

	WEFT_EXPECT_TRUE(t, r.fired.load(Order::Acquire));
	WEFT_EXPECT_TRUE(t, r.retired);
	WEFT_EXPECT_FALSE(t, r.gone_in_call);
	WEFT_EXPECT_EQ(t, h.seen(EventType::DeviceRemoval), 1);
	WEFT_EXPECT_TRUE(t, detached(*id));
	WEFT_EXPECT_TRUE(t, info(*id).dev == nullptr);
	{
		MutexGuard g(rcm->lock);
		WEFT_EXPECT_TRUE(t, id->state == IdState::DeviceGone);
	}
	/* The owner's later calls find no IB CM Id. */
	WEFT_EXPECT_ERR(t, disconnect(*id), err::EINVAL);
	WEFT_EXPECT_ERR(t, notify_established(*id), err::EINVAL);
	destroy(id);
}

} // namespace

WEFT_TEST_SUITE(weft_rdma_cm_removal, WEFT_CASE(removal_waits_for_owner_call));
