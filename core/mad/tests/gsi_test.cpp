// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: MADs over the fabric.  The MAD services of weft0 and weft1 talk
 * through their ports' QP1 (IBA 13.5.1): a Get from an agent on weft0 is
 * served by an agent on weft1 and its GetResp matched by TID; a Get nobody
 * on weft1 serves comes back with the unsupported-method status, and one
 * in a version of the CM class the CM does not speak with bad-version.
 * With a GRH (IBA 8.3): the address conversions, a Get and the PMA's
 * answer both crossing with one, the route back to the requester's GID;
 * one to a GID weft1 lacks dropped and counted; a bad SGID index and a
 * GRH on QP0 refused.
 */
#include <weft/alloc.h>
#include <weft/atomic.h>
#include <weft/test.h>

#include <weft/iba/pma.h>
#include <weft/iba/smp_attrs.h>
#include <weft/mad/port.h>

#include "../grh_route.h"
#include "../port_mad.h"

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
	MadAddr from;
	void recv(Agent &, const Mad &, const MadAddr &) override {}
	void send_done(Agent &, SendReq &r) override
	{
		from = r.from;
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

bool same_gid(const uint8_t a[16], const verbs::Gid &b)
{
	return __builtin_memcmp(a, b.raw, 16) == 0;
}

/* IBA 8.3.1: a received GRH becomes the route back; a MadAddr's route becomes an AH's GRH. */
void grh_route_conversion(Test &t)
{
	iba::Grh g{};
	WEFT_EXPECT_TRUE(t, iba::Grh::IpVer::set(g.ver_tclass_flow, iba::grh_ipver) &&
				    iba::Grh::TClass::set(g.ver_tclass_flow, 0x2a) &&
				    iba::Grh::FlowLabel::set(g.ver_tclass_flow, 0xabcde));
	g.hoplmt.set(3);
	const verbs::Gid sgid = verbs::Gid::make(0xfe80000000000000ull, 0x0200574654000001ull);
	const verbs::Gid dgid = verbs::Gid::make(0xfe80000000000000ull, 0x0200574654000002ull);
	__builtin_memcpy(g.sgid, sgid.raw, 16);
	__builtin_memcpy(g.dgid, dgid.raw, 16);
	MadAddr a;
	a.lid = 5;
	route_back(g, 4, a);
	WEFT_EXPECT_TRUE(t, a.global);
	WEFT_EXPECT_TRUE(t, same_gid(a.grh.gid, sgid));
	WEFT_EXPECT_EQ(t, a.grh.sgid_index, 4);
	WEFT_EXPECT_EQ(t, a.grh.hop_limit, 0xff);
	WEFT_EXPECT_EQ(t, a.grh.traffic_class, 0x2a);
	WEFT_EXPECT_EQ(t, a.grh.flow_label, 0xabcdeu);
	WEFT_EXPECT_EQ(t, a.lid, 5);
	verbs::AhAttr ah;
	a.grh.hop_limit = 5;
	a.grh.flow_label = 0xfabcde; /* only 20 bits exist */
	global_route(a, ah);
	WEFT_EXPECT_TRUE(t, ah.global);
	WEFT_EXPECT_TRUE(t, ah.dgid == sgid);
	WEFT_EXPECT_EQ(t, ah.sgid_index, 4);
	WEFT_EXPECT_EQ(t, ah.hop_limit, 5);
	WEFT_EXPECT_EQ(t, ah.traffic_class, 0x2a);
	WEFT_EXPECT_EQ(t, ah.flow_label, 0xabcdeu);
}

void grh_get(Fixture &f, uint8_t mgmt_class, uint16_t dlid, const verbs::Gid &dgid)
{
	get(f, mgmt_class, 21, dlid);
	f.req.to.global = true;
	__builtin_memcpy(f.req.to.grh.gid, dgid.raw, 16);
	f.req.to.grh.hop_limit = 2;
	f.req.to.grh.traffic_class = 0x10;
	f.req.to.grh.flow_label = 0x12345;
}

/*
 * IBA 8.3, 13.5.1: a Get from weft0 to weft1 with a GRH reaches the
 * server with the route back to weft0's GID, and its answer (sent to
 * where the request came from) comes back with weft1's GID; weft1's PMA
 * (the device's firmware agent) answers through a GRH too.
 */
void grh_over_qp1(Test &t)
{
	auto fx = make_own<Fixture>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, fx);
	Fixture &f = *fx.value();
	WEFT_ASSERT_TRUE(t, f.d0 && f.d1 && f.p0 && f.p1);
	MadService &s0 = f.p0->gsi(), &s1 = f.p1->gsi();
	Agent pma_client{f.ch, iba::mgmt_class::perf, 1}, smi_client{f.ch, iba::mgmt_class::subn_lid_routed, 1};
	f.sh.svc = &s1;
	f.server.add_method(iba::method::get);
	WEFT_ASSERT_OK(t, s1.register_agent(f.server));
	WEFT_ASSERT_OK(t, s0.register_agent(f.client));
	WEFT_ASSERT_OK(t, s0.register_agent(pma_client));
	WEFT_ASSERT_OK(t, f.p0->smi().register_agent(smi_client));
	verbs::PortAttr p1;
	WEFT_ASSERT_OK(t, f.d1->query_port(1, p1));
	const verbs::Gid g0 = f.d0->query_gid(1, 0).value(), g1 = f.d1->query_gid(1, 0).value();
	WEFT_EXPECT_EQ(t, local_gid_index(*f.d1, 1, g1.raw).value(), 0);
	WEFT_EXPECT_ERR(t, local_gid_index(*f.d1, 1, g0.raw), err::ENOENT);
	const verbs::Gid sa_gid = verbs::Gid::make(0xfe80000000000000ull, 0x0200000000000002ull);
	WEFT_EXPECT_EQ(t, local_gid_index(*f.d1, 1, sa_gid.raw).value(), 0);

	grh_get(f, cls, p1.lid, g1);
	WEFT_EXPECT_OK(t, s0.send(f.client, f.req));
	WEFT_EXPECT_TRUE(t, wait_done(f.ch.done, 1));
	WEFT_EXPECT_EQ(t, f.ch.status, 0);
	WEFT_EXPECT_EQ(t, f.ch.resp_mod, 42u);
	WEFT_EXPECT_TRUE(t, f.sh.seen.global);
	WEFT_EXPECT_TRUE(t, same_gid(f.sh.seen.grh.gid, g0));
	WEFT_EXPECT_EQ(t, f.sh.seen.grh.sgid_index, 0);
	WEFT_EXPECT_EQ(t, f.sh.seen.grh.hop_limit, 0xff);
	WEFT_EXPECT_EQ(t, f.sh.seen.grh.traffic_class, 0x10);
	WEFT_EXPECT_EQ(t, f.sh.seen.grh.flow_label, 0x12345u);
	WEFT_EXPECT_TRUE(t, f.ch.from.global);
	WEFT_EXPECT_TRUE(t, same_gid(f.ch.from.grh.gid, g1));

	/* The PMA: ClassPortInfo (IBA 16.1.2) answered with a GRH to weft0's GID. */
	grh_get(f, iba::mgmt_class::perf, p1.lid, g1);
	f.req.mad.hdr().attr_id.set(iba::pma_attr::class_port_info);
	f.req.mad.hdr().attr_mod.set(0);
	WEFT_EXPECT_OK(t, s0.send(pma_client, f.req));
	WEFT_EXPECT_TRUE(t, wait_done(f.ch.done, 2));
	WEFT_EXPECT_EQ(t, f.ch.status, 0);
	WEFT_EXPECT_EQ(t, f.ch.resp_status, 0);
	WEFT_EXPECT_TRUE(t, f.ch.from.global);
	WEFT_EXPECT_TRUE(t, same_gid(f.ch.from.grh.gid, g1));

	/* To a GID weft1 does not have: dropped there and counted, the request times out. */
	const uint64_t foreign = static_cast<PortMad *>(f.p1)->gsi_foreign_dgid();
	grh_get(f, cls, p1.lid, g0);
	f.req.timeout_ms = 100;
	f.req.retries = 0;
	WEFT_EXPECT_OK(t, s0.send(f.client, f.req));
	WEFT_EXPECT_TRUE(t, wait_done(f.ch.done, 3));
	WEFT_EXPECT_EQ(t, f.ch.status, err::ETIMEDOUT);
	WEFT_EXPECT_EQ(t, static_cast<PortMad *>(f.p1)->gsi_foreign_dgid(), foreign + 1);
	WEFT_EXPECT_EQ(t, f.sh.served, 1);

	/* No GID at SGID index 1 (in-tree: EINVAL from the AH); no GRH on QP0. */
	grh_get(f, cls, p1.lid, g1);
	f.req.to.grh.sgid_index = 1;
	WEFT_EXPECT_ERR(t, s0.send(f.client, f.req), err::EINVAL);
	grh_get(f, iba::mgmt_class::subn_lid_routed, p1.lid, g1);
	f.req.mad.hdr().attr_id.set(iba::smp_attr::node_info);
	f.req.to.qpn = 0;
	WEFT_EXPECT_ERR(t, f.p0->smi().send(smi_client, f.req), err::EINVAL);
	WEFT_EXPECT_EQ(t, f.ch.done.load(Order::Acquire), 3);
	f.p0->smi().unregister_agent(smi_client);
	s0.unregister_agent(pma_client);
	s0.unregister_agent(f.client);
	s1.unregister_agent(f.server);
}

} // namespace

WEFT_TEST_SUITE(weft_mad_gsi, WEFT_CASE(get_over_qp1), WEFT_CASE(grh_route_conversion), WEFT_CASE(grh_over_qp1));
