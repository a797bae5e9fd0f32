// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: a CA port's SMI on QP0 (IBA 14.2.2) with the SMAs of the default
 * subnet (weft0 and weft1 behind weftsw0, on switch ports 1 and 2).  An
 * agent on weft0's SMI, as an SM or a diag would, asks:
 * - its own SMA with a hop-count-0 directed-route Get (looped back, never
 *   on the wire);
 * - the switch one hop out, and weft1 two hops out, by directed route;
 * - weft1 by LID;
 * - for SMInfo, which only an SM answers: the IBA error status comes home.
 * A path of 64 hops is refused at the sender, and counted.
 */
#include <weft/alloc.h>
#include <weft/atomic.h>
#include <weft/iba/smp_attrs.h>
#include <weft/mad/port.h>
#include <weft/test.h>

#include "../port_mad.h"

using namespace weft;
using namespace weft::mad;
using weft::test::Test;

namespace {

struct Asker final : AgentHandler {
	Atomic<int> done{0};
	int status = -1;
	Mad response;
	void recv(Agent &, const Mad &, const MadAddr &) override {}
	void send_done(Agent &, SendReq &r) override
	{
		status = r.status;
		response = r.response;
		done.fetch_add(1, Order::Release);
	}
};

struct Fixture {
	Ref<verbs::Device> d0 = verbs::find_device("weft0"), d1 = verbs::find_device("weft1");
	MadPort *p0 = d0 ? mad::find_port(*d0, 1) : nullptr;
	Asker ah;
	Agent dr{ah, iba::mgmt_class::subn_directed_route, 1};
	Agent lr{ah, iba::mgmt_class::subn_lid_routed, 1};
	SendReq req;
};

iba::Smp &smp(Mad &m)
{
	return *reinterpret_cast<iba::Smp *>(m.bytes);
}

template <typename T> const T &attr(const Mad &m)
{
	return *reinterpret_cast<const T *>(reinterpret_cast<const iba::Smp *>(m.bytes)->data);
}

/*
 * A SubnGet of @attr_id by directed route along @path (path[0] unused,
 * path[1..hops] read, at most 63), or by LID if @lid.
 */
void subn_get(Fixture &f, uint16_t attr_id, const uint8_t *path, uint8_t hops, uint16_t lid = 0)
{
	f.req.mad = Mad{};
	iba::Smp &s = smp(f.req.mad);
	s.base_version.set(1);
	s.mgmt_class.set(lid ? iba::mgmt_class::subn_lid_routed : iba::mgmt_class::subn_directed_route);
	s.class_version.set(1);
	s.method.set(iba::method::get);
	s.tid.set(0x77);
	s.attr_id.set(attr_id);
	s.hop_count.set(hops);
	s.dr_slid.set(iba::permissive_lid);
	s.dr_dlid.set(iba::permissive_lid);
	for (uint8_t i = 1; path && i <= hops && i < iba::max_dr_hops; i++)
		s.initial_path[i] = path[i];
	f.req.to = MadAddr{};
	f.req.to.lid = lid;
	f.req.timeout_ms = 1000;
	f.req.retries = 1;
}

bool ask(Fixture &f, Agent &a)
{
	int before = f.ah.done.load(Order::Acquire);
	if (!f.p0->smi().send(a, f.req))
		return false;
	for (int i = 0; i < 3000 && f.ah.done.load(Order::Acquire) == before; i++)
		weft_msleep(1);
	return f.ah.done.load(Order::Acquire) > before && f.ah.status == 0;
}

uint64_t port_guid(verbs::Device &d)
{
	auto g = d.query_gid(1, 0);
	return g ? g.value().interface_id() : 0;
}

uint64_t xmit_packets(verbs::Device &d)
{
	verbs::PortCounterValues v;
	return d.query_counters(1, v) ? v.xmit_packets : ~0ull;
}

void walk_the_subnet(Test &t)
{
	auto fx = make_own<Fixture>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, fx);
	Fixture &f = *fx.value();
	WEFT_ASSERT_TRUE(t, f.d0 && f.d1 && f.p0);
	WEFT_ASSERT_OK(t, f.p0->smi().register_agent(f.dr));
	WEFT_ASSERT_OK(t, f.p0->smi().register_agent(f.lr));

