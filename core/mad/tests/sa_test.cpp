// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the kernel SA client (IBA 15.4) against a stand-in SA.  An agent
 * of class SA on weft1's GSI plays the subnet administrator; weft0's SMA
 * is told (SubnSet PortInfo.MasterSMLID, as an SM would) that the SM is
 * at weft1's LID.  Then, from weft0:
 * - a PathRecord query, and resolve_path served from the cache until a
 *   subnet event of the port invalidates it;
 * - two joins of one multicast group making one SA membership, given
 *   back (SubnAdmDelete) only at the last leave;
 * - a ServiceRecord table too long for one MAD (RMPP);
 * - the SA's ClassPortInfo, CapabilityMask2 as the SA sent it;
 * - with the SA gone, the unsupported-method answer as EREMOTEIO, and
 *   with no SM LID, ENODEV.
 */
#include <weft/alloc.h>
#include <weft/mad/port.h>
#include <weft/mad/sa.h>
#include <weft/test.h>
#include <weft/verbs/test_pair.h>

#include "../../../drivers/hca/tests/smp_fixture.h"

using namespace weft;
using namespace weft::mad;
using weft::test::Test;

namespace {

constexpr uint16_t group_mlid = 0xc001;
constexpr size_t services = 5;

struct FakeSa final : AgentHandler {
	MadService *svc = nullptr;
	uint16_t lid0 = 0, lid1 = 0;
	int paths = 0, joins = 0, leaves = 0, tables = 0, cpis = 0;

	void answer(Agent &a, const Mad &m, const MadAddr &to, uint8_t method, const void *rec, size_t len,
		    uint16_t stride)
	{
		auto buf = Array<uint8_t>::make(Gfp::Sleep, iba::sa_data_offset + len);
		auto r = make_own<SendReq>(Gfp::Sleep);
		if (!buf || !r)
			return;
		uint8_t *b = buf.value().data();
		__builtin_memcpy(b, m.bytes, iba::sa_data_offset);
		reinterpret_cast<iba::MadHeader *>(b)->method.set(method);
		reinterpret_cast<iba::SaHeader *>(b + iba::sa_header_offset)->attr_offset.set(stride);
		__builtin_memcpy(b + iba::sa_data_offset, rec, len);
		SendReq &s = *r.value();
		s.to = to;
		if (len > iba::sa_data_size) {
			/* IBA 15.4.2: a table longer than one MAD goes by RMPP. */
			iba::RmppHeader &h = *reinterpret_cast<iba::RmppHeader *>(b + 24);
			h.version.set(1);
			h.type.set(iba::rmpp_type::data);
			iba::RmppHeader::Flags::set(h.rtime_flags, iba::rmpp_flag::active);
			s.long_msg = ConstBytes(b, iba::sa_data_offset + len);
		} else {
			__builtin_memcpy(s.mad.bytes, b, iba::sa_data_offset + len);
		}
		(void)svc->send(a, s);
	}

