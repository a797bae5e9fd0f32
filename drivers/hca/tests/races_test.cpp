// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: races user space will reach on purpose once uverbs exposes every
 * verb (Documentation/verbs.md, "Concurrency contract").  Each case puts
 * the racing operation exactly where the race window was, through the
 * verbs core's testing seam (modify_hook), so the outcome does not depend
 * on how fast the host is:
 *
 *  - a QP its responder moved to Err while Modify QP was between checking
 *    and applying RTR->RTS must stay in Err (EINVAL), not be revived;
 *  - Destroy QP racing Modify QP of the same QP: the modify finishes or is
 *    refused, the destroy waits for it; nothing touches a freed QP (KASAN);
 *  - a QP that reads INIT already has its port (packet acceptance reads it
 *    without a lock);
 *  - NodeDescription read while it is rewritten is one write or the other;
 *  - Modify QP RTS->RTS under a stream of RDMA WRITEs: the engine works
 *    from its own copy of the attributes, every WRITE lands;
 *  - Resize CQ while completions stream in and are polled;
 *  - Resize CQ of a full ring: copied a batch per hold of the CQ's lock,
 *    completions produced and polled between the holds (cq_resize_hook).
 */
#include <weft/atomic.h>
#include <weft/test.h>
#include <weft/verbs/test_pair.h>
#include <weft/work.h>

#include "../hca.h"

using namespace weft;
using namespace weft::verbs;
using namespace weft::verbs::testing;
using weft::test::Test;

namespace {

bool wait_state(const Qp &qp, QpState want)
{
	for (int i = 0; i < 10000 && qp.state() != want; i++)
		weft_msleep(1);
	return qp.state() == want;
}

/* What a hook works on: set by the case before installing it, cleared after. */
struct HookScene {
	Qp *target = nullptr;
	Side *peer = nullptr;
	Context *ctx = nullptr;
	uint8_t buf[64] = {};
	Atomic<int> fired;
	/* modify_vs_destroy */
	Completion started, destroyed;
	Result<void> destroy_result = ok();
	/* port_before_state */
	QpState seen_state = QpState::Reset;
	uint8_t seen_port = 0;
};
HookScene *scene;

struct HookInstall {
	explicit HookInstall(ModifyHook h) { modify_hook.store(h, Order::Release); }
	~HookInstall() { modify_hook.store(nullptr, Order::Release); }
	WEFT_NOCOPY(HookInstall);
};

/*
 * Between the core's check of RTR->RTS and the driver applying it, the
 * peer's RDMA WRITE with a key that names nothing reaches the QP in RTR:
 * its responder NAKs it and moves the QP to Err (IBA 9.7.5.2.4, 10.3.1).
 */
void error_after_check(Qp &qp, ModifyStep step)
{
	if (&qp != scene->target || step != ModifyStep::Checked || scene->fired.exchange(1, Order::Relaxed))
		return;
	Side &b = *scene->peer;
	Sge sg{reinterpret_cast<uint64_t>(scene->buf), sizeof(scene->buf), b.mr->lkey};
	SendWr wr;
	wr.opcode = WrOpcode::RdmaWrite;
	wr.sg = Span<const Sge>(&sg, 1);
	wr.rdma.remote_addr = 0x1000;
	wr.rdma.rkey = 0x7fff00; /* no such region */
	if (b.qp->post_send(wr))
		wait_state(qp, QpState::Err);
}

void modify_rechecks_state(Test &t)
{
	auto p = make_own<Pair>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, p);
	Side &a = p.value()->a, &b = p.value()->b;
	uint32_t acc = access::all & ~access::mw_bind;
	WEFT_ASSERT_OK(t, a.open("weft0", QpType::Rc, acc));
	WEFT_ASSERT_OK(t, b.open("weft1", QpType::Rc, acc));
	WEFT_ASSERT_OK(t, to_rts(b, a, iba::Mtu::M1024, 7));
	WEFT_ASSERT_OK(t, to_rtr(a, b, iba::Mtu::M1024));
	auto s = make_own<HookScene>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, s);
	scene = s.value().get();
	scene->target = a.qp;
	scene->peer = &b;
	Result<void> r = ok();
	{
		HookInstall h(error_after_check);
		r = rtr_to_rts(a, 7);
	}
	WEFT_EXPECT_EQ(t, scene->fired.load(Order::Relaxed), 1);
	/* The QP went to Err under the modify: it must not come back as RTS. */
	WEFT_EXPECT_ERR(t, r, err::EINVAL);
	WEFT_EXPECT_EQ(t, a.qp->state(), QpState::Err);
	/* Err -> Reset is still allowed (IBA 10.3.1), and the QP comes up again. */
	QpAttr at;
	at.state = QpState::Reset;
	WEFT_EXPECT_OK(t, a.ctx->modify_qp(a.qp, at, qp_attr::state));
	scene = nullptr;
}

