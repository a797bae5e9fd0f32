// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: releasing a passive connected-mode connection (Cm::release_rx)
 * leaves no way from its QP to its CM Id.  The QP must outlive the Id
 * (the CM moves it), and the HCA may deliver a QP event it raised earlier
 * (CommEst, from its engine's work item) until the QP is destroyed: such
 * an event must not reach cm::established() for an Id already destroyed.
 *
 * An interface of weft1 takes an RC connection from a plain CM Id on
 * weft0 (RFC 4755 private data); the Id disconnects; release_rx's test
 * hook, between the Id's destruction and the QP's, delivers a CommEst to
 * the connection's QP event handler as the HCA's engine would.
 */
#include <weft/atomic.h>
#include <weft/cm/cm.h>
#include <weft/test.h>
#include <weft/verbs/test_pair.h>
#include <weft/wait.h>

#include "../cm.h"
#include "../cm_proto.h"
#include "../interface.h"

using namespace weft;
using namespace weft::ipoib;
using weft::test::Test;
using weft::verbs::testing::Side;

namespace {

/* The weft0 side: counts what its CM Id hears. */
struct Peer final : cm::Handler {
	Atomic<int> counts[16] = {};
	int event(const cm::Event &e) override
	{
		counts[int(e.type)].fetch_add(1, Order::Release);
		return 0;
	}
	/* Handlers run from work items: wait for the event, generously. */
	bool wait(cm::EventType type) const
	{
		for (int i = 0; i < 30000 && !counts[int(type)].load(Order::Acquire); i++)
			weft_msleep(1);
		return counts[int(type)].load(Order::Acquire) > 0;
	}
};

/* What release_rx's hook saw in its window. */
struct Window {
	Completion done;
	int calls = 0;
	uint64_t comm_est_before = 0, comm_est_after = 0;
};

void late_comm_est(verbs::EventHandler &events, verbs::Qp &qp, void *arg)
{
	auto *w = static_cast<Window *>(arg);
	w->comm_est_before = cm::stats().comm_est;
	/* As SoftQp::raise_pending does for a CommEst raised before: from the engine's work item. */
	events.handle(verbs::Event{verbs::EventType::CommEst, &qp.dev, qp.port(), &qp});
	w->comm_est_after = cm::stats().comm_est;
	w->calls++;
	w->done.complete();
}

/* weft0 -> weft1 port 1 as an SA would answer (IBA 15.2.5.16). */
iba::PathRecord path(Side &a, verbs::Device &b)
{
	iba::PathRecord pr{};
	verbs::PortAttr pa;
	(void)b.query_port(1, pa);
	auto sg = a.dev->query_gid(1, 0), dg = b.query_gid(1, 0);
	if (sg)
		__builtin_memcpy(pr.sgid, sg.value().raw, 16);
	if (dg)
		__builtin_memcpy(pr.dgid, dg.value().raw, 16);
	pr.slid.set(a.lid);
	pr.dlid.set(pa.lid);
	pr.pkey.set(0xffff);
	iba::PathRecord::Value::set(pr.mtu, static_cast<uint8_t>(iba::Mtu::M2048));
	iba::PathRecord::Value::set(pr.pkt_life, 2);
	return pr;
}

bool wait_listening(Cm &c)
{
	for (int i = 0; i < 30000 && !c.listening(); i++)
		weft_msleep(1);
	return c.listening();
}

/* The interface of the test, destroyed however the test ends. */
struct OwnedInterface {
	Interface *ifc = nullptr;
	~OwnedInterface()
	{
		if (ifc)
			ifc->destroy();
	}
};

struct HookGuard {
	explicit HookGuard(Window &w)
	{
		cm_test_hooks.arg.store(&w, Order::Release);
		cm_test_hooks.rx_released.store(&late_comm_est, Order::Release);
	}
	~HookGuard() { cm_test_hooks.rx_released.store(nullptr, Order::Release); }
};

void late_comm_est_after_release(Test &t)
{
	auto side = make_own<Side>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, side);
	Side &a = *side.value();
	WEFT_ASSERT_OK(t, a.open("weft0", verbs::QpType::Rc, verbs::access::local_write));
	Ref<verbs::Device> b = verbs::find_device("weft1");
	WEFT_ASSERT_TRUE(t, b);
	OwnedInterface owned;
	auto ifc = Interface::create(*b, 1, 0xffff, Params{64, 64});
	WEFT_ASSERT_OK(t, ifc);
	owned.ifc = ifc.value();
	Cm *c = owned.ifc->cm();
	WEFT_ASSERT_TRUE(t, c != nullptr);
	c->listen();
	WEFT_ASSERT_TRUE(t, wait_listening(*c));

	Peer peer;
	auto id = cm::create_id(*a.dev, peer, nullptr);
	WEFT_ASSERT_OK(t, id);
	struct IdGuard {
		cm::Id *id;
		~IdGuard() { cm::destroy(id); }
	} id_guard{id.value()};
	const cmp::PrivData pd = cmp::encode(a.qp->qpn, cmp::buf_size);
	cm::ConnectParam p;
	p.qp = a.qp;
	p.path = path(a, *b);
	p.service_id = c->service_id();
	p.private_data = ConstBytes(reinterpret_cast<const uint8_t *>(&pd), sizeof(pd));
	/* Time-wait of seconds (IBA 12.9.8.1): the released Id stays allocated while the hook runs. */
	p.ack_timeout = 20;
	p.local_cm_response_timeout = p.remote_cm_response_timeout = 16;
	WEFT_ASSERT_OK(t, cm::connect(*id.value(), p));
	WEFT_ASSERT_TRUE(t, peer.wait(cm::EventType::Established));

	auto win = make_own<Window>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, win);
	Window &w = *win.value();
	{
		HookGuard hook(w);
		/* The peer's DREQ: the connection is dead, work_ releases it. */
		WEFT_ASSERT_OK(t, cm::disconnect(*id.value()));
		WEFT_ASSERT_TRUE(t, peer.wait(cm::EventType::Disconnected));
		WEFT_ASSERT_OK(t, w.done.wait(Timeout::msecs(60000)));
	}
	WEFT_EXPECT_EQ(t, w.calls, 1);
	/* No cm::established() for the released Id. */
	WEFT_EXPECT_EQ(t, w.comm_est_after, w.comm_est_before);
}

} // namespace

WEFT_TEST_SUITE(weft_ipoib_cm_release, WEFT_CASE(late_comm_est_after_release));
