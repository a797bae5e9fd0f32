// SPDX-License-Identifier: GPL-2.0
/* RFC 4755 addressing and private data (cm_proto.h). */
#include "cm_proto.h"

namespace weft::ipoib::cmp {

uint64_t service_id(uint32_t qpn)
{
	return ietf_service_prefix | (qpn & HwAddr::Qpn::max);
}

bool has_flag(const HwAddr &a)
{
	return HwAddr::Flags::get(a.flags_qpn) & flag_connected;
}

void set_flag(HwAddr &a)
{
	HwAddr::Flags::set(a.flags_qpn, HwAddr::Flags::get(a.flags_qpn) | flag_connected);
}

PrivData encode(uint32_t ud_qpn, uint32_t rx_buf_size)
{
	PrivData p{};
	p.qpn.set(ud_qpn & HwAddr::Qpn::max);
	p.mtu.set(rx_buf_size);
	return p;
}

uint32_t decode_mtu(ConstBytes pd, uint32_t *qpn)
{
	if (pd.size() < sizeof(PrivData))
		return 0;
	PrivData p;
	__builtin_memcpy(&p, pd.data(), sizeof(p));
	const uint32_t buf = p.mtu.get();
	if (buf <= encap_len)
		return 0;
	if (qpn)
		*qpn = p.qpn.get() & HwAddr::Qpn::max;
	const uint32_t mtu = buf - static_cast<uint32_t>(encap_len);
	return mtu < max_mtu ? mtu : max_mtu;
}

} // namespace weft::ipoib::cmp
