/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Verbs vocabulary (IBA Vol 1 ch. 10-11): the plain data that crosses the
 * verbs API between ULPs, the mid-layer (core/verbs) and HCA drivers.
 * Where the kernel's uverbs ABI carries the same values (QP attribute mask
 * bits, access flags, WC status and opcode numbers, port state numbers), the
 * numbering here is that ABI's, so user space can be passed through later.
 */
#ifndef WEFT_VERBS_TYPES_H
#define WEFT_VERBS_TYPES_H

#include <weft/iba/headers.h>
#include <weft/span.h>

namespace weft::verbs {

struct Gid {
	uint8_t raw[16];

	uint64_t subnet_prefix() const;
	uint64_t interface_id() const;
	static Gid make(uint64_t prefix, uint64_t guid);
	bool operator==(const Gid &o) const { return __builtin_memcmp(raw, o.raw, 16) == 0; }
};

/* IBA 14.2.5.6 PortInfo.PortState. */
enum class PortState : uint8_t { Nop = 0, Down = 1, Init = 2, Armed = 3, Active = 4 };
/* IBA 14.2.5.6 PortInfo.PortPhysicalState. */
enum class PhysState : uint8_t {
	Sleep = 1,
	Polling = 2,
	Disabled = 3,
	PortConfigTraining = 4,
	LinkUp = 5,
	LinkErrorRecovery = 6,
	PhyTest = 7,
};

enum class NodeType : uint8_t { Ca = 1, Switch = 2, Router = 3 };

/* IBA 10.2.3 QP types; QP0/QP1 are the special QPs of the MAD layer. */
enum class QpType : uint8_t { Smi = 0, Gsi = 1, Rc = 2, Uc = 3, Ud = 4 };

/* IBA 10.3.1 QP states (numbered as enum ib_qp_state). */
enum class QpState : uint8_t { Reset = 0, Init, Rtr, Rts, Sqd, Sqe, Err };

/* IBA 10.6.3.2 access rights, as the uverbs ABI numbers them. */
namespace access {
inline constexpr uint32_t local_write = 1u << 0;
inline constexpr uint32_t remote_write = 1u << 1;
inline constexpr uint32_t remote_read = 1u << 2;
inline constexpr uint32_t remote_atomic = 1u << 3;
inline constexpr uint32_t mw_bind = 1u << 4;
inline constexpr uint32_t all = (1u << 5) - 1;
/* What a memory window may grant (IBA 10.6.7.1: remote rights; local write is ignored). */
inline constexpr uint32_t window = local_write | remote_write | remote_read | remote_atomic;
} // namespace access

/* IBA 10.6.7: memory window types (numbered as enum ib_mw_type). */
enum class MwType : uint8_t { Type1 = 1, Type2 = 2 };

/* Address vector (IBA 11.2.2.1 / 10.2.2). */
struct AhAttr {
	uint16_t dlid = 0;
	uint8_t sl = 0;
	uint8_t src_path_bits = 0;
	uint8_t static_rate = 0;
	uint8_t port = 0;
	bool global = false; /* GRH present */
	Gid dgid{};
	uint8_t sgid_index = 0;
	uint8_t hop_limit = 0;
	uint8_t traffic_class = 0;
	uint32_t flow_label = 0;
};

struct QpCap {
	uint32_t max_send_wr = 0;
	uint32_t max_recv_wr = 0;
	uint32_t max_send_sge = 0;
	uint32_t max_recv_sge = 0;
	uint32_t max_inline_data = 0;
};

/* IBA 11.2.5.1 Modify QP attributes; bits as enum ib_qp_attr_mask. */
namespace qp_attr {
inline constexpr uint32_t state = 1u << 0;
inline constexpr uint32_t cur_state = 1u << 1;
inline constexpr uint32_t en_sqd_async_notify = 1u << 2;
inline constexpr uint32_t access_flags = 1u << 3;
inline constexpr uint32_t pkey_index = 1u << 4;
inline constexpr uint32_t port = 1u << 5;
inline constexpr uint32_t qkey = 1u << 6;
inline constexpr uint32_t av = 1u << 7;
inline constexpr uint32_t path_mtu = 1u << 8;
inline constexpr uint32_t timeout = 1u << 9;
inline constexpr uint32_t retry_cnt = 1u << 10;
inline constexpr uint32_t rnr_retry = 1u << 11;
inline constexpr uint32_t rq_psn = 1u << 12;
inline constexpr uint32_t max_qp_rd_atomic = 1u << 13;
inline constexpr uint32_t alt_path = 1u << 14;
inline constexpr uint32_t min_rnr_timer = 1u << 15;
inline constexpr uint32_t sq_psn = 1u << 16;
inline constexpr uint32_t max_dest_rd_atomic = 1u << 17;
inline constexpr uint32_t path_mig_state = 1u << 18;
inline constexpr uint32_t cap = 1u << 19;
inline constexpr uint32_t dest_qpn = 1u << 20;
inline constexpr uint32_t all = (1u << 21) - 1;
} // namespace qp_attr

/* IBA 10.2.7 path migration states (enum ib_mig_state). */
enum class MigState : uint8_t { Migrated = 0, Rearm = 1, Armed = 2 };

struct QpAttr {
	QpState state = QpState::Reset;
	QpState cur_state = QpState::Reset;
	iba::Mtu path_mtu = iba::Mtu::M256;
	MigState path_mig_state = MigState::Migrated;
	uint32_t qkey = 0;
	uint32_t rq_psn = 0;
	uint32_t sq_psn = 0;
	uint32_t dest_qp_num = 0;
	uint32_t qp_access_flags = 0;
	QpCap cap;
	AhAttr ah_attr;
	AhAttr alt_ah_attr;
	uint16_t pkey_index = 0;
	uint16_t alt_pkey_index = 0;
	bool en_sqd_async_notify = false;
	bool sq_draining = false;
	uint8_t max_rd_atomic = 0;	/* initiator depth */
	uint8_t max_dest_rd_atomic = 0; /* responder resources */
	uint8_t min_rnr_timer = 0;	/* IBA 9.7.5.2.8 encoding, 0..31 */
	uint8_t port_num = 0;
	uint8_t timeout = 0;   /* local ACK timeout: 4.096 us * 2^timeout, 0 = infinite */
	uint8_t retry_cnt = 0; /* 0..7 */
	uint8_t rnr_retry = 0; /* 0..7, 7 = infinite */
	uint8_t alt_port_num = 0;
	uint8_t alt_timeout = 0;
};

/* What the device offers (IBA 11.2.1.2 Query HCA). */
struct DeviceAttr {
	uint64_t node_guid = 0;
	uint64_t sys_image_guid = 0;
	uint64_t max_mr_size = 0;
	uint64_t page_size_cap = 0;
	uint32_t vendor_id = 0, vendor_part_id = 0, hw_ver = 0;
	uint64_t fw_ver = 0;
	uint32_t max_qp = 0, max_qp_wr = 0;
	uint32_t max_send_sge = 0, max_recv_sge = 0;
	uint32_t max_cq = 0, max_cqe = 0;
	uint32_t max_mr = 0, max_pd = 0, max_ah = 0;
	uint32_t max_srq = 0, max_srq_wr = 0, max_srq_sge = 0;
	uint32_t max_qp_rd_atom = 0, max_qp_init_rd_atom = 0, max_res_rd_atom = 0;
	uint32_t max_inline_data = 0;
	uint32_t max_fast_reg_page_list_len = 0;
	uint32_t max_mcast_grp = 0, max_mcast_qp_attach = 0;
	uint16_t max_pkeys = 0;
	uint8_t local_ca_ack_delay = 0;
	/*
	 * Completion vectors (interrupts), and where the first one is: vector
	 * v runs on the online CPU (comp_vector_base + v) in turn, so devices
	 * made one after another interrupt different CPUs, as separate hosts'
	 * HCAs would.
	 */
	uint32_t num_comp_vectors = 1;
	/* send_flag::csum on SENDs, and wc_flag::csum on receives. */
	bool csum_offload = false;
	/* WrOpcode::Lso on UD QPs: the largest payload after the header (0: none). */
	uint32_t max_lso = 0;
	uint32_t comp_vector_base = 0;
	bool atomic_cap = false; /* IBA 11.2.1.2 "atomic operations: HCA-wide" */
	/* IBA 10.6.7: memory windows, type 1 and type 2B (QP and PD checked), when max_mw > 0. */
	uint32_t max_mw = 0;
};

/* IBA 14.2.5.6 PortInfo, the part the verbs report (Query HCA port). */
struct PortAttr {
	PortState state = PortState::Down;
	PhysState phys_state = PhysState::Polling;
	iba::Mtu max_mtu = iba::Mtu::M4096;
	iba::Mtu active_mtu = iba::Mtu::M256;
	uint32_t gid_tbl_len = 0;
	uint32_t port_cap_flags = 0;
	uint32_t max_msg_sz = 0;
	uint32_t bad_pkey_cntr = 0, qkey_viol_cntr = 0;
	uint16_t pkey_tbl_len = 0;
	uint16_t lid = 0, sm_lid = 0;
	uint8_t lmc = 0, sm_sl = 0;
	uint8_t max_vl_num = 0;
	uint8_t subnet_timeout = 0;
	uint8_t init_type_reply = 0;
	uint8_t active_width = 0; /* IBA encoding: 1 = 1x, 2 = 4x, 4 = 8x, 8 = 12x */
	uint8_t active_speed = 0; /* 1 = SDR ... as PortInfo.LinkSpeedActive(Ext) */
};

/* What a device's own management agents did with a MAD (Device::process_mad). */
enum class MadOutcome : uint8_t {
	NotMine,  /* no firmware agent for it: the MAD layer's agents get it */
	Consumed, /* handled, nothing to send back (a Set of a trap repress, a bad M_Key) */
	Reply,    /* the response is in @out */
};

/* Where a MAD offered to Device::process_mad came from. */
struct MadIn {
	uint8_t port = 0; /* arrival port (0: the switch's management port) */
	uint16_t slid = 0;
	uint8_t sl = 0;
	uint32_t src_qp = 0;
	uint16_t pkey_index = 0;
};

/* IBA 14.2.5.6 PortInfo.CapabilityMask bits Weft uses. */
namespace port_cap {
inline constexpr uint32_t is_sm = 1u << 1, is_notice_supported = 1u << 2,
			  is_trap_supported = 1u << 3, is_automatic_migration_supported = 1u << 5,
			  is_sl_mapping_supported = 1u << 6, is_m_key_nvram = 1u << 7,
			  is_led_info_supported = 1u << 9, is_sm_disabled = 1u << 10,
			  is_system_image_guid_supported = 1u << 11,
			  is_pkey_switch_external_port_trap_supported = 1u << 12,
			  is_extended_speeds_supported = 1u << 14, is_cm_supported = 1u << 16,
			  is_device_management_supported = 1u << 19, is_vendor_class_supported = 1u << 20,
			  is_client_reregistration_supported = 1u << 25,
			  is_capability_mask2_supported = 1u << 15;
}

/* A port's traffic and error counters (IBA 16.1.3.5, data in 32-bit words). */
struct PortCounterValues {
	uint64_t xmit_packets = 0, rcv_packets = 0;
	uint64_t xmit_words = 0, rcv_words = 0;
	uint64_t xmit_discards = 0, rcv_errors = 0, vl15_dropped = 0, link_downed = 0;
	uint64_t unicast_xmit = 0, unicast_rcv = 0, multicast_xmit = 0, multicast_rcv = 0;
	/* Not IBA's (no PMA attribute has it): messages that found no receive WQE. */
	uint64_t out_of_buffer = 0;
};

/* Work completion status, IBA 11.6.2, numbered as enum ib_wc_status. */
enum class WcStatus : uint8_t {
	Success = 0,
	LocLenErr,
	LocQpOpErr,
	LocEecOpErr,
	LocProtErr,
	WrFlushErr,
	MwBindErr,
	BadRespErr,
	LocAccessErr,
	RemInvReqErr,
	RemAccessErr,
	RemOpErr,
	RetryExcErr,
	RnrRetryExcErr,
	LocRddViolErr,
	RemInvRdReqErr,
	RemAbortErr,
	InvEecnErr,
	InvEecStateErr,
	FatalErr,
	RespTimeoutErr,
	GeneralErr,
};

/* Work completion opcodes, numbered as enum ib_wc_opcode. */
enum class WcOpcode : uint8_t {
	Send = 0,
	RdmaWrite = 1,
	RdmaRead = 2,
	CompSwap = 3,
	FetchAdd = 4,
	BindMw = 5,
	LocalInv = 6,
	RegMr = 7,
	Lso = 8,
	Recv = 128,
	RecvRdmaWithImm = 129,
};

namespace wc_flag {
inline constexpr uint32_t grh = 1u << 0;
inline constexpr uint32_t with_imm = 1u << 1;
inline constexpr uint32_t with_inv = 1u << 2;
/* csum holds the Internet checksum sum of the message's bytes (DeviceAttr::csum_offload). */
inline constexpr uint32_t csum = 1u << 3;
} // namespace wc_flag

struct Wc {
	uint64_t wr_id = 0;
	WcStatus status = WcStatus::Success;
	WcOpcode opcode = WcOpcode::Send;
	uint32_t vendor_err = 0;
	uint32_t byte_len = 0;
	uint32_t qp_num = 0;
	uint32_t src_qp = 0;
	uint32_t wc_flags = 0;
	uint32_t imm_data = 0;	  /* host order, with wc_flag::with_imm */
	uint32_t invalidate_rkey = 0; /* with wc_flag::with_inv */
	uint16_t slid = 0;
	uint16_t pkey_index = 0;
	uint8_t sl = 0;
	uint8_t dlid_path_bits = 0;
	uint8_t port_num = 0;
	/*
	 * With wc_flag::csum (receives): the RFC 1071 ones' complement sum,
	 * unfolded, of the bytes the message placed, first byte at an even
	 * position, 16-bit words in memory order (the kernel's __wsum; what
	 * CHECKSUM_COMPLETE wants), taken by the HCA as it copied them.
	 */
	uint32_t csum = 0;
};

/* A scatter/gather element: lkey names a memory region of the same PD. */
struct Sge {
	uint64_t addr = 0;
	uint32_t length = 0;
	uint32_t lkey = 0;
};

enum class WrOpcode : uint8_t {
	RdmaWrite = 0,
	RdmaWriteWithImm = 1,
	Send = 2,
	SendWithImm = 3,
	RdmaRead = 4,
	AtomicCmpSwap = 5,
	AtomicFetchAdd = 6,
	/* IBA 10.6.7.2, 11.4.1.1: bind a memory window (type 1 or 2) on the send queue (bind). */
	BindMw = 8,
	SendWithInv = 9,
	LocalInv = 10,
	RegMr = 11,
	/*
	 * Large send offload (DeviceAttr::max_lso), UD only, for IPoIB's TCP
	 * segmentation offload: lso.hdr (lso.hlen bytes: whatever precedes
	 * the IPv4 header at lso.ip_off, then IPv4 and TCP headers ending at
	 * hlen) followed by the gather list's bytes goes out as one SEND per
	 * lso.mss bytes of them, each the header then its share.  Each
	 * packet's header is the segment's, as a NIC's TSO makes it: IPv4
	 * total length, identification (+1 a packet) and header checksum;
	 * TCP sequence number (+mss a packet), FIN and PSH only in the last,
	 * CWR only in the first.  With send_flag::csum (csum_start at the
	 * TCP header), the field holds the pseudo-header sum for the whole
	 * TCP length, as Linux leaves a GSO packet; each packet's checksum
	 * is of its own length.  One completion for the whole WR.
	 */
	Lso = 12,
	/*
	 * A WQE a process wrote malformed into its ring (uverbs): kept in its
	 * place so that order holds, it completes with LocQpOpErr and takes
	 * the QP to Error (IBA 10.8.3.1, 11.6.2 Local QP Operation Error).
	 */
	Malformed = 13,
};

namespace send_flag {
inline constexpr uint32_t fence = 1u << 0;
inline constexpr uint32_t signaled = 1u << 1;
inline constexpr uint32_t solicited = 1u << 2;
inline constexpr uint32_t inline_data = 1u << 3;
/*
 * Checksum offload (DeviceAttr::csum_offload), SEND only: the HCA sums
 * the message's bytes from csum_start to the end (RFC 1071), the 16 bits
 * at csum_start + csum_offset included, and puts the complement of the
 * folded sum (0xffff for 0) there in the message as sent, as Linux's
 * CHECKSUM_PARTIAL asks of a NIC.  Both offsets even.
 */
inline constexpr uint32_t csum = 1u << 4;
} // namespace send_flag

class Ah;
class Mr;

struct SendWr {
	uint64_t wr_id = 0;
	WrOpcode opcode = WrOpcode::Send;
	uint32_t send_flags = 0;
	Span<const Sge> sg;
	uint32_t imm_data = 0;	   /* host order, for *WithImm */
	uint32_t invalidate_rkey = 0; /* SendWithInv, LocalInv */
	uint16_t csum_start = 0, csum_offset = 0; /* send_flag::csum */
	struct {
		uint64_t remote_addr = 0;
		uint32_t rkey = 0;
	} rdma;
	struct {
		uint64_t remote_addr = 0;
		uint64_t compare_add = 0;
		uint64_t swap = 0;
		uint32_t rkey = 0;
	} atomic;
	struct {
		Ah *ah = nullptr;
		uint32_t remote_qpn = 0;
		uint32_t remote_qkey = 0;
		uint16_t pkey_index = 0;
	} ud;
	struct {
		const uint8_t *hdr = nullptr; /* kept until the WR completes */
		uint16_t hlen = 0;
		uint16_t mss = 0;
		uint16_t ip_off = 0;
	} lso;
	struct {
		Mr *mr = nullptr;
		uint32_t key = 0; /* the new lkey/rkey (variant byte may change) */
		uint32_t access = 0;
	} reg;
	/*
	 * BindMw, by keys as the wire-less WQE of a provider names them: the
	 * window's current rkey, the MR's lkey, [addr, addr+length) inside the
	 * MR (length 0 unbinds a type 1 window), the rkey the window gets (its
	 * low byte is the consumer's variant, IBA 10.6.3.3) and the rights.
	 */
	struct {
		uint32_t mw_rkey = 0;
		uint32_t mr_lkey = 0;
		uint64_t addr = 0;
		uint64_t length = 0;
		uint32_t new_rkey = 0;
		uint32_t access = 0;
	} bind;
};

struct RecvWr {
	uint64_t wr_id = 0;
	Span<const Sge> sg;
};

/* Asynchronous events, IBA 11.6.3, numbered as enum ib_event_type. */
enum class EventType : uint8_t {
	CqErr = 0,
	QpFatal,
	QpReqErr,
	QpAccessErr,
	CommEst,
	SqDrained,
	PathMig,
	PathMigErr,
	DeviceFatal,
	PortActive,
	PortErr,
	LidChange,
	PkeyChange,
	SmChange,
	SrqErr,
	SrqLimitReached,
	QpLastWqeReached,
	ClientReregister,
	GidChange,
	WqFatal,
};

/* Helpers for the time encodings of IBA 9.7.5.2.8 and 9.7.6.1.3. */
uint32_t rnr_timer_us(uint8_t code);
uint64_t ack_timeout_us(uint8_t code); /* 0 = infinite */

const char *wc_status_str(WcStatus s);
const char *qp_state_str(QpState s);
const char *port_state_str(PortState s);

} // namespace weft::verbs

#endif
