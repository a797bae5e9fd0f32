// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the CM under repetition and concurrency, on the debug kernel
 * (KASAN, lockdep, kmemleak after the run): many connect / transfer /
 * disconnect cycles on the same two QPs, and 64 connections set up,
 * used and released at once.  Every Id is gone afterwards, counted once
 * no destroyed Id lingers (fixture.h settled_ids()), also when a previous
 * test's Ids are still in time-wait as this one starts.
 */
#include <weft/log.h>

#include "fixture.h"

using namespace weft;
using namespace weft::cm;
using namespace weft::cm::testing;
using weft::test::Test;

namespace {

const Logger tlog("weft_cm_test");
constexpr int cycles = 200;
constexpr int concurrent = 64;

Result<void> to_reset(Side &s)
{
	verbs::QpAttr a;
	a.state = verbs::QpState::Reset;
	return s.ctx->modify_qp(s.qp, a, verbs::qp_attr::state);
}

/* @n connect / transfer / disconnect cycles on the Pair's QPs, a new active Id for each. */
void run_cycles(Test &t, Pair &x, int n)
{
	for (int i = 0; i < n; i++) {
		WEFT_ASSERT_OK(t, connect(*x.active, x.param()));
		WEFT_ASSERT_TRUE(t, x.ra.wait(EventType::Established, i + 1));
		WEFT_ASSERT_TRUE(t, x.rb.wait(EventType::Established, i + 1));
		WEFT_ASSERT_OK(t, x.send_one(0x1000 + i));
		WEFT_ASSERT_OK(t, disconnect(*x.active));
		WEFT_ASSERT_TRUE(t, x.ra.wait(EventType::Disconnected, i + 1));
		WEFT_ASSERT_TRUE(t, x.rb.wait(EventType::Disconnected, i + 1));
		/* The QPs are reused, so only once time-wait is over (IBA 12.9.8.1). */
		WEFT_ASSERT_TRUE(t, x.ra.wait(EventType::TimewaitExit, i + 1));
		WEFT_ASSERT_TRUE(t, x.rb.wait(EventType::TimewaitExit, i + 1));
		/* A new Id for each connection, as a ULP reconnecting does. */
		destroy(x.active);
		x.active = nullptr;
		destroy(x.rb.passive);
		x.rb.npassive = 0;
		auto id = create_id(*x.a.dev, x.ra, nullptr);
		WEFT_ASSERT_OK(t, id);
		x.active = id.value();
		WEFT_ASSERT_OK(t, to_reset(x.a));
		WEFT_ASSERT_OK(t, to_reset(x.b));
	}
	WEFT_EXPECT_EQ(t, x.ra.seen(EventType::Unreachable) + x.ra.seen(EventType::Rejected), 0);
}

void repeated_cycles(Test &t)
{
	uint32_t base = settled_ids();
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	run_cycles(t, *px.value(), cycles);
	px.value().reset();
	WEFT_EXPECT_EQ(t, settled_ids(), base);
}

/*
 * What a loaded host leaves between tests: the previous test's released
 * connection still in time-wait when this one starts (here for seconds:
 * an ACK timeout of 4.096 us * 2^20 makes it 4.3 s on the active side and
 * 8.6 s on the passive, IBA 12.9.8.1).  Those Ids go during the test (200
 * cycles outlast them; here the test waits for them), so a count taken
 * before they went never comes back.
 */
void counts_across_lingering_ids(Test &t)
{
	{
		auto px = ready();
		WEFT_ASSERT_OK(t, px);
		Pair &x = *px.value();
		ConnectParam p = x.param();
		p.ack_timeout = 20;
		WEFT_ASSERT_OK(t, connect(*x.active, p));
		WEFT_ASSERT_TRUE(t, x.ra.wait(EventType::Established));
		WEFT_ASSERT_TRUE(t, x.rb.wait(EventType::Established));
		WEFT_ASSERT_OK(t, disconnect(*x.active));
		WEFT_ASSERT_TRUE(t, x.ra.wait(EventType::Disconnected));
		WEFT_ASSERT_TRUE(t, x.rb.wait(EventType::Disconnected));
	} /* destroyed in time-wait: the CM keeps both Ids until it is over */
	tlog.info("counts_across_lingering_ids: %u ids alive, %u lingering", stats().ids, stats().lingering);
	const uint32_t base = settled_ids();
	WEFT_ASSERT_OK(t, settle(settle_quiet_ms));
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	run_cycles(t, *px.value(), 3);
	px.value().reset();
	WEFT_EXPECT_EQ(t, settled_ids(), base);
}

void concurrent_connections(Test &t)
{
	uint32_t base = settled_ids();
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	Pair &x = *px.value();
	struct Conns {
		verbs::Qp *qa[concurrent], *qb[concurrent];
		Id *ids[concurrent];
		uint32_t in[concurrent], out[concurrent];
		~Conns() /* before the Pair closes the contexts, also when a check fails */
		{
			for (Id *id : ids)
				if (id)
					destroy(id);
		}
	};
	auto cs = make_own<Conns>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, cs);
	Conns &c = *cs.value();
	auto &qa = c.qa, &qb = c.qb;
	auto &ids = c.ids;
	auto &in = c.in, &out = c.out;
	verbs::QpInitAttr init;
	init.type = verbs::QpType::Rc;
	init.send_cq = init.recv_cq = x.a.cq;
	init.cap.max_send_wr = init.cap.max_recv_wr = 2;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	init.sq_sig_all = true;
	for (int i = 0; i < concurrent; i++) {
		init.send_cq = init.recv_cq = x.a.cq;
		auto a = x.a.ctx->create_qp(x.a.pd, init);
		init.send_cq = init.recv_cq = x.b.cq;
		auto b = x.b.ctx->create_qp(x.b.pd, init);
		WEFT_ASSERT_OK(t, a);
		WEFT_ASSERT_OK(t, b);
		qa[i] = a.value();
		qb[i] = x.rb.accept_qps[i] = b.value();
	}
	for (int i = 0; i < concurrent; i++) {
		auto id = create_id(*x.a.dev, x.ra, nullptr);
		WEFT_ASSERT_OK(t, id);
		ids[i] = id.value();
		ConnectParam p = x.param();
		p.qp = qa[i];
		/* 64 REQs at once overrun QP1's receive ring: wait longer and retry more. */
		p.local_cm_response_timeout = p.remote_cm_response_timeout = 16;
		p.max_cm_retries = 15;
		WEFT_ASSERT_OK(t, connect(*ids[i], p));
	}
	bool all = x.ra.wait(EventType::Established, concurrent, 20000) &&
		   x.rb.wait(EventType::Established, concurrent, 20000);
	if (!all) {
		Stats s = stats();
		tlog.info("active %d/%d established, passive %d (%d requests, accept errno %d); CM sent %llu "
		      "received %llu retransmitted %llu dropped %llu",
		      x.ra.seen(EventType::Established), concurrent, x.rb.seen(EventType::Established),
		      x.rb.seen(EventType::Request), x.rb.accept_errno, (unsigned long long)s.sent,
		      (unsigned long long)s.received, (unsigned long long)s.retransmitted,
		      (unsigned long long)s.dropped);
		for (int i = 0; i < x.rb.npassive; i++)
			if (state(*x.rb.passives[i]) != State::Established)
				tlog.info("passive %d: %s", i, state_name(state(*x.rb.passives[i])));
	}
	WEFT_ASSERT_TRUE(t, all);
	WEFT_EXPECT_EQ(t, stats().ids, base + 2 + 2 * concurrent);
	for (int i = 0; i < concurrent; i++) {
		verbs::Sge sg{reinterpret_cast<uint64_t>(&in[i]), sizeof(in[i]), x.b.mr->lkey};
		verbs::RecvWr r;
		r.sg = Span<const verbs::Sge>(&sg, 1);
		WEFT_ASSERT_OK(t, qb[i]->post_recv(r));
	}
	for (int i = 0; i < concurrent; i++) {
		out[i] = 0xc0de0000u + i;
		verbs::Sge sg{reinterpret_cast<uint64_t>(&out[i]), sizeof(out[i]), x.a.mr->lkey};
		verbs::SendWr wr;
		wr.opcode = verbs::WrOpcode::Send;
		wr.sg = Span<const verbs::Sge>(&sg, 1);
		WEFT_ASSERT_OK(t, qa[i]->post_send(wr));
	}
	int ok_a = 0, ok_b = 0;
	for (int n = 0; n < 2 * concurrent; n++) {
		auto wa = verbs::testing::wait_wc(n < concurrent ? x.a.cq : x.b.cq);
		if (!wa)
			break;
		(n < concurrent ? ok_a : ok_b) += wa.value().status == verbs::WcStatus::Success;
	}
	WEFT_EXPECT_EQ(t, ok_a, concurrent);
	WEFT_EXPECT_EQ(t, ok_b, concurrent);
	uint64_t sum = 0, want = 0;
	for (int i = 0; i < concurrent; i++) {
		sum += in[i];
		want += 0xc0de0000u + i;
	}
	WEFT_EXPECT_EQ(t, sum, want); /* each message reached one passive QP */
	for (int i = 0; i < concurrent; i++)
		WEFT_EXPECT_OK(t, disconnect(*ids[i]));
	WEFT_EXPECT_TRUE(t, x.ra.wait(EventType::Disconnected, concurrent, 20000));
	WEFT_EXPECT_TRUE(t, x.rb.wait(EventType::Disconnected, concurrent, 20000));
	for (int i = 0; i < concurrent; i++)
		destroy(exchange(ids[i], nullptr));
	cs.value().reset();
	px.value().reset(); /* passive Ids, listener, then the contexts with their QPs */
	WEFT_EXPECT_EQ(t, settled_ids(), base);
}

} // namespace

WEFT_TEST_SUITE(weft_cm_load, WEFT_CASE(repeated_cycles), WEFT_CASE(counts_across_lingering_ids),
		WEFT_CASE(concurrent_connections));
