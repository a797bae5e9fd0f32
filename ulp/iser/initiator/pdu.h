/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The initiator's reading and writing of iSER headers (RFC 7145 9.1-9.4,
 * IBTA Annex A12): pure functions over byte buffers, shared by the
 * transport, the KUnit suite weft_iser_wire and the host fuzz target iser.
 */
#ifndef WEFT_ISER_PDU_H
#define WEFT_ISER_PDU_H

#include <weft/result.h>
#include <weft/span.h>

#include "../iser_wire.h"

namespace weft::iser::pdu {

/* The STags a command advertises (RFC 7145 7.3.5, 7.3.6). */
struct Stags {
	bool wsv = false, rsv = false;
	uint32_t write_stag = 0, read_stag = 0;
	uint64_t write_va = 0, read_va = 0;
};

/* An iSCSI control-type header (opcode 0x1) with @s; reserved bytes zero. */
void build_header(wire::Header &h, const Stags &s);
/* Hello (RFC 7145 9.3) / HelloReply (9.4): versions are 4-bit. */
void build_hello(wire::Hello &h, uint8_t max_ver, uint8_t min_ver, uint16_t ird);
void build_hello_reply(wire::HelloReply &h, bool rej, uint8_t max_ver, uint8_t cur_ver, uint16_t ord);

struct HelloInfo {
	uint8_t max_ver, other_ver; /* MinVer (Hello) or CurVer (HelloReply) */
	uint16_t ird_ord;
	bool rej; /* HelloReply only */
};
/* EPROTO: shorter than 12 bytes or not that opcode. */
Result<HelloInfo> parse_hello(ConstBytes b);
Result<HelloInfo> parse_hello_reply(ConstBytes b);

/*
 * What the initiator took from a received SEND: the BHS and the data
 * segment (dlength bytes, the pad not included).
 */
struct Rx {
	const wire::Bhs *bhs;
	const uint8_t *data;
	uint32_t dlength;
};

/*
 * A received SEND of @byte_len bytes into @buf (the posted buffer).
 * EMSGSIZE: shorter than the 76 bytes of headers, or longer than the
 * buffer; EPROTO: an iSER opcode other than iSCSI control (Hello and
 * HelloReply included: never negotiated on InfiniBand); EBADMSG: the
 * BHS's DataSegmentLength breaks the window rule with r = byte_len - 76:
 * dlength > r (data missing), or dlength + 4 < r (more bytes than the
 * data and its pad, in-tree's ISCSI_ERR_DATALEN).
 */
Result<Rx> parse_rx(ConstBytes buf, uint32_t byte_len);

/* IBTA Annex A12: the initiator's REQ private data (ZBVA never used). */
void build_cm_req(wire::CmHeader &h, bool accept_remote_inv);
/*
 * The REP's private data: whether the target will use remote
 * invalidation (SEND_W_INV_NOT_SUP clear).  Fewer than one byte: no.
 */
bool rep_uses_remote_inv(ConstBytes private_data);

} // namespace weft::iser::pdu

#endif