void destroy_from_work(Work &w)
{
	(void)w;
	scene->started.complete();
	scene->destroy_result = scene->ctx->destroy_qp(scene->target);
	scene->destroyed.complete();
}

/*
 * After the modify found and held the QP, before it takes the QP's modify
 * lock: Destroy QP of the same QP from another thread.  The old code freed
 * the QP here and the modify went on in freed memory.
 */
Work *destroyer;
void destroy_after_lookup(Qp &qp, ModifyStep step)
{
	if (&qp != scene->target || step != ModifyStep::Found || scene->fired.exchange(1, Order::Relaxed))
		return;
	destroyer->queue();
	(void)scene->started.wait(Timeout::msecs(10000));
	/* The destroy cannot finish while we hold the QP: give it the chance to. */
	(void)scene->destroyed.wait(Timeout::msecs(1000));
}

void modify_vs_destroy(Test &t)
{
	auto p = make_own<Pair>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, p);
	WEFT_ASSERT_OK(t, p.value()->connect(QpType::Rc, iba::Mtu::M1024));
	Side &a = p.value()->a;
	auto s = make_own<HookScene>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, s);
	scene = s.value().get();
	scene->target = a.qp;
	scene->ctx = a.ctx;
	Work w(destroy_from_work, WEFT_LOCK_CLASS("weft_hca_test_destroyer"));
	destroyer = &w;
	Result<void> r = ok();
	{
		HookInstall h(destroy_after_lookup);
		QpAttr at;
		at.state = QpState::Sqd;
		r = a.ctx->modify_qp(a.qp, at, qp_attr::state);
	}
	WEFT_ASSERT_OK(t, scene->destroyed.wait(Timeout::msecs(30000)));
	w.flush();
	a.qp = nullptr;
	WEFT_EXPECT_EQ(t, scene->fired.load(Order::Relaxed), 1);
	WEFT_EXPECT_OK(t, scene->destroy_result);
	/* Either order is right; what is wrong is a modify of a freed QP (KASAN). */
	WEFT_EXPECT_TRUE(t, r.ok() || r.error().code() == err::EINVAL);
	/* The handle is gone: later calls are refused, not run. */
	destroyer = nullptr;
	scene = nullptr;
}

void record_applied(Qp &qp, ModifyStep step)
{
	if (&qp != scene->target || step != ModifyStep::Applied || scene->fired.exchange(1, Order::Relaxed))
		return;
	scene->seen_state = qp.state();
	scene->seen_port = qp.port();
}

/* RESET->INIT: the moment the driver has applied it, state INIT and port 1 are both visible. */
void port_before_state(Test &t)
{
	Side a;
	WEFT_ASSERT_OK(t, a.open("weft0", QpType::Rc, access::local_write));
	auto s = make_own<HookScene>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, s);
	scene = s.value().get();
	scene->target = a.qp;
	WEFT_EXPECT_EQ(t, a.qp->port(), 0);
	{
		HookInstall h(record_applied);
		QpAttr at;
		at.state = QpState::Init;
		at.port_num = 1;
		WEFT_EXPECT_OK(t, a.ctx->modify_qp(a.qp, at,
						   qp_attr::state | qp_attr::pkey_index | qp_attr::port |
							   qp_attr::access_flags));
	}
	WEFT_EXPECT_EQ(t, scene->seen_state, QpState::Init);
	WEFT_EXPECT_EQ(t, scene->seen_port, 1);
	QpAttr q;
	a.qp->query(q);
	WEFT_EXPECT_EQ(t, q.port_num, 1);
	scene = nullptr;
}

