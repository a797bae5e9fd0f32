// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: IPoIB addressing (ulp/ipoib/addr.h): the RFC 4391 link-layer
 * address and pseudo-header, the encapsulation header, the broadcast MGID
 * of a partition as the kernel's ip_ib_mc_map() expects it, the datagram
 * MTU, and the link speed ethtool shows.
 */
#include <weft/test.h>

#include "../addr.h"
#include "../ipoib_kapi.h"

using namespace weft;
using namespace weft::ipoib;
using weft::test::Test;

namespace {

verbs::Gid sample_gid()
{
	return verbs::Gid::make(0xfe80000000000000ull, 0x0200574654000003ull);
}

void hw_addr_layout(Test &t)
{
	const HwAddr a = HwAddr::make(0x48, sample_gid());
	const uint8_t *b = reinterpret_cast<const uint8_t *>(&a);
	/* RFC 4391 §9.1.1: reserved byte, QPN big-endian, then the GID. */
	const uint8_t want[20] = {0x00, 0x00, 0x00, 0x48, 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				  0x02, 0x00, 0x57, 0x46, 0x54, 0x00, 0x00, 0x03};
	WEFT_EXPECT_EQ(t, __builtin_memcmp(b, want, 20), 0);
	WEFT_EXPECT_EQ(t, a.qpn(), 0x48u);
	WEFT_EXPECT_TRUE(t, a.gid_value() == sample_gid());
	WEFT_EXPECT_FALSE(t, a.multicast());
	/* A QPN is 24 bits: the flags byte is never overwritten by a larger value. */
	const HwAddr big = HwAddr::make(0x1abcdef, sample_gid());
	WEFT_EXPECT_EQ(t, big.qpn(), 0xabcdefu);
	WEFT_EXPECT_EQ(t, HwAddr::Flags::get(big.flags_qpn), 0u);
	/* An address read off the wire keeps its flags apart from the QPN. */
	HwAddr rx{};
	HwAddr::Flags::set(rx.flags_qpn, 0x80);
	HwAddr::Qpn::set(rx.flags_qpn, 0x000102);
	WEFT_EXPECT_EQ(t, rx.qpn(), 0x102u);
}

void header_sizes(Test &t)
{
	WEFT_EXPECT_EQ(t, hw_addr_len, 20u);
	WEFT_EXPECT_EQ(t, encap_len, 4u);
	WEFT_EXPECT_EQ(t, pseudo_len, 20u);
	WEFT_EXPECT_EQ(t, hard_header_len, 24u);
	WEFT_EXPECT_EQ(t, hw_addr_len, static_cast<size_t>(WEFT_IPOIB_ALEN));
	WEFT_EXPECT_EQ(t, hard_header_len, static_cast<size_t>(WEFT_IPOIB_PSEUDO_LEN + WEFT_IPOIB_ENCAP_LEN));
	/* RFC 4391 §6: EtherType first, big-endian; reserved zero. */
	EncapHeader h{};
	h.type.set(0x86dd);
	const uint8_t *b = reinterpret_cast<const uint8_t *>(&h);
	WEFT_EXPECT_EQ(t, b[0], 0x86);
	WEFT_EXPECT_EQ(t, b[1], 0xdd);
	WEFT_EXPECT_EQ(t, b[2] | b[3], 0);
}

void broadcast_of_partitions(Test &t)
{
	const uint8_t def[16] = {0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
	WEFT_EXPECT_EQ(t, __builtin_memcmp(broadcast_mgid(0xffff).raw, def, 16), 0);
	/* The limited-membership P_Key names the same partition: bit 15 is set in the MGID. */
	WEFT_EXPECT_TRUE(t, broadcast_mgid(0x7fff) == broadcast_mgid(0xffff));
	const verbs::Gid p = broadcast_mgid(0x8001);
	WEFT_EXPECT_EQ(t, p.raw[4], 0x80);
	WEFT_EXPECT_EQ(t, p.raw[5], 0x01);
	/* Scope nibble (RFC 4391 §4): link-local 2 by default, site-local 5 on request. */
	WEFT_EXPECT_EQ(t, broadcast_mgid(0xffff, 5).raw[1], 0x15);
	const HwAddr b = broadcast_addr(0xffff);
	WEFT_EXPECT_EQ(t, b.qpn(), mcast_qpn);
	WEFT_EXPECT_TRUE(t, b.multicast());
	/* What the kernel's ip_ib_mc_map() copies from dev->broadcast: bytes 5 (scope), 8, 9 (P_Key). */
	const uint8_t *raw = reinterpret_cast<const uint8_t *>(&b);
	WEFT_EXPECT_EQ(t, raw[0], 0x00);
	WEFT_EXPECT_EQ(t, raw[1] & raw[2] & raw[3], 0xff);
	WEFT_EXPECT_EQ(t, raw[5] & 0x0f, 0x2);
	WEFT_EXPECT_EQ(t, raw[8], 0xff);
	WEFT_EXPECT_EQ(t, raw[9], 0xff);
}

void mtu_derivation(Test &t)
{
	WEFT_EXPECT_EQ(t, ud_mtu(static_cast<uint8_t>(iba::Mtu::M256)), 252u);
	WEFT_EXPECT_EQ(t, ud_mtu(static_cast<uint8_t>(iba::Mtu::M1024)), 1020u);
	WEFT_EXPECT_EQ(t, ud_mtu(static_cast<uint8_t>(iba::Mtu::M2048)), 2044u);
	WEFT_EXPECT_EQ(t, ud_mtu(static_cast<uint8_t>(iba::Mtu::M4096)), 4092u);
	WEFT_EXPECT_EQ(t, ud_mtu(0), 0u);
	WEFT_EXPECT_EQ(t, ud_mtu(6), 0u);
	/* The interface takes the smaller of the group's and the port's MTU. */
	WEFT_EXPECT_EQ(t, min_mtu_code(4, 5), 4);
	WEFT_EXPECT_EQ(t, min_mtu_code(5, 3), 3);
	WEFT_EXPECT_EQ(t, min_mtu_code(0, 5), 5);
	WEFT_EXPECT_EQ(t, min_mtu_code(7, 4), 4);
	WEFT_EXPECT_EQ(t, min_mtu_code(0, 9), 0);
}

void link_speed(Test &t)
{
	WEFT_EXPECT_EQ(t, link_mbps(2, 32), 100000u); /* 4X EDR */
	WEFT_EXPECT_EQ(t, link_mbps(1, 1), 2500u);    /* 1X SDR */
	WEFT_EXPECT_EQ(t, link_mbps(8, 4), 120000u);  /* 12X QDR */
	WEFT_EXPECT_EQ(t, link_mbps(16, 64), 100000u); /* 2X HDR */
	WEFT_EXPECT_EQ(t, link_mbps(3, 32), 0u);
	WEFT_EXPECT_EQ(t, link_mbps(2, 3), 0u);
}

} // namespace

WEFT_TEST_SUITE(weft_ipoib_addr, WEFT_CASE(hw_addr_layout), WEFT_CASE(header_sizes),
		WEFT_CASE(broadcast_of_partitions), WEFT_CASE(mtu_derivation), WEFT_CASE(link_speed));
