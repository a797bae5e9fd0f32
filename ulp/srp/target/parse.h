/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The target's judgement of what an initiator sends, as pure functions
 * (no channel, no LIO, no verbs), so KUnit and the host fuzzer drive them
 * with any bytes: the SRP_LOGIN_REQ in a CM REQ's private data, an
 * SRP_CMD's data descriptors, and the SRP_RSP that answers a command.
 */
#ifndef WEFT_SRPT_PARSE_H
#define WEFT_SRPT_PARSE_H

#include <weft/result.h>
#include <weft/span.h>

#include "../srp_wire.h"

namespace weft::srpt::parse {

/*
 * SRP 6.2 / 5.2.3: whether a login can go on to LIO.  0 and @out filled,
 * or the SRP_LOGIN_REJ reason: private data shorter than SRP_LOGIN_REQ or
 * another IU (unable to establish), another target port (unable to
 * associate), an IU length outside 64..@max_req_size (IU too large: the
 * in-tree choice for too small as well), no format this target has
 * (direct or indirect descriptors), a reserved MULTI-CHANNEL ACTION
 * (unable to establish).
 */
uint32_t login(ConstBytes private_data, uint64_t target_id, uint32_t max_req_size,
	       srp::wire::LoginReq &out);

/* An SRP_CMD's data: direction (WEFT_SRPT_DIR_*), descriptors and their bytes. */
struct CmdData {
	int dir;
	uint32_t ndesc;
	uint32_t total;
	uint8_t fmt; /* srp::wire::desc::none, direct or indirect */
};
inline constexpr uint32_t max_desc = 255; /* the one-byte descriptor count */

/*
 * SRP 5.6.2: the SRP_CMD in @iu (@len bytes received), its descriptors
 * copied to @desc (room for max_desc).  EINVAL when the target answers
 * "invalid IU" (SRP 5.7.2): shorter than SRP_CMD, additional CDB bytes,
 * both directions, a reserved format, descriptors past the IU, an
 * indirect table whose length is not its count's, or more than 4 GiB.
 */
Result<CmdData> cmd(const uint8_t *iu, uint32_t len, srp::wire::DirectBuf *desc);

/*
 * SRP 5.2.1 / 5.6.2: whether a command's descriptor format @fmt is one the
 * login's REQUIRED BUFFER FORMATS (@req_buf_fmt) named; no data always is.
 */
inline bool fmt_negotiated(uint16_t req_buf_fmt, uint8_t fmt)
{
	using namespace srp::wire;
	return fmt == desc::none || (fmt == desc::direct && (req_buf_fmt & buf_fmt::direct)) ||
	       (fmt == desc::indirect && (req_buf_fmt & buf_fmt::indirect));
}

/* What an SRP_RSP says about a command (the SCSI side of it). */
struct RspStatus {
	uint8_t status;
	const uint8_t *sense;
	uint32_t sense_len;
	uint32_t resid;
	bool under, over, data_in;
};

/*
 * SRP 5.7.2: an SRP_RSP into @buf (@cap bytes, at least sizeof(Rsp) + 4)
 * answering @tag (the initiator's 8 bytes, as tag_get() read them) with @credits, response data (@code) when @rsp_valid,
 * @st's status, residuals and as much sense as fits; returns its length.
 */
uint32_t rsp(uint8_t *buf, uint32_t cap, uint64_t tag, uint32_t credits,
	     const RspStatus *st, bool rsp_valid, uint8_t code);

} // namespace weft::srpt::parse

#endif
