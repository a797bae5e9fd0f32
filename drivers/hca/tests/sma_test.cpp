// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the SMA (drivers/hca/sma*.cpp) through Device::process_mad, on a
 * private two-port HCA cabled to a private four-port switch beside the
 * default subnet: every attribute's Get and Set, bad values answered
 * with a status and changing nothing, the PortState machine, M_Key
 * protection and its lease, the verbs events the changes raise.
 */
#include <weft/test.h>
#include <weft/verbs/test_pair.h>

#include "../hca.h"
#include "../switch.h"
#include "smp_fixture.h"

using namespace weft;
using namespace weft::hca;
using namespace weft::iba;
using weft::hca::fixture::SmpPair;
using weft::test::Test;
using verbs::EventType;
using verbs::MadOutcome;
using verbs::PortState;

namespace {

struct Rig {
	Hca *h = nullptr;
	Switch *s = nullptr;
	verbs::testing::Events ev;
	SmpPair m;

	Result<void> up()
	{
		h = WEFT_TRY(Hca::create(2));
		s = WEFT_TRY(Switch::create(4));
		Fabric::get().add(*h);
		Fabric::get().add(*s);
		h->add_event_handler(ev);
		return Fabric::get().connect(*h->port(1), *s->port(1));
	}
	~Rig()
	{
		if (h) {
			h->remove_event_handler(ev);
			Fabric::get().remove(*h);
			h->put();
		}
		if (s) {
			Fabric::get().remove(*s);
			s->put();
		}
	}
	/* PortInfo of the HCA's port @p, read, changed by @edit, written back: the status. */
	template <typename F> uint16_t set_port_info(uint8_t p, F edit, uint64_t key = 0)
	{
		m.get(*h, p, smp_attr::port_info, p, key);
		m.to_set(key);
		edit(m.data<PortInfo>());
		m.ask(*h, p);
		return m.status();
	}
};

Result<Own<Rig>> rig()
{
	auto r = WEFT_TRY(make_own<Rig>(Gfp::Sleep));
	WEFT_TRY(r->up());
	return r;
}

void node_info_per_port(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	for (uint8_t p = 1; p <= 2; p++) {
		WEFT_ASSERT_EQ(t, int(r.m.get(*r.h, p, smp_attr::node_info)), int(MadOutcome::Reply));
		const auto &ni = r.m.got<NodeInfo>();
		WEFT_EXPECT_EQ(t, r.m.status(), uint16_t(0));
		WEFT_EXPECT_EQ(t, r.m.resp.method.get(), method::get_resp);
		WEFT_EXPECT_EQ(t, ni.node_type.get(), uint8_t(1));
		WEFT_EXPECT_EQ(t, ni.num_ports.get(), uint8_t(2));
		WEFT_EXPECT_EQ(t, ni.node_guid.get(), r.h->node_guid);
		WEFT_EXPECT_EQ(t, ni.port_guid.get(), r.h->port(p)->guid);
		WEFT_EXPECT_EQ(t, NodeInfo::LocalPortNum::get(ni.port_vendor), uint32_t(p));
		WEFT_EXPECT_EQ(t, ni.partition_cap.get(), Port::pkey_table_len);
	}
	WEFT_ASSERT_EQ(t, int(r.m.get(*r.s, 3, smp_attr::node_info)), int(MadOutcome::Reply));
	WEFT_EXPECT_EQ(t, r.m.got<NodeInfo>().node_type.get(), uint8_t(2));
	WEFT_EXPECT_EQ(t, r.m.got<NodeInfo>().port_guid.get(), r.s->node_guid);
	WEFT_EXPECT_EQ(t, NodeInfo::LocalPortNum::get(r.m.got<NodeInfo>().port_vendor), 3u);
	WEFT_ASSERT_EQ(t, int(r.m.get(*r.h, 1, smp_attr::node_description)), int(MadOutcome::Reply));
	WEFT_EXPECT_EQ(t, __builtin_memcmp(r.m.got<NodeDescription>().text, "Weft soft HCA", 14), 0);
	/* Read-only: a Set is an unsupported method/attribute combination. */
	r.m.get(*r.h, 1, smp_attr::node_info);
	r.m.to_set();
	r.m.ask(*r.h, 1);
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::attr_unsupported);
}

