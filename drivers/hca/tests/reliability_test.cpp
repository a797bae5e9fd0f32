// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: RC reliability on a faulty fabric (IBA 9.7).  With drops,
 * duplicates, reordering and corruption on both directions of the path,
 * every message arrives exactly once, in order, byte-exact, and every send
 * completes successfully; with a dead link, retries run out into
 * RetryExcErr (IBA 9.7.6.1.3).
 */
#include <weft/test.h>
#include <weft/verbs/test_stream.h>

#include "../qp.h"

using namespace weft;
using namespace weft::verbs;
using namespace weft::verbs::testing;
using weft::hca::FaultKind;
using weft::test::Test;

namespace {

hca::Faults &faults_of(Side &s)
{
	return static_cast<hca::Hca &>(*s.dev).port(1)->faults();
}

/* Both directions: what each HCA transmits toward the switch. */
Result<void> set_both(Pair &c, FaultKind k, uint32_t ppm)
{
	WEFT_TRY(faults_of(c.a).set_probability(k, ppm));
	return faults_of(c.b).set_probability(k, ppm);
}

struct Mix {
	uint32_t drop, duplicate, reorder, corrupt; /* parts per million */
};

void run_faulty(Test &t, const Mix &mix, uint32_t messages)
{
	auto pair = make_own<Pair>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, pair);
	Pair &c = *pair.value();
	/* ~4 ms local ACK timeout, 7 retries. */
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M1024, 7, 10, 7));
	WEFT_ASSERT_OK(t, set_both(c, FaultKind::Drop, mix.drop));
	WEFT_ASSERT_OK(t, set_both(c, FaultKind::Duplicate, mix.duplicate));
	WEFT_ASSERT_OK(t, set_both(c, FaultKind::Reorder, mix.reorder));
	WEFT_ASSERT_OK(t, set_both(c, FaultKind::Corrupt, mix.corrupt));
	StreamResult r;
	auto run = run_stream(c, messages, r);
	if (!run)
		static_cast<hca::SoftQp *>(c.a.qp)->dump("stream stopped");
	WEFT_EXPECT_OK(t, run);
	WEFT_EXPECT_EQ(t, int(r.failed), int(WcStatus::Success));
	WEFT_EXPECT_EQ(t, r.received, messages);
	WEFT_EXPECT_EQ(t, r.acked, messages);
	WEFT_EXPECT_EQ(t, r.bad, 0u);
	WEFT_EXPECT_EQ(t, r.extra, 0u);
	hca::Faults *both[] = {&faults_of(c.a), &faults_of(c.b)};
	for (hca::Faults *f : both) {
		/* The run really was faulty. */
		if (mix.drop)
			WEFT_EXPECT_GT(t, f->injected(FaultKind::Drop), 0ull);
		if (mix.duplicate)
			WEFT_EXPECT_GT(t, f->injected(FaultKind::Duplicate), 0ull);
		if (mix.reorder)
			WEFT_EXPECT_GT(t, f->injected(FaultKind::Reorder), 0ull);
		if (mix.corrupt)
			WEFT_EXPECT_GT(t, f->injected(FaultKind::Corrupt), 0ull);
		f->clear();
	}
}

void drops(Test &t) { run_faulty(t, Mix{50000, 0, 0, 0}, 400); }
void duplicates(Test &t) { run_faulty(t, Mix{0, 50000, 0, 0}, 400); }
void reordering(Test &t) { run_faulty(t, Mix{0, 0, 50000, 0}, 400); }
void corruption(Test &t) { run_faulty(t, Mix{0, 0, 0, 50000}, 400); }
/* All at once, longer: exactly once, in order. */
void everything_at_once(Test &t) { run_faulty(t, Mix{50000, 30000, 30000, 10000}, 1500); }

/* A link that loses everything: retry_cnt retries, then RetryExcErr and a flush. */
void retries_run_out(Test &t)
{
	auto pair = make_own<Pair>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, pair);
	Pair &c = *pair.value();
	/* ~1 ms local ACK timeout, 2 retries. */
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M1024, 7, 8, 2));
	WEFT_ASSERT_OK(t, faults_of(c.a).set_probability(FaultKind::Drop, hca::ppm_all));
	static uint8_t buf[64];
	Sge sg{reinterpret_cast<uint64_t>(buf), sizeof(buf), c.a.mr->lkey};
	SendWr wr;
	wr.opcode = WrOpcode::RdmaWrite;
	wr.sg = Span<const Sge>(&sg, 1);
	wr.rdma.remote_addr = reinterpret_cast<uint64_t>(buf);
	wr.rdma.rkey = c.b.mr->rkey;
	WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
	WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
	auto w1 = wait_wc(c.a.cq), w2 = wait_wc(c.a.cq);
	WEFT_ASSERT_OK(t, w1);
	WEFT_ASSERT_OK(t, w2);
	WEFT_EXPECT_EQ(t, int(w1.value().status), int(WcStatus::RetryExcErr));
	WEFT_EXPECT_EQ(t, int(w2.value().status), int(WcStatus::WrFlushErr));
	/* First transmission plus two retries of the first WQE at least. */
	WEFT_EXPECT_GE(t, faults_of(c.a).injected(FaultKind::Drop), 3ull);
	faults_of(c.a).clear();
}

} // namespace

WEFT_TEST_SUITE(weft_hca_reliability, WEFT_CASE(drops), WEFT_CASE(duplicates), WEFT_CASE(reordering),
		WEFT_CASE(corruption), WEFT_CASE(everything_at_once), WEFT_CASE(retries_run_out));
