// SPDX-License-Identifier: GPL-2.0
/*
 * A switch's own attributes: SwitchInfo (IBA 14.2.5.4) and its linear
 * (14.2.5.10) and multicast (14.2.5.12) forwarding tables, which the data
 * path reads as it forwards.
 */
#include "sma.h"
#include "switch.h"

namespace weft::hca::sma {

namespace status = iba::mad_status;
using iba::SwitchInfo;

namespace {

constexpr uint32_t lft_blocks = (unicast_lid_top + 1u + iba::lft_entries_per_block - 1) / iba::lft_entries_per_block;
constexpr uint32_t mft_blocks = (Switch::mcast_fdb_cap + iba::mft_entries_per_block - 1u) / iba::mft_entries_per_block;

Switch &sw(Ctx &c)
{
	return static_cast<Switch &>(c.node);
}

} // namespace

uint16_t switch_info(Ctx &c)
{
	Switch &s = sw(c);
	SwitchMgmt &m = s.mgmt;
	if (c.set) {
		const auto &in = c.in_data<SwitchInfo>();
		if (in.linear_fdb_top.get() > unicast_lid_top)
			return status::invalid_value;
		s.set_lft_top(in.linear_fdb_top.get());
		m.default_port = in.default_port.get();
		m.default_mcast_primary = in.default_mcast_primary_port.get();
		m.default_mcast_not_primary = in.default_mcast_not_primary_port.get();
		m.life_time_value = SwitchInfo::LifeTimeValue::get(in.life_state);
		m.multicast_fdb_top = in.multicast_fdb_top.get();
		/* IBA 14.2.5.4: PortStateChange is cleared by writing 1 to it. */
		if (SwitchInfo::PortStateChange::get(in.life_state))
			m.port_state_change = false;
	}
	auto &out = c.out_data<SwitchInfo>();
	out.linear_fdb_cap.set(unicast_lid_top + 1);
	out.multicast_fdb_cap.set(Switch::mcast_fdb_cap);
	out.linear_fdb_top.set(s.lft_top());
	out.default_port.set(m.default_port);
	out.default_mcast_primary_port.set(m.default_mcast_primary);
	out.default_mcast_not_primary_port.set(m.default_mcast_not_primary);
	SwitchInfo::LifeTimeValue::set(out.life_state, m.life_time_value);
	SwitchInfo::PortStateChange::set(out.life_state, m.port_state_change);
	out.multicast_fdb_top.set(m.multicast_fdb_top);
	return status::ok;
}

/* AttributeModifier: the block of 64 LIDs. */
uint16_t linear_fdb(Ctx &c)
{
	Switch &s = sw(c);
	const uint32_t block = c.attr_mod();
	if (block >= lft_blocks)
		return status::invalid_value;
	const uint16_t base = static_cast<uint16_t>(block * iba::lft_entries_per_block);
	if (c.set) {
		const auto &in = c.in_data<iba::LinearFdb>();
		for (const be8 &e : in.port)
			if (e.get() > s.port_count() && e.get() != no_port)
				return status::invalid_value;
		for (uint16_t i = 0; i < iba::lft_entries_per_block; i++)
			s.set_lft(static_cast<uint16_t>(base + i), in.port[i].get());
	}
	auto &out = c.out_data<iba::LinearFdb>();
	for (uint16_t i = 0; i < iba::lft_entries_per_block; i++)
		out.port[i].set(s.lft_entry(static_cast<uint16_t>(base + i)));
	return status::ok;
}

/* AttributeModifier: PortMask position [31:28] (16 ports each), block [8:0] of 32 MLIDs. */
uint16_t multicast_fdb(Ctx &c)
{
	Switch &s = sw(c);
	const be32 mod = be32::from(c.attr_mod());
	const uint32_t block = iba::MftModifier::Block::get(mod);
	const unsigned shift = iba::MftModifier::Position::get(mod) * iba::mft_ports_per_position;
	if (block >= mft_blocks || shift > s.port_count() || (c.attr_mod() & 0x0ffffe00u))
		return status::invalid_value;
	const uint16_t base = static_cast<uint16_t>(multicast_lid_base + block * iba::mft_entries_per_block);
	const uint64_t ports = (2ull << s.port_count()) - 1;
	if (c.set) {
		const auto &in = c.in_data<iba::MulticastFdb>();
		for (uint16_t i = 0; i < iba::mft_entries_per_block; i++) {
			uint16_t mlid = static_cast<uint16_t>(base + i);
			uint64_t mask = s.mft(mlid) & ~(0xffffull << shift);
			s.set_mft(mlid, (mask | uint64_t(in.port_mask[i].get()) << shift) & ports);
		}
	}
	auto &out = c.out_data<iba::MulticastFdb>();
	for (uint16_t i = 0; i < iba::mft_entries_per_block; i++)
		out.port_mask[i].set(static_cast<uint16_t>(s.mft(static_cast<uint16_t>(base + i)) >> shift));
	return status::ok;
}

} // namespace weft::hca::sma