void unsupported_requests(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	r.m.get(*r.h, 1, smp_attr::switch_info);
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::attr_unsupported);
	r.m.get(*r.h, 1, 0x7777);
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::attr_unsupported);
	/* SMInfo is the SM's (IBA 14.4.1): a CA leaves it to the MAD layer, a switch has none. */
	WEFT_EXPECT_EQ(t, int(r.m.get(*r.h, 1, smp_attr::sm_info)), int(MadOutcome::NotMine));
	WEFT_EXPECT_EQ(t, int(r.m.get(*r.s, 1, smp_attr::sm_info)), int(MadOutcome::Reply));
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::attr_unsupported);
	fixture::smp_request(r.m.req, mgmt_class::subn_directed_route, 0x04, smp_attr::node_info);
	WEFT_EXPECT_EQ(t, int(r.m.ask(*r.h, 1)), int(MadOutcome::NotMine));
	WEFT_EXPECT_EQ(t, int(r.m.ask(*r.s, 1)), int(MadOutcome::Reply));
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::method_unsupported);
	WEFT_EXPECT_TRUE(t, Smp::Direction::get(r.m.resp.status));
	fixture::smp_request(r.m.req, mgmt_class::subn_lid_routed, method::get_resp, smp_attr::node_info);
	WEFT_EXPECT_EQ(t, int(r.m.ask(*r.h, 1)), int(MadOutcome::NotMine));
	fixture::smp_request(r.m.req, mgmt_class::subn_lid_routed, method::get, smp_attr::node_info);
	r.m.req.class_version.set(2);
	r.m.ask(*r.h, 1);
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::bad_version);
	WEFT_EXPECT_EQ(t, int(r.m.get(*r.h, 1, smp_attr::node_info, 0, 0)), int(MadOutcome::Reply));
	fixture::smp_request(r.m.req, mgmt_class::cm, method::get, 0x12);
	WEFT_EXPECT_EQ(t, int(r.m.ask(*r.h, 1)), int(MadOutcome::NotMine));
}

