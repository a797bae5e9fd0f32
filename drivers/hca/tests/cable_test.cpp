// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: RC QPs across a cable flap on the default subnet.  A cable cut
 * and re-made (and the subnet brought back to ACTIVE by the test-only
 * autoconfigure() in place of an SM) within the retry budget costs
 * nothing: the requester's local ACK timeout resends what was lost
 * (IBA 9.7.6.1.3) and the responder discards what it already has
 * (IBA 9.7.5.1), so every message arrives once, in order; the port's
 * consumers see PortErr and then PortActive (IBA 11.6.3).  A cable that
 * stays down ends in RetryExcErr, a flush and the error state.
 *
 * The cable is always re-made and the subnet left as found (same LIDs,
 * ports ACTIVE), whatever failed: the suites after this one need it.
 */
#include <weft/test.h>
#include <weft/verbs/test_pair.h>

#include "../hca.h"

using namespace weft;
using namespace weft::verbs;
using namespace weft::verbs::testing;
using weft::test::Test;

namespace {

/* The port events of one device, in arrival order. */
struct PortEvents final : EventHandler {
	static constexpr int max = 16;
	Device *dev = nullptr;
	EventType seen[max];
	Atomic<int> count{0};

	void handle(const Event &e) override
	{
		/* Dispatch is serialised by the device's handler mutex. */
		if (e.type != EventType::PortErr && e.type != EventType::PortActive)
			return;
		int i = count.load(Order::Relaxed);
		if (i < max)
			seen[i] = e.type;
		count.store(i + 1, Order::Release);
	}
	int n() const { return count.load(Order::Acquire); }
	void listen(Device &d)
	{
		dev = &d;
		d.add_event_handler(*this);
	}
	~PortEvents()
	{
		if (dev)
			dev->remove_event_handler(*this);
	}
};

hca::Hca &hca_of(Side &s)
{
	return static_cast<hca::Hca &>(*s.dev);
}

/*
 * The cable between an HCA's port 1 and its switch port.  Destruction
 * re-makes it and brings the subnet back to ACTIVE if it is not, then
 * checks both HCAs have the LIDs they had: this runs on every path out of
 * a case, including a failed ASSERT.
 */
struct Cable {
	Test *t = nullptr;
	hca::Port *end = nullptr, *sw = nullptr;
	Device *devs[2] = {};
	uint16_t lids[2] = {};

	Result<void> init(Test &test, Side &cut_side, Side &other)
	{
		t = &test;
		end = hca_of(cut_side).port(1);
		if (!end || !end->peer())
			return Error(err::ENODEV);
		sw = end->peer();
		Side *sides[] = {&cut_side, &other};
		for (int i = 0; i < 2; i++) {
			PortAttr pa;
			WEFT_TRY(sides[i]->dev->query_port(1, pa));
			if (pa.state != PortState::Active)
				return Error(err::EAGAIN);
			devs[i] = sides[i]->dev.get();
			lids[i] = pa.lid;
		}
		return ok();
	}

	void sever() { hca::Fabric::get().disconnect(*end, sw); }
	/* Packets dropped at either end for want of the cable. */
	uint64_t discards() const
	{
		return end->counters.xmit_discards.load(Order::Relaxed) +
		       sw->counters.xmit_discards.load(Order::Relaxed);
	}

	Result<void> restore()
	{
		if (!end->peer())
			WEFT_TRY(hca::Fabric::get().connect(*end, *sw));
		PortAttr pa;
		WEFT_TRY(devs[0]->query_port(1, pa));
		if (pa.state != PortState::Active)
			hca::Fabric::get().autoconfigure();
		return ok();
	}

