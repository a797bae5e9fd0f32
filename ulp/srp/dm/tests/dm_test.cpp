// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the SRP target's device management agent (ulp/srp/dm, IBA 16.3).
 *   answers: what answer() gives each well-formed Get (ClassPortInfo,
 *     IOUnitInfo with the IOC present and absent, IOControllerProfile,
 *     ServiceEntries) and the status of each malformed one (attribute
 *     modifiers out of range, empty slots, Set, unknown attributes), and
 *     that responses and other class versions get no answer.
 *   fabric: an Agent attached to weft1's port answers Gets sent from
 *     weft0's GSI over QP1, IsDeviceManagementSupported shows in
 *     query_port while attached and not after detach; a second attach is
 *     EBUSY; class version 2 comes back as a bad version; after detach
 *     the class is unsupported.  The module's host client (which holds
 *     agents on every port) is stopped for that case and started again.
 */
#include <weft/alloc.h>
#include <weft/atomic.h>
#include <weft/iba/dm.h>
#include <weft/iba/pma.h>
#include <weft/log.h>
#include <weft/test.h>

#include "../dm.h"
#include "../dm_host.h"

using namespace weft;
using namespace weft::iba;
using namespace weft::srp::dm;
using weft::test::Test;

namespace {

Ioc test_ioc()
{
	Ioc ioc;
	ioc.ioc_guid = 0x0002c90300a1b2c3;
	ioc.id_ext = 0x0002c90300a1b2c4;
	ioc.service_id = 0x0002c90300a1b2c5;
	ioc.vendor_id = 0x1234567; /* more than 24 bits: only the low 24 are a VendorID */
	ioc.device_id = 0xabcd;
	ioc.device_version = 3;
	ioc.send_queue_depth = 512;
	ioc.rdma_read_depth = 4;
	ioc.max_send_size = 4096;
	ioc.max_rdma_size = 1u << 20;
	const char id[] = "test IOC";
	__builtin_memcpy(ioc.id_string, id, sizeof(id));
	return ioc;
}

struct Exchange {
	mad::Mad req, resp;

	DmMad &q() { return *reinterpret_cast<DmMad *>(req.bytes); }
	DmMad &r() { return *reinterpret_cast<DmMad *>(resp.bytes); }

	void make(uint8_t mth, uint16_t attr, uint32_t mod, uint8_t version = dm_class_version)
	{
		req = mad::Mad{};
		q().hdr.base_version.set(1);
		q().hdr.mgmt_class.set(mgmt_class::dev_mgt);
		q().hdr.class_version.set(version);
		q().hdr.method.set(mth);
		q().hdr.tid.set(0x1122334455667788ull);
		q().hdr.attr_id.set(attr);
		q().hdr.attr_mod.set(mod);
	}
	/* The status of the answer to Get/Set @attr @mod; 0xffff when there is none. */
	uint16_t ask(const Ioc &ioc, UnitState u, uint8_t mth, uint16_t attr, uint32_t mod = 0)
	{
		make(mth, attr, mod);
		resp = mad::Mad{};
		return answer(ioc, u, req, resp) ? r().hdr.status.get() : 0xffff;
	}
};

uint8_t slot_state(const IouInfo &iou, unsigned slot)
{
	uint8_t b = iou.controller_list[(slot - 1) / 2];
	return slot % 2 ? b >> 4 : b & 0xf;
}

/* IBA 16.3.3.5: ServiceEntries' modifier. */
uint32_t entries_mod(uint16_t slot, uint8_t last, uint8_t first)
{
	return (uint32_t(slot) << 16) | (uint32_t(last) << 8) | first;
}

bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

bool str_eq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

void well_formed(Test &t)
{
	auto ex = make_own<Exchange>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, ex);
	Exchange &x = *ex.value();
	const Ioc ioc = test_ioc();
	const UnitState present{true, 7};

