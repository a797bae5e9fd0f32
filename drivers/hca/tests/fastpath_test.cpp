// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the in-host fast path.  Payloads travel by reference and are
 * copied once, from the sender's memory into the receiver's, unless
 * something observes or holds the packet; engines run inline in the
 * poster's context, so completion handlers and async events must not run
 * there (the poster may hold its own locks); a QP whose CQ overruns goes
 * to Error with a QP fatal event.
 */
#include <weft/log.h>
#include <weft/test.h>
#include <weft/verbs/test_pair.h>

#include "../qp.h"

using namespace weft;
using namespace weft::verbs;
using namespace weft::verbs::testing;
using weft::test::Test;

namespace {

uint64_t materialized()
{
	return hca::Fabric::get().materialized.load(Order::Relaxed);
}

Result<void> post(Side &s, WrOpcode op, const void *local, uint32_t len, uint64_t remote, uint32_t rkey)
{
	Sge sg{reinterpret_cast<uint64_t>(local), len, s.mr->lkey};
	SendWr wr;
	wr.opcode = op;
	wr.sg = Span<const Sge>(&sg, 1);
	wr.rdma.remote_addr = remote;
	wr.rdma.rkey = rkey;
	return s.qp->post_send(wr);
}

Result<void> post_recv(Side &s, void *buf, uint32_t len)
{
	Sge sg{reinterpret_cast<uint64_t>(buf), len, s.mr->lkey};
	RecvWr r;
	r.sg = Span<const Sge>(&sg, 1);
	return s.qp->post_recv(r);
}

void expect_ok(Test &t, Result<Wc> r)
{
	if (WEFT_EXPECT_OK(t, r))
		WEFT_EXPECT_EQ(t, static_cast<int>(r.value().status), static_cast<int>(WcStatus::Success));
}

/*
 * One WRITE, READ and SEND of 65 packets each; the packets they cost in
 * @xmit and @rcv, and the payloads materialized in @copies.  The data must
 * arrive whole every time.
 */
void copy_round(Test &t, Pair &c, Mr *rmr, Buf &src, Buf &mid, Buf &back, uint32_t len,
		uint64_t &xmit, uint64_t &rcv, uint64_t &copies)
{
	hca::PortCounters &pc = static_cast<hca::Hca &>(*c.a.dev).port(1)->counters;
	__builtin_memset(mid.p, 0, len);
	__builtin_memset(back.p, 0, len);
	uint64_t xmit0 = pc.xmit_packets.load(Order::Relaxed), rcv0 = pc.rcv_packets.load(Order::Relaxed);
	uint64_t before = materialized();
	WEFT_ASSERT_OK(t, post(c.a, WrOpcode::RdmaWrite, src.p, len, reinterpret_cast<uint64_t>(mid.p), rmr->rkey));
	expect_ok(t, wait_wc(c.a.cq));
	WEFT_ASSERT_OK(t, post(c.a, WrOpcode::RdmaRead, back.p, len, reinterpret_cast<uint64_t>(mid.p), rmr->rkey));
	expect_ok(t, wait_wc(c.a.cq));
	Buf rcvbuf(len);
	WEFT_ASSERT_OK(t, post_recv(c.b, rcvbuf.p, len));
	WEFT_ASSERT_OK(t, post(c.a, WrOpcode::Send, src.p, len, 0, 0));
	expect_ok(t, wait_wc(c.a.cq));
	expect_ok(t, wait_wc(c.b.cq));
	copies = materialized() - before;
	xmit = pc.xmit_packets.load(Order::Relaxed) - xmit0;
	rcv = pc.rcv_packets.load(Order::Relaxed) - rcv0;
	WEFT_EXPECT_EQ(t, __builtin_memcmp(src.p, mid.p, len), 0);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(src.p, back.p, len), 0);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(src.p, rcvbuf.p, len), 0);
}

/*
 * Multi-packet WRITE, READ and SEND with nobody watching: no packet gets
 * its payload copied in.  The fast path is a try (an engine busy on the
 * other CPU, or a retransmission from the timer, takes the slow path, as
 * it must), and a loaded CI host preempts the test anywhere: so up to 8
 * rounds, of which one must go through with no copy at all, and that
 * round costs exactly the packets IBA says.  Never a duration.
 */
