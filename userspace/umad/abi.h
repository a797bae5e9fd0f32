/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user_mad ABI, version 5 (the in-tree <rdma/ib_user_mad.h> UAPI as
 * libibumad uses it), written out as C++ layouts with their sizes and
 * offsets checked.  Integers are host order (x86-64: little-endian) except
 * the address fields, which are big-endian on the wire of the ABI too.
 */
#ifndef WEFT_UMAD_ABI_H
#define WEFT_UMAD_ABI_H

#include <weft/wire.h>

namespace weft::umad::abi {

/*
 * The header in front of every MAD read or written.  Files that issued
 * ENABLE_PKEY use all 64 bytes; others the first 56 (the "old" header,
 * without pkey_index).
 */
struct Hdr {
	uint32_t id;	     /* agent id, local to the file */
	uint32_t status;     /* read: 0, or ETIMEDOUT for an unanswered request */
	uint32_t timeout_ms; /* write: 0 = no response expected */
	uint32_t retries;
	uint32_t length;     /* read: header + MAD bytes */
	be32 qpn;
	be32 qkey;
	be16 lid;
	uint8_t sl;
	uint8_t path_bits;
	uint8_t grh_present;
	uint8_t gid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t gid[16];
	be32 flow_label;
	uint16_t pkey_index; /* new header only */
	uint8_t reserved[6];
};
static_assert(sizeof(Hdr) == 64);
static_assert(__builtin_offsetof(Hdr, qpn) == 20 && __builtin_offsetof(Hdr, lid) == 28);
static_assert(__builtin_offsetof(Hdr, gid) == 36 && __builtin_offsetof(Hdr, flow_label) == 52);
static_assert(__builtin_offsetof(Hdr, pkey_index) == 56);

inline constexpr size_t hdr_size = 64;
inline constexpr size_t hdr_size_old = 56;

/* REGISTER_AGENT: the method mask is two longs, 4-byte aligned (here as four u32). */
struct RegReq {
	uint32_t id; /* written back */
	uint32_t method_mask[4];
	uint8_t qpn;
	uint8_t mgmt_class;
	uint8_t mgmt_class_version;
	uint8_t oui[3];
	uint8_t rmpp_version;
	uint8_t pad;
};
static_assert(sizeof(RegReq) == 28 && __builtin_offsetof(RegReq, qpn) == 20);
static_assert(__builtin_offsetof(RegReq, rmpp_version) == 26);

/* REGISTER_AGENT2. */
struct RegReq2 {
	uint32_t id; /* written back */
	uint32_t qpn;
	uint8_t mgmt_class;
	uint8_t mgmt_class_version;
	uint16_t res;
	uint32_t flags; /* on EINVAL, the supported flags are written back here */
	uint64_t method_mask[2];
	uint32_t oui; /* 24 bits */
	uint8_t rmpp_version;
	uint8_t reserved[3];
};
static_assert(sizeof(RegReq2) == 40 && __builtin_offsetof(RegReq2, flags) == 12);
static_assert(__builtin_offsetof(RegReq2, method_mask) == 16 && __builtin_offsetof(RegReq2, oui) == 32);

/* REGISTER_AGENT2 flags: the caller does RMPP itself (MADs pass through). */
inline constexpr uint32_t flag_user_rmpp = 1u << 0;
inline constexpr uint32_t supported_flags = flag_user_rmpp;

/* ioctl numbers (magic 0x1b): _IOWR(0x1b, 1, RegReq) etc. */
inline constexpr unsigned int ioc_register_agent = 0xc01c1b01;
inline constexpr unsigned int ioc_unregister_agent = 0x40041b02;
inline constexpr unsigned int ioc_enable_pkey = 0x00001b03;
inline constexpr unsigned int ioc_register_agent2 = 0xc0281b04;

inline constexpr uint32_t max_agents = 32;

} // namespace weft::umad::abi

#endif
