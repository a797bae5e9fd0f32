/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Management datagrams as typed wire structs (IBA Vol 1 ch. 13-14): the
 * common MAD header and the subnet management packet in its LID-routed
 * and directed-route forms.  Exact on-wire layouts, big-endian fields,
 * named sub-word fields, as headers.h does for packets.
 */
#ifndef WEFT_IBA_MAD_H
#define WEFT_IBA_MAD_H

#include <weft/wire.h>

namespace weft::iba {

/* IBA 13.4.2: every MAD is 256 bytes. */
inline constexpr size_t mad_size = 256;
/* IBA 13.5.1: QP1 and its well-known Q_Key. */
inline constexpr uint32_t gsi_qpn = 1, gsi_qkey = 0x80010000;

/* IBA 13.4.3: the common MAD header, 24 bytes. */
struct MadHeader {
	be8 base_version;  /* 1 */
	be8 mgmt_class;
	be8 class_version;
	be8 method;        /* R:1 Method:7 */
	be16 status;
	be16 class_specific;
	be64 tid;
	be16 attr_id;
	be16 reserved;
	be32 attr_mod;

	using Response = BitField<be8, 7, 1>;
};
static_assert(sizeof(MadHeader) == 24);

/* IBA 13.4.4: management classes Weft knows. */
namespace mgmt_class {
inline constexpr uint8_t subn_lid_routed = 0x01, subn_directed_route = 0x81, subn_adm = 0x03,
			 perf = 0x04, dev_mgt = 0x06, cm = 0x07, dev_adm = 0x10, bis = 0x12;
}

/* IBA 13.4.4: vendor classes 0x30-0x4f, which carry an OUI (13.4.9) and may use RMPP. */
constexpr bool vendor_range2(uint8_t c)
{
	return c >= 0x30 && c <= 0x4f;
}

/* IBA 13.6.1: the classes whose MADs may carry RMPP. */
constexpr bool class_uses_rmpp(uint8_t c)
{
	return c == mgmt_class::subn_adm || c == mgmt_class::dev_mgt || c == mgmt_class::dev_adm ||
	       c == mgmt_class::bis || vendor_range2(c);
}

/*
 * Where a class's attribute data starts: after the common header (13.4.3),
 * the SA header (15.2.1.1), the PerfMgt and device management headers
 * (16.1.1, 16.3.1), or the vendor RMPP header and OUI (13.4.9).
 */
constexpr size_t class_data_offset(uint8_t c)
{
	if (c == mgmt_class::subn_adm)
		return 56;
	if (c == mgmt_class::perf || c == mgmt_class::dev_mgt || c == mgmt_class::dev_adm || c == mgmt_class::bis)
		return 64;
	if (vendor_range2(c))
		return 40;
	return 24;
}

/* IBA 13.4.7, table 122: MAD status codes (the Status field's low bits). */
namespace mad_status {
inline constexpr uint16_t ok = 0x0000, busy = 0x0001, redirect = 0x0002, bad_version = 0x0004,
			  method_unsupported = 0x0008, attr_unsupported = 0x000c,
			  invalid_value = 0x001c;
}

/* IBA 13.4.5: methods (the R bit set marks a response). */
namespace method {
inline constexpr uint8_t get = 0x01, set = 0x02, send = 0x03, trap = 0x05, report = 0x06,
			 trap_repress = 0x07, get_resp = 0x81, report_resp = 0x86;
}

/* IBA 13.6.2.1: the RMPP header, right after the common MAD header. */
struct RmppHeader {
	be8 version; /* 1 */
	be8 type;
	be8 rtime_flags; /* RRespTime:5 RMPPFlags:3 */
	be8 status;
	be32 seg_num;
	be32 paylen_newwin; /* PayloadLength in DATA, NewWindowLast in ACK */

	using Flags = BitField<be8, 0, 3>;
	using RespTime = BitField<be8, 3, 5>;
};
static_assert(sizeof(RmppHeader) == 12);

namespace rmpp_type {
inline constexpr uint8_t data = 1, ack = 2, stop = 3, abort = 4;
}
namespace rmpp_flag {
inline constexpr uint8_t active = 1, first = 2, last = 4;
}
/* IBA 13.6.2.2, table 174: RMPPStatus of STOP (resources) and ABORT (the rest). */
namespace rmpp_status {
inline constexpr uint8_t resources = 1, total_time = 118, bad_len = 119, bad_seg = 120, bad_type = 121, seg_too_big = 123;
}

/* IBA 13.4.9: classes 0x30-0x4f: after the RMPP header, a reserved byte and the vendor's OUI. */
struct VendorHeader {
	MadHeader common;
	RmppHeader rmpp;
	be32 oui_word; /* Reserved:8 OUI:24 */

	using Oui = BitField<be32, 0, 24>;
};
static_assert(sizeof(VendorHeader) == 40);

/* IBA 14.2.1.2: a directed-route SMP; the LID-routed form (14.2.1.1) shares the first 64 bytes' layout but the DR fields. */
inline constexpr size_t smp_data_size = 64;
inline constexpr uint8_t max_dr_hops = 64; /* IBA 14.2.1.2: paths index 0..63 */

struct Smp {
	be8 base_version;
	be8 mgmt_class;
	be8 class_version;
	be8 method;
	be16 status;	 /* D:1 Status:15 (DR form) */
	be8 hop_pointer; /* DR form; reserved when LID routed */
	be8 hop_count;
	be64 tid;
	be16 attr_id;
	be16 reserved;
	be32 attr_mod;
	be64 m_key;
	be16 dr_slid;
	be16 dr_dlid;
	uint8_t reserved2[28];
	uint8_t data[smp_data_size];
	uint8_t initial_path[max_dr_hops];
	uint8_t return_path[max_dr_hops];

	/* IBA 14.2.1.2: 0 on the way out from the SM, 1 on the way back. */
	using Direction = BitField<be16, 15, 1>;
	using Status = BitField<be16, 0, 15>;
};
static_assert(sizeof(Smp) == mad_size);

/* IBA 14.2.1.2: DrSLID/DrDLID 0xffff mark the directed-route part's end at the SM / at the target. */
inline constexpr uint16_t permissive_lid = 0xffff;

} // namespace weft::iba

#endif