/* A QP moved back to Reset has no port until RESET->INIT: it takes nothing, counted as for no QP. */
void reset_qp_takes_nothing(Test &t)
{
	auto p = make_own<UdPair>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, p);
	UdPair &u = *p.value();
	WEFT_ASSERT_OK(t, u.open(0x11111111));
	QpAttr at;
	at.state = QpState::Reset;
	WEFT_ASSERT_OK(t, u.b.ctx->modify_qp(u.b.qp, at, qp_attr::state));
	hca::Port *in = static_cast<hca::Hca &>(*u.b.dev).port(1);
	WEFT_ASSERT_TRUE(t, in);
	const uint64_t before = in->counters.no_dest_qp.load(Order::Relaxed);
	static uint8_t msg[32];
	Sge sg{reinterpret_cast<uint64_t>(msg), sizeof(msg), u.a.mr->lkey};
	SendWr wr;
	wr.opcode = WrOpcode::Send;
	wr.sg = Span<const Sge>(&sg, 1);
	u.address(wr);
	WEFT_ASSERT_OK(t, u.a.qp->post_send(wr));
	WEFT_ASSERT_OK(t, wait_wc(u.a.cq));
	bool counted = false;
	for (int i = 0; i < 5000 && !counted; i++) {
		counted = in->counters.no_dest_qp.load(Order::Relaxed) > before;
		if (!counted)
			weft_msleep(1);
	}
	WEFT_EXPECT_TRUE(t, counted);
	Wc wc;
	WEFT_EXPECT_EQ(t, u.b.cq->poll(Span<Wc>(&wc, 1)), 0u);
}

struct DescWriter {
	Device *dev;
	Atomic<bool> stop;
	Atomic<uint32_t> writes;
	Completion started, done;
};
DescWriter *desc_writer;

void write_descs(Work &w)
{
	(void)w;
	desc_writer->started.complete();
	char a[64], b[64];
	__builtin_memset(a, 'A', sizeof(a));
	__builtin_memset(b, 'B', sizeof(b));
	for (uint32_t i = 0; !desc_writer->stop.load(Order::Relaxed) && i < 200000; i++) {
		(void)desc_writer->dev->set_node_desc(i & 1 ? b : a, 64);
		desc_writer->writes.fetch_add(1, Order::Relaxed);
	}
	desc_writer->done.complete();
}

/* Every read is all 'A' or all 'B' (or the name before the first write). */
bool whole(const char *d)
{
	if (d[0] != 'A' && d[0] != 'B')
		return d[0] == 'W';
	for (int i = 1; i < 64; i++)
		if (d[i] != d[0])
			return false;
	return d[64] == 0;
}

void node_desc_never_torn(Test &t)
{
	Ref<Device> dev = find_device("weft0");
	WEFT_ASSERT_TRUE(t, dev);
	char saved[65];
	dev->node_desc(saved);
	auto wr = make_own<DescWriter>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, wr);
	desc_writer = wr.value().get();
	desc_writer->dev = dev.get();
	Work w(write_descs, WEFT_LOCK_CLASS("weft_hca_test_desc_writer"));
	w.queue();
	WEFT_ASSERT_OK(t, desc_writer->started.wait(Timeout::msecs(60000)));
	uint32_t torn = 0, reads = 0;
	/* Read while it writes; bounded by the writer's count, not by time. */
	while (!desc_writer->done.done() && reads < 400000) {
		char d[65];
		dev->node_desc(d);
		torn += !whole(d);
		/* The writer may share this CPU: let it run. */
		if (++reads % 64 == 0)
			weft_cond_resched();
	}
	desc_writer->stop.store(true, Order::Relaxed);
	WEFT_EXPECT_OK(t, desc_writer->done.wait(Timeout::msecs(60000)));
	w.flush();
	WEFT_EXPECT_EQ(t, torn, 0u);
	WEFT_EXPECT_GT(t, desc_writer->writes.load(Order::Relaxed), 0u);
	WEFT_EXPECT_OK(t, dev->set_node_desc(saved, __builtin_strlen(saved)));
	WEFT_EXPECT_ERR(t, dev->set_node_desc(saved, 65), err::EINVAL);
	desc_writer = nullptr;
}

/*
 * RTS->RTS on both sides while a stream of RDMA WRITEs runs (IBA 11.2.5.2
 * lets access flags and, at the responder, the RNR timer change in RTS):
 * the responder checks remote write access on every WRITE, from its copy
 * of the attributes; every WRITE still completes and its data is there.
 */