void port_info_set_and_events(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	uint16_t st = r.set_port_info(1, [](PortInfo &pi) {
		pi.lid.set(0x33);
		PortInfo::Lmc::set(pi.mkey_lmc, 1);
		pi.master_sm_lid.set(5);
		PortInfo::MasterSmSl::set(pi.mtu_smsl, 3);
		PortInfo::NeighborMtu::set(pi.mtu_smsl, 4);
		PortInfo::SubnetTimeout::set(pi.rereg_timeout, 18);
		PortInfo::ClientReregister::set(pi.rereg_timeout, 1);
	});
	WEFT_EXPECT_EQ(t, st, uint16_t(0));
	const auto &pi = r.m.got<PortInfo>();
	WEFT_EXPECT_EQ(t, pi.lid.get(), uint16_t(0x33));
	WEFT_EXPECT_EQ(t, pi.master_sm_lid.get(), uint16_t(5));
	WEFT_EXPECT_EQ(t, PortInfo::PortState::get(pi.speed_state), uint8_t(PortState::Init));
	WEFT_EXPECT_EQ(t, pi.local_port_num.get(), uint8_t(1));
	WEFT_EXPECT_EQ(t, PortInfo::MtuCap::get(pi.init_reply_mtucap), uint8_t(5));
	WEFT_EXPECT_EQ(t, PortInfo::ClientReregister::get(pi.rereg_timeout), uint8_t(0));
	verbs::PortAttr pa;
	WEFT_ASSERT_OK(t, r.h->query_port(1, pa));
	WEFT_EXPECT_EQ(t, pa.lid, uint16_t(0x33));
	WEFT_EXPECT_EQ(t, pa.lmc, uint8_t(1));
	WEFT_EXPECT_EQ(t, pa.sm_lid, uint16_t(5));
	WEFT_EXPECT_EQ(t, pa.sm_sl, uint8_t(3));
	WEFT_EXPECT_EQ(t, pa.subnet_timeout, uint8_t(18));
	WEFT_EXPECT_EQ(t, int(pa.active_mtu), int(Mtu::M2048));
	WEFT_EXPECT_TRUE(t, r.ev.wait(EventType::LidChange, 1));
	WEFT_EXPECT_TRUE(t, r.ev.wait(EventType::SmChange, 1));
	WEFT_EXPECT_TRUE(t, r.ev.wait(EventType::ClientReregister, 1));
	/* Bad values: a status, and nothing of the Set takes effect. */
	auto bad = [&](auto edit) {
		uint16_t s = r.set_port_info(1, [&](PortInfo &p) {
			p.lid.set(0x44);
			edit(p);
		});
		WEFT_EXPECT_EQ(t, s, mad_status::invalid_value);
		WEFT_EXPECT_EQ(t, r.h->port(1)->lid.load(Order::Relaxed), uint16_t(0x33));
	};
	bad([](PortInfo &p) { PortInfo::NeighborMtu::set(p.mtu_smsl, 6); });
	bad([](PortInfo &p) { PortInfo::NeighborMtu::set(p.mtu_smsl, 0); });
	bad([](PortInfo &p) { PortInfo::OperationalVls::set(p.opvls_enforce, 2); });
	bad([](PortInfo &p) { PortInfo::PortState::set(p.speed_state, 5); });
	bad([](PortInfo &p) { PortInfo::PhysState::set(p.phys_down, 4); });
	bad([](PortInfo &p) { PortInfo::LinkDownDefault::set(p.phys_down, 3); });
	bad([](PortInfo &p) { p.link_width_enabled.set(8); });
	bad([](PortInfo &p) { p.lid.set(0xc001); });
	/* A CA port is set only through itself. */
	r.m.get(*r.h, 1, smp_attr::port_info, 2);
	r.m.to_set();
	r.m.data<PortInfo>().lid.set(0x55);
	r.m.ask(*r.h, 1);
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::invalid_value);
	WEFT_EXPECT_EQ(t, r.h->port(2)->lid.load(Order::Relaxed), uint16_t(0));
	r.m.get(*r.h, 1, smp_attr::port_info, 3);
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::invalid_value);
	/* modify_port: IsSM shows in query_port and in PortInfo.CapabilityMask. */
	WEFT_ASSERT_OK(t, r.h->modify_port(1, verbs::port_cap::is_sm, 0));
	WEFT_ASSERT_OK(t, r.h->query_port(1, pa));
	WEFT_EXPECT_TRUE(t, pa.port_cap_flags & verbs::port_cap::is_sm);
	r.m.get(*r.h, 1, smp_attr::port_info, 1);
	WEFT_EXPECT_TRUE(t, r.m.got<PortInfo>().capability_mask.get() & verbs::port_cap::is_sm);
	WEFT_EXPECT_TRUE(t, r.m.got<PortInfo>().capability_mask.get() & verbs::port_cap::is_trap_supported);
	WEFT_ASSERT_OK(t, r.h->modify_port(1, 0, verbs::port_cap::is_sm));
	WEFT_ASSERT_OK(t, r.h->query_port(1, pa));
	WEFT_EXPECT_FALSE(t, pa.port_cap_flags & verbs::port_cap::is_sm);
}

uint16_t set_state(Rig &r, uint8_t state, uint8_t phys = 0)
{
	return r.set_port_info(1, [&](PortInfo &p) {
		PortInfo::PortState::set(p.speed_state, state);
		PortInfo::PhysState::set(p.phys_down, phys);
	});
}