	~Cable()
	{
		if (!t)
			return;
		WEFT_EXPECT_OK(*t, restore());
		for (int i = 0; i < 2; i++) {
			PortAttr pa;
			if (!WEFT_EXPECT_OK(*t, devs[i]->query_port(1, pa)))
				continue;
			WEFT_EXPECT_EQ(*t, int(pa.state), int(PortState::Active));
			WEFT_EXPECT_EQ(*t, pa.lid, lids[i]);
		}
	}
};

constexpr uint32_t msg_len = 16 << 10, slots = 16, window = 8, messages = 200;

struct Flap {
	Pair c;
	Buf tx{size_t(slots) * msg_len}, rx{size_t(slots) * msg_len};
	PortEvents ev;
	Cable cable; /* last: re-made first, while ev still listens */
};

void fill(uint8_t *p, uint32_t seq)
{
	__builtin_memcpy(p, &seq, 4);
	for (uint32_t i = 4; i < msg_len; i++)
		p[i] = static_cast<uint8_t>(seq * 131 + i * 7 + (i >> 9));
}

bool intact(const uint8_t *p, uint32_t seq)
{
	uint32_t got;
	__builtin_memcpy(&got, p, 4);
	if (got != seq)
		return false;
	for (uint32_t i = 4; i < msg_len; i++)
		if (p[i] != static_cast<uint8_t>(seq * 131 + i * 7 + (i >> 9)))
			return false;
	return true;
}

Result<void> post_slot(Side &s, uint8_t *bufs, uint32_t slot)
{
	return post_recv_one(s, bufs + slot * msg_len, msg_len, slot);
}

Result<void> send_seq(Flap &f, uint32_t seq)
{
	uint8_t *p = f.tx.p + (seq % slots) * msg_len;
	fill(p, seq);
	Sge sg{reinterpret_cast<uint64_t>(p), msg_len, f.c.a.mr->lkey};
	SendWr wr;
	wr.wr_id = seq;
	wr.sg = Span<const Sge>(&sg, 1);
	return f.c.a.qp->post_send(wr);
}

uint64_t link_downed(Side &s)
{
	PortCounterValues v;
	return s.dev->query_counters(1, v) ? v.link_downed : ~0ull;
}

/*
 * A stream of numbered 16 KiB SENDs; after @cut_after have arrived, the
 * cable of the requester's (or the responder's) HCA is cut, and re-made
 * and autoconfigured once a packet has been lost to it (and 20 ms more).
 * Local ACK timeout ~268 ms, 7 retries: about 2 s of budget, far more
 * than the outage.
 */
void stream_across_flap(Test &t, bool cut_requester)
{
	constexpr uint32_t cut_after = 60;
	auto own = make_own<Flap>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, own);
	Flap &f = *own.value();
	Pair &c = f.c;
	WEFT_ASSERT_TRUE(t, f.tx.p && f.rx.p);
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M2048, 7, 16, 7));
	Side &cut_side = cut_requester ? c.a : c.b;
	WEFT_ASSERT_OK(t, f.cable.init(t, cut_side, cut_requester ? c.b : c.a));
	f.ev.listen(*cut_side.dev);
	const uint64_t downed = link_downed(cut_side);
	for (uint32_t i = 0; i < slots; i++)
		WEFT_ASSERT_OK(t, post_slot(c.b, f.rx.p, i));
	uint32_t sent = 0, acked = 0, received = 0, bad = 0;
	bool flapped = false;
	while (received < messages || acked < messages) {
		if (sent < messages && sent - acked < window) {
			WEFT_ASSERT_OK(t, send_seq(f, sent++));
			continue;
		}
		if (!flapped && received >= cut_after) {
			const uint64_t before = f.cable.discards();
			f.cable.sever();
			/*
			 * One message into the cut, beyond the window, so that
			 * something is lost whatever the engines' timing; the
			 * outage lasts until a packet has been dropped, plus 20 ms.
			 */
			if (sent < messages)
				WEFT_ASSERT_OK(t, send_seq(f, sent++));
			for (int i = 0; i < 500 && f.cable.discards() == before; i++)
				weft_msleep(1);
			weft_msleep(20);
			WEFT_EXPECT_GT(t, f.cable.discards(), before);
			WEFT_ASSERT_OK(t, f.cable.restore());
			flapped = true;
		}
		Wc wc;
		if (c.a.cq->poll(Span<Wc>(&wc, 1))) {
			WEFT_ASSERT_EQ(t, int(wc.status), int(WcStatus::Success));
			WEFT_ASSERT_EQ(t, wc.wr_id, uint64_t(acked)); /* in order */
			acked++;
			continue;
		}
		/* Block on whichever side still owes something. */
		Cq *cq = received < sent ? c.b.cq : c.a.cq;
		if (received == sent && acked == sent)
			continue;
		auto r = wait_wc(cq);
		WEFT_ASSERT_OK(t, r);
		WEFT_ASSERT_EQ(t, int(r.value().status), int(WcStatus::Success));
		if (cq == c.a.cq) {
			WEFT_ASSERT_EQ(t, r.value().wr_id, uint64_t(acked));
			acked++;
			continue;
		}
		WEFT_EXPECT_EQ(t, r.value().byte_len, msg_len);
		uint32_t slot = static_cast<uint32_t>(r.value().wr_id);
		/* In order and exactly once: message n is the n-th receive. */
		if (!intact(f.rx.p + slot * msg_len, received))
			bad++;
		received++;
		WEFT_ASSERT_OK(t, post_slot(c.b, f.rx.p, slot));
	}
	WEFT_EXPECT_TRUE(t, flapped);
	WEFT_EXPECT_EQ(t, bad, 0u);
	/* Nothing extra arrives later (no message twice). */
	weft_msleep(100);
	Wc extra;
	WEFT_EXPECT_EQ(t, c.b.cq->poll(Span<Wc>(&extra, 1)), size_t(0));
	WEFT_EXPECT_EQ(t, c.a.cq->poll(Span<Wc>(&extra, 1)), size_t(0));
	WEFT_EXPECT_EQ(t, int(c.a.qp->state()), int(QpState::Rts));
	WEFT_EXPECT_EQ(t, int(c.b.qp->state()), int(QpState::Rts));
	/* IBA 11.6.3: the loss of the link, then its return, in that order. */
	WEFT_EXPECT_EQ(t, f.ev.n(), 2);
	if (f.ev.n() >= 2) {
		WEFT_EXPECT_EQ(t, int(f.ev.seen[0]), int(EventType::PortErr));
		WEFT_EXPECT_EQ(t, int(f.ev.seen[1]), int(EventType::PortActive));
	}
	/* IBA 16.1.3.5 LinkDownedCounter: one more. */
	WEFT_EXPECT_EQ(t, link_downed(cut_side), downed + 1);
}

