// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: verbs semantics on the soft HCA: shared receive queues and their
 * limit event, CQ notification (next vs solicited) and where its handler
 * runs, CQ overflow as an async error, CQ resize, and the async events of a QP's life.
 */
#include <weft/test.h>
#include <weft/verbs/test_pair.h>

using namespace weft;
using namespace weft::verbs;
using namespace weft::verbs::testing;
using weft::test::Test;

namespace {

bool wait_for(const Atomic<int> &v, int want)
{
	for (int i = 0; i < 5000 && v.load(Order::Relaxed) < want; i++)
		weft_msleep(1);
	return v.load(Order::Relaxed) >= want;
}

Result<void> send_bytes(Side &s, const void *buf, uint32_t len, bool solicited)
{
	Sge sg{reinterpret_cast<uint64_t>(buf), len, s.mr->lkey};
	SendWr wr;
	wr.opcode = WrOpcode::Send;
	wr.sg = Span<const Sge>(&sg, 1);
	wr.send_flags = solicited ? send_flag::solicited : 0;
	return s.qp->post_send(wr);
}

/* SRQ: two QPs draw from one queue in posting order; the limit event fires once. */
struct SrqFixture {
	Pair c1, c2;
	Events ev;
	Side b1, b2;
};

void srq_shared_by_two_qps(Test &t)
{
	/* On the heap: KASAN-instrumented frames of this size overflow the stack limit. */
	auto f = make_own<SrqFixture>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, f);
	Pair &c1 = f.value()->c1, &c2 = f.value()->c2;
	Events &ev = f.value()->ev;
	Side &b1 = f.value()->b1, &b2 = f.value()->b2;
	WEFT_ASSERT_OK(t, c1.a.open("weft0", QpType::Rc, access::local_write));
	WEFT_ASSERT_OK(t, c2.a.open("weft0", QpType::Rc, access::local_write));
	/* The receiving side: one context, one SRQ, two QPs on it. */
	Side &b = c1.b;
	WEFT_ASSERT_OK(t, b.open("weft1", QpType::Rc, access::local_write));
	auto srq = b.ctx->create_srq(b.pd, 8, 2, &ev);
	WEFT_ASSERT_OK(t, srq);
	QpInitAttr init;
	init.type = QpType::Rc;
	init.send_cq = init.recv_cq = b.cq;
	init.srq = srq.value();
	init.cap.max_send_wr = 4;
	init.cap.max_send_sge = 1;
	auto q1 = b.ctx->create_qp(b.pd, init);
	auto q2 = b.ctx->create_qp(b.pd, init);
	WEFT_ASSERT_OK(t, q1);
	WEFT_ASSERT_OK(t, q2);
	WEFT_EXPECT_ERR(t, b.ctx->destroy_srq(srq.value()), err::EBUSY);
	b1.borrow(b, q1.value());
	b2.borrow(b, q2.value());
	WEFT_ASSERT_OK(t, to_rts(c1.a, b1, iba::Mtu::M1024, 7));
	WEFT_ASSERT_OK(t, to_rts(b1, c1.a, iba::Mtu::M1024, 7));
	WEFT_ASSERT_OK(t, to_rts(c2.a, b2, iba::Mtu::M1024, 7));
	WEFT_ASSERT_OK(t, to_rts(b2, c2.a, iba::Mtu::M1024, 7));
	static uint8_t rbuf[4][64];
	for (uint32_t i = 0; i < 4; i++) {
		Sge sg{reinterpret_cast<uint64_t>(rbuf[i]), 64, b.mr->lkey};
		RecvWr r;
		r.wr_id = 100 + i;
		r.sg = Span<const Sge>(&sg, 1);
		WEFT_ASSERT_OK(t, srq.value()->post_recv(r));
	}
	RecvWr own;
	WEFT_EXPECT_ERR(t, q1.value()->post_recv(own), err::EINVAL);
	WEFT_ASSERT_OK(t, srq.value()->arm_limit(3));
	static const char m1[] = "first", m2[] = "second";
	WEFT_ASSERT_OK(t, send_bytes(c1.a, m1, sizeof(m1), false));
	WEFT_ASSERT_OK(t, wait_wc(c1.a.cq));
	WEFT_ASSERT_OK(t, send_bytes(c2.a, m2, sizeof(m2), false));
	WEFT_ASSERT_OK(t, wait_wc(c2.a.cq));
	auto w1 = wait_wc(b.cq), w2 = wait_wc(b.cq);
	WEFT_ASSERT_OK(t, w1);
	WEFT_ASSERT_OK(t, w2);
	WEFT_EXPECT_EQ(t, w1.value().wr_id, 100ull);
	WEFT_EXPECT_EQ(t, w1.value().qp_num, q1.value()->qpn);
	WEFT_EXPECT_EQ(t, w2.value().wr_id, 101ull);
	WEFT_EXPECT_EQ(t, w2.value().qp_num, q2.value()->qpn);
	WEFT_EXPECT_STREQ(t, reinterpret_cast<const char *>(rbuf[0]), "first");
	WEFT_EXPECT_STREQ(t, reinterpret_cast<const char *>(rbuf[1]), "second");
	/* 4 posted, 2 taken: below the limit of 3 once, so exactly one event. */
	WEFT_EXPECT_TRUE(t, ev.wait(EventType::SrqLimitReached, 1));
	WEFT_EXPECT_EQ(t, ev.seen(EventType::SrqLimitReached), 1);
	WEFT_EXPECT_EQ(t, srq.value()->count(), 2u);
	WEFT_EXPECT_ERR(t, srq.value()->arm_limit(9), err::EINVAL);
	WEFT_ASSERT_OK(t, b.ctx->destroy_qp(q1.value()));
	WEFT_ASSERT_OK(t, b.ctx->destroy_qp(q2.value()));
	WEFT_EXPECT_OK(t, b.ctx->destroy_srq(srq.value()));
}