void port_state_machine(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	Port &p = *r.h->port(1), &peer = *r.s->port(1);
	WEFT_ASSERT_EQ(t, int(p.state.load(Order::Relaxed)), int(PortState::Init));
	/* Init -> Active skips Armed: refused. */
	WEFT_EXPECT_EQ(t, set_state(r, 4), mad_status::invalid_value);
	WEFT_EXPECT_EQ(t, int(p.state.load(Order::Relaxed)), int(PortState::Init));
	WEFT_EXPECT_EQ(t, set_state(r, 0), uint16_t(0));
	WEFT_EXPECT_EQ(t, int(p.state.load(Order::Relaxed)), int(PortState::Init));
	WEFT_EXPECT_EQ(t, set_state(r, 3), uint16_t(0));
	WEFT_EXPECT_EQ(t, int(p.state.load(Order::Relaxed)), int(PortState::Armed));
	WEFT_EXPECT_EQ(t, set_state(r, 4), uint16_t(0));
	WEFT_EXPECT_EQ(t, int(p.state.load(Order::Relaxed)), int(PortState::Active));
	WEFT_EXPECT_TRUE(t, r.ev.wait(EventType::PortActive, 1));
	/* Active -> Armed goes backwards, and Init is the link's to reach: refused. */
	WEFT_EXPECT_EQ(t, set_state(r, 3), mad_status::invalid_value);
	WEFT_EXPECT_EQ(t, set_state(r, 2), mad_status::invalid_value);
	WEFT_EXPECT_EQ(t, int(p.state.load(Order::Relaxed)), int(PortState::Active));
	/* Down: the link retrains, both ends back in Init. */
	WEFT_EXPECT_EQ(t, set_state(r, 1), uint16_t(0));
	WEFT_EXPECT_EQ(t, int(p.state.load(Order::Relaxed)), int(PortState::Init));
	WEFT_EXPECT_EQ(t, int(peer.state.load(Order::Relaxed)), int(PortState::Init));
	WEFT_EXPECT_EQ(t, int(p.phys.load(Order::Relaxed)), int(verbs::PhysState::LinkUp));
	WEFT_EXPECT_EQ(t, p.counters.link_downed.load(Order::Relaxed), uint64_t(1));
	WEFT_EXPECT_TRUE(t, r.ev.wait(EventType::PortErr, 1));
	/* Disabled keeps the link down, Polling brings it back. */
	WEFT_EXPECT_EQ(t, set_state(r, 0, 3), uint16_t(0));
	WEFT_EXPECT_EQ(t, int(p.phys.load(Order::Relaxed)), int(verbs::PhysState::Disabled));
	WEFT_EXPECT_EQ(t, int(p.state.load(Order::Relaxed)), int(PortState::Down));
	WEFT_EXPECT_EQ(t, int(peer.state.load(Order::Relaxed)), int(PortState::Down));
	WEFT_EXPECT_EQ(t, set_state(r, 3), mad_status::invalid_value);
	WEFT_EXPECT_EQ(t, set_state(r, 0, 2), uint16_t(0));
	WEFT_EXPECT_EQ(t, int(p.phys.load(Order::Relaxed)), int(verbs::PhysState::LinkUp));
	WEFT_EXPECT_EQ(t, int(p.state.load(Order::Relaxed)), int(PortState::Init));
	WEFT_EXPECT_EQ(t, int(peer.phys.load(Order::Relaxed)), int(verbs::PhysState::LinkUp));
	/* The unlinked port 2 cannot be armed. */
	r.m.get(*r.h, 2, smp_attr::port_info, 2);
	r.m.to_set();
	PortInfo::PortState::set(r.m.data<PortInfo>().speed_state, 3);
	r.m.ask(*r.h, 2);
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::invalid_value);
	WEFT_EXPECT_EQ(t, int(r.h->port(2)->state.load(Order::Relaxed)), int(PortState::Down));
	/* A switch port, through the switch's SMA (modifier = port). */
	r.m.get(*r.s, 1, smp_attr::port_info, 1);
	r.m.to_set();
	PortInfo::PortState::set(r.m.data<PortInfo>().speed_state, 3);
	r.m.ask(*r.s, 1);
	WEFT_EXPECT_EQ(t, r.m.status(), uint16_t(0));
	WEFT_EXPECT_EQ(t, int(peer.state.load(Order::Relaxed)), int(PortState::Armed));
	/* Port 0 has no physical link to disable. */
	r.m.get(*r.s, 1, smp_attr::port_info, 0);
	r.m.to_set();
	PortInfo::PhysState::set(r.m.data<PortInfo>().phys_down, 3);
	r.m.ask(*r.s, 1);
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::invalid_value);
	/*
	 * A base port 0 (IBA 18.2.1) is LinkUp/Active from the start, and has
	 * no state machine: Down, Armed or Active in a Set change nothing,
	 * while the rest of the Set (the LID) takes effect.
	 */
	Port &p0 = *r.s->port(0);
	WEFT_EXPECT_EQ(t, int(p0.state.load(Order::Relaxed)), int(PortState::Active));
	WEFT_EXPECT_EQ(t, int(p0.phys.load(Order::Relaxed)), int(verbs::PhysState::LinkUp));
	const uint8_t p0_states[] = {1, 3, 4, 0};
	for (uint8_t st : p0_states) {
		r.m.get(*r.s, 1, smp_attr::port_info, 0);
		r.m.to_set();
		PortInfo::PortState::set(r.m.data<PortInfo>().speed_state, st);
		r.m.data<PortInfo>().lid.set(static_cast<uint16_t>(0x40 + st));
		r.m.ask(*r.s, 1);
		WEFT_EXPECT_EQ(t, r.m.status(), uint16_t(0));
		WEFT_EXPECT_EQ(t, PortInfo::PortState::get(r.m.got<PortInfo>().speed_state), uint8_t(PortState::Active));
		WEFT_EXPECT_EQ(t, int(p0.state.load(Order::Relaxed)), int(PortState::Active));
		WEFT_EXPECT_EQ(t, p0.lid.load(Order::Relaxed), uint16_t(0x40 + st));
	}
	/* Init is never set, on any port. */
	r.m.get(*r.s, 1, smp_attr::port_info, 0);
	r.m.to_set();
	PortInfo::PortState::set(r.m.data<PortInfo>().speed_state, 2);
	r.m.ask(*r.s, 1);
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::invalid_value);
	WEFT_EXPECT_EQ(t, int(p0.state.load(Order::Relaxed)), int(PortState::Active));
	verbs::PortAttr pa;
	WEFT_ASSERT_OK(t, r.s->query_port(0, pa));
	WEFT_EXPECT_EQ(t, int(pa.state), int(PortState::Active));
}

