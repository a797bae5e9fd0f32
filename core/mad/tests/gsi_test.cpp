// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: MADs over the fabric.  The MAD services of weft0 and weft1 talk
 * through their ports' QP1 (IBA 13.5.1): a Get from an agent on weft0 is
 * served by an agent on weft1 and its GetResp matched by TID; a Get nobody
 * on weft1 serves comes back with the unsupported-method status, and one
 * in a version of the CM class the CM does not speak with bad-version.
 */
#include <weft/alloc.h>
#include <weft/atomic.h>
#include <weft/test.h>

#include <weft/mad/port.h>

using namespace weft;
using namespace weft::mad;
using weft::test::Test;

namespace {

/* A vendor class (IBA 13.4.4: 0x09-0x0f): no firmware agent of the HCA takes it. */
constexpr uint8_t cls = 0x09;

/* Answers a Get with the attribute modifier doubled. */
struct Server final : AgentHandler {
	MadService *svc = nullptr;
	int served = 0;
	MadAddr seen;
	void recv(Agent &a, const Mad &m, const MadAddr &from) override
	{
		served++;
		seen = from;
		auto r = make_own<SendReq>(Gfp::Sleep);
		if (!r)
			return;
		r.value()->mad = m;
		r.value()->mad.hdr().method.set(iba::method::get_resp);
		r.value()->mad.hdr().attr_mod.set(m.hdr().attr_mod.get() * 2);
		r.value()->to = from;
		(void)svc->send(a, *r.value());
	}
	void send_done(Agent &, SendReq &) override {}
};

struct Client final : AgentHandler {
	Atomic<int> done{0};
	int status = -1;
	uint16_t resp_status = 0;
	uint32_t resp_mod = 0;
	void recv(Agent &, const Mad &, const MadAddr &) override {}
	void send_done(Agent &, SendReq &r) override
	{
		status = r.status;
		resp_status = r.response.hdr().status.get();
		resp_mod = r.response.hdr().attr_mod.get();
		done.fetch_add(1, Order::Release);
	}
};

struct Fixture {
	Ref<verbs::Device> d0 = verbs::find_device("weft0"), d1 = verbs::find_device("weft1");
	MadPort *p0 = mad::find_port(*d0, 1), *p1 = mad::find_port(*d1, 1);
	Server sh;
	Client ch;
	Agent server{sh, cls, 1}, client{ch, cls, 1};
	SendReq req;
};

bool wait_done(const Atomic<int> &done, int want)
{
	for (int i = 0; i < 5000 && done.load(Order::Acquire) < want; i++)
		weft_msleep(1);
	return done.load(Order::Acquire) >= want;
}

void get(Fixture &f, uint8_t mgmt_class, uint32_t mod, uint16_t dlid)
{
	f.req.mad = Mad{};
	iba::MadHeader &h = f.req.mad.hdr();
	h.base_version.set(1);
	h.mgmt_class.set(mgmt_class);
	h.class_version.set(1);
	h.method.set(iba::method::get);
	h.tid.set(77);
	h.attr_mod.set(mod);
	f.req.to.lid = dlid;
	f.req.to.qpn = 1;
	f.req.timeout_ms = 1000;
	f.req.retries = 2;
}

void get_over_qp1(Test &t)
{
	if (!verbs::find_device("weft0") || !verbs::find_device("weft1")) {
		WEFT_EXPECT_TRUE(t, false); /* the default subnet is part of the test host */
		return;
	}
	auto fx = make_own<Fixture>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, fx);
	Fixture &f = *fx.value();
	WEFT_ASSERT_TRUE(t, f.p0 && f.p1);
	MadService &s0 = f.p0->gsi(), &s1 = f.p1->gsi();
	f.sh.svc = &s1;
	f.server.add_method(iba::method::get);
	f.client.add_method(iba::method::trap);
	WEFT_ASSERT_OK(t, s1.register_agent(f.server));
	WEFT_ASSERT_OK(t, s0.register_agent(f.client));
	verbs::PortAttr p0, p1;
	WEFT_ASSERT_OK(t, f.d0->query_port(1, p0));
	WEFT_ASSERT_OK(t, f.d1->query_port(1, p1));
	get(f, cls, 21, p1.lid);
	WEFT_EXPECT_OK(t, s0.send(f.client, f.req));
	WEFT_EXPECT_TRUE(t, wait_done(f.ch.done, 1));
	WEFT_EXPECT_EQ(t, f.ch.status, 0);
	WEFT_EXPECT_EQ(t, f.ch.resp_mod, 42u);
	WEFT_EXPECT_EQ(t, f.sh.served, 1);
	/* The server saw the request come from weft0's QP1. */
	WEFT_EXPECT_EQ(t, f.sh.seen.lid, p0.lid);
	WEFT_EXPECT_EQ(t, f.sh.seen.qpn, 1u);
	/* IBA 13.4.7: a class nobody on weft1 serves is answered with the reason. */
	get(f, 0x0b, 5, p1.lid);
	WEFT_EXPECT_OK(t, s0.send(f.client, f.req));
	WEFT_EXPECT_TRUE(t, wait_done(f.ch.done, 2));
	WEFT_EXPECT_EQ(t, f.ch.status, 0);
	WEFT_EXPECT_EQ(t, f.ch.resp_status, uint16_t(2 << 2));
	/* The CM (weft_cm) serves its class in version 2 only: version 1 is a bad version. */
	get(f, iba::mgmt_class::cm, 5, p1.lid);
	WEFT_EXPECT_OK(t, s0.send(f.client, f.req));
	WEFT_EXPECT_TRUE(t, wait_done(f.ch.done, 3));
	WEFT_EXPECT_EQ(t, f.ch.status, 0);
	WEFT_EXPECT_EQ(t, f.ch.resp_status, uint16_t(1 << 2));
	s0.unregister_agent(f.client);
	s1.unregister_agent(f.server);
}

} // namespace

WEFT_TEST_SUITE(weft_mad_gsi, WEFT_CASE(get_over_qp1));