struct Notified {
	Atomic<int> calls{0};
	static void handler(Cq &, void *arg)
	{
		static_cast<Notified *>(arg)->calls.fetch_add(1, Order::Relaxed);
	}
};

/* IBA 11.4.2.2: "solicited" arming ignores unsolicited completions. */
void cq_notify_solicited(Test &t)
{
	Pair c;
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M1024));
	Notified n;
	auto cq = c.b.ctx->create_cq(16, Notified::handler, &n);
	WEFT_ASSERT_OK(t, cq);
	/* A second QP on b whose receive CQ has the handler. */
	QpInitAttr init;
	init.type = QpType::Rc;
	init.send_cq = c.b.cq;
	init.recv_cq = cq.value();
	init.cap.max_send_wr = init.cap.max_recv_wr = 8;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	auto q = c.b.ctx->create_qp(c.b.pd, init);
	WEFT_ASSERT_OK(t, q);
	Side nb;
	nb.borrow(c.b, q.value());
	Side na;
	WEFT_ASSERT_OK(t, na.open("weft0", QpType::Rc, access::local_write));
	WEFT_ASSERT_OK(t, to_rts(na, nb, iba::Mtu::M1024, 7));
	WEFT_ASSERT_OK(t, to_rts(nb, na, iba::Mtu::M1024, 7));
	static uint8_t rb[3][8];
	for (auto &b : rb) {
		Sge sg{reinterpret_cast<uint64_t>(b), 8, c.b.mr->lkey};
		RecvWr r;
		r.sg = Span<const Sge>(&sg, 1);
		WEFT_ASSERT_OK(t, q.value()->post_recv(r));
	}
	WEFT_EXPECT_FALSE(t, cq.value()->req_notify(true));
	static const uint8_t msg[4] = {1, 2, 3, 4};
	WEFT_ASSERT_OK(t, send_bytes(na, msg, 4, false));
	WEFT_ASSERT_OK(t, wait_wc(na.cq));
	weft_msleep(50);
	WEFT_EXPECT_EQ(t, n.calls.load(Order::Relaxed), 0);
	WEFT_ASSERT_OK(t, send_bytes(na, msg, 4, true));
	WEFT_ASSERT_OK(t, wait_wc(na.cq));
	WEFT_EXPECT_TRUE(t, wait_for(n.calls, 1));
	/* Disarmed after one call; re-arming with work waiting reports it. */
	WEFT_ASSERT_OK(t, send_bytes(na, msg, 4, true));
	WEFT_ASSERT_OK(t, wait_wc(na.cq));
	weft_msleep(50);
	WEFT_EXPECT_EQ(t, n.calls.load(Order::Relaxed), 1);
	WEFT_EXPECT_TRUE(t, cq.value()->req_notify(false));
	Wc wc[4];
	WEFT_EXPECT_EQ(t, cq.value()->poll(Span<Wc>(wc, 4)), size_t(3));
	WEFT_ASSERT_OK(t, c.b.ctx->destroy_qp(q.value()));
}

