// SPDX-License-Identifier: GPL-2.0
/* IPoIB addresses, MGIDs and MTUs (RFC 4391). */
#include "addr.h"

namespace weft::ipoib {

HwAddr HwAddr::make(uint32_t qpn, const verbs::Gid &g)
{
	HwAddr a{};
	Qpn::set(a.flags_qpn, qpn & Qpn::max);
	__builtin_memcpy(a.gid, g.raw, 16);
	return a;
}

verbs::Gid broadcast_mgid(uint16_t pkey, uint8_t scope)
{
	/* RFC 4391 §4: 0xff, flags 1 (transient) and the scope, the IPv4 signature 0x401b. */
	verbs::Gid g{};
	g.raw[0] = 0xff;
	g.raw[1] = static_cast<uint8_t>(0x10 | (scope & 0xf));
	reinterpret_cast<be16 *>(&g.raw[2])->set(0x401b);
	reinterpret_cast<be16 *>(&g.raw[4])->set(static_cast<uint16_t>(pkey | 0x8000));
	reinterpret_cast<be32 *>(&g.raw[12])->set(0xffffffff);
	return g;
}

HwAddr broadcast_addr(uint16_t pkey)
{
	return HwAddr::make(mcast_qpn, broadcast_mgid(pkey));
}

RxFrame ud_frame(ConstBytes buf, uint32_t byte_len, bool grh_valid, uint16_t pkey)
{
	RxFrame f;
	if (byte_len < grh_len + encap_len || byte_len > buf.size())
		return f;
	/* IBA 8.3: a GRH's DGID at bytes 24..39; 0xff first is a multicast GID (IBA 4.1.1). */
	const uint8_t *dgid = buf.data() + 24;
	if (grh_valid && dgid[0] == 0xff) {
		const verbs::Gid bcast = broadcast_mgid(pkey);
		f.kind = __builtin_memcmp(dgid, bcast.raw, 16) == 0 ? RxKind::Broadcast : RxKind::Multicast;
	}
	f.proto = reinterpret_cast<const EncapHeader *>(buf.data() + grh_len)->type.get();
	f.len = byte_len - static_cast<uint32_t>(grh_len + encap_len);
	f.ok = true;
	return f;
}

RxFrame cm_frame(ConstBytes head, uint32_t byte_len, uint32_t max)
{
	RxFrame f;
	if (byte_len < encap_len || byte_len > max || head.size() < encap_len)
		return f;
	f.proto = reinterpret_cast<const EncapHeader *>(head.data())->type.get();
	f.len = byte_len - static_cast<uint32_t>(encap_len);
	f.ok = true;
	return f;
}

uint32_t ud_mtu(uint8_t code)
{
	if (code < static_cast<uint8_t>(iba::Mtu::M256) || code > static_cast<uint8_t>(iba::Mtu::M4096))
		return 0;
	return static_cast<uint32_t>(iba::mtu_bytes(static_cast<iba::Mtu>(code)) - encap_len);
}

uint8_t min_mtu_code(uint8_t a, uint8_t b)
{
	const bool va = ud_mtu(a) != 0, vb = ud_mtu(b) != 0;
	if (va && vb)
		return a < b ? a : b;
	return va ? a : vb ? b : 0;
}

uint32_t link_mbps(uint8_t width_code, uint8_t speed_code)
{
	/* IBA 14.2.5.6 LinkWidthActive: 1x, 4x, 8x, 12x (and 2x, code 16). */
	uint32_t lanes;
	switch (width_code) {
	case 1: lanes = 1; break;
	case 2: lanes = 4; break;
	case 4: lanes = 8; break;
	case 8: lanes = 12; break;
	case 16: lanes = 2; break;
	default: return 0;
	}
	/* Signalling rates per lane as the kernel's ethtool report for IB uses them. */
	uint32_t lane;
	switch (speed_code) {
	case 1: lane = 2500; break;   /* SDR */
	case 2: lane = 5000; break;   /* DDR */
	case 4: lane = 10000; break;  /* QDR */
	case 8: lane = 10000; break;  /* FDR10 */
	case 16: lane = 14000; break; /* FDR */
	case 32: lane = 25000; break; /* EDR */
	case 64: lane = 50000; break; /* HDR */
	case 128: lane = 100000; break; /* NDR */
	default: return 0;
	}
	return lanes * lane;
}

} // namespace weft::ipoib
