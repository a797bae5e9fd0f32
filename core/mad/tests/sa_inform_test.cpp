// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the SA client's subscriptions (core/mad/sa_inform.h): the
 * InformInfo it sends (IBA 15.2.5.12), the Reports of traps 64/65 it reads
 * and acknowledges (IBA 13.4.8.3, 14.2.5.1), and when it subscribes.
 */
#include <weft/iba/smp_attrs.h>
#include <weft/test.h>

#include "../sa_inform.h"

using namespace weft;
using namespace weft::mad;
using weft::test::Test;
using State = inform::Subscription::State;

namespace {

/* A SubnAdmReport(Notice) of generic trap @trap about @gid, as an SA sends it. */
void report(Mad &m, uint16_t trap, const uint8_t *gid, bool generic = true)
{
	m = Mad{};
	iba::MadHeader &h = m.hdr();
	h.base_version.set(1);
	h.mgmt_class.set(iba::mgmt_class::subn_adm);
	h.class_version.set(iba::sa_class_version);
	h.method.set(iba::sa_method::report);
	h.tid.set(0x1122334455667788ull);
	h.attr_id.set(iba::sa_attr::notice);
	auto &n = *reinterpret_cast<iba::Notice *>(m.bytes + iba::sa_data_offset);
	iba::Notice::IsGeneric::set(n.generic_type, generic ? 1 : 0);
	iba::Notice::Type::set(n.generic_type, iba::notice::type_subn_mgmt);
	n.producer_lo.set(iba::notice::producer_class_manager);
	n.trap_number.set(trap);
	__builtin_memcpy(n.data_details + iba::sa_trap::gid_offset, gid, 16);
}

const uint8_t gid[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0, 0x57, 0x46, 0x54, 0, 0, 0x03};

void subscription_record(Test &t)
{
	const iba::InformInfo ii = inform::subscription(65, true);
	const uint8_t zero[16] = {};
	WEFT_EXPECT_EQ(t, __builtin_memcmp(ii.gid, zero, 16), 0);
	WEFT_EXPECT_EQ(t, ii.lid_range_begin.get(), uint16_t(0xffff));
	WEFT_EXPECT_EQ(t, ii.is_generic.get(), uint8_t(1));
	WEFT_EXPECT_EQ(t, ii.subscribe.get(), uint8_t(1));
	WEFT_EXPECT_EQ(t, ii.type.get(), uint16_t(0xffff));
	WEFT_EXPECT_EQ(t, ii.trap_number.get(), uint16_t(65));
	WEFT_EXPECT_EQ(t, iba::InformInfo::Qpn::get(ii.qpn_resp_time), uint32_t(1));
	WEFT_EXPECT_EQ(t, iba::InformInfo::Producer::get(ii.producer), uint32_t(0xffffff));
	WEFT_EXPECT_EQ(t, inform::subscription(64, false).subscribe.get(), uint8_t(0));
}

void report_parsing(Test &t)
{
	Mad m, resp;
	report(m, iba::sa_trap::gid_out_of_service, gid);
	auto n = inform::parse_report(m);
	WEFT_ASSERT_OK(t, n);
	WEFT_EXPECT_FALSE(t, n.value().in_service);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(n.value().gid.raw, gid, 16), 0);
	report(m, iba::sa_trap::gid_in_service, gid);
	auto in = inform::parse_report(m);
	WEFT_ASSERT_OK(t, in);
	WEFT_EXPECT_TRUE(t, in.value().in_service);
	/* IBA 13.4.8.3: the ReportResp keeps the TID and echoes the notice. */
	inform::report_response(m, resp);
	WEFT_EXPECT_EQ(t, resp.hdr().method.get(), iba::method::report_resp);
	WEFT_EXPECT_EQ(t, resp.hdr().tid.get(), uint64_t(0x1122334455667788ull));
	WEFT_EXPECT_EQ(t, resp.hdr().status.get(), uint16_t(0));
	WEFT_EXPECT_EQ(t, __builtin_memcmp(resp.bytes + iba::sa_data_offset, m.bytes + iba::sa_data_offset, 64), 0);
	/* Other notices are not GID events. */
	report(m, 128, gid);
	WEFT_EXPECT_ERR(t, inform::parse_report(m), err::EOPNOTSUPP);
	report(m, 64, gid, false);
	WEFT_EXPECT_ERR(t, inform::parse_report(m), err::EOPNOTSUPP);
	/* Not a Report of a Notice at all. */
	report(m, 64, gid);
	m.hdr().attr_id.set(iba::sa_attr::inform_info);
	WEFT_EXPECT_ERR(t, inform::parse_report(m), err::EPROTO);
	report(m, 64, gid);
	m.hdr().method.set(iba::sa_method::get);
	WEFT_EXPECT_ERR(t, inform::parse_report(m), err::EPROTO);
	report(m, 64, gid);
	m.hdr().mgmt_class.set(iba::mgmt_class::perf);
	WEFT_EXPECT_ERR(t, inform::parse_report(m), err::EPROTO);
}

void subscription_states(Test &t)
{
	inform::Subscription s;
	WEFT_EXPECT_FALSE(t, s.due());
	/* ACTIVE under an SM: subscribe; failures are tried again, a few times. */
	s.port_event(true, true);
	WEFT_EXPECT_TRUE(t, s.due());
	for (uint8_t i = 0; i < inform::Subscription::max_tries; i++) {
		WEFT_EXPECT_TRUE(t, s.due());
		s.result(false);
	}
	WEFT_EXPECT_FALSE(t, s.due());
	WEFT_EXPECT_TRUE(t, s.state() == State::Wanted);
	/* A new event starts the tries over; success ends them. */
	s.port_event(true, false);
	WEFT_EXPECT_TRUE(t, s.due());
	s.result(true);
	WEFT_EXPECT_TRUE(t, s.state() == State::Subscribed);
	WEFT_EXPECT_FALSE(t, s.due());
	/* A LID change keeps the subscription; an SM change or reregistration asks for a new one. */
	s.port_event(true, false);
	WEFT_EXPECT_FALSE(t, s.due());
	s.port_event(true, true);
	WEFT_EXPECT_TRUE(t, s.due());
	s.result(true);
	/* The port went down: nothing to do until it is back. */
	s.port_event(false, true);
	WEFT_EXPECT_TRUE(t, s.state() == State::Idle);
	WEFT_EXPECT_FALSE(t, s.due());
	s.port_event(true, false);
	WEFT_EXPECT_TRUE(t, s.due());
}

} // namespace

WEFT_TEST_SUITE(weft_mad_sa_inform, WEFT_CASE(subscription_record), WEFT_CASE(report_parsing),
		WEFT_CASE(subscription_states));