/* IBA 11.6.3.1: overrun is an async CQ error; IBA 11.2.6.3: resize keeps entries. */
void cq_overflow_and_resize(Test &t)
{
	Side a;
	Events ev;
	WEFT_ASSERT_OK(t, a.open("weft0", QpType::Rc, access::local_write));
	a.dev->add_event_handler(ev);
	auto cq = a.ctx->create_cq(2, nullptr, nullptr);
	WEFT_ASSERT_OK(t, cq);
	Wc wc;
	for (uint64_t i = 0; i < 2; i++) {
		wc.wr_id = i;
		cq.value()->push(wc, false);
	}
	WEFT_EXPECT_ERR(t, cq.value()->resize(1), err::EINVAL);
	WEFT_ASSERT_OK(t, cq.value()->resize(4));
	wc.wr_id = 2;
	cq.value()->push(wc, false);
	Wc out[8];
	WEFT_ASSERT_EQ(t, cq.value()->poll(Span<Wc>(out, 8)), size_t(3));
	WEFT_EXPECT_EQ(t, out[0].wr_id, 0ull);
	WEFT_EXPECT_EQ(t, out[2].wr_id, 2ull);
	for (uint64_t i = 0; i < 6; i++)
		cq.value()->push(wc, false);
	WEFT_EXPECT_TRUE(t, cq.value()->in_error());
	WEFT_EXPECT_EQ(t, ev.seen(EventType::CqErr), 1);
	a.dev->remove_event_handler(ev);
	WEFT_EXPECT_OK(t, a.ctx->destroy_cq(cq.value()));
}

/*
 * A completion pushed where handlers may not run (inside another
 * consumer's post call): an Atomic handler runs at once on the pushing
 * task, a Sleepable one later from a work item.
 */
struct WhoCalled {
	Atomic<const void *> task{nullptr};
	Atomic<int> calls{0};
	static void handler(Cq &, void *arg)
	{
		auto *w = static_cast<WhoCalled *>(arg);
		w->task.store(weft_current_task(), Order::Relaxed);
		w->calls.fetch_add(1, Order::Release);
	}
};

void cq_handler_context(Test &t)
{
	Side a;
	WEFT_ASSERT_OK(t, a.open("weft0", QpType::Rc, access::local_write));
	WhoCalled atomic_h, sleep_h;
	auto atomic_cq = a.ctx->create_cq(4, WhoCalled::handler, &atomic_h, Cq::HandlerContext::Atomic);
	auto sleep_cq = a.ctx->create_cq(4, WhoCalled::handler, &sleep_h);
	WEFT_ASSERT_OK(t, atomic_cq);
	WEFT_ASSERT_OK(t, sleep_cq);
	WEFT_EXPECT_FALSE(t, atomic_cq.value()->req_notify(false));
	WEFT_EXPECT_FALSE(t, sleep_cq.value()->req_notify(false));
	Wc wc;
	atomic_cq.value()->push(wc, false, false);
	WEFT_EXPECT_EQ(t, atomic_h.calls.load(Order::Acquire), 1);
	WEFT_EXPECT_TRUE(t, atomic_h.task.load(Order::Relaxed) == weft_current_task());
	sleep_cq.value()->push(wc, false, false);
	WEFT_EXPECT_TRUE(t, wait_for(sleep_h.calls, 1));
	WEFT_EXPECT_TRUE(t, sleep_h.task.load(Order::Relaxed) != weft_current_task());
	/* Disarmed by the call: no second one. */
	atomic_cq.value()->push(wc, false, false);
	WEFT_EXPECT_EQ(t, atomic_h.calls.load(Order::Acquire), 1);
	WEFT_EXPECT_OK(t, a.ctx->destroy_cq(atomic_cq.value()));
	WEFT_EXPECT_OK(t, a.ctx->destroy_cq(sleep_cq.value()));
}

