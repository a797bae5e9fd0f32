// SPDX-License-Identifier: GPL-2.0
/* A GMP's global route (IBA 8.3, 13.5.1): see grh_route.h. */
#include "grh_route.h"

namespace weft::mad {

namespace {

constexpr uint64_t sa_well_known_guid = 0x0200000000000002ull;
/* IBA 8.3.1: the GID table is indexed by 8 bits (PortInfo GIDCap, IBA 14.2.5.6). */
constexpr uint32_t max_gids = 256;

} // namespace

void global_route(const MadAddr &to, verbs::AhAttr &ah)
{
	ah.global = true;
	__builtin_memcpy(ah.dgid.raw, to.grh.gid, sizeof(ah.dgid.raw));
	ah.sgid_index = to.grh.sgid_index;
	ah.hop_limit = to.grh.hop_limit;
	ah.traffic_class = to.grh.traffic_class;
	ah.flow_label = to.grh.flow_label & 0xfffff;
}

void route_back(const iba::Grh &g, uint8_t local_index, MadAddr &from)
{
	from.global = true;
	__builtin_memcpy(from.grh.gid, g.sgid, sizeof(from.grh.gid));
	from.grh.sgid_index = local_index;
	/* In-tree answers with the largest hop limit, whatever the request came with. */
	from.grh.hop_limit = 0xff;
	from.grh.traffic_class = static_cast<uint8_t>(iba::Grh::TClass::get(g.ver_tclass_flow));
	from.grh.flow_label = iba::Grh::FlowLabel::get(g.ver_tclass_flow);
}

Result<uint8_t> local_gid_index(verbs::Device &dev, uint8_t port, const uint8_t gid[16])
{
	verbs::Gid want;
	__builtin_memcpy(want.raw, gid, sizeof(want.raw));
	if (want.interface_id() == sa_well_known_guid)
		return uint8_t(0);
	for (uint32_t i = 0; i < max_gids; i++) {
		auto have = dev.query_gid(port, i);
		if (!have)
			break; /* past the table */
		if (have.value() == want)
			return static_cast<uint8_t>(i);
	}
	return Error(err::ENOENT);
}

} // namespace weft::mad
