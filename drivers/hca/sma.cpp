// SPDX-License-Identifier: GPL-2.0
/*
 * The SMA's front door (IBA 14.2.5): which SMPs it answers, the M_Key
 * check (IBA 14.2.4), the response header, and the node-wide attributes
 * NodeInfo and NodeDescription.
 */
#include <weft/rt/kapi.h>
#include <weft/verbs/verbs.h>

#include "sma.h"
#include "switch.h"
#include "trap.h"

namespace weft::hca::sma {

using iba::Smp;
using verbs::MadOutcome;
namespace status = iba::mad_status;
namespace method = iba::method;

void Ctx::changed(Port &p, uint8_t what, verbs::PortState was)
{
	for (uint8_t i = 0; i < nchanges; i++) {
		if (changes[i].port == &p) {
			changes[i].what |= what;
			return;
		}
	}
	if (nchanges < sizeof(changes) / sizeof(changes[0]))
		changes[nchanges++] = Change{&p, what, was};
}

Port *port_for(Ctx &c, uint32_t num)
{
	if (!c.node.is_switch() && num == 0)
		num = c.in.port;
	if (num > c.node.port_count())
		return nullptr;
	return c.node.port(static_cast<uint8_t>(num));
}

uint32_t default_ca_caps()
{
	namespace cap = verbs::port_cap;
	/* IsTrapSupported: a CA port sends traps 144 and 256 (trap.h). */
	return cap::is_sl_mapping_supported | cap::is_system_image_guid_supported |
	       cap::is_extended_speeds_supported | cap::is_client_reregistration_supported |
	       cap::is_trap_supported;
}

uint32_t default_switch_caps()
{
	namespace cap = verbs::port_cap;
	/* IsTrapSupported: the switch sends traps 128 (switch_smi.cpp), 144 and 256 (trap.h). */
	return cap::is_sl_mapping_supported | cap::is_system_image_guid_supported |
	       cap::is_extended_speeds_supported | cap::is_trap_supported;
}

namespace {

/* The port whose M_Key guards this SMA: the arrival port of a CA, port 0 of a switch. */
Port *key_port(Ctx &c)
{
	return c.node.port(c.node.is_switch() ? 0 : c.in.port);
}

/*
 * IBA 14.2.4.2, 14.2.5.1 trap 256 (Bad M_Key): the offending SMP's DrSLID,
 * method, attribute, modifier and key, and for a directed-route one its
 * hop count and return path (30 hops of it; DRPathTruncated beyond).
 * Under mgmt_lock.
 */
void bad_m_key_trap(Ctx &c, Port &p)
{
	TrapSender *t = c.node.trap_sender();
	if (!t)
		return;
	using BadMKey = iba::notice_details::BadMKey;
	BadMKey d{};
	d.lid.set(p.lid.load(Order::Relaxed));
	d.dr_slid.set(c.req.dr_slid.get());
	d.method.set(c.req.method.get());
	d.attr_id.set(c.req.attr_id.get());
	d.attr_mod.set(c.req.attr_mod.get());
	d.m_key.set(c.req.m_key.get());
	if (c.req.mgmt_class.get() == iba::mgmt_class::subn_directed_route) {
		const uint8_t hops = c.req.hop_count.get() & 0x3f;
		const uint8_t keep = hops < sizeof(d.dr_return_path) ? hops : sizeof(d.dr_return_path);
		BadMKey::DrNotice::set(d.dr_notice, 1);
		BadMKey::DrPathTruncated::set(d.dr_notice, hops > keep);
		BadMKey::DrHopCount::set(d.dr_notice, hops);
		__builtin_memcpy(d.dr_return_path, c.req.return_path, keep);
	}
	t->raise_locked(p, iba::notice::type_security, trap::bad_m_key, reinterpret_cast<const uint8_t *>(&d),
			sizeof(d));
}

/*
 * IBA 14.2.4.1-3: a wrong M_Key fails a Set or TrapRepress always and a
 * Get from protection level 2 up; each failure is a violation and starts
 * the lease, whose end drops protection to 0; a good key stops it.
 * An M_Key of 0 checks nothing.
 */
bool m_key_ok(Ctx &c, bool &matched)
{
	Port *p = key_port(c);
	if (!p)
		return false;
	PortMgmt &m = p->mgmt;
	const uint64_t now = weft_jiffies();
	if (m.lease_deadline && static_cast<int64_t>(now - m.lease_deadline) >= 0) {
		m.lease_deadline = 0;
		m.m_key_protect = 0;
	}
	const uint8_t mth = c.req.method.get();
	matched = m.m_key == 0 || m.m_key == c.req.m_key.get();
	if (matched) {
		if (mth == method::get || mth == method::set || mth == method::trap_repress)
			m.lease_deadline = 0;
		return true;
	}
	if (mth == method::get && m.m_key_protect < 2)
		return true;
	if (m.m_key_violations != 0xffff)
		m.m_key_violations++;
	bad_m_key_trap(c, *p);
	if (!m.lease_deadline && m.m_key_lease_period)
		m.lease_deadline = (now + weft_msecs_to_jiffies(m.m_key_lease_period * 1000u)) | 1;
	return false;
}

/* IBA 14.2.5.3 NodeInfo: one per CA port (the arrival port's GUID), a switch's port 0 GUID. */
uint16_t node_info(Ctx &c)
{
	verbs::Device *dev = c.node.device();
	auto &ni = c.out_data<iba::NodeInfo>();
	const bool sw = c.node.is_switch();
	Port *p = c.node.port(sw ? 0 : c.in.port);
	if (!dev || !p)
		return status::invalid_value;
	ni.base_version.set(1);
	ni.class_version.set(1);
	ni.node_type.set(static_cast<uint8_t>(dev->node_type()));
	ni.num_ports.set(c.node.port_count());
	ni.system_image_guid.set(dev->attr().sys_image_guid);
	ni.node_guid.set(c.node.node_guid);
	ni.port_guid.set(p->guid);
	ni.partition_cap.set(sw ? 1 : Port::pkey_table_len);
	ni.device_id.set(static_cast<uint16_t>(dev->attr().vendor_part_id));
	ni.revision.set(dev->attr().hw_ver);
	iba::NodeInfo::LocalPortNum::set(ni.port_vendor, c.in.port);
	iba::NodeInfo::VendorId::set(ni.port_vendor, dev->attr().vendor_id & 0xffffff);
	return status::ok;
}

/* IBA 14.2.5.2 NodeDescription. */
uint16_t node_description(Ctx &c)
{
	verbs::Device *dev = c.node.device();
	if (!dev)
		return status::invalid_value;
	auto &nd = c.out_data<iba::NodeDescription>();
	char text[65];
	dev->node_desc(text);
	for (size_t i = 0; i < sizeof(nd.text) && text[i]; i++)
		nd.text[i] = static_cast<uint8_t>(text[i]);
	return status::ok;
}

struct Attr {
	uint16_t id;
	uint16_t (*fn)(Ctx &c);
	bool settable;
	bool switch_only;
};

constexpr Attr attrs[] = {
	{iba::smp_attr::node_description, node_description, false, false},
	{iba::smp_attr::node_info, node_info, false, false},
	{iba::smp_attr::switch_info, switch_info, true, true},
	{iba::smp_attr::guid_info, guid_info, true, false},
	{iba::smp_attr::port_info, port_info, true, false},
	{iba::smp_attr::pkey_table, pkey_table, true, false},
	{iba::smp_attr::sl_to_vl_table, sl_to_vl_table, true, false},
	{iba::smp_attr::vl_arbitration, vl_arb_table, true, false},
	{iba::smp_attr::linear_fdb, linear_fdb, true, true},
	{iba::smp_attr::multicast_fdb, multicast_fdb, true, true},
};

uint16_t dispatch(Ctx &c)
{
	const uint16_t id = c.req.attr_id.get();
	for (const Attr &a : attrs) {
		if (a.id != id)
			continue;
		if ((a.switch_only && !c.node.is_switch()) || (c.set && !a.settable))
			return status::attr_unsupported;
		return a.fn(c);
	}
	return status::attr_unsupported;
}

/* The request turned into its response: GetResp, D set when directed (IBA 14.2.1.2). */
void begin_response(const Smp &req, Smp &resp)
{
	__builtin_memcpy(&resp, &req, sizeof(Smp));
	resp.method.set(method::get_resp);
	if (req.mgmt_class.get() == iba::mgmt_class::subn_directed_route)
		Smp::Direction::set(resp.status, 1);
	Smp::Status::set(resp.status, status::ok);
	__builtin_memset(resp.data, 0, sizeof(resp.data));
}

/* What a Set did to the links and ports, reported without mgmt_lock. */
void finish(Ctx &c)
{
	if (Port *p = c.link_reset) {
		RcuReadGuard rcu;
		if (Port *q = p->peer()) {
			verbs::PortState was = q->state.load(Order::Relaxed);
			if (c.link_disabled)
				q->set_link(verbs::PhysState::Polling, verbs::PortState::Down);
			else
				q->set_link(verbs::PhysState::LinkUp, verbs::PortState::Init);
			PortCounters::bump(q->counters.link_downed);
			q->node.port_changed(*q, port_change::state, was);
		}
	}
	for (uint8_t i = 0; i < c.nchanges; i++)
		c.node.port_changed(*c.changes[i].port, c.changes[i].what, c.changes[i].was);
}

} // namespace

MadOutcome process(Node &node, const verbs::MadIn &in, const Smp &req, Smp &resp)
{
	const uint8_t cls = req.mgmt_class.get(), mth = req.method.get();
	if (cls != iba::mgmt_class::subn_lid_routed && cls != iba::mgmt_class::subn_directed_route)
		return MadOutcome::NotMine;
	/* Responses and traps are for an SM; so is SMInfo, which a CA's SM answers (IBA 14.4.1). */
	if (iba::MadHeader::Response::get(req.method) || mth == method::trap)
		return MadOutcome::NotMine;
	const bool get_set = mth == method::get || mth == method::set;
	if (!node.is_switch() && (!get_set && mth != method::trap_repress))
		return MadOutcome::NotMine;
	if (!node.is_switch() && req.attr_id.get() == iba::smp_attr::sm_info)
		return MadOutcome::NotMine;
	if (req.base_version.get() != 1)
		return MadOutcome::Consumed;
	begin_response(req, resp);
	if (req.class_version.get() != 1) {
		Smp::Status::set(resp.status, status::bad_version);
		return MadOutcome::Reply;
	}
	Ctx c{node, in, req, resp, mth == method::set};
	uint16_t st;
	{
		SpinGuardBh g(node.mgmt_lock);
		if (!m_key_ok(c, c.key_matched))
			return MadOutcome::Consumed;
		if (mth == method::trap_repress) {
			/* IBA 14.2.5.1: the SM has the notice; the switch stops repeating it. */
			node.trap_repressed_locked(*key_port(c), req.tid.get());
			return MadOutcome::Consumed;
		}
		if (!get_set)
			st = status::method_unsupported;
		else
			st = dispatch(c);
	}
	Smp::Status::set(resp.status, st);
	finish(c);
	return MadOutcome::Reply;
}

} // namespace weft::hca::sma