/*
 * Event moderation (rdma_set_cq_moderation): the armed event waits for the
 * count, or for the period from the first completion; off again, events
 * are immediate; a CQ destroyed with the period running waits for it.
 */
void cq_event_moderation(Test &t)
{
	Side a;
	WEFT_ASSERT_OK(t, a.open("weft0", QpType::Rc, access::local_write));
	WhoCalled h;
	auto cq = a.ctx->create_cq(16, WhoCalled::handler, &h, Cq::HandlerContext::Atomic);
	WEFT_ASSERT_OK(t, cq);
	Cq &c = *cq.value();
	Wc wc, out[16];
	auto calls = [&] { return h.calls.load(Order::Acquire); };
	c.moderate(4, 50000); /* 4 completions or 50 ms */
	WEFT_EXPECT_FALSE(t, c.req_notify(false));
	for (int i = 0; i < 3; i++)
		c.push(wc, false);
	WEFT_EXPECT_EQ(t, calls(), 0);
	c.push(wc, false);
	WEFT_EXPECT_EQ(t, calls(), 1); /* the count reached */
	WEFT_EXPECT_EQ(t, c.poll(Span<Wc>(out, 16)), size_t(4));
	WEFT_EXPECT_FALSE(t, c.req_notify(false));
	c.push(wc, false);
	WEFT_EXPECT_EQ(t, calls(), 1); /* held: the period runs */
	WEFT_EXPECT_TRUE(t, wait_for(h.calls, 2));
	WEFT_EXPECT_EQ(t, c.poll(Span<Wc>(out, 16)), size_t(1));
	c.moderate(0, 0);
	WEFT_EXPECT_FALSE(t, c.req_notify(false));
	c.push(wc, false);
	WEFT_EXPECT_EQ(t, calls(), 3); /* off: at once */
	WEFT_EXPECT_EQ(t, c.poll(Span<Wc>(out, 16)), size_t(1));
	c.moderate(0, 30000); /* the period only */
	WEFT_EXPECT_FALSE(t, c.req_notify(false));
	for (int i = 0; i < 8; i++)
		c.push(wc, false);
	WEFT_EXPECT_EQ(t, calls(), 3);
	WEFT_EXPECT_OK(t, a.ctx->destroy_cq(&c));
	WEFT_EXPECT_EQ(t, calls(), 4); /* the destroy waited for the period's end */
	/* A Sleepable handler: the period's end reaches it from a work item. */
	WhoCalled sh;
	auto scq = a.ctx->create_cq(16, WhoCalled::handler, &sh);
	WEFT_ASSERT_OK(t, scq);
	scq.value()->moderate(0, 20000);
	WEFT_EXPECT_FALSE(t, scq.value()->req_notify(false));
	scq.value()->push(wc, false);
	WEFT_EXPECT_EQ(t, sh.calls.load(Order::Acquire), 0);
	WEFT_EXPECT_TRUE(t, wait_for(sh.calls, 1));
	WEFT_EXPECT_TRUE(t, sh.task.load(Order::Relaxed) != weft_current_task());
	WEFT_EXPECT_OK(t, a.ctx->destroy_cq(scq.value()));
}

