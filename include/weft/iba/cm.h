/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Communication management messages as typed wire structs (IBA Vol 1
 * 12.6, tables 106-120): each is the 232-byte data area of a CM MAD
 * (class 0x07, class version 2, method Send), after the common MAD header.
 * Sub-word fields are named BitFields of the word that holds them.
 */
#ifndef WEFT_IBA_CM_H
#define WEFT_IBA_CM_H

#include <weft/iba/mad.h>

namespace weft::iba::cm {

inline constexpr uint8_t class_version = 2;
inline constexpr size_t data_size = mad_size - sizeof(MadHeader);

/* IBA 12.6: attribute IDs of the CM messages. */
namespace attr {
inline constexpr uint16_t req = 0x10, mra = 0x11, rej = 0x12, rep = 0x13, rtu = 0x14, dreq = 0x15,
			  drep = 0x16, sidr_req = 0x17, sidr_rep = 0x18, lap = 0x19, apr = 0x1a;
}

/* IBA 12.6.5-12.6.11: private data each message carries. */
namespace pdata {
inline constexpr size_t req = 92, mra = 222, rej = 148, rep = 196, rtu = 224, dreq = 220, drep = 224,
			sidr_req = 216, sidr_rep = 136;
}

/* IBA 12.6.5 table 106: a path in a REQ (primary and alternate), 44 bytes. */
struct Path {
	be16 local_lid;
	be16 remote_lid;
	uint8_t local_gid[16];
	uint8_t remote_gid[16];
	be32 flow_rate; /* FlowLabel:20 Reserved:6 PacketRate:6 */
	be8 tclass;
	be8 hop_limit;
	be8 sl_local;	/* SL:4 SubnetLocal:1 Reserved:3 */
	be8 ack_timeout; /* LocalAckTimeout:5 (alternate: +SAP:1) Reserved */

	using FlowLabel = BitField<be32, 12, 20>;
	using Rate = BitField<be32, 0, 6>;
	using Sl = BitField<be8, 4, 4>;
	using SubnetLocal = BitField<be8, 3, 1>;
	using AckTimeout = BitField<be8, 3, 5>;
};
static_assert(sizeof(Path) == 44);

/* IBA 12.6.5 table 106: REQ, Request for Communication. */
struct Req {
	be32 local_comm_id;
	be32 vendor_id; /* Reserved:8 VendorID:24 */
	be64 service_id;
	be64 local_ca_guid;
	be32 reserved1;
	be32 local_qkey;
	be32 qpn_rr;	    /* LocalQPN:24 ResponderResources:8 */
	be32 eecn_id;	    /* LocalEECN:24 InitiatorDepth:8 */
	be32 reecn_flags;   /* RemoteEECN:24 RemoteCMResponseTimeout:5 TransportServiceType:2 E2EFlowControl:1 */
	be32 psn_flags;	    /* StartingPSN:24 LocalCMResponseTimeout:5 RetryCount:3 */
	be16 pkey;
	be8 mtu_flags;	    /* PathPacketPayloadMTU:4 RDCExists:1 RNRRetryCount:3 */
	be8 retries_flags;  /* MaxCMRetries:4 SRQ:1 ExtendedTransportType:3 */
	Path primary;
	Path alternate;
	uint8_t private_data[pdata::req];

	using Qpn = BitField<be32, 8, 24>;
	using ResponderResources = BitField<be32, 0, 8>;
	using InitiatorDepth = BitField<be32, 0, 8>;
	using RemoteCmTimeout = BitField<be32, 3, 5>;
	using TransportType = BitField<be32, 1, 2>; /* 0 RC, 1 UC, 3 extended */
	using Psn = BitField<be32, 8, 24>;
	using LocalCmTimeout = BitField<be32, 3, 5>;
	using RetryCount = BitField<be32, 0, 3>;
	using Mtu = BitField<be8, 4, 4>;
	using RnrRetry = BitField<be8, 0, 3>;
	using MaxCmRetries = BitField<be8, 4, 4>;
	using Srq = BitField<be8, 3, 1>;
};
static_assert(sizeof(Req) == data_size);

/* IBA 12.6.6 table 107: MRA, Message Receipt Acknowledgement. */
struct Mra {
	be32 local_comm_id;
	be32 remote_comm_id;
	be8 mraed;	     /* MessageMRAed:2 Reserved:6 */
	be8 service_timeout; /* ServiceTimeout:5 Reserved:3 */
	uint8_t private_data[pdata::mra];

	using Mraed = BitField<be8, 6, 2>;
	using Timeout = BitField<be8, 3, 5>;
};
static_assert(sizeof(Mra) == data_size);

/* MessageMRAed / MessageRejected values (tables 107, 108). */
namespace msg {
inline constexpr uint8_t req = 0, rep = 1, other = 2;
}

/* IBA 12.6.7 table 108: REJ, Reject. */
struct Rej {
	be32 local_comm_id;
	be32 remote_comm_id;
	be8 rejected;	 /* MessageRejected:2 Reserved:6 */
	be8 ari_length; /* RejectedInfoLength:7 Reserved:1 */
	be16 reason;
	uint8_t ari[72];
	uint8_t private_data[pdata::rej];

