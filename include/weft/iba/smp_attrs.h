/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Subnet management attributes (IBA Vol 1 14.2.5) as typed wire structs:
 * what fills Smp::data.  Exact on-wire layouts, big-endian fields, named
 * sub-word fields, as headers.h and mad.h do.
 */
#ifndef WEFT_IBA_SMP_ATTRS_H
#define WEFT_IBA_SMP_ATTRS_H

#include <weft/iba/mad.h>

namespace weft::iba {

/* IBA 14.2.5, table 145: subnet management attribute IDs. */
namespace smp_attr {
inline constexpr uint16_t notice = 0x0002, node_description = 0x0010, node_info = 0x0011,
			  switch_info = 0x0012, guid_info = 0x0014, port_info = 0x0015,
			  pkey_table = 0x0016, sl_to_vl_table = 0x0017, vl_arbitration = 0x0018,
			  linear_fdb = 0x0019, random_fdb = 0x001a, multicast_fdb = 0x001b,
			  sm_info = 0x0020, vendor_diag = 0x0030, led_info = 0x0031;
}

/* IBA 14.2.5.3 NodeInfo, 40 bytes. */
struct NodeInfo {
	be8 base_version;
	be8 class_version;
	be8 node_type;
	be8 num_ports;
	be64 system_image_guid;
	be64 node_guid;
	be64 port_guid;
	be16 partition_cap;
	be16 device_id;
	be32 revision;
	be32 port_vendor; /* LocalPortNum:8 VendorID:24 */

	using LocalPortNum = BitField<be32, 24, 8>;
	using VendorId = BitField<be32, 0, 24>;
};
static_assert(sizeof(NodeInfo) == 40);

/* IBA 14.2.5.2 NodeDescription: 64 bytes of UTF-8, not necessarily terminated. */
struct NodeDescription {
	uint8_t text[64];
};
static_assert(sizeof(NodeDescription) == 64);

/* IBA 14.2.5.6 PortInfo, 64 bytes. */
struct PortInfo {
	be64 m_key;
	be64 gid_prefix;
	be16 lid;
	be16 master_sm_lid;
	be32 capability_mask;
	be16 diag_code;
	be16 m_key_lease_period;
	be8 local_port_num;
	be8 link_width_enabled;
	be8 link_width_supported;
	be8 link_width_active;
	be8 speed_state;      /* LinkSpeedSupported:4 PortState:4 */
	be8 phys_down;        /* PortPhysicalState:4 LinkDownDefaultState:4 */
	be8 mkey_lmc;         /* M_KeyProtectBits:2 reserved:3 LMC:3 */
	be8 speed_act_en;     /* LinkSpeedActive:4 LinkSpeedEnabled:4 */
	be8 mtu_smsl;         /* NeighborMTU:4 MasterSMSL:4 */
	be8 vlcap_init;       /* VLCap:4 InitType:4 */
	be8 vl_high_limit;
	be8 vl_arb_high_cap;
	be8 vl_arb_low_cap;
	be8 init_reply_mtucap; /* InitTypeReply:4 MTUCap:4 */
	be8 stall_hoq;        /* VLStallCount:3 HOQLife:5 */
	be8 opvls_enforce;    /* OperationalVLs:4 PartEnfIn:1 PartEnfOut:1 FilterRawIn:1 FilterRawOut:1 */
	be16 m_key_violations;
	be16 p_key_violations;
	be16 q_key_violations;
	be8 guid_cap;
	be8 rereg_timeout;    /* ClientReregister:1 MulticastPKeyTrapSuppression:2 SubnetTimeOut:5 */
	be8 resp_time;        /* reserved:3 RespTimeValue:5 */
	be8 error_thresholds; /* LocalPhyErrors:4 OverrunErrors:4 */
	be16 max_credit_hint;
	be32 link_round_trip; /* reserved:8 LinkRoundTripLatency:24 */
	be16 capability_mask2;
	be8 speed_ext;        /* LinkSpeedExtActive:4 LinkSpeedExtSupported:4 */
	be8 speed_ext_enabled; /* reserved:3 LinkSpeedExtEnabled:5 */

