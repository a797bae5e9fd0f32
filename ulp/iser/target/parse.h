/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the target makes of received bytes and how it cuts a transfer into
 * RDMA WRs: no kernel, no verbs, for conn.cpp/io.cpp and the KUnit suite
 * weft_isert_parse.
 */
#ifndef WEFT_ISERT_PARSE_H
#define WEFT_ISERT_PARSE_H

#include <weft/span.h>

#include "../iser_wire.h"
#include "isert_kapi.h"

namespace weft::isert::parse {

enum class Verdict : uint8_t {
	Ok,
	Short,	    /* fewer bytes than iSER header + BHS + the declared data */
	NotControl, /* an iSER opcode other than iSCSI control (Hello, HelloReply, reserved) */
	NotLogin,   /* in the login buffer: not a Login Request */
};

/* A received PDU, pointing into the buffer it was parsed from. */
struct Pdu {
	const iser::wire::Bhs *bhs = nullptr;
	const uint8_t *data = nullptr;
	uint32_t dlen = 0;
	uint32_t read_stag = 0, write_stag = 0; /* 0 unless RSV/WSV */
	uint64_t read_va = 0, write_va = 0;
};

/* RFC 7145 9.1, 9.2: a full-feature PDU of @byte_len bytes at @p. */
Verdict pdu(const uint8_t *p, uint32_t byte_len, Pdu &out);
/* RFC 7145 7.3.9: a Login Request in the login buffer. */
Verdict login(const uint8_t *p, uint32_t byte_len, Pdu &out);

/* IBA A12: the REP's iSER CM header (no ZBVA; Send with Invalidate when @send_w_inv). */
iser::wire::CmHeader rep_header(bool send_w_inv = false);
/* IBA A12: whether the REQ's private data lets the target Send with Invalidate. */
bool req_accepts_inv(ConstBytes private_data);

/* One RDMA WR's local pieces. */
struct Piece {
	uintptr_t kva;
	uint32_t len;
};

/*
 * Bytes [@offset, @offset + @len) of @segs, cut into WRs of at most
 * @max_sge pieces: @fn(pieces, n, wr_bytes, last) for each, in order, the
 * remote address advancing by wr_bytes.  The number of WRs, or
 * -EINVAL (the buffer is shorter than the transfer, @len 0 or @max_sge 0)
 * or what @fn returned when negative.
 */
template <typename F>
int split(const weft_isert_seg *segs, uint32_t nsegs, uint32_t offset, uint32_t len,
	  uint32_t max_sge, F &&fn)
{
	constexpr uint32_t cap = 16;
	Piece pc[cap];
	if (!len || !max_sge)
		return -22;
	if (max_sge > cap)
		max_sge = cap;
	uint32_t s = 0, off = offset, left = len, n = 0, bytes = 0;
	int wrs = 0;
	while (s < nsegs && off >= segs[s].len)
		off -= segs[s++].len;
	while (left) {
		if (s >= nsegs)
			return -22;
		const uint32_t take = segs[s].len - off < left ? segs[s].len - off : left;
		pc[n++] = Piece{segs[s].kva + off, take};
		bytes += take;
		left -= take;
		off += take;
		if (off == segs[s].len) {
			s++;
			off = 0;
		}
		if (n == max_sge || !left) {
			const int r = fn(static_cast<const Piece *>(pc), n, bytes, !left);
			if (r < 0)
				return r;
			wrs++;
			n = 0;
			bytes = 0;
		}
	}
	return wrs;
}

} // namespace weft::isert::parse

#endif