	WEFT_EXPECT_EQ(t, x.ask(ioc, present, method::get, dm_attr::class_port_info), mad_status::ok);
	WEFT_EXPECT_EQ(t, x.r().hdr.method.get(), method::get_resp);
	WEFT_EXPECT_EQ(t, x.r().hdr.tid.get(), 0x1122334455667788ull);
	WEFT_EXPECT_EQ(t, x.r().hdr.attr_id.get(), dm_attr::class_port_info);
	const auto &cpi = *reinterpret_cast<const ClassPortInfo *>(x.r().data);
	WEFT_EXPECT_EQ(t, cpi.base_version.get(), 1);
	WEFT_EXPECT_EQ(t, cpi.class_version.get(), dm_class_version);

	WEFT_EXPECT_EQ(t, x.ask(ioc, present, method::get, dm_attr::iou_info), mad_status::ok);
	const auto &iou = *reinterpret_cast<const IouInfo *>(x.r().data);
	WEFT_EXPECT_EQ(t, iou.change_id.get(), 7);
	WEFT_EXPECT_EQ(t, iou.max_controllers.get(), 16);
	WEFT_EXPECT_EQ(t, slot_state(iou, 1), ioc_slot::present);
	for (unsigned s = 2; s <= 16; s++)
		WEFT_EXPECT_EQ(t, slot_state(iou, s), ioc_slot::not_installed);
	WEFT_EXPECT_EQ(t, iou.controller_list[0], 0x10);

	WEFT_EXPECT_EQ(t, x.ask(ioc, UnitState{false, 8}, method::get, dm_attr::iou_info), mad_status::ok);
	WEFT_EXPECT_EQ(t, slot_state(iou, 1), ioc_slot::not_installed);
	WEFT_EXPECT_EQ(t, iou.change_id.get(), 8);

	WEFT_EXPECT_EQ(t, x.ask(ioc, present, method::get, dm_attr::ioc_profile, 1), mad_status::ok);
	WEFT_EXPECT_EQ(t, x.r().hdr.attr_mod.get(), 1u);
	const auto &p = *reinterpret_cast<const IocProfile *>(x.r().data);
	WEFT_EXPECT_EQ(t, p.guid.get(), ioc.ioc_guid);
	WEFT_EXPECT_EQ(t, IocProfile::VendorId::get(p.vendor_id), 0x234567u);
	WEFT_EXPECT_EQ(t, p.vendor_id.get() & 0xff, 0u); /* reserved */
	WEFT_EXPECT_EQ(t, p.device_id.get(), 0xabcdu);
	WEFT_EXPECT_EQ(t, p.device_version.get(), 3);
	WEFT_EXPECT_EQ(t, p.io_class.get(), 0x0100);
	WEFT_EXPECT_EQ(t, p.io_subclass.get(), 0x609e);
	WEFT_EXPECT_EQ(t, p.protocol.get(), 0x0108);
	WEFT_EXPECT_EQ(t, p.protocol_version.get(), 0x0001);
	WEFT_EXPECT_EQ(t, p.send_queue_depth.get(), 512);
	WEFT_EXPECT_EQ(t, p.rdma_read_depth.get(), 4);
	WEFT_EXPECT_EQ(t, p.send_size.get(), 4096u);
	WEFT_EXPECT_EQ(t, p.rdma_size.get(), 1u << 20);
	WEFT_EXPECT_EQ(t, p.op_cap_mask.get(), 0x01 | 0x02 | 0x08 | 0x20);
	WEFT_EXPECT_EQ(t, p.service_entries.get(), 1);
	WEFT_EXPECT_TRUE(t, str_eq(p.id_string, "test IOC"));

	WEFT_EXPECT_EQ(t, x.ask(ioc, present, method::get, dm_attr::service_entries, entries_mod(1, 0, 0)),
		       mad_status::ok);
	const auto &se = *reinterpret_cast<const ServiceEntries *>(x.r().data);
	WEFT_EXPECT_TRUE(t, str_eq(se.entry[0].name, "SRP.T10:0002c90300a1b2c4"));
	WEFT_EXPECT_EQ(t, se.entry[0].id.get(), ioc.service_id);
	WEFT_EXPECT_TRUE(t, all_zero(reinterpret_cast<const uint8_t *>(&se.entry[1]), 3 * sizeof(ServiceEntry)));
}