void modify_under_traffic(Test &t)
{
	auto p = make_own<Pair>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, p);
	WEFT_ASSERT_OK(t, p.value()->connect(QpType::Rc, iba::Mtu::M1024));
	Side &a = p.value()->a, &b = p.value()->b;
	Buf src(16384), dst(16384);
	WEFT_ASSERT_TRUE(t, src.p && dst.p);
	const uint32_t rw = access::local_write | access::remote_write;
	uint32_t bad = 0;
	for (uint32_t i = 0; i < 200; i++) {
		src.pattern(static_cast<uint8_t>(i));
		Sge sg{reinterpret_cast<uint64_t>(src.p), 16384, a.mr->lkey};
		SendWr wr;
		wr.opcode = WrOpcode::RdmaWrite;
		wr.wr_id = i;
		wr.sg = Span<const Sge>(&sg, 1);
		wr.rdma.remote_addr = reinterpret_cast<uint64_t>(dst.p);
		wr.rdma.rkey = b.mr->rkey;
		WEFT_ASSERT_OK(t, a.qp->post_send(wr));
		QpAttr at;
		at.qp_access_flags = (i & 1) ? rw | access::remote_read : rw;
		WEFT_ASSERT_OK(t, a.ctx->modify_qp(a.qp, at, qp_attr::access_flags));
		at.qp_access_flags = (i & 1) ? rw : rw | access::remote_atomic;
		at.min_rnr_timer = static_cast<uint8_t>(1 + (i & 7));
		WEFT_ASSERT_OK(t, b.ctx->modify_qp(b.qp, at, qp_attr::access_flags | qp_attr::min_rnr_timer));
		auto wc = wait_wc(a.cq);
		WEFT_ASSERT_OK(t, wc);
		bad += wc.value().status != WcStatus::Success;
		bad += __builtin_memcmp(src.p, dst.p, 16384) != 0;
	}
	WEFT_EXPECT_EQ(t, bad, 0u);
	QpAttr q;
	b.qp->query(q);
	WEFT_EXPECT_EQ(t, q.state, QpState::Rts);
	WEFT_EXPECT_EQ(t, q.min_rnr_timer, 1 + (199 & 7));
	WEFT_EXPECT_EQ(t, q.qp_access_flags, rw);
}

struct Resizer {
	Cq *cq;
	Atomic<bool> stop;
	Atomic<uint32_t> resizes, refused;
	Completion done;
};
Resizer *resizer;

void resize_loop(Work &w)
{
	(void)w;
	for (uint32_t i = 0; !resizer->stop.load(Order::Relaxed); i++) {
		if (resizer->cq->resize(i & 1 ? 128 : 512))
			resizer->resizes.fetch_add(1, Order::Relaxed);
		else
			resizer->refused.fetch_add(1, Order::Relaxed);
		weft_cond_resched();
	}
	resizer->done.complete();
}

/*
 * IBA 11.2.6.3 Resize CQ while completions stream in and are polled: every
 * completion arrives once and in order, none is lost in a ring swap.  Out
 * of range sizes are refused.
 */
void cq_resize_under_traffic(Test &t)
{
	auto p = make_own<Pair>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, p);
	WEFT_ASSERT_OK(t, p.value()->connect(QpType::Rc, iba::Mtu::M1024));
	Side &a = p.value()->a, &b = p.value()->b;
	WEFT_EXPECT_ERR(t, a.cq->resize(0), err::EINVAL);
	WEFT_EXPECT_ERR(t, a.cq->resize(a.dev->attr().max_cqe + 1), err::EINVAL);
	auto r = make_own<Resizer>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, r);
	resizer = r.value().get();
	resizer->cq = a.cq;
	Work w(resize_loop, WEFT_LOCK_CLASS("weft_hca_test_resizer"));
	w.queue();
	static uint8_t src[256], dst[256];
	/*
	 * At least @total completions, and on until the resizer has swapped
	 * the ring @min_resizes times meanwhile: its work item may sit queued
	 * behind this loop on a slow machine (it yields below).
	 */
	constexpr uint32_t total = 4000, window = 32, min_resizes = 16, max_total = 400000;
	uint32_t posted = 0, seen = 0, out_of_order = 0, bad = 0;
	auto more = [&] {
		return posted < total ||
		       (posted < max_total && resizer->resizes.load(Order::Relaxed) < min_resizes);
	};
	int idle = 0;
	while ((more() || seen < posted) && idle < 10000) {
		while (more() && posted - seen < window) {
			Sge sg{reinterpret_cast<uint64_t>(src), sizeof(src), a.mr->lkey};
			SendWr wr;
			wr.opcode = WrOpcode::RdmaWrite;
			wr.wr_id = posted;
			wr.sg = Span<const Sge>(&sg, 1);
			wr.rdma.remote_addr = reinterpret_cast<uint64_t>(dst);
			wr.rdma.rkey = b.mr->rkey;
			WEFT_ASSERT_OK(t, a.qp->post_send(wr));
			posted++;
		}
		Wc wc[8];
		size_t n = a.cq->poll(Span<Wc>(wc, 8));
		for (size_t i = 0; i < n; i++) {
			out_of_order += wc[i].wr_id != seen;
			bad += wc[i].status != WcStatus::Success;
			seen++;
		}
		if (n) {
			idle = 0;
			weft_cond_resched();
		} else {
			idle++;
			weft_msleep(1);
		}
	}
	const uint32_t resizes = resizer->resizes.load(Order::Relaxed);
	resizer->stop.store(true, Order::Relaxed);
	WEFT_EXPECT_OK(t, resizer->done.wait(Timeout::msecs(60000)));
	w.flush();
	WEFT_EXPECT_EQ(t, seen, posted);
	WEFT_EXPECT_GE(t, seen, total);
	WEFT_EXPECT_EQ(t, out_of_order, 0u);
	WEFT_EXPECT_EQ(t, bad, 0u);
	WEFT_EXPECT_GE(t, resizes, min_resizes); /* under traffic, not after it */
	WEFT_EXPECT_FALSE(t, a.cq->in_error());
	resizer = nullptr;
}

