/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Subnet administration (IBA Vol 1 ch. 15) wire formats: the SA MAD
 * header and the records a kernel consumer asks for (PathRecord,
 * MCMemberRecord, ServiceRecord), with their component-mask bits.
 */
#ifndef WEFT_IBA_SA_H
#define WEFT_IBA_SA_H

#include <weft/iba/mad.h>

namespace weft::iba {

/* IBA 15.2.1.1: after the common and RMPP headers, 20 bytes, then the record. */
struct SaHeader {
	be64 sm_key;
	be16 attr_offset; /* in 8-byte words: the record stride of a GetTable response */
	be16 reserved;
	be64 comp_mask;
};
static_assert(sizeof(SaHeader) == 20);
inline constexpr size_t sa_header_offset = 36; /* after the common and RMPP headers */
inline constexpr size_t sa_data_offset = sa_header_offset + sizeof(SaHeader);
inline constexpr size_t sa_data_size = mad_size - sa_data_offset;
inline constexpr uint8_t sa_class_version = 2;

namespace sa_method {
inline constexpr uint8_t get = 0x01, set = 0x02, get_resp = 0x81, report = 0x06,
			 get_table = 0x12, get_table_resp = 0x92, del = 0x15, del_resp = 0x95;
}
namespace sa_attr {
inline constexpr uint16_t class_port_info = 0x0001, notice = 0x0002, inform_info = 0x0003, node_record = 0x0011, port_info_record = 0x0012,
			  service_record = 0x0031, path_record = 0x0035, mcmember_record = 0x0038;
}

/*
 * IBA 13.4.8.3, 15.2.5.12 InformInfo, 36 bytes: a subscription to the
 * notices (traps) of a GID or LID range, reported to QPN at the
 * subscriber's LID.  A zero GID with LIDRangeBegin 0xffff means every
 * port; 0xffff in Type or TrapNumber and 0xffffff in ProducerType, any.
 */
struct InformInfo {
	uint8_t gid[16];
	be16 lid_range_begin;
	be16 lid_range_end;
	be16 reserved;
	be8 is_generic;
	be8 subscribe;
	be16 type;
	be16 trap_number; /* or DeviceID */
	be32 qpn_resp_time; /* QPN:24 Reserved:3 RespTimeValue:5 */
	be32 producer;	    /* Reserved:8 ProducerType (or VendorID):24 */

	using Qpn = BitField<be32, 8, 24>;
	using RespTime = BitField<be32, 0, 5>;
	using Producer = BitField<be32, 0, 24>;
};
static_assert(sizeof(InformInfo) == 36);

/* IBA 14.2.5.1 table 155: the SA's notices that a port's GID came into or went out of service. */
namespace sa_trap {
inline constexpr uint16_t gid_in_service = 64, gid_out_of_service = 65;
/* Their DataDetails: 6 reserved bytes, then the GID. */
inline constexpr size_t gid_offset = 6;
} // namespace sa_trap

/* IBA 15.2.5.16 PathRecord, 64 bytes. */
struct PathRecord {
	be64 service_id;
	uint8_t dgid[16];
	uint8_t sgid[16];
	be16 dlid;
	be16 slid;
	be32 hop_flow_raw; /* RawTraffic:1 Reserved:3 FlowLabel:20 HopLimit:8 */
	be8 tclass;
	be8 num_path; /* Reversible:1 NumbPath:7 */
	be16 pkey;
	be16 qos_sl; /* QoSClass:12 SL:4 */
	be8 mtu;       /* MTUSelector:2 MTU:6 */
	be8 rate;      /* RateSelector:2 Rate:6 */
	be8 pkt_life;  /* PacketLifeTimeSelector:2 PacketLifeTime:6 */
	be8 preference;
	uint8_t reserved[6];

	using HopLimit = BitField<be32, 0, 8>;
	using FlowLabel = BitField<be32, 8, 20>;
	using Reversible = BitField<be8, 7, 1>;
	using NumbPath = BitField<be8, 0, 7>;
	using Sl = BitField<be16, 0, 4>;
	using Value = BitField<be8, 0, 6>; /* of mtu, rate, pkt_life */
};
static_assert(sizeof(PathRecord) == 64);

/* PathRecord component mask bits (IBA 15.2.5.16). */
namespace pr_comp {
inline constexpr uint64_t dgid = 1ull << 2, sgid = 1ull << 3, dlid = 1ull << 4, slid = 1ull << 5,
			  reversible = 1ull << 11, numb_path = 1ull << 12, pkey = 1ull << 13,
			  sl = 1ull << 15;
}

/* IBA 15.2.5.17 MCMemberRecord, 52 bytes. */
struct McMemberRecord {
	uint8_t mgid[16];
	uint8_t port_gid[16];
	be32 qkey;
	be16 mlid;
	be8 mtu;
	be8 tclass;
	be16 pkey;
	be8 rate;
	be8 pkt_life;
	be32 sl_flow_hop; /* SL:4 FlowLabel:20 HopLimit:8 */
	be8 scope_state;  /* Scope:4 JoinState:4 */
	be8 proxy_join;   /* ProxyJoin:1 Reserved:7 */
	uint8_t reserved[2];

	using JoinState = BitField<be8, 0, 4>;
	using Scope = BitField<be8, 4, 4>;
	using Sl = BitField<be32, 28, 4>;
};
static_assert(sizeof(McMemberRecord) == 52);

namespace mcr_comp {
inline constexpr uint64_t mgid = 1ull << 0, port_gid = 1ull << 1, qkey = 1ull << 2,
			  mlid = 1ull << 3, mtu_sel = 1ull << 4, mtu = 1ull << 5, tclass = 1ull << 6,
			  pkey = 1ull << 7, rate_sel = 1ull << 8, rate = 1ull << 9, sl = 1ull << 12,
			  flow = 1ull << 13, hop = 1ull << 14, scope = 1ull << 15,
			  join_state = 1ull << 16;
}
/*
 * IBA 15.2.5.17: JoinState bits.  SendOnlyFullMember (Release 1.3): may
 * create the group like a full member, but the SM routes none of the
 * group's traffic to the port.
 */
namespace join {
inline constexpr uint8_t full = 1, non = 2, send_only = 4, send_only_full = 8;
}
/* The SA's ClassPortInfo CapabilityMask2 bits (IBA 15.2.5.1, Release 1.3). */
namespace sa_cap2 {
inline constexpr uint32_t send_only_full_member = 1u << 12;
}

/* IBA 15.2.5.14 ServiceRecord, 176 bytes. */
struct ServiceRecord {
	be64 service_id;
	uint8_t service_gid[16];
	be16 service_pkey;
	be16 reserved;
	be32 lease;
	uint8_t service_key[16];
	uint8_t service_name[64];
	uint8_t data8[16];
	be16 data16[8];
	be32 data32[4];
	be64 data64[2];
};
static_assert(sizeof(ServiceRecord) == 176);

namespace sr_comp {
inline constexpr uint64_t service_id = 1ull << 0, service_gid = 1ull << 1,
			  service_pkey = 1ull << 2, service_name = 1ull << 6;
}

} // namespace weft::iba

#endif