void one_copy_in_host(Test &t)
{
	Pair c;
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M1024));
	constexpr uint32_t len = 64 * 1024 + 5; /* 65 packets */
	Buf src(len), mid(len), back(len);
	src.pattern(9);
	auto reg = c.b.ctx->reg_kernel_mr(c.b.pd, mid.p, len,
					  access::local_write | access::remote_write | access::remote_read);
	WEFT_ASSERT_OK(t, reg);
	uint64_t xmit = 0, rcv = 0, copies = 1;
	for (int round = 0; round < 8 && copies; round++) {
		copy_round(t, c, reg.value(), src, mid, back, len, xmit, rcv, copies);
		if (copies) {
			char msg[80];
			format(msg, sizeof(msg), "round %d: %llu payloads copied (slow path taken)", round,
			       static_cast<unsigned long long>(copies));
			t.note(msg);
		}
	}
	WEFT_EXPECT_EQ(t, copies, 0ull);
	/*
	 * Bursts count as the packets they stand for: 65 for the WRITE, one
	 * READ request, 65 for the SEND out; ACKs at PSN 63 and 64 of each
	 * of the WRITE and SEND (IBA 9.7.2) and 65 read responses in.
	 */
	WEFT_EXPECT_EQ(t, xmit, 131ull);
	WEFT_EXPECT_EQ(t, rcv, 69ull);
}

/* A fault on the wire needs the bytes: that packet is materialized, and the data still arrives whole. */
void observed_packets_are_materialized(Test &t)
{
	Pair c;
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M1024));
	constexpr uint32_t len = 8 * 1024;
	Buf src(len), dst(len);
	src.pattern(4);
	__builtin_memset(dst.p, 0, len);
	auto reg = c.b.ctx->reg_kernel_mr(c.b.pd, dst.p, len, access::local_write | access::remote_write);
	WEFT_ASSERT_OK(t, reg);
	hca::Faults &f = static_cast<hca::Hca &>(*c.a.dev).port(1)->faults();
	uint64_t dups = f.injected(hca::FaultKind::Duplicate);
	f.set_count(hca::FaultKind::Duplicate, 1);
	uint64_t before = materialized();
	WEFT_ASSERT_OK(t, post(c.a, WrOpcode::RdmaWrite, src.p, len, reinterpret_cast<uint64_t>(dst.p),
			       reg.value()->rkey));
	expect_ok(t, wait_wc(c.a.cq));
	f.clear();
	WEFT_EXPECT_GE(t, materialized() - before, 1ull);
	WEFT_EXPECT_EQ(t, f.injected(hca::FaultKind::Duplicate) - dups, 1ull);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(src.p, dst.p, len), 0);
}

uint64_t burst_packets()
{
	return hca::Fabric::get().burst_packets.load(Order::Relaxed);
}

/*
 * A plain SEND goes as one packet step, FIRST to a short LAST (burst_at);
 * it counts as its real packets, words included, and taken apart (a fault
 * on the wire) its packets carry the right opcodes and lengths: the
 * receiver parses each (PktLen, PadCnt) and takes the message whole, with
 * nothing dropped and nothing sent again.
 */
void send_is_one_burst(Test &t)
{
	Pair c;
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M1024));
	constexpr uint32_t len = 5 * 1024 + 5; /* five full packets and five bytes */
	Buf src(len), rcv(len);
	src.pattern(3);
	hca::PortCounters &pc = static_cast<hca::Hca &>(*c.a.dev).port(1)->counters;
	for (int round = 0; round < 2; round++) {
		hca::Faults &f = static_cast<hca::Hca &>(*c.a.dev).port(1)->faults();
		if (round == 1)
			f.set_count(hca::FaultKind::Duplicate, 1);
		__builtin_memset(rcv.p, 0, len);
		hca::PortCounters &pb = static_cast<hca::Hca &>(*c.b.dev).port(1)->counters;
		const uint64_t xmit0 = pc.xmit_packets.load(Order::Relaxed), words0 = pc.xmit_words.load(Order::Relaxed);
		const uint64_t burst0 = burst_packets(), mat0 = materialized();
		const uint64_t errors0 = pb.rcv_errors.load(Order::Relaxed);
		WEFT_ASSERT_OK(t, post_recv(c.b, rcv.p, len));
		WEFT_ASSERT_OK(t, post(c.a, WrOpcode::Send, src.p, len, 0, 0));
		expect_ok(t, wait_wc(c.a.cq));
		auto wc = wait_wc(c.b.cq);
		f.clear();
		if (WEFT_EXPECT_OK(t, wc)) {
			WEFT_EXPECT_EQ(t, static_cast<int>(wc.value().status), static_cast<int>(WcStatus::Success));
			WEFT_EXPECT_EQ(t, wc.value().byte_len, len);
		}
		WEFT_EXPECT_EQ(t, __builtin_memcmp(src.p, rcv.p, len), 0);
		WEFT_EXPECT_EQ(t, burst_packets() - burst0, 6ull);
		WEFT_EXPECT_EQ(t, pc.xmit_packets.load(Order::Relaxed) - xmit0, 6ull);
		WEFT_EXPECT_EQ(t, pb.rcv_errors.load(Order::Relaxed) - errors0, 0ull);
		if (round == 0) {
			/* IBA 7.7.8: LRH 8 + BTH 12 + payload padded to 4 + ICRC 4, in words. */
			WEFT_EXPECT_EQ(t, pc.xmit_words.load(Order::Relaxed) - words0, 5ull * (1048 / 4) + (32 / 4));
			WEFT_EXPECT_EQ(t, materialized() - mat0, 0ull);
		} else {
			WEFT_EXPECT_GE(t, materialized() - mat0, 6ull);
		}
	}
}