/* What the resize hook does between two steps: one completion in, one out. */
struct Between {
	Cq *cq;
	uint64_t next_in, next_out;
	uint32_t steps, out_of_order;
};
Between *between;

void between_steps(Cq &cq)
{
	Between *b = between;
	if (!b || &cq != b->cq)
		return;
	b->steps++;
	Wc wc{};
	wc.wr_id = b->next_in++;
	b->cq->push(wc, false);
	Wc got;
	if (b->cq->poll(Span<Wc>(&got, 1)) == 1)
		b->out_of_order += got.wr_id != b->next_out++;
}

/*
 * IBA 11.2.6.3 Resize CQ of a ring holding 4000 completions: the copy is
 * done a batch at a time, and between the holds of the CQ's lock the
 * hook pushes and polls (it would deadlock on a held lock): at least one
 * pause per 64 entries.  Every completion comes out once, in order.
 */
void cq_resize_copies_unlocked(Test &t)
{
	Side a;
	WEFT_ASSERT_OK(t, a.open("weft0", QpType::Rc, access::local_write));
	constexpr uint32_t stored = 4000;
	WEFT_ASSERT_OK(t, a.cq->resize(8192));
	Between b{a.cq, 0, 0, 0, 0};
	for (; b.next_in < stored; b.next_in++) {
		Wc wc{};
		wc.wr_id = b.next_in;
		a.cq->push(wc, false);
	}
	between = &b;
	cq_resize_hook.store(between_steps, Order::Release);
	auto r = a.cq->resize(4500);
	cq_resize_hook.store(nullptr, Order::Release);
	between = nullptr;
	WEFT_EXPECT_OK(t, r);
	WEFT_EXPECT_GE(t, b.steps, stored / 64 - 1);
	/* One at a time: Side and a Wc array would pass KASAN's frame limit. */
	for (Wc wc; a.cq->poll(Span<Wc>(&wc, 1)) == 1;)
		b.out_of_order += wc.wr_id != b.next_out++;
	WEFT_EXPECT_EQ(t, b.next_out, b.next_in);
	WEFT_EXPECT_EQ(t, b.out_of_order, 0u);
	WEFT_EXPECT_FALSE(t, a.cq->in_error());
	WEFT_EXPECT_EQ(t, a.cq->cqe.load(Order::Relaxed), 4500u);
}

/* The PSNs Modify QP set are what Query QP reports, before any packet moved. */
void query_sees_new_psns(Test &t)
{
	auto p = make_own<Pair>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, p);
	WEFT_ASSERT_OK(t, p.value()->connect(QpType::Rc, iba::Mtu::M1024));
	QpAttr q;
	p.value()->a.qp->query(q);
	WEFT_EXPECT_EQ(t, q.sq_psn, 0x123u);
	WEFT_EXPECT_EQ(t, q.rq_psn, 0x123u);
	WEFT_EXPECT_EQ(t, q.port_num, 1);
}

} // namespace

WEFT_TEST_SUITE(weft_hca_races, WEFT_CASE(modify_rechecks_state), WEFT_CASE(modify_vs_destroy),
		WEFT_CASE(port_before_state), WEFT_CASE(reset_qp_takes_nothing),
		WEFT_CASE(node_desc_never_torn), WEFT_CASE(modify_under_traffic),
		WEFT_CASE(query_sees_new_psns), WEFT_CASE(cq_resize_under_traffic),
		WEFT_CASE(cq_resize_copies_unlocked));
