// SPDX-License-Identifier: GPL-2.0
/*
 * The per-port tables of the SMA: GUIDInfo (IBA 14.2.5.5), P_KeyTable
 * (14.2.5.7), SLtoVLMappingTable (14.2.5.8) and VLArbitrationTable
 * (14.2.5.9).  With one data VL the last two are kept and echoed only.
 */
#include "sma.h"

namespace weft::hca::sma {

namespace status = iba::mad_status;

namespace {

/* A switch's tables that are not per port live on its management port. */
Port *node_port(Ctx &c)
{
	return c.node.port(c.node.is_switch() ? 0 : c.in.port);
}

/* IBA 14.2.5.7: a switch has P_Keys on port 0 only (PartitionEnforcementCap 0); a CA on every port. */
uint16_t pkey_cap(const Ctx &c)
{
	return c.node.is_switch() ? 1 : Port::pkey_table_len;
}

} // namespace

/* GUIDCap 1: block 0 holds the port GUID, which a Set cannot change (IBA 14.2.5.5). */
uint16_t guid_info(Ctx &c)
{
	Port *p = node_port(c);
	if (!p || c.attr_mod() != 0)
		return status::invalid_value;
	c.out_data<iba::GuidInfo>().guid[0].set(p->guid);
	return status::ok;
}

uint16_t pkey_table(Ctx &c)
{
	const uint32_t mod = c.attr_mod();
	const uint32_t block = mod & 0xffff;
	Port *p = c.node.is_switch() ? c.node.port(static_cast<uint8_t>(mod >> 16)) : node_port(c);
	if (c.node.is_switch() && (mod >> 16) > c.node.port_count())
		p = nullptr;
	if (!p || (c.node.is_switch() && p->num != 0) || block != 0)
		return status::invalid_value;
	const uint16_t n = pkey_cap(c);
	if (c.set) {
		const auto &in = c.in_data<iba::PkeyTable>();
		bool changed = false;
		for (uint16_t i = 0; i < n; i++) {
			uint16_t v = in.pkey[i].get();
			changed |= v != p->pkeys[i].load(Order::Relaxed);
			p->pkeys[i].store(v, Order::Relaxed);
		}
		if (changed)
			c.changed(*p, port_change::pkey, p->state.load(Order::Relaxed));
	}
	auto &out = c.out_data<iba::PkeyTable>();
	for (uint16_t i = 0; i < n; i++)
		out.pkey[i].set(p->pkeys[i].load(Order::Relaxed));
	return status::ok;
}

/* A switch: input port [15:8], output port [7:0] (kept per output port); a CA: the arrival port. */
uint16_t sl_to_vl_table(Ctx &c)
{
	const uint32_t mod = c.attr_mod();
	Port *p = node_port(c);
	if (c.node.is_switch()) {
		uint32_t in = (mod >> 8) & 0xff, out = mod & 0xff;
		p = in <= c.node.port_count() && out <= c.node.port_count() && (mod >> 16) == 0
			    ? c.node.port(static_cast<uint8_t>(out))
			    : nullptr;
	}
	if (!p)
		return status::invalid_value;
	if (c.set)
		p->mgmt.sl_to_vl = c.in_data<iba::SlToVlTable>();
	c.out_data<iba::SlToVlTable>() = p->mgmt.sl_to_vl;
	return status::ok;
}

/* Block [31:16] (1-4: low 0-31, low 32-63, high 0-31, high 32-63), a switch's port [7:0]. */
uint16_t vl_arb_table(Ctx &c)
{
	const uint32_t mod = c.attr_mod(), block = mod >> 16;
	Port *p = c.node.is_switch() ? c.node.port(static_cast<uint8_t>(mod & 0xff)) : node_port(c);
	if (c.node.is_switch() && (mod & 0xff00))
		p = nullptr;
	/* VLArbitration caps of 8 entries: only the first block of each table exists. */
	if (!p || (block != iba::vl_arb_block::low_0_31 && block != iba::vl_arb_block::high_0_31))
		return status::invalid_value;
	iba::VlArbTable &t = block == iba::vl_arb_block::low_0_31 ? p->mgmt.vl_arb_low : p->mgmt.vl_arb_high;
	if (c.set) {
		const auto &in = c.in_data<iba::VlArbTable>();
		for (uint8_t i = 0; i < port_caps::vl_arb_cap; i++)
			t.entry[i] = in.entry[i];
	}
	c.out_data<iba::VlArbTable>() = t;
	return status::ok;
}

} // namespace weft::hca::sma