void m_key_protection_and_lease(Test &t)
{
	constexpr uint64_t key = 0x1122334455667788ull, wrong = 0x99;
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	PortMgmt &m = r.h->port(1)->mgmt;
	WEFT_ASSERT_EQ(t, r.set_port_info(1, [&](PortInfo &p) {
		p.m_key.set(key);
		PortInfo::MKeyProtect::set(p.mkey_lmc, 1);
	}), uint16_t(0));
	/* Level 1: a Get with the wrong key is answered, with M_Key 0. */
	WEFT_EXPECT_EQ(t, int(r.m.get(*r.h, 1, smp_attr::port_info, 1, wrong)), int(MadOutcome::Reply));
	WEFT_EXPECT_EQ(t, r.m.got<PortInfo>().m_key.get(), uint64_t(0));
	r.m.get(*r.h, 1, smp_attr::port_info, 1, key);
	WEFT_EXPECT_EQ(t, r.m.got<PortInfo>().m_key.get(), key);
	/* A Set with the wrong key: no answer, no change, a violation. */
	r.m.to_set(wrong);
	r.m.data<PortInfo>().lid.set(0x77);
	WEFT_EXPECT_EQ(t, int(r.m.ask(*r.h, 1)), int(MadOutcome::Consumed));
	WEFT_EXPECT_EQ(t, r.h->port(1)->lid.load(Order::Relaxed), uint16_t(0));
	WEFT_EXPECT_EQ(t, m.m_key_violations, uint16_t(1));
	/* Level 2 with a 1 s lease: a wrong Get is a violation too, until the lease runs out. */
	WEFT_ASSERT_EQ(t, r.set_port_info(1, [&](PortInfo &p) {
		PortInfo::MKeyProtect::set(p.mkey_lmc, 2);
		p.m_key_lease_period.set(1);
	}, key), uint16_t(0));
	WEFT_EXPECT_EQ(t, int(r.m.get(*r.h, 1, smp_attr::port_info, 1, wrong)), int(MadOutcome::Consumed));
	WEFT_EXPECT_EQ(t, int(r.m.get(*r.h, 1, smp_attr::node_info, 0, wrong)), int(MadOutcome::Consumed));
	WEFT_EXPECT_EQ(t, m.m_key_violations, uint16_t(3));
	weft_msleep(1300);
	WEFT_EXPECT_EQ(t, int(r.m.get(*r.h, 1, smp_attr::port_info, 1, wrong)), int(MadOutcome::Reply));
	WEFT_EXPECT_EQ(t, PortInfo::MKeyProtect::get(r.m.got<PortInfo>().mkey_lmc), uint8_t(0));
	WEFT_EXPECT_EQ(t, r.m.got<PortInfo>().m_key.get(), key);
	/* A good key stops a running lease. */
	WEFT_ASSERT_EQ(t, r.set_port_info(1, [&](PortInfo &p) { PortInfo::MKeyProtect::set(p.mkey_lmc, 3); }, key),
		       uint16_t(0));
	WEFT_EXPECT_EQ(t, int(r.m.get(*r.h, 1, smp_attr::port_info, 1, wrong)), int(MadOutcome::Consumed));
	WEFT_EXPECT_EQ(t, int(r.m.get(*r.h, 1, smp_attr::port_info, 1, key)), int(MadOutcome::Reply));
	weft_msleep(1300);
	WEFT_EXPECT_EQ(t, int(r.m.get(*r.h, 1, smp_attr::port_info, 1, wrong)), int(MadOutcome::Consumed));
	WEFT_EXPECT_EQ(t, m.m_key_protect, uint8_t(3));
}

