/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Performance management (IBA Vol 1 16.1) wire formats: the PM MAD, the
 * ClassPortInfo every GS class shares (13.4.8.1) and the counter
 * attributes Weft's PMA answers.  Exact on-wire layouts, big-endian
 * fields, named sub-word fields, as mad.h and smp_attrs.h do.
 */
#ifndef WEFT_IBA_PMA_H
#define WEFT_IBA_PMA_H

#include <weft/iba/mad.h>

namespace weft::iba {

/* IBA 16.1.1: the PerfMgt class speaks class version 1. */
inline constexpr uint8_t pma_class_version = 1;

/* IBA 16.1.1, figure 173: the common header, 40 reserved bytes, then 192 bytes of attribute. */
inline constexpr size_t pma_data_offset = 64;
inline constexpr size_t pma_data_size = mad_size - pma_data_offset;

struct PmaMad {
	MadHeader hdr;
	uint8_t reserved[40];
	uint8_t data[pma_data_size];
};
static_assert(sizeof(PmaMad) == mad_size);

/* IBA 16.1.2, table 245: the attributes Weft knows (and answers). */
namespace pma_attr {
inline constexpr uint16_t class_port_info = 0x0001, port_samples_control = 0x0010,
			  port_samples_result = 0x0011, port_counters = 0x0012,
			  port_counters_ext = 0x001d;
}

/* IBA 16.1.3.5 / 16.1.4.11: PortSelect 0xFF names every port (with AllPortSelect). */
inline constexpr uint8_t pma_all_ports = 0xff;

/* IBA 13.4.8.1 ClassPortInfo, 72 bytes: the same layout for every GS class. */
struct ClassPortInfo {
	be8 base_version;
	be8 class_version;
	be16 capability_mask;
	be32 cap2_resp_time; /* CapabilityMask2:27 RespTimeValue:5 */
	uint8_t redirect_gid[16];
	be32 redirect_tc_sl_fl; /* TC:8 SL:4 FL:20 */
	be16 redirect_lid;
	be16 redirect_pkey;
	be32 redirect_qp; /* reserved:8 QP:24 */
	be32 redirect_qkey;
	uint8_t trap_gid[16];
	be32 trap_tc_sl_fl; /* TC:8 SL:4 FL:20 */
	be16 trap_lid;
	be16 trap_pkey;
	be32 trap_hl_qp; /* HopLimit:8 QP:24 */
	be32 trap_qkey;

	using CapabilityMask2 = BitField<be32, 5, 27>;
	using RespTimeValue = BitField<be32, 0, 5>;
	using Tc = BitField<be32, 24, 8>;
	using Sl = BitField<be32, 20, 4>;
	using FlowLabel = BitField<be32, 0, 20>;
	using Qp = BitField<be32, 0, 24>;
	using HopLimit = BitField<be32, 24, 8>;
};
static_assert(sizeof(ClassPortInfo) == 72);

/* IBA 16.1.2, table 246: PerfMgt ClassPortInfo.CapabilityMask bits (class-specific, 8-15). */
namespace pma_cap {
inline constexpr uint16_t all_port_select = 1u << 8, ext_width = 1u << 9, ext_width_noietf = 1u << 10,
			  samples_only = 1u << 11, port_xmit_wait = 1u << 12;
}

/* IBA 16.1.3.5 PortCounters, 44 bytes. */
struct PortCounters {
	be8 reserved;
	be8 port_select;
	be16 counter_select;
	be16 symbol_errors;
	be8 link_error_recovery;
	be8 link_downed;
	be16 rcv_errors;
	be16 rcv_remote_physical_errors;
	be16 rcv_switch_relay_errors;
	be16 xmit_discards;
	be8 xmit_constraint_errors;
	be8 rcv_constraint_errors;
	be8 counter_select2;
	be8 link_integrity_overrun; /* LocalLinkIntegrityErrors:4 ExcessiveBufferOverrunErrors:4 */
	be16 qp1_dropped;	     /* reserved before IBA 1.3 */
	be16 vl15_dropped;
	be32 xmit_data;
	be32 rcv_data;
	be32 xmit_packets;
	be32 rcv_packets;
	be32 xmit_wait;

	using LocalLinkIntegrity = BitField<be8, 4, 4>;
	using ExcessiveBufferOverrun = BitField<be8, 0, 4>;
};
static_assert(sizeof(PortCounters) == 44);

/* IBA 16.1.3.5, table 247: PortCounters.CounterSelect, one bit per counter a Set clears. */
namespace pc_select {
inline constexpr uint16_t symbol_errors = 1u << 0, link_error_recovery = 1u << 1, link_downed = 1u << 2,
			  rcv_errors = 1u << 3, rcv_remote_physical_errors = 1u << 4,
			  rcv_switch_relay_errors = 1u << 5, xmit_discards = 1u << 6,
			  xmit_constraint_errors = 1u << 7, rcv_constraint_errors = 1u << 8,
			  local_link_integrity = 1u << 9, excessive_buffer_overrun = 1u << 10,
			  vl15_dropped = 1u << 11, xmit_data = 1u << 12, rcv_data = 1u << 13,
			  xmit_packets = 1u << 14, rcv_packets = 1u << 15;
}

/* IBA 16.1.4.11 PortCountersExtended: the 64-bit data and packet counters (first 72 bytes). */
struct PortCountersExt {
	be8 reserved;
	be8 port_select;
	be16 counter_select;
	be32 counter_select2; /* the optional 64-bit error counters, which Weft does not have */
	be64 xmit_data;
	be64 rcv_data;
	be64 xmit_packets;
	be64 rcv_packets;
	be64 unicast_xmit_packets;
	be64 unicast_rcv_packets;
	be64 multicast_xmit_packets;
	be64 multicast_rcv_packets;
};
static_assert(sizeof(PortCountersExt) == 72);

/* IBA 16.1.4.11: PortCountersExtended.CounterSelect bits. */
namespace pcx_select {
inline constexpr uint16_t xmit_data = 1u << 0, rcv_data = 1u << 1, xmit_packets = 1u << 2,
			  rcv_packets = 1u << 3, unicast_xmit = 1u << 4, unicast_rcv = 1u << 5,
			  multicast_xmit = 1u << 6, multicast_rcv = 1u << 7;
}

} // namespace weft::iba

#endif
