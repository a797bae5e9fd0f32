/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iSER wire formats (RFC 7145) as Linux 6.1 speaks them on InfiniBand,
 * shared by the initiator (weft_iser) and the target (weft_isert).
 *
 * Every iSCSI PDU travels as one RC SEND: the 28-byte iSER header, the
 * 48-byte iSCSI BHS, then the data segment padded to 4 bytes (RFC 7145
 * 9.1).  Solicited data moves by RDMA WRITE (SCSI read) and RDMA READ
 * (SCSI write) against the STags the header advertises (RFC 7145 7.3.5,
 * 7.3.6): no Data-In or R2T PDU is ever sent.
 *
 * Connection setup (IBTA Annex A12): the CM REQ and REP carry a 4-byte
 * iSER CM header after the RDMA CM's own header.  Hello/HelloReply (RFC 7145
 * 9.3, 9.4) exist for iWARP's IRD/ORD exchange; on InfiniBand IRD/ORD ride
 * in the CM REQ/REP, neither open-iscsi nor LIO negotiates
 * iSERHelloRequired, so Weft parses them (to count them) and never sends
 * them.
 */
#ifndef WEFT_ISER_WIRE_H
#define WEFT_ISER_WIRE_H

#include <weft/wire.h>

namespace weft::iser::wire {

/* RFC 7145 9.1: the high nibble of the header's first byte. */
namespace opcode {
inline constexpr uint8_t iscsi_ctrl = 0x1, hello = 0x2, hello_reply = 0x3;
}

/* RFC 7145 9.2: flags in the low nibble of byte 0 of an iSCSI control header. */
namespace flag {
inline constexpr uint8_t wsv = 0x08, rsv = 0x04;
}

/* RFC 7145 9.2: the iSER header of an iSCSI control-type PDU (28 bytes). */
struct Header {
	be8 flags; /* opcode in bits 7..4, WSV bit 3, RSV bit 2 */
	uint8_t reserved[3];
	be32 write_stag;
	be64 write_va;
	be32 read_stag;
	be64 read_va;

	uint8_t op() const { return flags.bits<4, 4>(); }
	bool wsv() const { return flags.get() & flag::wsv; }
	bool rsv() const { return flags.get() & flag::rsv; }
};
static_assert(sizeof(Header) == 28);

/* RFC 7145 9.3: Hello (12 bytes). */
struct Hello {
	be8 flags; /* opcode 0x2 in bits 7..4 */
	be8 version; /* MaxVer bits 7..4, MinVer bits 3..0 */
	be16 ird;
	uint8_t reserved[8];
};
static_assert(sizeof(Hello) == 12);

/* RFC 7145 9.4: HelloReply (12 bytes); bit 0 of byte 0 is Rej. */
struct HelloReply {
	be8 flags; /* opcode 0x3 in bits 7..4, Rej bit 0 */
	be8 version; /* MaxVer bits 7..4, CurVer bits 3..0 */
	be16 ord;
	uint8_t reserved[8];
};
static_assert(sizeof(HelloReply) == 12);

/*
 * IBTA Annex A12 (iSER CM private data, as Linux uses it): the first byte
 * of the REQ's and REP's consumer private data.  ZBVA_NOT_SUP: the sender
 * advertises virtual addresses, not zero-based offsets (always set by
 * Linux).  SEND_W_INV_NOT_SUP: the sender will not use (REP) or accept
 * (REQ) remote invalidation.
 */
namespace cm_flag {
inline constexpr uint8_t zbva_not_sup = 0x80, send_w_inv_not_sup = 0x40;
}
struct CmHeader {
	be8 flags;
	uint8_t reserved[3];
};
static_assert(sizeof(CmHeader) == 4);

/*
 * RFC 7143 11.2: the iSCSI Basic Header Segment, only as far as the
 * transport needs it (opcode, final bit, TotalAHSLength, the 24-bit
 * DataSegmentLength, the ITT); libiscsi and LIO own the rest.
 */
struct Bhs {
	be8 opcode; /* bit 6 immediate, bits 5..0 opcode */
	be8 flags; /* bit 7 final */
	uint8_t rsvd2[2];
	be32 hlength_dlength; /* TotalAHSLength bits 31..24, DataSegmentLength 23..0 */
	uint8_t lun[8];
	be32 itt;
	uint8_t other[28];

	uint8_t op() const { return opcode.bits<0, 6>(); }
	uint32_t dlength() const { return hlength_dlength.bits<0, 24>(); }
	uint8_t ahs_words() const { return static_cast<uint8_t>(hlength_dlength.bits<24, 8>()); }
};
static_assert(sizeof(Bhs) == 48);

/* RFC 7143 11.1.1: the opcodes iSER dispatches on (initiator / target). */
namespace iscsi_op {
inline constexpr uint8_t nop_out = 0x00, scsi_cmd = 0x01, tmf = 0x02, login = 0x03, text = 0x04,
			 data_out = 0x05, logout = 0x06, snack = 0x10, nop_in = 0x20,
			 scsi_rsp = 0x21, tmf_rsp = 0x22, login_rsp = 0x23, text_rsp = 0x24,
			 data_in = 0x25, logout_rsp = 0x26, r2t = 0x31, async = 0x32,
			 reject = 0x3f;
}

/* The iSER header and the BHS always travel together (RFC 7145 9.1). */
inline constexpr size_t hdrs_len = sizeof(Header) + sizeof(Bhs); /* 76 */

/* RFC 7143 11.1.1: data segments are padded to a multiple of 4 bytes. */
constexpr size_t pad4(size_t n) { return (n + 3) & ~size_t{3}; }

} // namespace weft::iser::wire

#endif