/*
 * Completion vectors: an Atomic handler on a vector runs on the vector's
 * CPU (an IPI when the push is elsewhere); each vector of the device
 * names a CPU of its own in turn; a vector out of range is refused; a
 * CQ destroyed right after a push waits for the call in flight (KASAN).
 */
struct WhichCpu {
	Atomic<int> cpu{-1};
	Atomic<int> calls{0};
	static void handler(Cq &, void *arg)
	{
		auto *w = static_cast<WhichCpu *>(arg);
		w->cpu.store(weft_this_cpu(), Order::Relaxed);
		w->calls.fetch_add(1, Order::Release);
	}
};

void cq_comp_vector(Test &t)
{
	Side a;
	WEFT_ASSERT_OK(t, a.open("weft0", QpType::Rc, access::local_write));
	const DeviceAttr &attr = a.dev->attr();
	WEFT_ASSERT_EQ(t, attr.num_comp_vectors, weft_online_cpus());
	WEFT_EXPECT_ERR(t, a.ctx->create_cq(4, nullptr, nullptr, Cq::HandlerContext::Atomic,
					    int(attr.num_comp_vectors)),
			err::EINVAL);
	WEFT_EXPECT_ERR(t, a.ctx->create_cq(4, nullptr, nullptr, Cq::HandlerContext::Atomic, -2), err::EINVAL);
	for (uint32_t v = 0; v < attr.num_comp_vectors; v++) {
		const int want = weft_vector_cpu(attr.comp_vector_base + v);
		for (int round = 0; round < 20; round++) {
			WhichCpu w;
			auto cq = a.ctx->create_cq(4, WhichCpu::handler, &w, Cq::HandlerContext::Atomic, int(v));
			WEFT_ASSERT_OK(t, cq);
			WEFT_EXPECT_FALSE(t, cq.value()->req_notify(false));
			Wc wc;
			cq.value()->push(wc, false, false);
			/* Every fourth round: destroyed with the call possibly in flight. */
			if (round % 4)
				WEFT_EXPECT_TRUE(t, wait_for(w.calls, 1));
			WEFT_EXPECT_OK(t, a.ctx->destroy_cq(cq.value()));
			WEFT_EXPECT_EQ(t, w.calls.load(Order::Acquire), 1);
			WEFT_EXPECT_EQ(t, w.cpu.load(Order::Relaxed), want);
		}
	}
	if (attr.num_comp_vectors > 1)
		WEFT_EXPECT_NE(t, weft_vector_cpu(attr.comp_vector_base), weft_vector_cpu(attr.comp_vector_base + 1));
}

/*
 * An event held in a CqEventBatch (as the soft HCA holds them for the end
 * of a run) interrupts the vector's CPU only when the batch fires, once
 * however many completions it covers.
 */
void cq_event_batch(Test &t)
{
	Side a;
	WEFT_ASSERT_OK(t, a.open("weft0", QpType::Rc, access::local_write));
	const DeviceAttr &attr = a.dev->attr();
	if (attr.num_comp_vectors < 2)
		return; /* no other CPU to hold an interrupt for */
	WhichCpu w[2];
	Cq *cqs[2];
	for (int v = 0; v < 2; v++) {
		auto cq = a.ctx->create_cq(8, WhichCpu::handler, &w[v], Cq::HandlerContext::Atomic, v);
		WEFT_ASSERT_OK(t, cq);
		cqs[v] = cq.value();
	}
	SpinLock pin(WEFT_LOCK_CLASS("weft_test_pin"));
	CqEventBatch batch;
	int v = 0;
	{
		/* Not preemptible: the vector picked stays another CPU's through the pushes. */
		SpinGuard g(pin);
		v = weft_vector_cpu(attr.comp_vector_base) == weft_this_cpu() ? 1 : 0;
		WEFT_EXPECT_FALSE(t, cqs[v]->req_notify(false));
		Wc wc;
		for (int i = 0; i < 3; i++) {
			WEFT_EXPECT_TRUE(t, cqs[v]->push(wc, false, false, &batch));
			/* Re-armed at once, as a NAPI poll finishing meanwhile would. */
			(void)cqs[v]->req_notify(false);
		}
	}
	weft_msleep(20);
	WEFT_EXPECT_EQ(t, w[v].calls.load(Order::Acquire), 0);
	batch.fire();
	WEFT_EXPECT_TRUE(t, wait_for(w[v].calls, 1));
	weft_msleep(20);
	WEFT_EXPECT_EQ(t, w[v].calls.load(Order::Acquire), 1);
	WEFT_EXPECT_EQ(t, w[v].cpu.load(Order::Relaxed),
		       weft_vector_cpu(attr.comp_vector_base + uint32_t(v)));
	for (Cq *cq : cqs)
		WEFT_EXPECT_OK(t, a.ctx->destroy_cq(cq));
}

