// SPDX-License-Identifier: GPL-2.0
/*
 * PortInfo (IBA 14.2.5.6): Get and Set, with the port state machine of
 * IBA 7.2 as an SM drives it.  A Set is checked whole before any of it
 * takes effect: one bad field and nothing changes.
 */
#include "sma.h"
#include "switch.h"

namespace weft::hca::sma {

using iba::PortInfo;
using verbs::PhysState;
using verbs::PortState;
namespace status = iba::mad_status;

namespace {

/* At a switch, the subnet-wide fields (M_Key, LID, SM, ...) are port 0's alone (IBA 14.2.5.6). */
bool holds_subnet_fields(const Ctx &c, const Port &p)
{
	return !c.node.is_switch() || p.num == 0;
}

uint16_t saturate16(uint64_t v)
{
	return v > 0xffff ? 0xffff : static_cast<uint16_t>(v);
}

void fill_subnet_fields(Ctx &c, const Port &p, PortInfo &pi)
{
	const PortMgmt &m = p.mgmt;
	/* IBA 14.2.4.2: at protection level 1 a Get with the wrong key sees M_Key 0. */
	pi.m_key.set(c.key_matched || m.m_key_protect == 0 ? m.m_key : 0);
	pi.gid_prefix.set(m.gid_prefix);
	pi.lid.set(p.lid.load(Order::Relaxed));
	pi.master_sm_lid.set(p.sm_lid);
	pi.capability_mask.set(m.caps);
	pi.m_key_lease_period.set(m.m_key_lease_period);
	PortInfo::MKeyProtect::set(pi.mkey_lmc, m.m_key_protect);
	PortInfo::Lmc::set(pi.mkey_lmc, p.lmc.load(Order::Relaxed));
	PortInfo::MasterSmSl::set(pi.mtu_smsl, p.sm_sl);
	pi.m_key_violations.set(m.m_key_violations);
	PortInfo::McastPkeyTrapSuppress::set(pi.rereg_timeout, m.mcast_pkey_trap_suppress);
	PortInfo::SubnetTimeout::set(pi.rereg_timeout, m.subnet_timeout);
}

void fill(Ctx &c, const Port &p)
{
	const PortMgmt &m = p.mgmt;
	auto &pi = c.out_data<PortInfo>();
	if (holds_subnet_fields(c, p))
		fill_subnet_fields(c, p, pi);
	pi.local_port_num.set(c.in.port);
	pi.link_width_enabled.set(m.link_width_enabled);
	pi.link_width_supported.set(port_caps::widths_supported);
	pi.link_width_active.set(port_caps::width_4x);
	PortInfo::LinkSpeedSupported::set(pi.speed_state, port_caps::speeds_supported);
	PortInfo::PortState::set(pi.speed_state, static_cast<uint8_t>(p.state.load(Order::Relaxed)));
	PortInfo::PhysState::set(pi.phys_down, static_cast<uint8_t>(p.phys.load(Order::Relaxed)));
	PortInfo::LinkDownDefault::set(pi.phys_down, m.link_down_default);
	PortInfo::LinkSpeedActive::set(pi.speed_act_en, port_caps::speed_qdr);
	PortInfo::LinkSpeedEnabled::set(pi.speed_act_en, m.link_speed_enabled);
	PortInfo::NeighborMtu::set(pi.mtu_smsl, m.neighbor_mtu);
	PortInfo::VlCap::set(pi.vlcap_init, port_caps::vl_cap);
	pi.vl_high_limit.set(m.vl_high_limit);
	pi.vl_arb_high_cap.set(port_caps::vl_arb_cap);
	pi.vl_arb_low_cap.set(port_caps::vl_arb_cap);
	PortInfo::MtuCap::set(pi.init_reply_mtucap, port_caps::mtu_cap);
	PortInfo::VlStallCount::set(pi.stall_hoq, m.vl_stall_count);
	PortInfo::HoqLife::set(pi.stall_hoq, m.hoq_life);
	pi.opvls_enforce.set(static_cast<uint8_t>(m.operational_vls << 4 | (m.enforce & 0xf)));
	pi.p_key_violations.set(saturate16(p.counters.bad_pkey.load(Order::Relaxed)));
	pi.q_key_violations.set(saturate16(p.counters.bad_qkey.load(Order::Relaxed)));
	pi.guid_cap.set(1);
	PortInfo::RespTimeValue::set(pi.resp_time, port_caps::resp_time_value);
	PortInfo::LocalPhyErrors::set(pi.error_thresholds, m.local_phy_errors);
	PortInfo::OverrunErrors::set(pi.error_thresholds, m.overrun_errors);
	PortInfo::LinkSpeedExtActive::set(pi.speed_ext, port_caps::ext_speed_edr);
	PortInfo::LinkSpeedExtSupported::set(pi.speed_ext, port_caps::ext_speeds_supported);
	PortInfo::LinkSpeedExtEnabled::set(pi.speed_ext_enabled, m.link_speed_ext_enabled);
}

/* 0: no change; all-ones-ish @every: everything supported; else a non-empty subset. */
bool valid_enable(uint8_t v, uint8_t every, uint8_t supported)
{
	return v == 0 || v == every || (v & ~supported) == 0;
}

/*
 * IBA 14.2.5.6 PortState as a Set may carry it, from @cur (IBA 7.2.3-7.2.5).
 * The current state itself is no change, as read-modify-write tools send it.
 */
bool valid_state(uint8_t want, PortState cur, bool base_port0)
{
	if (want == static_cast<uint8_t>(cur))
		return true;
	/* A switch's base port 0 has no state machine: any value a Set may carry is no change. */
	if (base_port0)
		return want != static_cast<uint8_t>(PortState::Init) && want <= static_cast<uint8_t>(PortState::Active);
	switch (want) {
	case iba::port_state_nop:
	case static_cast<uint8_t>(PortState::Down):
		return true;
	case static_cast<uint8_t>(PortState::Armed):
		return cur == PortState::Init || cur == PortState::Armed;
	case static_cast<uint8_t>(PortState::Active):
		return cur == PortState::Armed || cur == PortState::Active;
	default:
		return false; /* Init is reached by the link, never set */
	}
}

bool valid_phys(uint8_t want, const Port &p, bool is_switch)
{
	if (want == iba::phys_state_nop || want == static_cast<uint8_t>(p.phys.load(Order::Relaxed)))
		return true;
	/* A switch's management port has no physical link. */
	if (is_switch && p.num == 0)
		return false;
	return want == iba::phys_state_polling || want == iba::phys_state_disabled;
}

uint16_t validate(const Ctx &c, const Port &p, const PortInfo &pi)
{
	if (holds_subnet_fields(c, p) && pi.lid.get() >= multicast_lid_base)
		return status::invalid_value;
	const bool base_port0 = c.node.is_switch() && p.num == 0;
	if (!valid_state(PortInfo::PortState::get(pi.speed_state), p.state.load(Order::Relaxed), base_port0) ||
	    !valid_phys(PortInfo::PhysState::get(pi.phys_down), p, c.node.is_switch()))
		return status::invalid_value;
	if (PortInfo::LinkDownDefault::get(pi.phys_down) > 2)
		return status::invalid_value;
	uint8_t mtu = PortInfo::NeighborMtu::get(pi.mtu_smsl);
	if (mtu < static_cast<uint8_t>(iba::Mtu::M256) || mtu > port_caps::mtu_cap)
		return status::invalid_value;
	if (PortInfo::OperationalVls::get(pi.opvls_enforce) > port_caps::vl_cap)
		return status::invalid_value;
	if (!valid_enable(pi.link_width_enabled.get(), 0xff, port_caps::widths_supported) ||
	    !valid_enable(PortInfo::LinkSpeedEnabled::get(pi.speed_act_en), 0xf, port_caps::speeds_supported))
		return status::invalid_value;
	uint8_t ext = PortInfo::LinkSpeedExtEnabled::get(pi.speed_ext_enabled);
	if (ext != 31 && !valid_enable(ext, 30, port_caps::ext_speeds_supported))
		return status::invalid_value;
	return status::ok;
}

uint8_t apply_subnet_fields(Port &p, const PortInfo &pi)
{
	PortMgmt &m = p.mgmt;
	uint8_t what = 0;
	const uint8_t lmc = PortInfo::Lmc::get(pi.mkey_lmc), sl = PortInfo::MasterSmSl::get(pi.mtu_smsl);
	if (pi.lid.get() != p.lid.load(Order::Relaxed) || lmc != p.lmc.load(Order::Relaxed))
		what |= port_change::lid;
	if (pi.master_sm_lid.get() != p.sm_lid || sl != p.sm_sl)
		what |= port_change::sm;
	if (pi.gid_prefix.get() != m.gid_prefix)
		what |= port_change::gid;
	if (PortInfo::ClientReregister::get(pi.rereg_timeout))
		what |= port_change::client_rereg;
	p.lid.store(pi.lid.get(), Order::Relaxed);
	p.lmc.store(lmc, Order::Relaxed);
	p.sm_lid = pi.master_sm_lid.get();
	p.sm_sl = sl;
	m.gid_prefix = pi.gid_prefix.get();
	m.m_key = pi.m_key.get();
	m.m_key_lease_period = pi.m_key_lease_period.get();
	m.m_key_protect = PortInfo::MKeyProtect::get(pi.mkey_lmc);
	m.m_key_violations = pi.m_key_violations.get();
	m.subnet_timeout = PortInfo::SubnetTimeout::get(pi.rereg_timeout);
	m.mcast_pkey_trap_suppress = PortInfo::McastPkeyTrapSuppress::get(pi.rereg_timeout);
	return what;
}

void apply_link_fields(PortMgmt &m, const PortInfo &pi)
{
	if (uint8_t v = PortInfo::LinkDownDefault::get(pi.phys_down))
		m.link_down_default = v;
	if (uint8_t v = pi.link_width_enabled.get())
		m.link_width_enabled = v == 0xff ? port_caps::widths_supported : v;
	if (uint8_t v = PortInfo::LinkSpeedEnabled::get(pi.speed_act_en))
		m.link_speed_enabled = v == 0xf ? port_caps::speeds_supported : v;
	if (uint8_t v = PortInfo::LinkSpeedExtEnabled::get(pi.speed_ext_enabled))
		m.link_speed_ext_enabled = v == 30 ? port_caps::ext_speeds_supported : v == 31 ? 0 : v;
	if (uint8_t v = PortInfo::OperationalVls::get(pi.opvls_enforce))
		m.operational_vls = v;
	m.neighbor_mtu = PortInfo::NeighborMtu::get(pi.mtu_smsl);
	m.vl_high_limit = pi.vl_high_limit.get();
	m.vl_stall_count = PortInfo::VlStallCount::get(pi.stall_hoq);
	m.hoq_life = PortInfo::HoqLife::get(pi.stall_hoq);
	m.local_phy_errors = PortInfo::LocalPhyErrors::get(pi.error_thresholds);
	m.overrun_errors = PortInfo::OverrunErrors::get(pi.error_thresholds);
	m.enforce = pi.opvls_enforce.get() & 0xf;
}

void set_state(Port &p, PhysState ph, PortState st)
{
	p.phys.store(ph, Order::Relaxed);
	p.state.store(st, Order::Relaxed);
}

/*
 * IBA 7.2: Down takes the link down, and it trains up again at once (a
 * cable is still there), so both ends land in Init; Disabled keeps it
 * down until a Set of Polling.  The peer follows in finish().  A switch's
 * base port 0 has no link: it stays LinkUp/Active (switch.cpp).
 */
void apply_states(Ctx &c, Port &p, const PortInfo &pi)
{
	if (p.num == 0 && c.node.is_switch())
		return;
	uint8_t want = PortInfo::PortState::get(pi.speed_state);
	uint8_t phys = PortInfo::PhysState::get(pi.phys_down);
	if (want == static_cast<uint8_t>(p.state.load(Order::Relaxed)))
		want = iba::port_state_nop;
	if (phys == static_cast<uint8_t>(p.phys.load(Order::Relaxed)))
		phys = iba::phys_state_nop;
	const bool linked = p.peer() != nullptr;
	if (phys == iba::phys_state_disabled) {
		set_state(p, PhysState::Disabled, PortState::Down);
		c.link_reset = &p;
		c.link_disabled = true;
	} else if (phys == iba::phys_state_polling || want == static_cast<uint8_t>(PortState::Down)) {
		if (linked) {
			if (p.phys.load(Order::Relaxed) == PhysState::LinkUp)
				PortCounters::bump(p.counters.link_downed);
			set_state(p, PhysState::LinkUp, PortState::Init);
			c.link_reset = &p;
		} else {
			set_state(p, PhysState::Polling, PortState::Down);
		}
	} else if (want == static_cast<uint8_t>(PortState::Armed) || want == static_cast<uint8_t>(PortState::Active)) {
		p.state.store(static_cast<PortState>(want), Order::Relaxed);
	}
}

} // namespace

uint16_t port_info(Ctx &c)
{
	/*
	 * IBA 14.2.5.6: the modifier's low byte names the port; bit 31 of a
	 * Set is SMSupportsExtendedSpeeds, which OpenSM sends to ports that
	 * advertise IsExtendedSpeedsSupported.
	 */
	Port *p = port_for(c, c.attr_mod() & 0xff);
	if (!p)
		return status::invalid_value;
	if (c.set) {
		const auto &pi = c.in_data<PortInfo>();
		/* A CA's port is configured only through itself. */
		uint16_t st = !c.node.is_switch() && p->num != c.in.port ? status::invalid_value : validate(c, *p, pi);
		if (st != status::ok) {
			fill(c, *p);
			return st;
		}
		const PortState was = p->state.load(Order::Relaxed);
		uint8_t what = holds_subnet_fields(c, *p) ? apply_subnet_fields(*p, pi) : 0;
		apply_link_fields(p->mgmt, pi);
		apply_states(c, *p, pi);
		if (p->state.load(Order::Relaxed) != was)
			what |= port_change::state;
		if (what)
			c.changed(*p, what, was);
	}
	fill(c, *p);
	return status::ok;
}

} // namespace weft::hca::sma