void flap_requester_cable(Test &t) { stream_across_flap(t, true); }
void flap_responder_cable(Test &t) { stream_across_flap(t, false); }

struct Down {
	Pair c, fresh;
	PortEvents ev;
	Cable cable;
};

/*
 * The cable stays cut: the first WQE's retries run out (RetryExcErr, IBA
 * 9.7.6.1.3), the QP goes to Err and what is queued behind it is flushed
 * (WrFlushErr, IBA 10.3.1, 11.6.2).  Once the cable is back, the subnet
 * works again for new QPs with the LIDs it had.
 */
void cable_stays_down(Test &t)
{
	auto own = make_own<Down>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, own);
	Down &d = *own.value();
	Pair &c = d.c;
	/* ~4 ms local ACK timeout, 3 retries. */
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M1024, 7, 10, 3));
	WEFT_ASSERT_OK(t, d.cable.init(t, c.a, c.b));
	d.ev.listen(*c.a.dev);
	static uint8_t msg[1024], rbuf[1024];
	Sge rsg{reinterpret_cast<uint64_t>(rbuf), sizeof(rbuf), c.b.mr->lkey};
	RecvWr r;
	r.sg = Span<const Sge>(&rsg, 1);
	for (int i = 0; i < 5; i++)
		WEFT_ASSERT_OK(t, c.b.qp->post_recv(r));
	Sge sg{reinterpret_cast<uint64_t>(msg), sizeof(msg), c.a.mr->lkey};
	SendWr wr;
	wr.sg = Span<const Sge>(&sg, 1);
	WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
	auto first = wait_wc(c.a.cq);
	WEFT_ASSERT_OK(t, first);
	WEFT_EXPECT_EQ(t, int(first.value().status), int(WcStatus::Success));
	WEFT_ASSERT_OK(t, wait_wc(c.b.cq));

	d.cable.sever();
	PortAttr pa;
	WEFT_ASSERT_OK(t, c.a.dev->query_port(1, pa));
	WEFT_EXPECT_EQ(t, int(pa.state), int(PortState::Down));
	for (uint64_t id = 1; id <= 4; id++) {
		wr.wr_id = id;
		WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
	}
	for (uint64_t id = 1; id <= 4; id++) {
		auto wc = wait_wc(c.a.cq);
		WEFT_ASSERT_OK(t, wc);
		WEFT_EXPECT_EQ(t, wc.value().wr_id, id);
		WEFT_EXPECT_EQ(t, int(wc.value().status),
			       int(id == 1 ? WcStatus::RetryExcErr : WcStatus::WrFlushErr));
	}
	WEFT_EXPECT_EQ(t, int(c.a.qp->state()), int(QpState::Err));
	Wc none;
	WEFT_EXPECT_EQ(t, c.b.cq->poll(Span<Wc>(&none, 1)), size_t(0));
	WEFT_EXPECT_EQ(t, d.ev.n(), 1);
	if (d.ev.n() >= 1)
		WEFT_EXPECT_EQ(t, int(d.ev.seen[0]), int(EventType::PortErr));

	WEFT_ASSERT_OK(t, d.cable.restore());
	WEFT_EXPECT_EQ(t, d.ev.n(), 2);
	if (d.ev.n() >= 2)
		WEFT_EXPECT_EQ(t, int(d.ev.seen[1]), int(EventType::PortActive));
	/* The dead QP stays dead (IBA 10.3.1: only a Reset leaves Err); new ones work. */
	WEFT_EXPECT_EQ(t, int(c.a.qp->state()), int(QpState::Err));
	WEFT_ASSERT_OK(t, d.fresh.connect(QpType::Rc, iba::Mtu::M1024));
	WEFT_EXPECT_EQ(t, d.fresh.a.lid, c.a.lid);
	WEFT_EXPECT_EQ(t, d.fresh.b.lid, c.b.lid);
	__builtin_memset(rbuf, 0, sizeof(rbuf));
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = static_cast<uint8_t>(i * 5 + 1);
	rsg.lkey = d.fresh.b.mr->lkey;
	WEFT_ASSERT_OK(t, d.fresh.b.qp->post_recv(r));
	sg.lkey = d.fresh.a.mr->lkey;
	wr.wr_id = 9;
	WEFT_ASSERT_OK(t, d.fresh.a.qp->post_send(wr));
	auto s = wait_wc(d.fresh.a.cq);
	WEFT_ASSERT_OK(t, s);
	WEFT_EXPECT_EQ(t, int(s.value().status), int(WcStatus::Success));
	auto rc = wait_wc(d.fresh.b.cq);
	WEFT_ASSERT_OK(t, rc);
	WEFT_EXPECT_EQ(t, int(rc.value().status), int(WcStatus::Success));
	WEFT_EXPECT_EQ(t, __builtin_memcmp(rbuf, msg, sizeof(msg)), 0);
}

} // namespace

WEFT_TEST_SUITE(weft_hca_cable, WEFT_CASE(flap_requester_cable), WEFT_CASE(flap_responder_cable),
		WEFT_CASE(cable_stays_down));
