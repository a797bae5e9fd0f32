// SPDX-License-Identifier: GPL-2.0
/* The SA client's InformInfo subscriptions and Reports (sa_inform.h). */
#include <weft/iba/smp_attrs.h>

#include "sa_inform.h"

namespace weft::mad::inform {

iba::InformInfo subscription(uint16_t trap, bool subscribe)
{
	iba::InformInfo ii{};
	/* IBA 15.2.5.12: a zero GID and LIDRangeBegin 0xffff: every port of the subnet. */
	ii.lid_range_begin.set(0xffff);
	ii.is_generic.set(1);
	ii.subscribe.set(subscribe ? 1 : 0);
	ii.type.set(0xffff);
	ii.trap_number.set(trap);
	iba::InformInfo::Qpn::set(ii.qpn_resp_time, iba::gsi_qpn);
	iba::InformInfo::Producer::set(ii.producer, 0xffffff);
	return ii;
}

Result<GidNotice> parse_report(const Mad &m)
{
	const iba::MadHeader &h = m.hdr();
	if (h.mgmt_class.get() != iba::mgmt_class::subn_adm || h.method.get() != iba::sa_method::report ||
	    h.attr_id.get() != iba::sa_attr::notice)
		return Error(err::EPROTO);
	const auto &n = *reinterpret_cast<const iba::Notice *>(m.bytes + iba::sa_data_offset);
	const uint16_t trap = n.trap_number.get();
	if (!iba::Notice::IsGeneric::get(n.generic_type) ||
	    (trap != iba::sa_trap::gid_in_service && trap != iba::sa_trap::gid_out_of_service))
		return Error(err::EOPNOTSUPP);
	GidNotice g;
	__builtin_memcpy(g.gid.raw, n.data_details + iba::sa_trap::gid_offset, sizeof(g.gid.raw));
	g.in_service = trap == iba::sa_trap::gid_in_service;
	return g;
}

void report_response(const Mad &req, Mad &out)
{
	out = req;
	out.hdr().method.set(iba::method::report_resp);
	out.hdr().status.set(0);
}

} // namespace weft::mad::inform
