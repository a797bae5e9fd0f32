// SPDX-License-Identifier: GPL-2.0
/* KUnit: checked allocation, Own, Array and the allocation-failure injector. */
#include <weft/alloc.h>
#include <weft/test.h>

using namespace weft;
using weft::test::Test;

namespace {

struct Tracked {
	explicit Tracked(int *alive) : alive_(alive) { ++*alive_; }
	~Tracked() { --*alive_; }
	int *alive_;
	int payload[16] = {};
};

void own_frees_on_scope_exit(Test &t)
{
	int alive = 0;
	{
		auto r = make_own<Tracked>(Gfp::Sleep, &alive);
		WEFT_ASSERT_OK(t, r);
		WEFT_EXPECT_EQ(t, alive, 1);
		Own<Tracked> moved = r.take();
		WEFT_EXPECT_TRUE(t, static_cast<bool>(moved));
		WEFT_EXPECT_EQ(t, alive, 1);
	}
	WEFT_EXPECT_EQ(t, alive, 0);
}

void own_release_and_reset(Test &t)
{
	int alive = 0;
	auto r = make_own<Tracked>(Gfp::Atomic, &alive);
	WEFT_ASSERT_OK(t, r);
	Tracked *raw = r->release();
	WEFT_EXPECT_FALSE(t, static_cast<bool>(r.value()));
	WEFT_EXPECT_EQ(t, alive, 1);
	Own<Tracked> again(raw);
	again.reset();
	WEFT_EXPECT_EQ(t, alive, 0);
}

void injected_failure_is_enomem(Test &t)
{
	int alive = 0;
	weft_alloc_fail_arm(1, false);
	auto r = make_own<Tracked>(Gfp::Sleep, &alive);
	unsigned int seen = weft_alloc_fail_disarm();
	WEFT_EXPECT_ERR(t, r, err::ENOMEM);
	/* The constructor must not have run on the failed allocation. */
	WEFT_EXPECT_EQ(t, alive, 0);
	WEFT_EXPECT_EQ(t, seen, 1u);
}

void injection_counts_and_targets_nth(Test &t)
{
	int alive = 0;
	weft_alloc_fail_arm(2, false);
	auto a = make_own<Tracked>(Gfp::Sleep, &alive);
	auto b = make_own<Tracked>(Gfp::Sleep, &alive);
	auto c = make_own<Tracked>(Gfp::Sleep, &alive);
	unsigned int seen = weft_alloc_fail_disarm();
	WEFT_EXPECT_OK(t, a);
	WEFT_EXPECT_ERR(t, b, err::ENOMEM);
	WEFT_EXPECT_OK(t, c);
	WEFT_EXPECT_EQ(t, seen, 3u);
	WEFT_EXPECT_EQ(t, alive, 2);
}

void sticky_injection_fails_everything_after(Test &t)
{
	weft_alloc_fail_arm(1, true);
	auto a = Array<uint32_t>::make(Gfp::Sleep, 4);
	auto b = Array<uint32_t>::make(Gfp::Atomic, 4);
	weft_alloc_fail_disarm();
	auto c = Array<uint32_t>::make(Gfp::Sleep, 4);
	WEFT_EXPECT_ERR(t, a, err::ENOMEM);
	WEFT_EXPECT_ERR(t, b, err::ENOMEM);
	WEFT_EXPECT_OK(t, c);
}

void array_is_zeroed_and_sized(Test &t)
{
	auto r = Array<uint64_t>::make(Gfp::Sleep, 100000); /* > a page: the vmalloc path */
	WEFT_ASSERT_OK(t, r);
	Array<uint64_t> a = r.take();
	WEFT_EXPECT_EQ(t, a.size(), 100000u);
	uint64_t sum = 0;
	for (uint64_t v : a)
		sum += v;
	WEFT_EXPECT_EQ(t, sum, 0u);
	a[99999] = 7;
	WEFT_EXPECT_EQ(t, a[99999], 7u);
}

void array_rejects_bad_sizes(Test &t)
{
	WEFT_EXPECT_ERR(t, Array<uint64_t>::make(Gfp::Sleep, 0), err::EINVAL);
	WEFT_EXPECT_ERR(t, Array<uint64_t>::make(Gfp::Sleep, SIZE_MAX / 4), err::EINVAL);
}

/*
 * A size from the wire or user space fails with ENOMEM and no WARN: kvmalloc
 * refuses more than INT_MAX, and an atomic kmalloc above the largest page
 * order, both with a splat (which fails the run) unless told not to.
 */
void input_sized_fails_quietly(Test &t)
{
	WEFT_EXPECT_ERR(t, Array<uint8_t>::make(Gfp::Sleep, size_t(3) << 30, Sized::ByInput), err::ENOMEM);
	WEFT_EXPECT_ERR(t, Array<uint8_t>::make(Gfp::Atomic, size_t(64) << 20, Sized::ByInput), err::ENOMEM);
}

void plain_new_and_array_new(Test &t)
{
	auto *p = new (Gfp::Sleep) int[32];
	WEFT_ASSERT_TRUE(t, p != nullptr);
	p[31] = 5;
	WEFT_EXPECT_EQ(t, p[31], 5);
	delete[] p;
	weft_alloc_fail_arm(1, false);
	int *q = new (Gfp::Atomic) int(3);
	weft_alloc_fail_disarm();
	WEFT_EXPECT_TRUE(t, q == nullptr);
}

} // namespace

WEFT_TEST_SUITE(weft_rt_alloc, WEFT_CASE(own_frees_on_scope_exit), WEFT_CASE(own_release_and_reset),
		WEFT_CASE(injected_failure_is_enomem), WEFT_CASE(injection_counts_and_targets_nth),
		WEFT_CASE(sticky_injection_fails_everything_after),
		WEFT_CASE(array_is_zeroed_and_sized), WEFT_CASE(array_rejects_bad_sizes),
		WEFT_CASE(input_sized_fails_quietly), WEFT_CASE(plain_new_and_array_new));