void pkey_and_port_tables(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	r.m.get(*r.h, 1, smp_attr::pkey_table, 0);
	WEFT_EXPECT_EQ(t, r.m.got<PkeyTable>().pkey[0].get(), uint16_t(0xffff));
	WEFT_EXPECT_EQ(t, r.m.got<PkeyTable>().pkey[1].get(), uint16_t(0));
	r.m.to_set();
	r.m.data<PkeyTable>().pkey[1].set(0x8001);
	r.m.ask(*r.h, 1);
	WEFT_EXPECT_EQ(t, r.m.status(), uint16_t(0));
	WEFT_EXPECT_EQ(t, r.m.got<PkeyTable>().pkey[1].get(), uint16_t(0x8001));
	auto pk = r.h->query_pkey(1, 1);
	WEFT_ASSERT_OK(t, pk);
	WEFT_EXPECT_EQ(t, pk.value(), uint16_t(0x8001));
	WEFT_EXPECT_TRUE(t, r.ev.wait(EventType::PkeyChange, 1));
	r.m.get(*r.h, 1, smp_attr::pkey_table, 1);
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::invalid_value);
	/* A switch's external ports have no P_Key table; port 0 has one entry. */
	r.m.get(*r.s, 1, smp_attr::pkey_table, 1u << 16);
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::invalid_value);
	r.m.get(*r.s, 1, smp_attr::pkey_table, 0);
	WEFT_EXPECT_EQ(t, r.m.got<PkeyTable>().pkey[0].get(), uint16_t(0xffff));

	r.m.get(*r.h, 2, smp_attr::guid_info, 0);
	WEFT_EXPECT_EQ(t, r.m.got<GuidInfo>().guid[0].get(), r.h->port(2)->guid);
	r.m.get(*r.h, 2, smp_attr::guid_info, 1);
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::invalid_value);

	r.m.get(*r.h, 1, smp_attr::sl_to_vl_table, 0);
	r.m.to_set();
	SlToVlTable::Odd::set(r.m.data<SlToVlTable>().vl_pair[7], 15);
	r.m.ask(*r.h, 1);
	r.m.get(*r.h, 1, smp_attr::sl_to_vl_table, 0);
	WEFT_EXPECT_EQ(t, SlToVlTable::Odd::get(r.m.got<SlToVlTable>().vl_pair[7]), uint8_t(15));

	r.m.get(*r.h, 1, smp_attr::vl_arbitration, vl_arb_block::low_0_31 << 16);
	r.m.to_set();
	r.m.data<VlArbTable>().entry[0].weight.set(64);
	r.m.ask(*r.h, 1);
	r.m.get(*r.h, 1, smp_attr::vl_arbitration, vl_arb_block::low_0_31 << 16);
	WEFT_EXPECT_EQ(t, r.m.got<VlArbTable>().entry[0].weight.get(), uint8_t(64));
	r.m.get(*r.h, 1, smp_attr::vl_arbitration, vl_arb_block::low_32_63 << 16);
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::invalid_value);
}