	using Rejected = BitField<be8, 6, 2>;
	using AriLength = BitField<be8, 1, 7>;
};
static_assert(sizeof(Rej) == data_size);

/* IBA 12.6.7.2 table 109: reject reasons Weft sends or interprets. */
namespace rej {
inline constexpr uint16_t no_qp = 1, no_resources = 3, timeout = 4, unsupported = 5,
			  invalid_comm_id = 6, invalid_comm_instance = 7, invalid_service_id = 8,
			  invalid_transport_type = 9, stale_conn = 10, invalid_gid = 12, invalid_lid = 13,
			  invalid_mtu = 26, consumer = 28, invalid_rnr_retry = 29,
			  duplicate_local_comm_id = 30, invalid_class_version = 31,
			  vendor_option_unsupported = 35;
inline constexpr size_t ari_max = 72;
}

/* IBA 12.6.8 table 110: REP, Reply to Request for Communication. */
struct Rep {
	be32 local_comm_id;
	be32 remote_comm_id;
	be32 local_qkey;
	be32 qpn_vendor;   /* LocalQPN:24 VendorID(23:16):8 */
	be32 eecn_vendor;  /* LocalEECN:24 VendorID(15:8):8 */
	be32 psn_vendor;   /* StartingPSN:24 VendorID(7:0):8 */
	be8 responder_resources;
	be8 initiator_depth;
	be8 ack_flags;	   /* TargetAckDelay:5 FailoverAccepted:2 E2EFlowControl:1 */
	be8 rnr_flags;	   /* RNRRetryCount:3 SRQ:1 Reserved:4 */
	be64 local_ca_guid;
	uint8_t private_data[pdata::rep];

	using Qpn = BitField<be32, 8, 24>;
	using Psn = BitField<be32, 8, 24>;
	using TargetAckDelay = BitField<be8, 3, 5>;
	using FailoverAccepted = BitField<be8, 1, 2>;
	using RnrRetry = BitField<be8, 5, 3>;
	using Srq = BitField<be8, 4, 1>;
};
static_assert(sizeof(Rep) == data_size);

/* IBA 12.6.9 table 111: RTU, Ready To Use; 12.6.11 table 113: DREP. */
struct Rtu {
	be32 local_comm_id;
	be32 remote_comm_id;
	uint8_t private_data[pdata::rtu];
};
static_assert(sizeof(Rtu) == data_size);
using Drep = Rtu;

/* IBA 12.6.10 table 112: DREQ, Request for Communication Release. */
struct Dreq {
	be32 local_comm_id;
	be32 remote_comm_id;
	be32 remote_qpn; /* RemoteQPN/EECN:24 Reserved:8 */
	uint8_t private_data[pdata::dreq];

	using Qpn = BitField<be32, 8, 24>;
};
static_assert(sizeof(Dreq) == data_size);

/* IBA 12.8.1 table 115 LAP (only its IDs are read); 12.8.2 table 116 APR. */
struct Apr {
	be32 local_comm_id;
	be32 remote_comm_id;
	be8 info_length;
	be8 status;
	be16 reserved;
	uint8_t info[72];
	uint8_t private_data[148];
};
static_assert(sizeof(Apr) == data_size);

/* IBA 12.8.2 table 117: AP status. */
namespace apr {
inline constexpr uint8_t invalid_comm_id = 1, unsupported = 2;
}

/* IBA 12.11.1 table 119: SIDR_REQ, Service ID Resolution Request. */
struct SidrReq {
	be32 request_id;
	be16 pkey;
	be16 reserved;
	be64 service_id;
	uint8_t private_data[pdata::sidr_req];
};
static_assert(sizeof(SidrReq) == data_size);

/* IBA 12.11.2 table 120: SIDR_REP. */
struct SidrRep {
	be32 request_id;
	be8 status;
	be8 info_length;
	be16 vendor_hi;
	be32 qpn_vendor; /* QPN:24 VendorID(7:0):8 */
	be64 service_id;
	be32 qkey;
	uint8_t class_port_info[72];
	uint8_t private_data[pdata::sidr_rep];

	using Qpn = BitField<be32, 8, 24>;
};
static_assert(sizeof(SidrRep) == data_size);

/* IBA 12.11.2 table 121: SIDR_REP status. */
namespace sidr {
inline constexpr uint8_t ok = 0, unsupported_sid = 1, rejected = 2, no_qp = 3, redirect = 4,
			 unsupported_version = 5;
}

/* IBA 12.7.4 / 13.4.6.2: 4.096 us * 2^t, as whole milliseconds (at least 1). */
constexpr uint32_t timeout_ms(uint8_t t)
{
	if (t > 31)
		t = 31;
	uint64_t ns = 4096ull << t;
	uint64_t ms = ns / 1000000;
	return ms ? static_cast<uint32_t>(ms > 0xffffffffu ? 0xffffffffu : ms) : 1;
}

} // namespace weft::iba::cm

#endif
