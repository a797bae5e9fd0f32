// SPDX-License-Identifier: GPL-2.0
/* KUnit: RefCount, RefCounted and Ref. */
#include <weft/ref.h>
#include <weft/test.h>

using namespace weft;
using weft::test::Test;

namespace {

struct Counted : RefCounted<Counted> {
	explicit Counted(int *released) : released_(released) {}
	/* Two-phase teardown hook: count instead of only freeing. */
	static void release(Counted *c)
	{
		++*c->released_;
		delete c;
	}
	int *released_;
};

void refcount_basics(Test &t)
{
	RefCount rc(1);
	rc.inc();
	WEFT_EXPECT_EQ(t, rc.read(), 2);
	WEFT_EXPECT_FALSE(t, rc.dec_and_test());
	WEFT_EXPECT_TRUE(t, rc.dec_and_test());
	WEFT_EXPECT_EQ(t, rc.read(), 0);
	/* A dead object cannot be revived. */
	WEFT_EXPECT_FALSE(t, rc.inc_not_zero());
	WEFT_EXPECT_EQ(t, rc.read(), 0);
}

void inc_not_zero_on_live(Test &t)
{
	RefCount rc(3);
	WEFT_EXPECT_TRUE(t, rc.inc_not_zero());
	WEFT_EXPECT_EQ(t, rc.read(), 4);
}

void last_put_releases_once(Test &t)
{
	int released = 0;
	auto r = make_ref<Counted>(Gfp::Sleep, &released);
	WEFT_ASSERT_OK(t, r);
	Ref<Counted> a = r.take();
	WEFT_EXPECT_EQ(t, a->ref_count(), 1);
	{
		Ref<Counted> b = a;
		Ref<Counted> c = Ref<Counted>::share(a.get());
		WEFT_EXPECT_EQ(t, a->ref_count(), 3);
		Ref<Counted> d = move(b);
		WEFT_EXPECT_FALSE(t, static_cast<bool>(b));
		WEFT_EXPECT_EQ(t, a->ref_count(), 3);
	}
	WEFT_EXPECT_EQ(t, a->ref_count(), 1);
	WEFT_EXPECT_EQ(t, released, 0);
	a.reset();
	WEFT_EXPECT_EQ(t, released, 1);
	a.reset();
	WEFT_EXPECT_EQ(t, released, 1);
}

void leak_and_adopt_round_trip(Test &t)
{
	int released = 0;
	auto r = make_ref<Counted>(Gfp::Atomic, &released);
	WEFT_ASSERT_OK(t, r);
	Counted *raw = r->leak(); /* e.g. stored in a C structure */
	WEFT_EXPECT_EQ(t, raw->ref_count(), 1);
	Ref<Counted> back = Ref<Counted>::adopt(raw);
	WEFT_EXPECT_EQ(t, raw->ref_count(), 1);
	back = Ref<Counted>();
	WEFT_EXPECT_EQ(t, released, 1);
}

void make_ref_failure(Test &t)
{
	int released = 0;
	weft_alloc_fail_arm(1, false);
	auto r = make_ref<Counted>(Gfp::Sleep, &released);
	weft_alloc_fail_disarm();
	WEFT_EXPECT_ERR(t, r, err::ENOMEM);
	WEFT_EXPECT_EQ(t, released, 0);
}

} // namespace

WEFT_TEST_SUITE(weft_rt_ref, WEFT_CASE(refcount_basics), WEFT_CASE(inc_not_zero_on_live),
		WEFT_CASE(last_put_releases_once), WEFT_CASE(leak_and_adopt_round_trip),
		WEFT_CASE(make_ref_failure));
