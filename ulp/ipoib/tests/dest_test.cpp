// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the destination table of an IPoIB interface (ulp/ipoib/dest.h),
 * the neighbour/path cache and multicast bookkeeping with no verbs or SA:
 * packets and address handles are tokens the table never dereferences.
 * Covers resolution with packets waiting (in order, bounded), failure and
 * retry after its delay, stale answers after a flush, the entry bound,
 * ndo_set_rx_mode's membership changes, and aging of idle entries.
 */
#include <weft/test.h>

#include "../dest.h"

using namespace weft;
using namespace weft::ipoib;
using weft::test::Test;

namespace {

using V = DestTable::Verdict;

verbs::Gid gid(uint64_t guid, bool mcast = false)
{
	return verbs::Gid::make(mcast ? 0xff12601bffff0000ull : 0xfe80000000000000ull, guid);
}

void *pkt(uintptr_t n)
{
	return reinterpret_cast<void *>(0x1000 + n);
}

verbs::Ah *ah(uintptr_t n)
{
	return reinterpret_cast<verbs::Ah *>(0x9000 + n * 0x100);
}

/* Answer @c with an address handle (and a multicast LID); the packets that waited go to @out. */
bool answer(DestTable &tb, const DestTable::Claim &c, uintptr_t ah_n, Pending *out, uint32_t &n,
	    uint16_t mlid = 0, bool attached = false)
{
	Resolved r;
	r.ah = ah(ah_n);
	r.mlid = mlid;
	r.attached = attached;
	return tb.complete(c, &r, 0, out, n);
}

/* A table on the heap that hands everything back at the end. */
struct Fixture {
	DestTable table;
	~Fixture()
	{
		DestList all;
		table.take_all(all);
		drain(all);
	}
	static size_t drain(DestList &l)
	{
		size_t n = 0;
		while (Dest *d = l.pop_front()) {
			n++;
			delete d;
		}
		return n;
	}
};

void resolve_then_send(Test &t)
{
	Own<Fixture> f(new (Gfp::Sleep) Fixture);
	WEFT_ASSERT_TRUE(t, f);
	DestTable &tb = f->table;
	auto d = tb.send(gid(2), pkt(1), 0x48, 0);
	WEFT_EXPECT_EQ(t, d.verdict, V::Queued);
	WEFT_EXPECT_TRUE(t, d.kick);
	d = tb.send(gid(2), pkt(2), 0x49, 0);
	WEFT_EXPECT_EQ(t, d.verdict, V::Queued);
	WEFT_EXPECT_FALSE(t, d.kick);
	DestTable::Claim c;
	WEFT_ASSERT_TRUE(t, tb.claim(c));
	WEFT_EXPECT_TRUE(t, c.gid == gid(2));
	WEFT_EXPECT_FALSE(t, c.member);
	/* One worker per entry: a busy entry is not handed out again. */
	DestTable::Claim c2;
	WEFT_EXPECT_FALSE(t, tb.claim(c2));
	/* Packets keep waiting while the query runs. */
	WEFT_EXPECT_EQ(t, tb.send(gid(2), pkt(3), 0x48, 5).verdict, V::Queued);
	Pending out[Dest::queue_max];
	uint32_t n = 99;
	WEFT_ASSERT_TRUE(t, answer(tb, c, 1, out, n));
	WEFT_ASSERT_EQ(t, n, 3u);
	WEFT_EXPECT_EQ(t, out[0].pkt, pkt(1));
	WEFT_EXPECT_EQ(t, out[0].qpn, 0x48u);
	WEFT_EXPECT_EQ(t, out[1].pkt, pkt(2));
	WEFT_EXPECT_EQ(t, out[1].qpn, 0x49u);
	WEFT_EXPECT_EQ(t, out[2].pkt, pkt(3));
	d = tb.send(gid(2), pkt(4), 0x48, 11);
	WEFT_EXPECT_EQ(t, d.verdict, V::Send);
	WEFT_EXPECT_EQ(t, d.ah, ah(1));
	WEFT_EXPECT_FALSE(t, d.kick);
	WEFT_EXPECT_EQ(t, tb.size(), 1u);
}

void queue_is_bounded(Test &t)
{
	Own<Fixture> f(new (Gfp::Sleep) Fixture);
	WEFT_ASSERT_TRUE(t, f);
	DestTable &tb = f->table;
	for (uintptr_t i = 0; i < Dest::queue_max; i++)
		WEFT_EXPECT_EQ(t, tb.send(gid(3), pkt(i), 1, 0).verdict, V::Queued);
	WEFT_EXPECT_EQ(t, tb.send(gid(3), pkt(100), 1, 0).verdict, V::QueueFull);
	WEFT_EXPECT_EQ(t, tb.find(gid(3))->nqueued, static_cast<uint32_t>(Dest::queue_max));
}

void failure_and_retry(Test &t)
{
	Own<Fixture> f(new (Gfp::Sleep) Fixture);
	WEFT_ASSERT_TRUE(t, f);
	DestTable &tb = f->table;
	WEFT_EXPECT_EQ(t, tb.send(gid(4), pkt(1), 1, 1000).verdict, V::Queued);
	DestTable::Claim c;
	WEFT_ASSERT_TRUE(t, tb.claim(c));
	Pending out[Dest::queue_max];
	uint32_t n = 0;
	WEFT_ASSERT_TRUE(t, tb.complete(c, nullptr, 1000, out, n));
	/* The waiting packet comes back to be dropped. */
	WEFT_EXPECT_EQ(t, n, 1u);
	WEFT_EXPECT_EQ(t, tb.find(gid(4))->state, Dest::State::Failed);
	WEFT_EXPECT_EQ(t, tb.send(gid(4), pkt(2), 1, 1000 + DestTable::retry_ms - 1).verdict, V::Unreachable);
	WEFT_EXPECT_FALSE(t, tb.claim(c));
	auto d = tb.send(gid(4), pkt(3), 1, 1000 + DestTable::retry_ms);
	WEFT_EXPECT_EQ(t, d.verdict, V::Queued);
	WEFT_EXPECT_TRUE(t, d.kick);
	WEFT_EXPECT_TRUE(t, tb.claim(c));
}

void flush_makes_answers_stale(Test &t)
{
	Own<Fixture> f(new (Gfp::Sleep) Fixture);
	WEFT_ASSERT_TRUE(t, f);
	DestTable &tb = f->table;
	tb.send(gid(5), pkt(1), 1, 0);
	DestTable::Claim c;
	WEFT_ASSERT_TRUE(t, tb.claim(c));
	const uint64_t gen = tb.generation();
	DestList all;
	tb.take_all(all);
	/* The flushed entry carries its waiting packet out, for the caller to drop. */
	WEFT_ASSERT_EQ(t, all.size(), 1u);
	WEFT_EXPECT_EQ(t, all.front()->nqueued, 1u);
	Fixture::drain(all);
	WEFT_EXPECT_NE(t, tb.generation(), gen);
	WEFT_EXPECT_EQ(t, tb.size(), 0u);
	/* A new entry for the same GID appears before the old answer comes in. */
	tb.send(gid(5), pkt(2), 1, 0);
	Pending out[Dest::queue_max];
	uint32_t n = 7;
	WEFT_EXPECT_FALSE(t, answer(tb, c, 2, out, n));
	WEFT_EXPECT_EQ(t, n, 0u);
	WEFT_EXPECT_EQ(t, tb.find(gid(5))->state, Dest::State::Resolving);
	WEFT_EXPECT_EQ(t, tb.find(gid(5))->nqueued, 1u);
}

void entries_are_bounded(Test &t)
{
	Own<Fixture> f(new (Gfp::Sleep) Fixture);
	WEFT_ASSERT_TRUE(t, f);
	DestTable &tb = f->table;
	for (uint64_t i = 0; i < DestTable::max_entries; i++)
		WEFT_ASSERT_EQ(t, tb.send(gid(0x1000 + i), pkt(i), 1, 0).verdict, V::Queued);
	WEFT_EXPECT_EQ(t, tb.send(gid(0x9999), pkt(1), 1, 0).verdict, V::Unreachable);
	/* Known destinations still take packets. */
	WEFT_EXPECT_EQ(t, tb.send(gid(0x1000), pkt(2), 1, 0).verdict, V::Queued);
}

void multicast_membership(Test &t)
{
	Own<Fixture> f(new (Gfp::Sleep) Fixture);
	WEFT_ASSERT_TRUE(t, f);
	DestTable &tb = f->table;
	const verbs::Gid bcast = gid(0xffffffff, true);
	Resolved br;
	br.ah = ah(1);
	br.mlid = 0xc000;
	br.attached = true;
	WEFT_ASSERT_OK(t, tb.install(bcast, br, true));
	WEFT_EXPECT_ERR(t, tb.install(bcast, br, true), err::EEXIST);
	const verbs::Gid g1 = gid(1, true), g2 = gid(2, true);
	const verbs::Gid list1[] = {g1, g2};
	DestList gone;
	/* Two new groups to join as members. */
	WEFT_EXPECT_EQ(t, tb.set_members(list1, 2, gone), 2u);
	WEFT_EXPECT_TRUE(t, gone.empty());
	DestTable::Claim c;
	WEFT_ASSERT_TRUE(t, tb.claim(c));
	WEFT_EXPECT_TRUE(t, c.member);
	Pending out[Dest::queue_max];
	uint32_t n;
	WEFT_ASSERT_TRUE(t, answer(tb, c, 2, out, n, 0xc001, true));
	WEFT_ASSERT_TRUE(t, tb.claim(c));
	WEFT_ASSERT_TRUE(t, answer(tb, c, 3, out, n, 0xc002, true));
	/* The same list again: nothing to do. */
	WEFT_EXPECT_EQ(t, tb.set_members(list1, 2, gone), 0u);
	WEFT_EXPECT_TRUE(t, gone.empty());
	/* g1 left the list (and the broadcast group, never listed, stays). */
	const verbs::Gid list2[] = {g2};
	WEFT_EXPECT_EQ(t, tb.set_members(list2, 1, gone), 0u);
	WEFT_ASSERT_EQ(t, gone.size(), 1u);
	WEFT_EXPECT_TRUE(t, gone.front()->gid == g1);
	WEFT_EXPECT_EQ(t, gone.front()->res.mlid, 0xc001);
	Fixture::drain(gone);
	WEFT_EXPECT_TRUE(t, tb.find(bcast) != nullptr);
	WEFT_EXPECT_TRUE(t, tb.find(g1) == nullptr);
	WEFT_EXPECT_EQ(t, tb.size(), 2u);
}

void send_only_group_becomes_member(Test &t)
{
	Own<Fixture> f(new (Gfp::Sleep) Fixture);
	WEFT_ASSERT_TRUE(t, f);
	DestTable &tb = f->table;
	const verbs::Gid g = gid(7, true);
	/* Sent to first: joined without listening. */
	tb.send(g, pkt(1), 0xffffff, 0);
	DestTable::Claim c;
	WEFT_ASSERT_TRUE(t, tb.claim(c));
	WEFT_EXPECT_FALSE(t, c.member);
	Pending out[Dest::queue_max];
	uint32_t n;
	WEFT_ASSERT_TRUE(t, answer(tb, c, 4, out, n, 0xc007));
	/* Then the stack listens to it: the send-only join goes, a member join follows. */
	DestList gone;
	const verbs::Gid list[] = {g};
	WEFT_EXPECT_EQ(t, tb.set_members(list, 1, gone), 1u);
	WEFT_ASSERT_EQ(t, gone.size(), 1u);
	WEFT_EXPECT_EQ(t, gone.front()->res.ah, ah(4));
	Fixture::drain(gone);
	WEFT_ASSERT_TRUE(t, tb.claim(c));
	WEFT_EXPECT_TRUE(t, c.member);
	/* Meanwhile packets wait for the member join. */
	WEFT_EXPECT_EQ(t, tb.send(g, pkt(2), 0xffffff, 0).verdict, V::Queued);
}

/*
 * Aging: only settled entries unused for the idle time go; one sent to
 * since, one still resolving (with packets waiting), a listened-to group
 * and the broadcast group stay.
 */
void idle_entries_age(Test &t)
{
	Own<Fixture> f(new (Gfp::Sleep) Fixture);
	WEFT_ASSERT_TRUE(t, f);
	DestTable &tb = f->table;
	Resolved br;
	br.ah = ah(1);
	WEFT_ASSERT_OK(t, tb.install(gid(0xffffffff, true), br, true));
	const verbs::Gid member = gid(9, true), list[] = {member};
	DestList gone;
	WEFT_EXPECT_EQ(t, tb.set_members(list, 1, gone), 1u);
	Pending out[Dest::queue_max];
	uint32_t n;
	DestTable::Claim c;
	WEFT_ASSERT_TRUE(t, tb.claim(c));
	WEFT_ASSERT_TRUE(t, answer(tb, c, 2, out, n, 0xc009, true));
	/* Three unicast destinations resolved at t=0, one multicast sent to only. */
	const verbs::Gid sendonly = gid(8, true);
	for (uint64_t i = 1; i <= 3; i++)
		tb.send(gid(i), pkt(i), 1, 0);
	tb.send(sendonly, pkt(4), 0xffffff, 0);
	for (uintptr_t i = 0; i < 4; i++) {
		WEFT_ASSERT_TRUE(t, tb.claim(c));
		WEFT_ASSERT_TRUE(t, answer(tb, c, 3 + i, out, n));
	}
	/* gid(2) is used again at 500; gid(5) starts resolving at 900. */
	WEFT_EXPECT_EQ(t, tb.send(gid(2), pkt(5), 1, 500).verdict, V::Send);
	WEFT_EXPECT_EQ(t, tb.send(gid(5), pkt(6), 1, 900).verdict, V::Queued);
	WEFT_EXPECT_EQ(t, tb.size(), 7u);
	DestList idle;
	WEFT_EXPECT_EQ(t, tb.take_idle(999, 1000, idle), 0u);
	WEFT_EXPECT_EQ(t, tb.take_idle(1000, 1000, idle), 3u);
	WEFT_EXPECT_TRUE(t, tb.find(gid(1)) == nullptr);
	WEFT_EXPECT_TRUE(t, tb.find(gid(3)) == nullptr);
	WEFT_EXPECT_TRUE(t, tb.find(sendonly) == nullptr);
	WEFT_EXPECT_TRUE(t, tb.find(gid(2)) != nullptr);
	WEFT_EXPECT_TRUE(t, tb.find(gid(5)) != nullptr);
	WEFT_EXPECT_TRUE(t, tb.find(member) != nullptr);
	WEFT_EXPECT_TRUE(t, tb.find(gid(0xffffffff, true)) != nullptr);
	WEFT_EXPECT_EQ(t, tb.size(), 4u);
	WEFT_EXPECT_EQ(t, Fixture::drain(idle), 3u);
	/* An aged destination is looked up again on the next send. */
	auto d = tb.send(gid(1), pkt(7), 1, 2000);
	WEFT_EXPECT_EQ(t, d.verdict, V::Queued);
	WEFT_EXPECT_TRUE(t, d.kick);
	/* Much later only the resolving gid(5) and gid(1) (with packets waiting), and the groups, remain. */
	WEFT_EXPECT_EQ(t, tb.take_idle(10000, 1000, idle), 1u);
	WEFT_EXPECT_TRUE(t, tb.find(gid(2)) == nullptr);
	WEFT_EXPECT_EQ(t, Fixture::drain(idle), 1u);
}

} // namespace

WEFT_TEST_SUITE(weft_ipoib_dest, WEFT_CASE(resolve_then_send), WEFT_CASE(queue_is_bounded),
		WEFT_CASE(failure_and_retry), WEFT_CASE(flush_makes_answers_stale),
		WEFT_CASE(entries_are_bounded), WEFT_CASE(multicast_membership),
		WEFT_CASE(send_only_group_becomes_member), WEFT_CASE(idle_entries_age));