	void recv(Agent &a, const Mad &m, const MadAddr &from) override
	{
		const uint8_t *rec = m.bytes + iba::sa_data_offset;
		switch (m.hdr().attr_id.get()) {
		case iba::sa_attr::path_record: {
			paths++;
			iba::PathRecord p;
			__builtin_memcpy(&p, rec, sizeof(p));
			p.dlid.set(lid1);
			p.slid.set(lid0);
			answer(a, m, from, iba::sa_method::get_resp, &p, sizeof(p), sizeof(p) / 8);
			break;
		}
		case iba::sa_attr::mcmember_record: {
			iba::McMemberRecord g;
			__builtin_memcpy(&g, rec, sizeof(g));
			if (m.hdr().method.get() == iba::sa_method::del) {
				leaves++;
				answer(a, m, from, iba::sa_method::del_resp, &g, sizeof(g), 0);
				break;
			}
			joins++;
			g.mlid.set(group_mlid);
			g.qkey.set(0x1234);
			answer(a, m, from, iba::sa_method::get_resp, &g, sizeof(g), 0);
			break;
		}
		case iba::sa_attr::class_port_info: {
			cpis++;
			iba::ClassPortInfo c{};
			c.base_version.set(1);
			c.class_version.set(iba::sa_class_version);
			iba::ClassPortInfo::CapabilityMask2::set(c.cap2_resp_time,
								 iba::sa_cap2::send_only_full_member | 1);
			iba::ClassPortInfo::RespTimeValue::set(c.cap2_resp_time, 0x10);
			answer(a, m, from, iba::sa_method::get_resp, &c, sizeof(c), 0);
			break;
		}
		case iba::sa_attr::service_record: {
			tables++;
			auto all = Array<iba::ServiceRecord>::make(Gfp::Sleep, services);
			if (!all)
				return;
			for (size_t i = 0; i < services; i++) {
				all.value()[i].service_id.set(0x1000 + i);
				all.value()[i].service_name[0] = static_cast<uint8_t>('a' + i);
			}
			answer(a, m, from, iba::sa_method::get_table_resp, all.value().data(),
			       services * sizeof(iba::ServiceRecord), sizeof(iba::ServiceRecord) / 8);
			break;
		}
		}
	}
	void send_done(Agent &, SendReq &) override {}
};

struct Fixture {
	Ref<verbs::Device> d0 = verbs::find_device("weft0"), d1 = verbs::find_device("weft1");
	MadPort *p1 = d1 ? mad::find_port(*d1, 1) : nullptr;
	FakeSa sa;
	Agent agent{sa, iba::mgmt_class::subn_adm, iba::sa_class_version};
	hca::fixture::SmpPair smp;
};

/* What an SM does to tell a port where it is: SubnSet PortInfo.MasterSMLID. */
bool set_sm_lid(Fixture &f, uint16_t lid)
{
	if (f.smp.get(*f.d0, 1, iba::smp_attr::port_info, 1) != verbs::MadOutcome::Reply)
		return false;
	f.smp.to_set();
	f.smp.data<iba::PortInfo>().master_sm_lid.set(lid);
	return f.smp.ask(*f.d0, 1) == verbs::MadOutcome::Reply && f.smp.status() == 0;
}

uint16_t lid_of(verbs::Device &d)
{
	verbs::PortAttr a;
	return d.query_port(1, a) ? a.lid : 0;
}

/* ClassPortInfo: what the SA takes, bit for bit (apart: sa_queries' frame is large enough). */
__attribute__((noinline)) void class_port_info(Test &t, Fixture &f)
{
	auto cpi = sa::class_port_info(*f.d0, 1);
	WEFT_ASSERT_OK(t, cpi);
	WEFT_EXPECT_EQ(t, f.sa.cpis, 1);
	WEFT_EXPECT_EQ(t, iba::ClassPortInfo::CapabilityMask2::get(cpi.value().cap2_resp_time),
		       iba::sa_cap2::send_only_full_member | 1u);
	WEFT_EXPECT_EQ(t, iba::ClassPortInfo::RespTimeValue::get(cpi.value().cap2_resp_time), 0x10u);
	WEFT_EXPECT_EQ(t, cpi.value().class_version.get(), iba::sa_class_version);
}

/* Two users of one group: one SA membership, given back at the last leave. */
__attribute__((noinline)) void shared_membership(Test &t, Fixture &f)
{
	iba::McMemberRecord want{};
	want.mgid[0] = 0xff;
	want.mgid[1] = 0x12;
	want.mgid[15] = 1;
	iba::McMemberRecord::JoinState::set(want.scope_state, iba::join::full);
	auto m1 = sa::join(*f.d0, 1, want, 0);
	WEFT_ASSERT_OK(t, m1);
	auto m2 = sa::join(*f.d0, 1, want, 0);
	WEFT_ASSERT_OK(t, m2);
	WEFT_EXPECT_EQ(t, f.sa.joins, 1);
	WEFT_EXPECT_TRUE(t, m1.value() == m2.value());
	WEFT_EXPECT_EQ(t, sa::record(*m1.value()).mlid.get(), group_mlid);
	verbs::Gid mgid;
	__builtin_memcpy(mgid.raw, want.mgid, 16);
	WEFT_EXPECT_TRUE(t, sa::joined(*f.d0, 1, mgid, iba::join::full));
	WEFT_EXPECT_FALSE(t, sa::joined(*f.d0, 1, mgid, iba::join::send_only_full));
	WEFT_EXPECT_FALSE(t, sa::joined(*f.d0, 2, mgid, iba::join::full));
	sa::leave(m1.value());
	WEFT_EXPECT_EQ(t, f.sa.leaves, 0);
	WEFT_EXPECT_TRUE(t, sa::joined(*f.d0, 1, mgid, iba::join::full));
	sa::leave(m2.value());
	WEFT_EXPECT_EQ(t, f.sa.leaves, 1);
	WEFT_EXPECT_FALSE(t, sa::joined(*f.d0, 1, mgid, iba::join::full));
}

void sa_queries(Test &t)
{
	auto fx = make_own<Fixture>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, fx);
	Fixture &f = *fx.value();
	WEFT_ASSERT_TRUE(t, f.d0 && f.d1 && f.p1);
	f.sa.svc = &f.p1->gsi();
	f.sa.lid0 = lid_of(*f.d0);
	f.sa.lid1 = lid_of(*f.d1);
	f.agent.rmpp = true;
	const uint8_t methods[] = {iba::sa_method::get, iba::sa_method::set, iba::sa_method::get_table,
				   iba::sa_method::del};
	for (uint8_t m : methods)
		f.agent.add_method(m);
	WEFT_ASSERT_OK(t, f.p1->gsi().register_agent(f.agent));
	verbs::testing::Events events;
	f.d0->add_event_handler(events);
	bool told = set_sm_lid(f, f.sa.lid1);
	/* The SMA's SmChange event comes from a work item: let it pass before caching. */
	bool seen = told && events.wait(verbs::EventType::SmChange, 1);
	f.d0->remove_event_handler(events);
	WEFT_ASSERT_TRUE(t, told);
	WEFT_EXPECT_TRUE(t, seen);

