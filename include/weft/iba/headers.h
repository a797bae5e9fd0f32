/* SPDX-License-Identifier: GPL-2.0 */
/*
 * IBA packet headers as typed wire structs (IBA Vol 1, ch. 7-9).  Every
 * struct is the exact on-wire layout (alignment 1, big-endian fields), and
 * every sub-word field is a named BitField, so packet code never shifts
 * bytes by hand.
 */
#ifndef WEFT_IBA_HEADERS_H
#define WEFT_IBA_HEADERS_H

#include <weft/wire.h>

namespace weft::iba {

/* IBA 7.7: Local Route Header, 8 bytes. */
struct Lrh {
	be8 vl_lver;   /* VL:4 LVer:4 */
	be8 sl_lnh;    /* SL:4 reserved:2 LNH:2 */
	be16 dlid;
	be16 pktlen;   /* reserved:5 PktLen:11, in 4-byte words, LRH through ICRC */
	be16 slid;

	using Vl = BitField<be8, 4, 4>;
	using LVer = BitField<be8, 0, 4>;
	using Sl = BitField<be8, 4, 4>;
	using Lnh = BitField<be8, 0, 2>;
	using PktLen = BitField<be16, 0, 11>;
};
static_assert(sizeof(Lrh) == 8);

/* IBA 7.7.3: Link Next Header. */
enum class Lnh : uint8_t { Raw = 0, RawIpv6 = 1, IbaLocal = 2, IbaGlobal = 3 };

/* IBA 8.3: Global Route Header, 40 bytes. */
struct Grh {
	be32 ver_tclass_flow; /* IPVer:4 TClass:8 FlowLabel:20 */
	be16 paylen;          /* bytes after the GRH, through ICRC */
	be8 nxthdr;
	be8 hoplmt;
	uint8_t sgid[16];
	uint8_t dgid[16];

	using IpVer = BitField<be32, 28, 4>;
	using TClass = BitField<be32, 20, 8>;
	using FlowLabel = BitField<be32, 0, 20>;
};
static_assert(sizeof(Grh) == 40);
inline constexpr uint8_t grh_ipver = 6;
inline constexpr uint8_t grh_nxthdr_iba = 0x1b; /* IBA 8.3.1: BTH follows */

/* IBA 9.2: Base Transport Header, 12 bytes. */
struct Bth {
	be8 opcode;
	be8 flags;    /* SE:1 M:1 PadCnt:2 TVer:4 */
	be16 pkey;
	be32 dqp;     /* reserved (variant):8 DestQP:24 */
	be32 psn;     /* AckReq:1 reserved:7 PSN:24 */

	using Se = BitField<be8, 7, 1>;
	using MigReq = BitField<be8, 6, 1>;
	using PadCnt = BitField<be8, 4, 2>;
	using TVer = BitField<be8, 0, 4>;
	using DestQp = BitField<be32, 0, 24>;
	using Resv8a = BitField<be32, 24, 8>;
	using AckReq = BitField<be32, 31, 1>;
	using Psn = BitField<be32, 0, 24>;
};
static_assert(sizeof(Bth) == 12);

/* IBA 9.3.3: Datagram Extended Transport Header. */
struct Deth {
	be32 qkey;
	be32 sqp; /* reserved:8 SrcQP:24 */
	using SrcQp = BitField<be32, 0, 24>;
};
static_assert(sizeof(Deth) == 8);

/* IBA 9.3.4: RDMA Extended Transport Header. */
struct Reth {
	be64 va;
	be32 rkey;
	be32 dmalen;
};
static_assert(sizeof(Reth) == 16);

/* IBA 9.3.5: Atomic Extended Transport Header. */
struct AtomicEth {
	be64 va;
	be32 rkey;
	be64 swap_add;
	be64 compare;
};
static_assert(sizeof(AtomicEth) == 28);

/* IBA 9.3.6: ACK Extended Transport Header. */
struct Aeth {
	be32 syn_msn; /* Syndrome:8 MSN:24 */
	using Syndrome = BitField<be32, 24, 8>;
	using Msn = BitField<be32, 0, 24>;
};
static_assert(sizeof(Aeth) == 4);

/* IBA 9.3.7: Atomic Acknowledge Extended Transport Header. */
struct AtomicAckEth {
	be64 orig;
};
static_assert(sizeof(AtomicAckEth) == 8);

/* IBA 9.3.8: Immediate Data; 9.3.9: Invalidate Extended Transport Header. */
struct ImmDt {
	be32 imm;
};
struct Ieth {
	be32 rkey;
};
static_assert(sizeof(ImmDt) == 4 && sizeof(Ieth) == 4);

/* IBA 7.8: the invariant (ICRC) and variant (VCRC) CRCs end every packet. */
struct Trailer {
	le32 icrc;
	le16 vcrc;
};
static_assert(sizeof(Trailer) == 6);
inline constexpr size_t icrc_bytes = 4;
inline constexpr size_t vcrc_bytes = 2;

/* IBA 5.2.2: PktLen counts 4-byte words, and is 11 bits wide. */
inline constexpr size_t max_packet_bytes = Lrh::PktLen::max * 4;

/* IBA 7.9.3: MTUs by their PortInfo encoding. */
enum class Mtu : uint8_t { M256 = 1, M512 = 2, M1024 = 3, M2048 = 4, M4096 = 5 };
constexpr size_t mtu_bytes(Mtu m) { return size_t(128) << static_cast<uint8_t>(m); }

} // namespace weft::iba

#endif