void switch_info_and_tables(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	Switch &s = *r.s;
	r.m.get(s, 1, smp_attr::switch_info);
	const auto &si = r.m.got<SwitchInfo>();
	WEFT_EXPECT_EQ(t, si.linear_fdb_cap.get(), uint16_t(0xc000));
	/* Cabling port 1 changed a port's state. */
	WEFT_EXPECT_EQ(t, SwitchInfo::PortStateChange::get(si.life_state), uint8_t(1));
	r.m.to_set();
	r.m.data<SwitchInfo>().linear_fdb_top.set(0x40);
	SwitchInfo::LifeTimeValue::set(r.m.data<SwitchInfo>().life_state, 18);
	r.m.ask(s, 1);
	WEFT_EXPECT_EQ(t, SwitchInfo::PortStateChange::get(si.life_state), uint8_t(0));
	WEFT_EXPECT_EQ(t, SwitchInfo::LifeTimeValue::get(si.life_state), uint8_t(18));
	WEFT_EXPECT_EQ(t, s.lft_top(), uint16_t(0x40));

	r.m.get(s, 1, smp_attr::linear_fdb, 1);
	r.m.to_set();
	r.m.data<LinearFdb>().port[2].set(3);
	r.m.ask(s, 1);
	WEFT_EXPECT_EQ(t, r.m.status(), uint16_t(0));
	WEFT_EXPECT_EQ(t, r.m.got<LinearFdb>().port[2].get(), uint8_t(3));
	WEFT_EXPECT_EQ(t, s.lft(66), uint8_t(3));
	WEFT_EXPECT_EQ(t, s.lft(67), no_port);
	r.m.to_set();
	r.m.data<LinearFdb>().port[2].set(2);
	r.m.data<LinearFdb>().port[3].set(9);
	r.m.ask(s, 1);
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::invalid_value);
	WEFT_EXPECT_EQ(t, s.lft(66), uint8_t(3));
	r.m.get(s, 1, smp_attr::linear_fdb, 768);
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::invalid_value);

	r.m.get(s, 1, smp_attr::multicast_fdb, 1);
	r.m.to_set();
	r.m.data<MulticastFdb>().port_mask[1].set(0x000c);
	r.m.ask(s, 1);
	WEFT_EXPECT_EQ(t, r.m.status(), uint16_t(0));
	WEFT_EXPECT_EQ(t, s.mft(0xc021), uint64_t(0xc));
	r.m.get(s, 1, smp_attr::multicast_fdb, 1u << 28 | 1);
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::invalid_value);
	r.m.get(s, 1, smp_attr::multicast_fdb, 512);
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::invalid_value);
	/* Not a CA's. */
	r.m.get(*r.h, 1, smp_attr::linear_fdb, 0);
	WEFT_EXPECT_EQ(t, r.m.status(), mad_status::attr_unsupported);
}

} // namespace

WEFT_TEST_SUITE(weft_hca_sma, WEFT_CASE(node_info_per_port), WEFT_CASE(unsupported_requests),
		WEFT_CASE(port_info_set_and_events), WEFT_CASE(port_state_machine),
		WEFT_CASE(m_key_protection_and_lease), WEFT_CASE(pkey_and_port_tables),
		WEFT_CASE(switch_info_and_tables));