/* The first packet at a QP in RTR raises "communication established". */
struct EstFixture {
	Side a, b, c, a2;
	Events ev;
};

void comm_established(Test &t)
{
	auto f = make_own<EstFixture>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, f);
	Side &a = f.value()->a, &b = f.value()->b, &c = f.value()->c, &a2 = f.value()->a2;
	Events &ev = f.value()->ev;
	WEFT_ASSERT_OK(t, a.open("weft0", QpType::Rc, access::local_write));
	WEFT_ASSERT_OK(t, b.open("weft1", QpType::Rc, access::local_write));
	/* Recreate b's QP with the event handler. */
	WEFT_ASSERT_OK(t, b.ctx->destroy_qp(b.qp));
	QpInitAttr init;
	init.type = QpType::Rc;
	init.send_cq = init.recv_cq = b.cq;
	init.cap.max_send_wr = init.cap.max_recv_wr = 4;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	init.events = &ev;
	auto q = b.ctx->create_qp(b.pd, init);
	WEFT_ASSERT_OK(t, q);
	b.qp = q.value();
	WEFT_ASSERT_OK(t, to_rts(a, b, iba::Mtu::M1024, 7));
	WEFT_ASSERT_OK(t, to_rts(b, a, iba::Mtu::M1024, 7));
	/* b back to RTR is not a legal transition: build a fresh RTR-only peer instead. */
	WEFT_EXPECT_EQ(t, ev.seen(EventType::CommEst), 0);
	WEFT_ASSERT_OK(t, c.open("weft1", QpType::Rc, access::local_write));
	WEFT_ASSERT_OK(t, c.ctx->destroy_qp(c.qp));
	auto q2 = c.ctx->create_qp(c.pd, [&] {
		QpInitAttr i = init;
		i.send_cq = i.recv_cq = c.cq;
		return i;
	}());
	WEFT_ASSERT_OK(t, q2);
	c.qp = q2.value();
	WEFT_ASSERT_OK(t, a2.open("weft0", QpType::Rc, access::local_write));
	WEFT_ASSERT_OK(t, to_rts(a2, c, iba::Mtu::M1024, 7));
	QpAttr at;
	at.state = QpState::Init;
	at.port_num = 1;
	at.qp_access_flags = access::local_write;
	WEFT_ASSERT_OK(t, c.ctx->modify_qp(c.qp, at, qp_attr::state | qp_attr::pkey_index | qp_attr::port | qp_attr::access_flags));
	at.state = QpState::Rtr;
	at.path_mtu = iba::Mtu::M1024;
	at.dest_qp_num = a2.qp->qpn;
	at.rq_psn = 0x123;
	at.ah_attr.dlid = a2.lid;
	at.ah_attr.port = 1;
	at.min_rnr_timer = 1;
	WEFT_ASSERT_OK(t, c.ctx->modify_qp(c.qp, at, qp_attr::state | qp_attr::av | qp_attr::path_mtu | qp_attr::dest_qpn | qp_attr::rq_psn | qp_attr::max_dest_rd_atomic | qp_attr::min_rnr_timer));
	static uint8_t rb[8];
	Sge sg{reinterpret_cast<uint64_t>(rb), 8, c.mr->lkey};
	RecvWr r;
	r.sg = Span<const Sge>(&sg, 1);
	WEFT_ASSERT_OK(t, c.qp->post_recv(r));
	static const uint8_t msg[2] = {7, 7};
	WEFT_ASSERT_OK(t, send_bytes(a2, msg, 2, false));
	WEFT_ASSERT_OK(t, wait_wc(c.cq));
	/* Asynchronous (IBA 11.6.3): it may follow the completion. */
	WEFT_EXPECT_TRUE(t, ev.wait(EventType::CommEst, 1));
	WEFT_EXPECT_EQ(t, ev.seen(EventType::CommEst), 1);
}