/* A request the agent refuses, and the status it must give (0xffff: no answer). */
struct Refusal {
	bool present;
	uint8_t method;
	uint16_t attr;
	uint32_t mod;
	uint16_t status;
};

constexpr uint16_t invalid = mad_status::invalid_value, no_ioc = dm_status::no_ioc,
		   unsupported = mad_status::attr_unsupported;

constexpr Refusal refusals[] = {
	/* IBA 16.3.3.1, 16.3.3.3: ClassPortInfo and IOUnitInfo take modifier 0 only. */
	{true, method::get, dm_attr::class_port_info, 1, invalid},
	{true, method::get, dm_attr::iou_info, 1, invalid},
	/* Slots: 0 and beyond MaxControllers are invalid, 2..16 are empty, 1 is empty when absent. */
	{true, method::get, dm_attr::ioc_profile, 0, invalid},
	{true, method::get, dm_attr::ioc_profile, 17, invalid},
	{true, method::get, dm_attr::ioc_profile, 0x10001, invalid},
	{true, method::get, dm_attr::ioc_profile, 2, no_ioc},
	{true, method::get, dm_attr::ioc_profile, 16, no_ioc},
	{false, method::get, dm_attr::ioc_profile, 1, no_ioc},
	/* ServiceEntries (slot << 16 | last << 8 | first): the slot as above, first <= last < 1 entry. */
	{true, method::get, dm_attr::service_entries, 0x00000000, invalid},
	{true, method::get, dm_attr::service_entries, 0x00110000, invalid},
	{true, method::get, dm_attr::service_entries, 0x00030000, no_ioc},
	{false, method::get, dm_attr::service_entries, 0x00010000, no_ioc},
	{true, method::get, dm_attr::service_entries, 0x00010001, invalid},
	{true, method::get, dm_attr::service_entries, 0x00010100, invalid},
	{true, method::get, dm_attr::service_entries, 0x00010400, invalid},
	{true, method::get, dm_attr::service_entries, 0x0001ffff, invalid},
	/* Nothing is settable; other attributes (Notice, DiagnosticTimeout, ...) are not served. */
	{true, method::set, dm_attr::class_port_info, 0, unsupported},
	{true, method::set, dm_attr::iou_info, 0, unsupported},
	{true, method::get, 0x0002, 0, unsupported},
	{true, method::get, 0x0020, 0, unsupported},
	/* Some other request method: unsupported; responses and Traps: no answer. */
	{true, 0x14, dm_attr::iou_info, 0, mad_status::method_unsupported},
	{true, method::get_resp, dm_attr::iou_info, 0, 0xffff},
	{true, method::trap, dm_attr::iou_info, 0, 0xffff},
};

void malformed(Test &t)
{
	auto ex = make_own<Exchange>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, ex);
	Exchange &x = *ex.value();
	const Ioc ioc = test_ioc();
	for (const Refusal &r : refusals) {
		const uint16_t st = x.ask(ioc, UnitState{r.present, 1}, r.method, r.attr, r.mod);
		if (st != r.status) {
			char what[80];
			format(what, sizeof(what), "attribute 0x%x modifier 0x%x method 0x%x", r.attr, r.mod, r.method);
			t.note(what);
		}
		WEFT_EXPECT_EQ(t, st, r.status);
		if (st != mad_status::ok && st != 0xffff)
			WEFT_EXPECT_TRUE(t, all_zero(x.r().data, sizeof(x.r().data)));
	}
	/* Not DevMgt version 1: not ours to answer (the MAD service answers a bad version). */
	x.make(method::get, dm_attr::iou_info, 0, 2);
	WEFT_EXPECT_FALSE(t, answer(ioc, UnitState{}, x.req, x.resp));
	x.make(method::get, dm_attr::iou_info, 0);
	x.q().hdr.mgmt_class.set(mgmt_class::perf);
	WEFT_EXPECT_FALSE(t, answer(ioc, UnitState{}, x.req, x.resp));
}