/*
 * The poster may hold its own locks across post_send, and its completion
 * handler may take them: the handler must run later, from another thread,
 * never inside post_send (where the engine now runs).
 */
struct HandlerProbe {
	Atomic<const void *> poster{nullptr};
	Atomic<int> calls{0}, in_poster{0};
};

void probe_handler(Cq &cq, void *arg)
{
	auto *p = static_cast<HandlerProbe *>(arg);
	if (weft_current_task() == p->poster.load(Order::Relaxed))
		p->in_poster.fetch_add(1, Order::Relaxed);
	p->calls.fetch_add(1, Order::Relaxed);
	(void)cq.req_notify(false);
}

void handlers_never_run_inside_post(Test &t)
{
	auto fx = make_own<HandlerProbe>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, fx);
	HandlerProbe &probe = *fx.value();
	Pair c;
	WEFT_ASSERT_OK(t, c.a.open("weft0", QpType::Rc, access::all & ~access::mw_bind));
	WEFT_ASSERT_OK(t, c.b.open("weft1", QpType::Rc, access::all & ~access::mw_bind));
	/* b's receive completions go to a CQ with the probe as handler. */
	auto cq = c.b.ctx->create_cq(16, probe_handler, &probe);
	WEFT_ASSERT_OK(t, cq);
	WEFT_ASSERT_OK(t, reopen_qp(c.b, cq.value(), nullptr));
	WEFT_ASSERT_OK(t, to_rts(c.a, c.b, iba::Mtu::M1024, 7));
	WEFT_ASSERT_OK(t, to_rts(c.b, c.a, iba::Mtu::M1024, 7));
	static uint8_t msg[64], rbuf[4][64];
	for (auto &r : rbuf)
		WEFT_ASSERT_OK(t, post_recv(c.b, r, sizeof(r)));
	(void)cq.value()->req_notify(false);
	probe.poster.store(weft_current_task(), Order::Relaxed);
	for (int i = 0; i < 4; i++) {
		WEFT_ASSERT_OK(t, post(c.a, WrOpcode::Send, msg, sizeof(msg), 0, 0));
		expect_ok(t, wait_wc(c.a.cq));
	}
	Wc wc[4];
	size_t got = 0;
	for (int i = 0; i < 5000 && got < 4; i++) {
		got += cq.value()->poll(Span<Wc>(wc, 4));
		weft_msleep(1);
	}
	WEFT_EXPECT_EQ(t, got, size_t(4));
	for (int i = 0; i < 5000 && probe.calls.load(Order::Relaxed) == 0; i++)
		weft_msleep(1);
	WEFT_EXPECT_GE(t, probe.calls.load(Order::Relaxed), 1);
	WEFT_EXPECT_EQ(t, probe.in_poster.load(Order::Relaxed), 0);
	WEFT_EXPECT_OK(t, c.b.ctx->destroy_qp(c.b.qp));
	c.b.qp = nullptr;
	WEFT_EXPECT_OK(t, c.b.ctx->destroy_cq(cq.value()));
}

/*
 * The responder runs inline in the requester's transmit, and its ACK is
 * taken in the same context before post_send returns: an RC SEND is
 * complete at once, with no worker woken per message (IPoIB's connected
 * mode sends one 64 KiB message per packet).
 */