/*
 * User contexts count their AHs (and PDs, CQs, SRQs) per device against
 * the advertised max (in-tree rxe's pools are per device): two contexts
 * together stop at max_ah with rxe's EINVAL; a kernel context counts its
 * own; closing gives the count back.
 */
void user_objects_device_wide(Test &t)
{
	Side a;
	WEFT_ASSERT_OK(t, a.open("weft0", QpType::Rc, access::local_write));
	Device &dev = *a.dev;
	auto u1 = Context::open_user(dev, "weft_test");
	WEFT_ASSERT_OK(t, u1);
	auto u2 = Context::open_user(dev, "weft_test");
	if (!u2)
		u1.value()->close(false);
	WEFT_ASSERT_OK(t, u2);
	Context *u[2] = {u1.value(), u2.value()};
	Pd *pd[2] = {nullptr, nullptr};
	const uint32_t before = dev.user_objects(Quota::Ah), max = dev.attr().max_ah;
	uint32_t made = 0;
	int refused = 0;
	for (int i = 0; i < 2; i++) {
		auto p = u[i]->alloc_pd();
		if (p)
			pd[i] = p.value();
	}
	AhAttr at;
	at.port = 1;
	at.dlid = 1; /* any unicast LID: an AH is not resolved */
	if (pd[0] && pd[1]) {
		while (made <= max) {
			auto r = u[made % 2]->create_ah(pd[made % 2], at);
			if (!r) {
				refused = r.error().code();
				break;
			}
			made++;
		}
	}
	WEFT_EXPECT_EQ(t, refused, int(err::EINVAL));
	WEFT_EXPECT_EQ(t, before + made, max);
	WEFT_EXPECT_EQ(t, dev.user_objects(Quota::Ah), max);
	auto k = a.ctx->create_ah(a.pd, at);
	WEFT_EXPECT_OK(t, k);
	if (k)
		WEFT_EXPECT_OK(t, a.ctx->destroy_ah(k.value()));
	u[0]->close(false);
	u[1]->close(false);
	WEFT_EXPECT_EQ(t, dev.user_objects(Quota::Ah), before);
	WEFT_EXPECT_EQ(t, dev.user_objects(Quota::Pd), 0u);
}

/* Pages a test "pins": nothing to give back, only counted. */
struct CountedPages final : UserPages {
	void release() override { released++; }
	uint32_t released = 0;
};

/* One user MR of 64 bytes of @buf (a kernel page standing in for the process's). */
Result<Mr *> reg_fake_user_mr(Context &c, Pd *pd, uint8_t *buf, CountedPages &owner)
{
	auto pages = WEFT_TRY(Array<uint64_t>::make(Gfp::Sleep, 1));
	pages[0] = reinterpret_cast<uint64_t>(buf);
	return c.reg_user_mr(pd, 0x10000, 64, access::local_write, move(pages), 0, &owner);
}

/*
 * The MR key table is the device's: three processes registering all
 * they may (MRs until refused, then windows) leave the kernel its keys.
 * User MRs stop at max_mr device-wide with rxe's ENOMEM, windows at
 * max_mw with EINVAL; a kernel context then still gets an SRP channel's
 * worth of fast-registration MRs and DMA MRs.
 */