void defaults_from_device(Test &t)
{
	Ref<verbs::Device> d1 = verbs::find_device("weft1");
	WEFT_ASSERT_TRUE(t, d1); /* the default subnet is part of the test host */
	const Ioc ioc = Ioc::defaults(*d1);
	WEFT_EXPECT_NE(t, d1->attr().node_guid, 0ull);
	WEFT_EXPECT_EQ(t, ioc.ioc_guid, d1->attr().node_guid);
	WEFT_EXPECT_EQ(t, ioc.id_ext, d1->attr().node_guid);
	WEFT_EXPECT_EQ(t, ioc.service_id, d1->attr().node_guid);
	WEFT_EXPECT_EQ(t, ioc.max_send_size, 4096u);
	WEFT_EXPECT_EQ(t, ioc.max_rdma_size, 1u << 20);
	WEFT_EXPECT_GT(t, ioc.send_queue_depth, 0);
	char name[service_name_size + 1] = {};
	ioc.service_name(name);
	char want[service_name_size] = {};
	format(want, sizeof(want), "SRP.T10:%016llx", static_cast<unsigned long long>(d1->attr().node_guid));
	WEFT_EXPECT_TRUE(t, str_eq(name, want));
}

/* A requester on weft0's GSI: DevMgt in some class version, no methods served. */
struct Requester final : mad::AgentHandler {
	Atomic<int> done{0};
	int status = -1;
	mad::Mad response;
	void recv(mad::Agent &, const mad::Mad &, const mad::MadAddr &) override {}
	void send_done(mad::Agent &, mad::SendReq &r) override
	{
		status = r.status;
		response = r.response;
		done.fetch_add(1, Order::Release);
	}
};

struct Fabric {
	Ref<verbs::Device> d0 = verbs::find_device("weft0"), d1 = verbs::find_device("weft1");
	mad::MadPort *p0 = d0 ? mad::find_port(*d0, 1) : nullptr;
	Requester rh;
	mad::Agent v1{rh, mgmt_class::dev_mgt, 1}, v2{rh, mgmt_class::dev_mgt, 2};
	mad::SendReq req;
	uint16_t lid1 = 0;
};

bool wait_done(const Atomic<int> &done, int want)
{
	for (int i = 0; i < 5000 && done.load(Order::Acquire) < want; i++)
		weft_msleep(1);
	return done.load(Order::Acquire) >= want;
}

/* Get @attr @mod of weft1 from weft0 through @a; the response's status (0xffff: none came). */
uint16_t remote_get(Fabric &f, mad::Agent &a, uint16_t attr, uint32_t mod)
{
	const int before = f.rh.done.load(Order::Acquire);
	f.req.mad = mad::Mad{};
	MadHeader &h = f.req.mad.hdr();
	h.base_version.set(1);
	h.mgmt_class.set(mgmt_class::dev_mgt);
	h.class_version.set(a.class_version);
	h.method.set(method::get);
	h.tid.set(42);
	h.attr_id.set(attr);
	h.attr_mod.set(mod);
	f.req.to = mad::MadAddr{};
	f.req.to.lid = f.lid1;
	f.req.to.qpn = gsi_qpn;
	f.req.to.qkey = gsi_qkey;
	f.req.timeout_ms = 1000;
	f.req.retries = 2;
	if (!f.p0->gsi().send(a, f.req) || !wait_done(f.rh.done, before + 1) || f.rh.status)
		return 0xffff;
	return f.rh.response.hdr().status.get();
}

bool dm_cap(verbs::Device &d)
{
	verbs::PortAttr a;
	return d.query_port(1, a) && (a.port_cap_flags & verbs::port_cap::is_device_management_supported);
}

