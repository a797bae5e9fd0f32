/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SRP information units as typed wire structs (T10 SRP, ANSI INCITS
 * 365-2002, section 5; the RDMA "SRP2" additions where marked), shared by
 * the initiator (weft_srp) and the target (weft_srpt).  Multi-byte fields
 * are big-endian on the wire except the tags, which SRP makes opaque: the
 * target echoes the initiator's 8 bytes unchanged (SRP 5.1), so they are
 * carried as raw bytes here and only the sender gives them a meaning.
 *
 * Over InfiniBand (SRP annex, IBA 12.6): SRP_LOGIN_REQ travels as the CM
 * REQ's private data, SRP_LOGIN_RSP as REP's and SRP_LOGIN_REJ as REJ's;
 * every other IU is the payload of one RC SEND.
 */
#ifndef WEFT_SRP_WIRE_H
#define WEFT_SRP_WIRE_H

#include <weft/wire.h>

namespace weft::srp::wire {

/* SRP 5.1 table 5: IU types. */
namespace op {
inline constexpr uint8_t login_req = 0x00, tsk_mgmt = 0x01, cmd = 0x02, i_logout = 0x03,
			 login_rsp = 0xc0, rsp = 0xc1, login_rej = 0xc2, t_logout = 0x80,
			 cred_req = 0x81, aer_req = 0x82, cred_rsp = 0x41, aer_rsp = 0x42;
}

/* SRP 5.2.1 table 7: supported data buffer descriptor formats (REQ/RSP buf_fmt). */
namespace buf_fmt {
inline constexpr uint16_t direct = 1u << 1, indirect = 1u << 2;
}

/* SRP 5.6.2 table 27: the nibbles of SRP_CMD's buf_fmt byte. */
namespace desc {
inline constexpr uint8_t none = 0, direct = 1, indirect = 2;
}

/* SRP 5.2.1 REQ_FLAGS / 5.2.2 RSP_FLAGS: multichannel actions and results. */
namespace multichan {
inline constexpr uint8_t single = 0, multi = 1;
inline constexpr uint8_t rsp_no_chan = 0, rsp_terminated = 1, rsp_maintained = 2;
}

/* SRP 5.2.3 table 11: SRP_LOGIN_REJ reasons. */
namespace rej {
inline constexpr uint32_t unable_establish = 0x00010000, insufficient_resources = 0x00010001,
			  it_iu_too_large = 0x00010002, unable_associate = 0x00010003,
			  unsupported_fmt = 0x00010004, multichannel_unsupported = 0x00010005,
			  channel_limit = 0x00010006;
}

/* SRP 5.6.3 table 30: task management functions. */
namespace tmf {
inline constexpr uint8_t abort_task = 0x01, abort_task_set = 0x02, clear_task_set = 0x04,
			 lun_reset = 0x08, clear_aca = 0x40;
}

/* SRP 5.7.2 table 33: SRP_RSP flags; 5.7.2 table 34 response codes. */
namespace rsp_flag {
inline constexpr uint8_t rspvalid = 1u << 0, snsvalid = 1u << 1, doover = 1u << 2,
			 dounder = 1u << 3, diover = 1u << 4, diunder = 1u << 5;
}
namespace rsp_code {
inline constexpr uint8_t complete = 0x00, invalid_iu = 0x02, not_supported = 0x04, failed = 0x05,
			 succeeded = 0x08, incorrect_lun = 0x09;
}

/* SRP 5.6.2 table 28: task attributes. */
namespace task_attr {
inline constexpr uint8_t simple = 0, head_of_queue = 1, ordered = 2, aca = 4;
}

/* SRP 5.2.1 table 6: SRP_LOGIN_REQ (64 bytes, in the CM REQ's 92 bytes of private data). */
struct LoginReq {
	uint8_t opcode;
	uint8_t reserved1[7];
	uint8_t tag[8];
	be32 req_it_iu_len;
	uint8_t reserved2[4];
	be16 req_buf_fmt;
	uint8_t req_flags; /* MULTICHANNEL ACTION in the low two bits */
	uint8_t reserved3[5];
	uint8_t initiator_port_id[16];
	uint8_t target_port_id[16];
};
static_assert(sizeof(LoginReq) == 64);

/* SRP 5.2.2 table 8: SRP_LOGIN_RSP (52 bytes, in the REP's private data). */
struct LoginRsp {
	uint8_t opcode;
	uint8_t reserved1[3];
	be32 req_lim_delta;
	uint8_t tag[8];
	be32 max_it_iu_len;
	be32 max_ti_iu_len;
	be16 sup_buf_fmt;
	uint8_t rsp_flags;
	uint8_t reserved2[25];
};
static_assert(sizeof(LoginRsp) == 52);

/* SRP 5.2.3 table 10: SRP_LOGIN_REJ (32 bytes, in the REJ's private data). */
struct LoginRej {
	uint8_t opcode;
	uint8_t reserved1[3];
	be32 reason;
	uint8_t tag[8];
	uint8_t reserved2[8];
	be16 sup_buf_fmt;
	uint8_t reserved3[6];
};
static_assert(sizeof(LoginRej) == 32);

/* SRP 5.3: SRP_I_LOGOUT (16 bytes) and SRP 5.4 SRP_T_LOGOUT (16 bytes). */
struct ILogout {
	uint8_t opcode;
	uint8_t reserved[7];
	uint8_t tag[8];
};
static_assert(sizeof(ILogout) == 16);

struct TLogout {
	uint8_t opcode;
	uint8_t sol_not;
	uint8_t reserved[2];
	be32 reason;
	uint8_t tag[8];
};
static_assert(sizeof(TLogout) == 16);

/* SRP 5.6.3 table 29: SRP_TSK_MGMT (48 bytes). */
struct TskMgmt {
	uint8_t opcode;
	uint8_t sol_not;
	uint8_t reserved1[6];
	uint8_t tag[8];
	uint8_t reserved2[4];
	uint8_t lun[8]; /* SAM LUN structure, as in the SCSI layer */
	uint8_t reserved3[2];
	uint8_t function;
	uint8_t reserved4;
	uint8_t task_tag[8];
	uint8_t reserved5[8];
};
static_assert(sizeof(TskMgmt) == 48);

/* SRP 5.6.2 table 26: SRP_CMD, 48 bytes then the additional CDB and descriptors. */
struct Cmd {
	uint8_t opcode;
	uint8_t sol_not;
	uint8_t reserved1[3];
	uint8_t buf_fmt; /* DATA-OUT format in the high nibble, DATA-IN in the low */
	uint8_t data_out_desc_cnt;
	uint8_t data_in_desc_cnt;
	uint8_t tag[8];
	uint8_t reserved2[4];
	uint8_t lun[8];
	uint8_t reserved3;
	uint8_t task_attr; /* low three bits */
	uint8_t reserved4;
	uint8_t add_cdb_len; /* in 4-byte words, in the upper six bits */
	uint8_t cdb[16];
};
static_assert(sizeof(Cmd) == 48);

/* SRP 5.6.2.1 tables 31-32: a memory descriptor and the indirect table's header. */
struct DirectBuf {
	be64 va;
	be32 key;
	be32 len;
};
static_assert(sizeof(DirectBuf) == 16);

struct IndirectHdr {
	DirectBuf table; /* where the whole descriptor table lies in the initiator's memory */
	be32 total_len;	 /* sum of the lengths of every descriptor in the table */
};
static_assert(sizeof(IndirectHdr) == 20);

/* SRP 5.7.2 table 32: SRP_RSP, 36 bytes then response data and sense data. */
struct Rsp {
	uint8_t opcode;
	uint8_t sol_not;
	uint8_t reserved1[2];
	be32 req_lim_delta;
	uint8_t tag[8];
	uint8_t reserved2[2];
	uint8_t flags;
	uint8_t status;
	be32 data_out_res_cnt;
	be32 data_in_res_cnt;
	be32 sense_data_len;
	be32 resp_data_len;
};
static_assert(sizeof(Rsp) == 36);

/* SRP 5.5.1 SRP_CRED_REQ and 5.5.2 SRP_CRED_RSP (16 bytes each). */
struct CredReq {
	uint8_t opcode;
	uint8_t sol_not;
	uint8_t reserved[2];
	be32 req_lim_delta;
	uint8_t tag[8];
};
static_assert(sizeof(CredReq) == 16);

struct CredRsp {
	uint8_t opcode;
	uint8_t reserved[7];
	uint8_t tag[8];
};
static_assert(sizeof(CredRsp) == 16);

/* SRP 5.8.1 SRP_AER_REQ (36 bytes then sense data) and 5.8.2 SRP_AER_RSP. */
struct AerReq {
	uint8_t opcode;
	uint8_t sol_not;
	uint8_t reserved1[2];
	be32 req_lim_delta;
	uint8_t tag[8];
	uint8_t reserved2[4];
	uint8_t lun[8];
	be32 sense_data_len;
	uint8_t reserved3[4];
};
static_assert(sizeof(AerReq) == 36);

using AerRsp = CredRsp;

/* The 4-byte response data of an SRP_RSP answering SRP_TSK_MGMT (SRP 5.7.2). */
struct TmRspData {
	uint8_t reserved[3];
	uint8_t code;
};

/* The 8-byte tags, as the side that made them reads them. */
inline uint64_t tag_get(const uint8_t t[8])
{
	uint64_t v;
	__builtin_memcpy(&v, t, 8);
	return v;
}
inline void tag_set(uint8_t t[8], uint64_t v) { __builtin_memcpy(t, &v, 8); }

/* SRP_CMD's descriptor-count field and its formats for @n descriptors of one direction. */
inline constexpr size_t cmd_len(uint32_t ndesc)
{
	return ndesc == 0 ? sizeof(Cmd)
	       : ndesc == 1 ? sizeof(Cmd) + sizeof(DirectBuf)
			    : sizeof(Cmd) + sizeof(IndirectHdr) + ndesc * sizeof(DirectBuf);
}

} // namespace weft::srp::wire

#endif