struct KeyFill {
	CountedPages owner;
	Context *u[3] = {};
	Pd *pd[3] = {};
	uint32_t mrs = 0, mws = 0;
	int mr_refused = 0, mw_refused = 0;
};

void fill_keys_from_user(KeyFill &f, uint8_t *buf, uint32_t max_mr, uint32_t max_mw)
{
	for (uint32_t i = 0; i <= 3 * max_mr; i++) {
		auto r = reg_fake_user_mr(*f.u[i % 3], f.pd[i % 3], buf, f.owner);
		if (!r) {
			f.mr_refused = r.error().code();
			break;
		}
		f.mrs++;
	}
	for (uint32_t i = 0; i <= 3 * max_mw; i++) {
		auto r = f.u[i % 3]->alloc_mw(f.pd[i % 3], MwType::Type1);
		if (!r) {
			f.mw_refused = r.error().code();
			break;
		}
		f.mws++;
	}
}

void user_mrs_leave_kernel_keys(Test &t)
{
	Side a;
	WEFT_ASSERT_OK(t, a.open("weft0", QpType::Rc, access::local_write));
	Device &dev = *a.dev;
	auto f = make_own<KeyFill>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, f);
	KeyFill &k = *f.value();
	static uint8_t buf[4096] __attribute__((aligned(4096)));
	const uint32_t max_mr = dev.attr().max_mr, max_mw = dev.attr().max_mw;
	bool opened = true;
	for (auto &u : k.u) {
		auto c = Context::open_user(dev, "weft_test");
		opened = opened && c;
		u = c ? c.value() : nullptr;
	}
	for (int i = 0; opened && i < 3; i++) {
		auto p = k.u[i]->alloc_pd();
		opened = opened && p;
		k.pd[i] = p ? p.value() : nullptr;
	}
	if (opened)
		fill_keys_from_user(k, buf, max_mr, max_mw);
	WEFT_EXPECT_TRUE(t, opened);
	WEFT_EXPECT_EQ(t, k.mrs, max_mr);
	WEFT_EXPECT_EQ(t, k.mr_refused, int(err::ENOMEM));
	WEFT_EXPECT_EQ(t, dev.user_objects(Quota::Mr), max_mr);
	WEFT_EXPECT_EQ(t, k.mws, max_mw);
	WEFT_EXPECT_EQ(t, k.mw_refused, int(err::EINVAL));
	/* What an SRP initiator channel takes at login: a DMA MR and a fast-registration pool. */
	uint32_t kernel_mrs = 0;
	for (uint32_t i = 0; i < 64; i++)
		kernel_mrs += bool(a.ctx->alloc_fast_reg_mr(a.pd, 256));
	for (uint32_t i = 0; i < 64; i++)
		kernel_mrs += bool(a.ctx->get_dma_mr(a.pd, access::local_write));
	WEFT_EXPECT_EQ(t, kernel_mrs, 128u);
	for (auto *u : k.u)
		if (u)
			u->close(false);
	/* Every registration's pages came back, the refused one's at once. */
	WEFT_EXPECT_EQ(t, k.owner.released, k.mrs + (k.mr_refused ? 1 : 0));
	WEFT_EXPECT_EQ(t, dev.user_objects(Quota::Mr), 0u);
	WEFT_EXPECT_EQ(t, dev.user_objects(Quota::Mw), 0u);
}

} // namespace

WEFT_TEST_SUITE(weft_hca_verbs, WEFT_CASE(srq_shared_by_two_qps), WEFT_CASE(cq_notify_solicited),
		WEFT_CASE(cq_overflow_and_resize), WEFT_CASE(cq_handler_context), WEFT_CASE(cq_event_moderation),
		WEFT_CASE(cq_comp_vector), WEFT_CASE(cq_event_batch),
		WEFT_CASE(comm_established), WEFT_CASE(user_objects_device_wide),
		WEFT_CASE(user_mrs_leave_kernel_keys));
