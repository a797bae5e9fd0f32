/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Large send offload on UD QPs (verbs WrOpcode::Lso): the HCA cuts one
 * TCP/IPv4 message behind an IPoIB header into MSS-sized UD SENDs and
 * makes each packet's headers what TCP segmentation would (RFC 791 §3.1
 * total length, identification, header checksum; RFC 793 §3.1 sequence
 * number and flags; RFC 3168 §6.1.2 CWR only in the first).  Not an IBA
 * operation: hardware HCAs offer it to IPoIB the same way.
 */
#ifndef WEFT_HCA_LSO_H
#define WEFT_HCA_LSO_H

#include <weft/wire.h>

#include "qp.h"

namespace weft::hca::lso {

/* RFC 791 §3.1 */
struct Ipv4Header {
	be8 ver_ihl; /* Version:4 IHL:4 (32-bit words) */
	be8 tos;
	be16 tot_len;
	be16 id;
	be16 frag;
	be8 ttl;
	be8 protocol;
	be16 check;
	be32 saddr;
	be32 daddr;
};
static_assert(sizeof(Ipv4Header) == 20);

/* RFC 793 §3.1 */
struct TcpHeader {
	be16 sport;
	be16 dport;
	be32 seq;
	be32 ack;
	be8 doff; /* Data Offset:4 (32-bit words), reserved */
	be8 flags;
	be16 window;
	be16 check;
	be16 urg;
};
static_assert(sizeof(TcpHeader) == 20);

inline constexpr uint8_t tcp_fin = 0x01, tcp_psh = 0x08, tcp_cwr = 0x80;
inline constexpr uint8_t ip_proto_tcp = 6;
inline constexpr uint32_t max_hlen = 128;
inline constexpr uint32_t max_payload = 64 * 1024;

/* post_send's checks of an Lso WR with @length bytes in its gather list (EINVAL). */
Result<void> check(const verbs::SendWr &wr, uint32_t length);

inline uint32_t packets(uint32_t length, uint32_t mss) { return (length + mss - 1) / mss; }

/* One packet of the message: its header, and where its share of the gather list is. */
struct Fill {
	uint8_t hdr[max_hlen];
	uint32_t hlen = 0;
	SgFill data{};	   /* data.off: the share's first byte in the gather list */
	bool csum = false; /* the TCP checksum is inserted (send_flag::csum) */
	CsumInsert ins;
};

/* Packet @i of @n, @len bytes of the @total: @f's header made for it. */
void make_header(const verbs::SendWr &wr, uint32_t i, uint32_t n, uint32_t len, uint32_t total, Fill &f);

/* FillFn over a Fill: the header, then the share (summed and inserted as sg_fill does). */
Result<void> fill(void *ctx, size_t off, Bytes dst, CsumAcc *acc);

/*
 * Whole-MSS datagrams sent as one burst (PacketBuf::burst): datagram k of
 * the burst is datagram k of the message, each hlen + mss bytes.
 */
struct BurstFill {
	Fill f;
	const verbs::SendWr *wr = nullptr;
	uint32_t n = 0, total = 0;
	uint32_t made = ~0u; /* the datagram f's header is made for */
};

/* FillFn over a BurstFill: @off in the burst picks the datagram, whose header is made as needed. */
Result<void> fill_burst(void *ctx, size_t off, Bytes dst, CsumAcc *acc);

} // namespace weft::hca::lso

#endif