	using LinkSpeedSupported = BitField<be8, 4, 4>;
	using PortState = BitField<be8, 0, 4>;
	using PhysState = BitField<be8, 4, 4>;
	using LinkDownDefault = BitField<be8, 0, 4>;
	using MKeyProtect = BitField<be8, 6, 2>;
	using Lmc = BitField<be8, 0, 3>;
	using LinkSpeedActive = BitField<be8, 4, 4>;
	using LinkSpeedEnabled = BitField<be8, 0, 4>;
	using NeighborMtu = BitField<be8, 4, 4>;
	using MasterSmSl = BitField<be8, 0, 4>;
	using VlCap = BitField<be8, 4, 4>;
	using InitType = BitField<be8, 0, 4>;
	using InitTypeReply = BitField<be8, 4, 4>;
	using MtuCap = BitField<be8, 0, 4>;
	using VlStallCount = BitField<be8, 5, 3>;
	using HoqLife = BitField<be8, 0, 5>;
	using OperationalVls = BitField<be8, 4, 4>;
	using PartEnforceIn = BitField<be8, 3, 1>;
	using PartEnforceOut = BitField<be8, 2, 1>;
	using FilterRawIn = BitField<be8, 1, 1>;
	using FilterRawOut = BitField<be8, 0, 1>;
	using ClientReregister = BitField<be8, 7, 1>;
	using McastPkeyTrapSuppress = BitField<be8, 5, 2>;
	using SubnetTimeout = BitField<be8, 0, 5>;
	using RespTimeValue = BitField<be8, 0, 5>;
	using LocalPhyErrors = BitField<be8, 4, 4>;
	using OverrunErrors = BitField<be8, 0, 4>;
	using LinkRoundTrip = BitField<be32, 0, 24>;
	using LinkSpeedExtActive = BitField<be8, 4, 4>;
	using LinkSpeedExtSupported = BitField<be8, 0, 4>;
	using LinkSpeedExtEnabled = BitField<be8, 0, 5>;
};
static_assert(sizeof(PortInfo) == 64);

/* IBA 14.2.5.5 GUIDInfo: a block of 8 GUIDs (AttributeModifier = block). */
struct GuidInfo {
	be64 guid[8];
};
static_assert(sizeof(GuidInfo) == 64);

/* IBA 14.2.5.7 P_KeyTable: a block of 32 P_Keys. */
inline constexpr uint16_t pkeys_per_block = 32;
struct PkeyTable {
	be16 pkey[pkeys_per_block];
};
static_assert(sizeof(PkeyTable) == 64);

/* IBA 14.2.5.8 SLtoVLMappingTable: 16 four-bit VLs, SL0 in the high nibble of byte 0. */
struct SlToVlTable {
	be8 vl_pair[8]; /* SL 2i:4 SL 2i+1:4 */

	using Even = BitField<be8, 4, 4>;
	using Odd = BitField<be8, 0, 4>;
};
static_assert(sizeof(SlToVlTable) == 8);

/* IBA 14.2.5.9 VLArbitrationTable: 32 (VL, weight) entries per block. */
struct VlArbEntry {
	be8 vl; /* reserved:4 VL:4 */
	be8 weight;
	using Vl = BitField<be8, 0, 4>;
};
inline constexpr uint8_t vl_arb_entries_per_block = 32;
struct VlArbTable {
	VlArbEntry entry[vl_arb_entries_per_block];
};
static_assert(sizeof(VlArbTable) == 64);
/* AttributeModifier: which half of which table. */
namespace vl_arb_block {
inline constexpr uint32_t low_0_31 = 1, low_32_63 = 2, high_0_31 = 3, high_32_63 = 4;
}

/* IBA 14.2.5.4 SwitchInfo, 20 bytes. */
struct SwitchInfo {
	be16 linear_fdb_cap;
	be16 random_fdb_cap;
	be16 multicast_fdb_cap;
	be16 linear_fdb_top;
	be8 default_port;
	be8 default_mcast_primary_port;
	be8 default_mcast_not_primary_port;
	be8 life_state; /* LifeTimeValue:5 PortStateChange:1 OptimizedSLtoVLMappingProgramming:2 */
	be16 lids_per_port;
	be16 partition_enforcement_cap;
	be8 caps;       /* InboundEnf:1 OutboundEnf:1 FilterRawIn:1 FilterRawOut:1 EnhancedPort0:1 reserved:3 */
	be8 reserved;
	be16 multicast_fdb_top;

