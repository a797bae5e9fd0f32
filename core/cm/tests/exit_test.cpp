// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: what module exit waits for (weft_cm_exit in port.cpp, drain_ids
 * in id.cpp).  Every Id on its way out is waited for however late its
 * last reference goes: the wait is bounded by progress (an Id freed), not
 * by a number of reaper runs.  A reference that never goes ends the wait
 * after a quiet spell instead of hanging it.
 */
#include "../cm_priv.h"
#include "fixture.h"

using namespace weft;
using namespace weft::cm;
using namespace weft::cm::testing;
using weft::test::Test;

namespace {

/*
 * A reference on an Id dropped from a work item: a holder that returns
 * late, as a handler call still running on another CPU does.  The delay
 * only makes the drop come after the reaper went idle; nothing is timed.
 */
struct LatePut {
	LatePut() : work(fn, WEFT_LOCK_CLASS("weft_cm_test_late_put")) {}
	WEFT_NOCOPY(LatePut);
	~LatePut()
	{
		if (work.cancel_sync())
			drop();
	}

	void hold(Id &i)
	{
		i.get();
		id = &i;
	}
	void drop()
	{
		if (Id *i = exchange(id, nullptr))
			i->put();
	}
	static void fn(DelayedWork &w) { container_of(&w, &LatePut::work)->drop(); }

	DelayedWork work;
	Id *id = nullptr;
};

/* The Ids here never connect: no event comes. */
struct NoEvents final : Handler {
	int event(const Event &) override { return 0; }
};

/* An Id of weft0 its owner destroyed while @late holds it. */
Result<void> destroyed_but_held(NoEvents &r, LatePut &late)
{
	Ref<verbs::Device> d = verbs::find_device("weft0");
	if (!d)
		return Error(err::ENODEV);
	Id *id = WEFT_TRY(create_id(*d, r, nullptr));
	late.hold(*id);
	destroy(id);
	return ok();
}

void drain_waits_for_a_late_reference(Test &t)
{
	const uint32_t base = settled_ids();
	NoEvents r;
	auto late = make_own<LatePut>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, late);
	WEFT_ASSERT_OK(t, destroyed_but_held(r, *late.value()));
	WEFT_EXPECT_EQ(t, stats().ids, base + 1);
	late.value()->work.queue(500);
	WEFT_EXPECT_EQ(t, drain_ids(base, settle_quiet_ms), 0u);
	WEFT_EXPECT_EQ(t, stats().ids, base);
}

void drain_ends_on_a_stuck_reference(Test &t)
{
	const uint32_t base = settled_ids();
	NoEvents r;
	auto stuck = make_own<LatePut>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, stuck);
	WEFT_ASSERT_OK(t, destroyed_but_held(r, *stuck.value()));
	/* Held for good: the wait ends after a quiet spell, reporting the one left. */
	WEFT_EXPECT_EQ(t, drain_ids(base, 200), 1u);
	stuck.value()->drop();
	WEFT_EXPECT_EQ(t, settled_ids(), base);
}

} // namespace

WEFT_TEST_SUITE(weft_cm_exit, WEFT_CASE(drain_waits_for_a_late_reference),
		WEFT_CASE(drain_ends_on_a_stuck_reference));