	/* A path, then the same from the cache, then asked again after a subnet change. */
	auto gid1 = f.d1->query_gid(1, 0);
	WEFT_ASSERT_OK(t, gid1);
	auto path = sa::resolve_path(*f.d0, 1, gid1.value(), 0xffff);
	WEFT_ASSERT_OK(t, path);
	WEFT_EXPECT_EQ(t, path.value().dlid.get(), f.sa.lid1);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(path.value().dgid, gid1.value().raw, 16), 0);
	WEFT_EXPECT_OK(t, sa::resolve_path(*f.d0, 1, gid1.value(), 0xffff));
	WEFT_EXPECT_EQ(t, f.sa.paths, 1);
	f.d0->dispatch_event(verbs::Event{verbs::EventType::SmChange, f.d0.get(), 1});
	WEFT_EXPECT_OK(t, sa::resolve_path(*f.d0, 1, gid1.value(), 0xffff));
	WEFT_EXPECT_EQ(t, f.sa.paths, 2);

	shared_membership(t, f);

	/* A table of 5 service records (880 bytes): segmented by RMPP, whole here. */
	auto out = Array<iba::ServiceRecord>::make(Gfp::Sleep, services);
	WEFT_ASSERT_OK(t, out);
	iba::ServiceRecord any{};
	auto n = sa::get_services(*f.d0, 1, any, 0, out.value().data(), services);
	WEFT_ASSERT_OK(t, n);
	WEFT_EXPECT_EQ(t, n.value(), services);
	WEFT_EXPECT_EQ(t, out.value()[4].service_id.get(), 0x1004ull);
	WEFT_EXPECT_EQ(t, out.value()[4].service_name[0], uint8_t('e'));

	class_port_info(t, f);

	/* The SA gone: weft1's service answers "method not supported". */
	f.p1->gsi().unregister_agent(f.agent);
	iba::PathRecord none{};
	WEFT_EXPECT_ERR(t, sa::get_path(*f.d0, 1, none, 0), err::EREMOTEIO);
	/* No SM LID at all. */
	WEFT_ASSERT_TRUE(t, set_sm_lid(f, 0));
	WEFT_EXPECT_ERR(t, sa::get_path(*f.d0, 1, none, 0), err::ENODEV);
}

} // namespace

WEFT_TEST_SUITE(weft_mad_sa, WEFT_CASE(sa_queries));