void fabric_case(Test &t, Fabric &f)
{
	verbs::PortAttr a1;
	WEFT_ASSERT_OK(t, f.d1->query_port(1, a1));
	f.lid1 = a1.lid;
	WEFT_EXPECT_FALSE(t, dm_cap(*f.d1)); /* the host client's agent is gone */

	Ioc ioc = Ioc::defaults(*f.d1);
	ioc.id_ext = 0x1234;
	auto att = Agent::attach(*f.d1, 1, ioc);
	WEFT_ASSERT_OK(t, att);
	Agent *agent = *att;
	WEFT_EXPECT_TRUE(t, dm_cap(*f.d1));
	auto again = Agent::attach(*f.d1, 1, ioc);
	WEFT_EXPECT_FALSE(t, again);
	if (again)
		(*again)->detach();
	else
		WEFT_EXPECT_EQ(t, again.error().code(), int(err::EBUSY));
	WEFT_EXPECT_FALSE(t, Agent::attach(*f.d1, 2, ioc)); /* no such port */

	WEFT_EXPECT_OK(t, f.p0->gsi().register_agent(f.v1));
	WEFT_EXPECT_OK(t, f.p0->gsi().register_agent(f.v2));
	WEFT_EXPECT_EQ(t, remote_get(f, f.v1, dm_attr::iou_info, 0), mad_status::ok);
	const auto &r = *reinterpret_cast<const DmMad *>(f.rh.response.bytes);
	const auto &iou = *reinterpret_cast<const IouInfo *>(r.data);
	WEFT_EXPECT_EQ(t, iou.controller_list[0], 0x10);
	const uint16_t change = iou.change_id.get();
	WEFT_EXPECT_EQ(t, remote_get(f, f.v1, dm_attr::ioc_profile, 1), mad_status::ok);
	WEFT_EXPECT_EQ(t, reinterpret_cast<const IocProfile *>(r.data)->guid.get(), f.d1->attr().node_guid);
	WEFT_EXPECT_EQ(t, remote_get(f, f.v1, dm_attr::service_entries, entries_mod(1, 0, 0)), mad_status::ok);
	WEFT_EXPECT_TRUE(t, str_eq(reinterpret_cast<const ServiceEntries *>(r.data)->entry[0].name,
				   "SRP.T10:0000000000001234"));
	WEFT_EXPECT_EQ(t, remote_get(f, f.v1, dm_attr::ioc_profile, 99), mad_status::invalid_value);
	/* IBA 13.4.7: the class is served, this version is not. */
	WEFT_EXPECT_EQ(t, remote_get(f, f.v2, dm_attr::iou_info, 0), mad_status::bad_version);

	agent->set_present(false);
	WEFT_EXPECT_EQ(t, remote_get(f, f.v1, dm_attr::iou_info, 0), mad_status::ok);
	WEFT_EXPECT_EQ(t, iou.controller_list[0], 0x00);
	WEFT_EXPECT_EQ(t, iou.change_id.get(), uint16_t(change + 1));
	WEFT_EXPECT_EQ(t, remote_get(f, f.v1, dm_attr::ioc_profile, 1), dm_status::no_ioc);
	WEFT_EXPECT_EQ(t, agent->answered(), 6u); /* the bad version never reached it */
	WEFT_EXPECT_EQ(t, agent->send_failed(), 0u);

	agent->detach();
	WEFT_EXPECT_FALSE(t, dm_cap(*f.d1));
	/* Nobody serves DevMgt on weft1 now (IBA 13.4.7: unsupported method/class). */
	WEFT_EXPECT_EQ(t, remote_get(f, f.v1, dm_attr::iou_info, 0), mad_status::method_unsupported);
	f.p0->gsi().unregister_agent(f.v2);
	f.p0->gsi().unregister_agent(f.v1);
}

void over_qp1(Test &t)
{
	auto fx = make_own<Fabric>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, fx);
	Fabric &f = *fx.value();
	WEFT_ASSERT_TRUE(t, f.d0 && f.d1 && f.p0); /* the default subnet is part of the test host */
	WEFT_EXPECT_TRUE(t, dm_cap(*f.d1)); /* weft_srpt's host client attached one at load */
	weft_srpt_dm_host_stop();
	fabric_case(t, f);
	WEFT_EXPECT_EQ(t, weft_srpt_dm_host_start(), 0);
	WEFT_EXPECT_TRUE(t, dm_cap(*f.d1));
	WEFT_EXPECT_EQ(t, weft_srpt_dm_host_start(), -int(err::EBUSY));
}

} // namespace

WEFT_TEST_SUITE(weft_srp_dm, WEFT_CASE(well_formed), WEFT_CASE(malformed), WEFT_CASE(defaults_from_device),
		WEFT_CASE(over_qp1));