	/* Hop count 0: this port's own SMA answers, and nothing goes out. */
	uint64_t sent = xmit_packets(*f.d0);
	subn_get(f, iba::smp_attr::node_info, nullptr, 0);
	WEFT_EXPECT_TRUE(t, ask(f, f.dr));
	const auto &own = attr<iba::NodeInfo>(f.ah.response);
	WEFT_EXPECT_EQ(t, own.node_type.get(), uint8_t(1)); /* CA */
	WEFT_EXPECT_EQ(t, own.port_guid.get(), port_guid(*f.d0));
	WEFT_EXPECT_EQ(t, iba::NodeInfo::LocalPortNum::get(own.port_vendor), uint8_t(1));
	WEFT_EXPECT_EQ(t, iba::Smp::Direction::get(smp(f.ah.response).status), uint16_t(1));
	WEFT_EXPECT_EQ(t, xmit_packets(*f.d0), sent);

	/* One hop: the switch, reached on its port 1. */
	const uint8_t to_switch[] = {0, 1};
	subn_get(f, iba::smp_attr::node_info, to_switch, 1);
	WEFT_EXPECT_TRUE(t, ask(f, f.dr));
	const auto &sw = attr<iba::NodeInfo>(f.ah.response);
	WEFT_EXPECT_EQ(t, sw.node_type.get(), uint8_t(2));
	WEFT_EXPECT_EQ(t, iba::NodeInfo::LocalPortNum::get(sw.port_vendor), uint8_t(1));
	WEFT_EXPECT_EQ(t, smp(f.ah.response).return_path[1], uint8_t(1));

	/* Two hops: out of the switch's port 2 to weft1. */
	const uint8_t to_weft1[] = {0, 1, 2};
	subn_get(f, iba::smp_attr::node_info, to_weft1, 2);
	WEFT_EXPECT_TRUE(t, ask(f, f.dr));
	WEFT_EXPECT_EQ(t, attr<iba::NodeInfo>(f.ah.response).node_type.get(), uint8_t(1));
	WEFT_EXPECT_EQ(t, attr<iba::NodeInfo>(f.ah.response).port_guid.get(), port_guid(*f.d1));

	/* By LID (the default subnet is autoconfigured): weft1's PortInfo names its LID. */
	verbs::PortAttr pa;
	WEFT_ASSERT_OK(t, f.d1->query_port(1, pa));
	subn_get(f, iba::smp_attr::port_info, nullptr, 0, pa.lid);
	smp(f.req.mad).attr_mod.set(1);
	WEFT_EXPECT_TRUE(t, ask(f, f.lr));
	WEFT_EXPECT_EQ(t, attr<iba::PortInfo>(f.ah.response).lid.get(), pa.lid);

	/* IBA 14.2.5.1: no SM here, so SMInfo comes back unsupported, by the way it went. */
	subn_get(f, iba::smp_attr::sm_info, nullptr, 0);
	WEFT_EXPECT_TRUE(t, ask(f, f.dr));
	WEFT_EXPECT_NE(t, iba::Smp::Status::get(smp(f.ah.response).status), uint16_t(0));

	/* IBA 14.2.1.2, C14-6: 64 hops cannot be sent. */
	uint8_t too_far[iba::max_dr_hops] = {0, 1};
	subn_get(f, iba::smp_attr::node_info, too_far, 64);
	const uint64_t dropped = static_cast<PortMad *>(f.p0)->smi_dropped();
	WEFT_EXPECT_ERR(t, f.p0->smi().send(f.dr, f.req), err::EINVAL);
	WEFT_EXPECT_EQ(t, static_cast<PortMad *>(f.p0)->smi_dropped(), dropped + 1);

	f.p0->smi().unregister_agent(f.dr);
	f.p0->smi().unregister_agent(f.lr);
}

} // namespace

WEFT_TEST_SUITE(weft_mad_smi_port, WEFT_CASE(walk_the_subnet));
