/* SPDX-License-Identifier: GPL-2.0 */
/*
 * IPoIB addressing and encapsulation (RFC 4391): the 20-byte link-layer
 * address, the 4-byte encapsulation header, the broadcast MGID of a
 * partition, and the MTU a datagram interface derives from the IB MTU.
 * Plain data and pure functions: the KUnit suite weft_ipoib_addr covers them.
 */
#ifndef WEFT_IPOIB_ADDR_H
#define WEFT_IPOIB_ADDR_H

#include <weft/span.h>
#include <weft/verbs/types.h>
#include <weft/wire.h>

namespace weft::ipoib {

/*
 * RFC 4391 §9.1.1: one reserved/flags byte, the 24-bit QPN, then the port
 * GID.  The netdev's dev_addr and broadcast, ARP/ND hardware addresses and
 * neighbour entries all carry it.
 */
struct HwAddr {
	be32 flags_qpn;
	uint8_t gid[16];

	using Qpn = BitField<be32, 0, 24>;
	using Flags = BitField<be32, 24, 8>;

	uint32_t qpn() const { return Qpn::get(flags_qpn); }
	verbs::Gid gid_value() const
	{
		verbs::Gid g;
		__builtin_memcpy(g.raw, gid, 16);
		return g;
	}
	/* IBA 4.1.1: a GID whose first byte is 0xff is a multicast GID. */
	bool multicast() const { return gid[0] == 0xff; }
	static HwAddr make(uint32_t qpn, const verbs::Gid &g);
};
static_assert(sizeof(HwAddr) == 20 && alignof(HwAddr) == 1);
inline constexpr size_t hw_addr_len = sizeof(HwAddr);

/* RFC 4391 §6: the EtherType, then 16 reserved bits that must be zero. */
struct EncapHeader {
	be16 type;
	be16 reserved;
};
static_assert(sizeof(EncapHeader) == 4);
inline constexpr size_t encap_len = sizeof(EncapHeader);

/*
 * What header_ops->create pushes in front of the encapsulation header: the
 * destination's link-layer address, for start_xmit to take off again (the
 * kernel's neighbour code only knows how to hand over a header, not an
 * address).  Never sent.
 */
struct PseudoHeader {
	HwAddr dst;
};
inline constexpr size_t pseudo_len = sizeof(PseudoHeader);
/* Headroom the stack must leave: pseudo-header + encapsulation header. */
inline constexpr size_t hard_header_len = pseudo_len + encap_len;

/* IBA 11.4.1.2: a UD receive buffer starts with 40 bytes for the GRH. */
inline constexpr size_t grh_len = 40;
/* RFC 4391 §4: the QPN field of a multicast link-layer address. */
inline constexpr uint32_t mcast_qpn = 0xffffff;

/*
 * RFC 4391 §4: the IPv4 broadcast group of a partition,
 * ff1S:401b:PPPP:0000:0000:0000:ffff:ffff (S the scope, PPPP the P_Key with
 * its membership bit set).
 */
verbs::Gid broadcast_mgid(uint16_t pkey, uint8_t scope = 2);
/* The netdev broadcast address: the broadcast MGID with the QPN 0xffffff. */
HwAddr broadcast_addr(uint16_t pkey);

/* Where a received packet was addressed (the shim's WEFT_IPOIB_RX_* values). */
enum class RxKind : uint8_t { Host = 0, Broadcast = 1, Multicast = 2 };

/*
 * What a receive buffer holds (RFC 4391 §6), read before anything of it
 * goes up: ok false is a bad header, counted and dropped; else the
 * EtherType of the encapsulation header, where the packet was addressed,
 * and the packet's length after the headers.
 */
struct RxFrame {
	bool ok = false;
	uint16_t proto = 0;
	RxKind kind = RxKind::Host;
	uint32_t len = 0;
};
/*
 * A UD receive: @buf is the posted buffer, @byte_len what the completion
 * says arrived (IBA 11.4.1.2: the GRH's 40 bytes first, written only when
 * @grh_valid), then the encapsulation header.  A GRH whose DGID is
 * multicast makes it Broadcast (the partition @pkey's group) or Multicast.
 */
RxFrame ud_frame(ConstBytes buf, uint32_t byte_len, bool grh_valid, uint16_t pkey);
/* A connected-mode receive (RFC 4755): @head the buffer's first part, @byte_len at most @max. */
RxFrame cm_frame(ConstBytes head, uint32_t byte_len, uint32_t max);

/*
 * RFC 4391 §5: the datagram MTU is the IB MTU less the encapsulation
 * header.  @ib is the IBA MTU code (1..5); 0 for a code that is none.
 */
uint32_t ud_mtu(uint8_t ib_mtu_code);
/* The smaller of two IBA MTU codes that are valid (0 if neither is). */
uint8_t min_mtu_code(uint8_t a, uint8_t b);

/* Link speed for ethtool: lanes (IBA width code) x per-lane Mb/s (speed code); 0 if unknown. */
uint32_t link_mbps(uint8_t width_code, uint8_t speed_code);

} // namespace weft::ipoib

#endif