void acks_taken_inside_post(Test &t)
{
	Pair c;
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M1024));
	static uint8_t msg[2048], rbuf[8][2048];
	for (auto &r : rbuf)
		WEFT_ASSERT_OK(t, post_recv(c.b, r, sizeof(r)));
	for (int i = 0; i < 8; i++) {
		msg[0] = static_cast<uint8_t>(i);
		WEFT_ASSERT_OK(t, post(c.a, WrOpcode::Send, msg, sizeof(msg), 0, 0));
		Wc wc;
		/* One look, no waiting. */
		WEFT_ASSERT_EQ(t, c.a.cq->poll(Span<Wc>(&wc, 1)), size_t(1));
		WEFT_EXPECT_EQ(t, static_cast<int>(wc.status), static_cast<int>(WcStatus::Success));
		WEFT_ASSERT_EQ(t, c.b.cq->poll(Span<Wc>(&wc, 1)), size_t(1));
		WEFT_EXPECT_EQ(t, wc.byte_len, uint32_t(sizeof(msg)));
		WEFT_EXPECT_EQ(t, rbuf[i][0], static_cast<uint8_t>(i));
	}
}

struct FatalFixture {
	Pair c;
	Events qp_ev, dev_ev;
};

/*
 * IBA 11.6.3.1: a receive completion that cannot be reported (the CQ
 * overran) is a local work queue catastrophic error: QP fatal, the QP in
 * Error, the CQ's own CqErr, and the message is not acknowledged.
 */
void qp_fatal_on_cq_overrun(Test &t)
{
	auto fx = make_own<FatalFixture>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, fx);
	FatalFixture &f = *fx.value();
	Pair &c = f.c;
	WEFT_ASSERT_OK(t, c.a.open("weft0", QpType::Rc, access::local_write));
	WEFT_ASSERT_OK(t, c.b.open("weft1", QpType::Rc, access::local_write));
	c.b.dev->add_event_handler(f.dev_ev);
	auto small = c.b.ctx->create_cq(1, nullptr, nullptr);
	WEFT_ASSERT_OK(t, small);
	WEFT_ASSERT_OK(t, reopen_qp(c.b, small.value(), &f.qp_ev));
	/* Short ACK timeout, one retry: the unacknowledged message fails fast. */
	WEFT_ASSERT_OK(t, to_rts(c.a, c.b, iba::Mtu::M1024, 7, 8, 1));
	WEFT_ASSERT_OK(t, to_rts(c.b, c.a, iba::Mtu::M1024, 7));
	static uint8_t msg[16], rbuf[3][16];
	for (auto &r : rbuf)
		WEFT_ASSERT_OK(t, post_recv(c.b, r, sizeof(r)));
	WEFT_ASSERT_OK(t, post(c.a, WrOpcode::Send, msg, sizeof(msg), 0, 0));
	expect_ok(t, wait_wc(c.a.cq)); /* fills the one-entry CQ */
	WEFT_ASSERT_OK(t, post(c.a, WrOpcode::Send, msg, sizeof(msg), 0, 0));
	auto second = wait_wc(c.a.cq);
	WEFT_ASSERT_OK(t, second);
	WEFT_EXPECT_EQ(t, static_cast<int>(second.value().status), static_cast<int>(WcStatus::RetryExcErr));
	WEFT_EXPECT_TRUE(t, f.qp_ev.wait(EventType::QpFatal, 1));
	WEFT_EXPECT_EQ(t, f.qp_ev.seen(EventType::QpFatal), 1);
	WEFT_EXPECT_TRUE(t, f.dev_ev.wait(EventType::CqErr, 1));
	WEFT_EXPECT_EQ(t, f.dev_ev.seen(EventType::CqErr), 1);
	WEFT_EXPECT_EQ(t, static_cast<int>(c.b.qp->state()), static_cast<int>(QpState::Err));
	c.b.dev->remove_event_handler(f.dev_ev);
	WEFT_EXPECT_OK(t, c.b.ctx->destroy_qp(c.b.qp));
	c.b.qp = nullptr;
	WEFT_EXPECT_OK(t, c.b.ctx->destroy_cq(small.value()));
}

} // namespace

WEFT_TEST_SUITE(weft_hca_fastpath, WEFT_CASE(one_copy_in_host), WEFT_CASE(observed_packets_are_materialized),
		WEFT_CASE(send_is_one_burst),
		WEFT_CASE(handlers_never_run_inside_post), WEFT_CASE(acks_taken_inside_post),
		WEFT_CASE(qp_fatal_on_cq_overrun));
