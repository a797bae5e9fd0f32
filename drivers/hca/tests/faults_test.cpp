// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: cable fault injection (drivers/hca/faults.cpp).  The decisions
 * alone (counts are exact, 0 and 1000000 ppm are never and always), then
 * packets through a private cable between a sender and a recording sink
 * node (on the fabric, beside the default subnet, no verbs device): drop,
 * duplicate, reorder and delay change exactly what arrives, corruption is
 * always detected by the CRCs and counted by a real HCA's and a real
 * switch's receive path, and cutting the cable frees held packets.
 */
#include <weft/test.h>

#include "../crc.h"
#include "../hca.h"
#include "../switch.h"
#include "sample_packet.h"
#include "sink.h"

using namespace weft;
using namespace weft::hca;
using weft::test::Test;
using weft::hca::fixture::Sink;

namespace {

/* A sender and a sink joined by a cable, on the fabric for one test. */
struct Link {
	Sink tx, rx;

	Result<void> up()
	{
		Fabric::get().add(tx);
		Fabric::get().add(rx);
		return Fabric::get().connect(tx.port_, rx.port_);
	}
	~Link()
	{
		Fabric::get().remove(tx);
		Fabric::get().remove(rx);
	}
	Faults &faults() { return tx.port_.faults(); }
};

/* On the heap: two ports' Faults are too big for a kernel stack under lockdep. */
Result<Own<Link>> make_link()
{
	auto l = WEFT_TRY(make_own<Link>(Gfp::Sleep));
	WEFT_TRY(l->up());
	return l;
}

/* Until @s has @n packets, at most @ms. */
void wait_for(Sink &s, size_t n, uint32_t ms)
{
	for (uint32_t waited = 0; waited < ms && s.count() < n; waited += 5)
		weft_msleep(5);
}

/* An RC SEND Only with @psn, unsealed as the in-host path builds it. */
Result<Own<PacketBuf>> packet(uint32_t psn, uint16_t dlid = 0x12)
{
	static constexpr uint8_t payload[32] = {1, 2, 3, 4, 5, 6, 7, 8};
	PacketSpec s = fixture::sample(iba::opcode(iba::Transport::Rc, iba::op::SendOnly),
				       ConstBytes(payload), false);
	s.psn = psn;
	s.dlid = dlid;
	s.vl = 0;
	auto b = WEFT_TRY(PacketBuf::alloc(Gfp::Sleep, 256));
	b->len = static_cast<uint32_t>(WEFT_TRY(build(Bytes(b->data(), b->cap), s, false)));
	return b;
}

uint32_t psn_of(PacketBuf &b)
{
	auto p = parse(b.bytes());
	return p ? iba::Bth::Psn::get(p.value().bth->psn) : ~0u;
}

/* The sink got exactly these PSNs first, in this order. */
template <size_t N> void expect_psns(Test &t, Sink &s, const uint32_t (&want)[N])
{
	for (uint32_t psn : want) {
		Own<PacketBuf> b = s.take();
		WEFT_ASSERT_TRUE(t, bool(b));
		WEFT_EXPECT_EQ(t, psn_of(*b), psn);
	}
}

Result<void> send(Port &from, uint32_t first_psn, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		from.transmit(WEFT_TRY(packet(first_psn + i)));
	return ok();
}

void count_is_exact(Test &t)
{
	Sink s;
	Faults &f = s.port_.faults();
	f.set_count(FaultKind::Drop, 5);
	int hits = 0;
	for (int i = 0; i < 100; i++)
		hits += f.decide(FaultKind::Drop);
	WEFT_EXPECT_EQ(t, hits, 5);
	WEFT_EXPECT_EQ(t, f.count(FaultKind::Drop), 0u);
	/* Other kinds are untouched. */
	WEFT_EXPECT_FALSE(t, f.decide(FaultKind::Corrupt));
}

void probability_bounds(Test &t)
{
	Sink s;
	Faults &f = s.port_.faults();
	WEFT_ASSERT_OK(t, f.set_probability(FaultKind::Duplicate, 0));
	int hits = 0;
	for (int i = 0; i < 10000; i++)
		hits += f.decide(FaultKind::Duplicate);
	WEFT_EXPECT_EQ(t, hits, 0);
	WEFT_ASSERT_OK(t, f.set_probability(FaultKind::Duplicate, ppm_all));
	hits = 0;
	for (int i = 0; i < 10000; i++)
		hits += f.decide(FaultKind::Duplicate);
	WEFT_EXPECT_EQ(t, hits, 10000);
	/* Half: 10000 draws land within 45-55% except with odds below 1e-20. */
	WEFT_ASSERT_OK(t, f.set_probability(FaultKind::Duplicate, ppm_all / 2));
	hits = 0;
	for (int i = 0; i < 10000; i++)
		hits += f.decide(FaultKind::Duplicate);
	WEFT_EXPECT_GE(t, hits, 4500);
	WEFT_EXPECT_LE(t, hits, 5500);
}

void knobs_validate(Test &t)
{
	Sink s;
	Faults &f = s.port_.faults();
	WEFT_EXPECT_FALSE(t, f.armed());
	WEFT_EXPECT_ERR(t, f.set_probability(FaultKind::Drop, ppm_all + 1), err::EINVAL);
	WEFT_EXPECT_ERR(t, f.set_hold_ms(FaultKind::Drop, 5), err::EINVAL);
	WEFT_EXPECT_ERR(t, f.set_hold_ms(FaultKind::Delay, 0), err::EINVAL);
	WEFT_EXPECT_ERR(t, f.set_hold_ms(FaultKind::Delay, max_hold_ms + 1), err::EINVAL);
	WEFT_EXPECT_OK(t, f.set_hold_ms(FaultKind::Delay, 25));
	WEFT_EXPECT_EQ(t, f.hold_ms(FaultKind::Delay), 25u);
	WEFT_EXPECT_FALSE(t, f.armed());
	f.set_count(FaultKind::Reorder, 1);
	WEFT_EXPECT_TRUE(t, f.armed());
	f.clear();
	WEFT_EXPECT_FALSE(t, f.armed());
	WEFT_EXPECT_EQ(t, f.count(FaultKind::Reorder), 0u);
}

void drop_count(Test &t)
{
	auto own = make_link();
	WEFT_ASSERT_OK(t, own);
	Link &l = *own.value();
	l.faults().set_count(FaultKind::Drop, 3);
	WEFT_ASSERT_OK(t, send(l.tx.port_, 100, 10));
	WEFT_EXPECT_EQ(t, l.rx.count(), size_t(7));
	WEFT_EXPECT_EQ(t, l.faults().injected(FaultKind::Drop), uint64_t(3));
	/* The first three were the ones lost. */
	Own<PacketBuf> first = l.rx.take();
	WEFT_ASSERT_TRUE(t, bool(first));
	WEFT_EXPECT_EQ(t, psn_of(*first), 103u);
	WEFT_EXPECT_EQ(t, l.tx.port_.counters.xmit_packets.load(Order::Relaxed), uint64_t(10));
	WEFT_EXPECT_EQ(t, l.rx.port_.counters.rcv_packets.load(Order::Relaxed), uint64_t(7));
}

void drop_all(Test &t)
{
	auto own = make_link();
	WEFT_ASSERT_OK(t, own);
	Link &l = *own.value();
	WEFT_ASSERT_OK(t, l.faults().set_probability(FaultKind::Drop, ppm_all));
	WEFT_ASSERT_OK(t, send(l.tx.port_, 0, 50));
	WEFT_EXPECT_EQ(t, l.rx.count(), size_t(0));
	WEFT_EXPECT_EQ(t, l.faults().injected(FaultKind::Drop), uint64_t(50));
}

void duplicate_count(Test &t)
{
	auto own = make_link();
	WEFT_ASSERT_OK(t, own);
	Link &l = *own.value();
	l.faults().set_count(FaultKind::Duplicate, 2);
	WEFT_ASSERT_OK(t, send(l.tx.port_, 7, 5));
	WEFT_EXPECT_EQ(t, l.rx.count(), size_t(7));
	static constexpr uint32_t want[] = {7, 7, 8, 8, 9, 10, 11};
	expect_psns(t, l.rx, want);
}

/* The held packet arrives right after the one that overtook it. */
void reorder_one(Test &t)
{
	auto own = make_link();
	WEFT_ASSERT_OK(t, own);
	Link &l = *own.value();
	l.faults().set_count(FaultKind::Reorder, 1);
	WEFT_ASSERT_OK(t, send(l.tx.port_, 1, 1));
	WEFT_EXPECT_EQ(t, l.rx.count(), size_t(0));
	WEFT_EXPECT_EQ(t, l.faults().held(), 1u);
	WEFT_ASSERT_OK(t, send(l.tx.port_, 2, 2));
	WEFT_EXPECT_EQ(t, l.faults().held(), 0u);
	static constexpr uint32_t want[] = {2, 1, 3};
	expect_psns(t, l.rx, want);
}

/* Nothing overtakes: the work lets it go after reorder_ms. */
void reorder_times_out(Test &t)
{
	auto own = make_link();
	WEFT_ASSERT_OK(t, own);
	Link &l = *own.value();
	WEFT_ASSERT_OK(t, l.faults().set_hold_ms(FaultKind::Reorder, 5));
	l.faults().set_count(FaultKind::Reorder, 1);
	WEFT_ASSERT_OK(t, send(l.tx.port_, 1, 1));
	wait_for(l.rx, 1, 1000);
	WEFT_EXPECT_EQ(t, l.rx.count(), size_t(1));
	WEFT_EXPECT_EQ(t, l.faults().held(), 0u);
}

void delay_holds(Test &t)
{
	auto own = make_link();
	WEFT_ASSERT_OK(t, own);
	Link &l = *own.value();
	WEFT_ASSERT_OK(t, l.faults().set_hold_ms(FaultKind::Delay, 50));
	l.faults().set_count(FaultKind::Delay, 2);
	uint64_t start = weft_jiffies();
	WEFT_ASSERT_OK(t, send(l.tx.port_, 1, 3));
	/* The undelayed third is there at once. */
	WEFT_EXPECT_EQ(t, l.rx.count(), size_t(1));
	WEFT_EXPECT_EQ(t, l.faults().held(), 2u);
	wait_for(l.rx, 3, 1000);
	WEFT_EXPECT_EQ(t, l.rx.count(), size_t(3));
	WEFT_EXPECT_GE(t, weft_jiffies() - start, uint64_t(weft_msecs_to_jiffies(50)));
	static constexpr uint32_t want[] = {3, 1, 2};
	expect_psns(t, l.rx, want);
}

/* Cutting the cable frees what it holds (kmemleak and KASAN watch). */
void cut_frees_held(Test &t)
{
	auto own = make_link();
	WEFT_ASSERT_OK(t, own);
	Link &l = *own.value();
	WEFT_ASSERT_OK(t, l.faults().set_hold_ms(FaultKind::Delay, max_hold_ms));
	WEFT_ASSERT_OK(t, l.faults().set_hold_ms(FaultKind::Reorder, max_hold_ms));
	l.faults().set_count(FaultKind::Delay, 3);
	l.faults().set_count(FaultKind::Reorder, 1);
	WEFT_ASSERT_OK(t, send(l.tx.port_, 1, 4));
	WEFT_EXPECT_EQ(t, l.faults().held(), 4u);
	Fabric::get().disconnect(l.rx.port_);
	WEFT_EXPECT_EQ(t, l.faults().held(), 0u);
	WEFT_EXPECT_EQ(t, l.rx.count(), size_t(0));
	WEFT_EXPECT_TRUE(t, l.tx.port_.state.load(Order::Relaxed) == verbs::PortState::Down);
}

/* Every corruption is caught by a CRC, whichever bit it hit. */
void corrupt_always_detected(Test &t)
{
	auto own = make_link();
	WEFT_ASSERT_OK(t, own);
	Link &l = *own.value();
	WEFT_ASSERT_OK(t, l.faults().set_probability(FaultKind::Corrupt, ppm_all));
	constexpr uint32_t n = 300;
	WEFT_ASSERT_OK(t, send(l.tx.port_, 0, n));
	WEFT_EXPECT_EQ(t, l.faults().injected(FaultKind::Corrupt), uint64_t(n));
	uint32_t detected = 0;
	while (Own<PacketBuf> b = l.rx.take()) {
		WEFT_EXPECT_TRUE(t, b->sealed);
		auto c = check_crcs(b->bytes());
		detected += !c || c.value() != CrcCheck::Ok;
	}
	WEFT_EXPECT_EQ(t, detected, n);
}

/* A real CA port drops and counts it (PortRcvErrors), and so does a switch port. */
void corrupt_counted_by_receivers(Test &t)
{
	auto h = Hca::create(1);
	WEFT_ASSERT_OK(t, h);
	auto sw = Switch::create(2);
	if (!sw) {
		h.value()->put();
		WEFT_ASSERT_OK(t, sw);
	}
	Hca &hca = *h.value();
	Switch &s = *sw.value();
	auto link = make_own<Link>(Gfp::Sleep);
	if (!link) {
		h.value()->put();
		sw.value()->put();
		WEFT_ASSERT_OK(t, link);
	}
	Sink &tx1 = link.value()->tx, &tx2 = link.value()->rx;
	Fabric &f = Fabric::get();
	f.add(tx1);
	f.add(tx2);
	f.add(hca);
	f.add(s);
	bool ok = f.connect(tx1.port_, *hca.port(1)) && f.connect(tx2.port_, *s.port(1));
	WEFT_EXPECT_TRUE(t, ok);
	if (ok) {
		/* Receivers as autoconfiguration would leave them, without touching the default subnet. */
		hca.port(1)->lid.store(0x12, Order::Relaxed);
		hca.port(1)->state.store(verbs::PortState::Active, Order::Relaxed);
		s.port(1)->state.store(verbs::PortState::Active, Order::Relaxed);
		tx1.port_.faults().set_count(FaultKind::Corrupt, 20);
		tx2.port_.faults().set_count(FaultKind::Corrupt, 20);
		for (uint32_t i = 0; i < 20; i++) {
			auto a = packet(i), b = packet(i);
			WEFT_ASSERT_OK(t, a);
			WEFT_ASSERT_OK(t, b);
			tx1.port_.transmit(a.take());
			tx2.port_.transmit(b.take());
		}
		WEFT_EXPECT_EQ(t, hca.port(1)->counters.rcv_errors.load(Order::Relaxed), uint64_t(20));
		WEFT_EXPECT_EQ(t, hca.port(1)->counters.no_dest_qp.load(Order::Relaxed), uint64_t(0));
		WEFT_EXPECT_EQ(t, s.port(1)->counters.rcv_errors.load(Order::Relaxed), uint64_t(20));
	}
	f.remove(hca);
	f.remove(s);
	hca.put();
	s.put();
}

} // namespace

WEFT_TEST_SUITE(weft_hca_faults, WEFT_CASE(count_is_exact), WEFT_CASE(probability_bounds),
		WEFT_CASE(knobs_validate), WEFT_CASE(drop_count), WEFT_CASE(drop_all),
		WEFT_CASE(duplicate_count), WEFT_CASE(reorder_one), WEFT_CASE(reorder_times_out),
		WEFT_CASE(delay_holds), WEFT_CASE(cut_frees_held), WEFT_CASE(corrupt_always_detected),
		WEFT_CASE(corrupt_counted_by_receivers));