	using LifeTimeValue = BitField<be8, 3, 5>;
	using PortStateChange = BitField<be8, 2, 1>;
	using OptimizedSlToVl = BitField<be8, 0, 2>;
	using EnhancedPort0 = BitField<be8, 3, 1>;
};
static_assert(sizeof(SwitchInfo) == 20);

/* IBA 14.2.5.10 LinearForwardingTable: 64 output ports per block. */
inline constexpr uint16_t lft_entries_per_block = 64;
struct LinearFdb {
	be8 port[lft_entries_per_block];
};
static_assert(sizeof(LinearFdb) == 64);

/* IBA 14.2.5.12 MulticastForwardingTable: 32 MLIDs x 16 ports of one position. */
inline constexpr uint16_t mft_entries_per_block = 32;
inline constexpr uint8_t mft_ports_per_position = 16;
struct MulticastFdb {
	be16 port_mask[mft_entries_per_block];
};
static_assert(sizeof(MulticastFdb) == 64);
/* Its AttributeModifier: PortMask position and block number. */
struct MftModifier {
	using Position = BitField<be32, 28, 4>;
	using Block = BitField<be32, 0, 9>;
};

/* IBA 14.2.5.1 Notice (the 64 bytes an SMP carries; the IssuerGID of 13.4.8.2 does not fit). */
struct Notice {
	be8 generic_type;  /* IsGeneric:1 Type:7 */
	be8 producer_hi;   /* ProducerType (or VendorID) bits 23:16 */
	be16 producer_lo;  /* ... bits 15:0 */
	be16 trap_number;  /* or DeviceID */
	be16 issuer_lid;
	be16 toggle_count; /* NoticeToggle:1 NoticeCount:15 */
	uint8_t data_details[54];

	using IsGeneric = BitField<be8, 7, 1>;
	using Type = BitField<be8, 0, 7>;
	using Toggle = BitField<be16, 15, 1>;
	using Count = BitField<be16, 0, 15>;
};
static_assert(sizeof(Notice) == 64);

/*
 * IBA 14.2.5.1 table 150: the DataDetails of the traps Weft raises (each
 * 54 bytes, laid over Notice::data_details).  The layouts agree with
 * OpenSM's ib_mad_notice_attr_t and Wireshark's dissector.
 */
namespace notice_details {
/* Traps 129-131: the port of a node (its LID) that saw the error. */
struct PortError {
	be16 reserved0;
	be16 lid;
	be8 port;
	uint8_t reserved1[49];
};
/* Trap 144: a port's CapabilityMask (or what ChangeFlags name) changed. */
struct LocalChanges {
	be16 reserved0;
	be16 lid;
	be8 reserved1;
	be8 other_local_changes; /* low bit */
	be32 capability_mask;
	be16 change_flags;
	be16 capability_mask2;
	uint8_t reserved2[40];
};
/* Trap 256: an SMP failed the M_Key check. */
struct BadMKey {
	be16 reserved0;
	be16 lid;
	be16 dr_slid;
	be8 method;
	be8 reserved1;
	be16 attr_id;
	be32 attr_mod;
	be64 m_key;
	be8 reserved2;
	be8 dr_notice; /* DRNotice:1 DRPathTruncated:1 DRHopCount:6 */
	uint8_t dr_return_path[30];

	using DrNotice = BitField<be8, 7, 1>;
	using DrPathTruncated = BitField<be8, 6, 1>;
	using DrHopCount = BitField<be8, 0, 6>;
};
/* Traps 257/258: a packet to QP1 failed its P_Key or Q_Key check. */
struct KeyViolation {
	be16 reserved0;
	be16 lid1; /* the packet's SLID */
	be16 lid2; /* its DLID */
	be32 key;
	be32 sl_qp1; /* SL:4 reserved:4 QP1 (the source QP):24 */
	be32 qp2;    /* reserved:8 QP2 (the destination QP):24 */
	uint8_t gid1[16];
	uint8_t gid2[16];
	uint8_t reserved1[4];

	using Sl = BitField<be32, 28, 4>;
	using Qp1 = BitField<be32, 0, 24>;
};
static_assert(sizeof(PortError) == 54 && sizeof(LocalChanges) == 54 && sizeof(BadMKey) == 54 &&
	      sizeof(KeyViolation) == 54);
} // namespace notice_details

/* IBA 14.2.5.1, table 147: notice types and producers. */
namespace notice {
inline constexpr uint8_t type_fatal = 0, type_urgent = 1, type_security = 2, type_subn_mgmt = 3,
			 type_info = 4;
inline constexpr uint32_t producer_ca = 1, producer_switch = 2, producer_router = 3,
			  producer_class_manager = 4;
/* Trap 128: a switch port's link state changed; DataDetails starts with its LID. */
inline constexpr uint16_t trap_link_state_change = 128;
} // namespace notice

/* IBA 14.2.5.6: the PortState values a Set may carry, beside verbs::PortState. */
inline constexpr uint8_t port_state_nop = 0;
/* PortPhysicalState values a Set may carry. */
inline constexpr uint8_t phys_state_nop = 0, phys_state_polling = 2, phys_state_disabled = 3;

} // namespace weft::iba

#endif
