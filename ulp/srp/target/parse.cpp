// SPDX-License-Identifier: GPL-2.0
/*
 * The target's checks of logins and commands (parse.h).  Everything here
 * reads only the bytes it is given: the callers (hca.cpp, io.cpp) own the
 * buffers, and the KUnit suite and the host fuzz target call these as they
 * are.
 */
#include "parse.h"

#include "srpt_kapi.h"

namespace weft::srpt::parse {

using namespace srp::wire;

uint32_t login(ConstBytes pd, uint64_t target_id, uint32_t max_req_size, LoginReq &out)
{
	if (pd.size() < sizeof(out))
		return rej::unable_establish;
	__builtin_memcpy(&out, pd.data(), sizeof(out));
	if (out.opcode != op::login_req)
		return rej::unable_establish;
	/* SRP 5.2.1 / IBA annex A10: the target port identifier is ID_EXT then IOC GUID. */
	be64 want[2];
	want[0].set(target_id);
	want[1].set(target_id);
	if (__builtin_memcmp(out.target_port_id, want, sizeof(want)))
		return rej::unable_associate;
	const uint32_t it_iu = out.req_it_iu_len.get();
	if (it_iu > max_req_size || it_iu < sizeof(LoginReq))
		return rej::it_iu_too_large;
	if (!(out.req_buf_fmt.get() & (buf_fmt::direct | buf_fmt::indirect)))
		return rej::unsupported_fmt;
	/* SRP 5.2.1 table 6: MULTI-CHANNEL ACTION 2 and 3 are reserved. */
	if ((out.req_flags & 3) > multichan::multi)
		return rej::unable_establish;
	return 0;
}

namespace {

/*
 * SRP 5.6.2.1 table 31: an indirect table, which must lie whole in the IU
 * (the in-tree target's rule too: an external table is not fetched).  The
 * table's length is its descriptors', and the count in SRP_CMD says how
 * many of them the IU carries.
 */
Result<uint32_t> indirect(const uint8_t *add, uint32_t room, uint32_t count, DirectBuf *desc)
{
	IndirectHdr h;
	if (room < sizeof(h))
		return Error(err::EINVAL);
	__builtin_memcpy(&h, add, sizeof(h));
	if (!count || h.table.len.get() != count * sizeof(DirectBuf) ||
	    room - sizeof(h) < count * sizeof(DirectBuf))
		return Error(err::EINVAL);
	__builtin_memcpy(desc, add + sizeof(h), count * sizeof(DirectBuf));
	return count;
}

} // namespace

Result<CmdData> cmd(const uint8_t *iu, uint32_t len, DirectBuf *desc)
{
	Cmd c;
	CmdData d{WEFT_SRPT_DIR_NONE, 0, 0, desc::none};
	if (len < sizeof(c))
		return Error(err::EINVAL);
	__builtin_memcpy(&c, iu, sizeof(c));
	const uint8_t out_fmt = c.buf_fmt >> 4, in_fmt = c.buf_fmt & 0xf;
	if (c.add_cdb_len >> 2)
		return Error(err::EINVAL); /* additional CDB bytes: not supported */
	if (out_fmt && in_fmt)
		return Error(err::EINVAL); /* bidirectional: not supported */
	const uint8_t fmt = out_fmt ? out_fmt : in_fmt;
	if (fmt == desc::none)
		return d;
	d.dir = out_fmt ? WEFT_SRPT_DIR_TO_TARGET : WEFT_SRPT_DIR_FROM_TARGET;
	d.fmt = fmt;
	const uint8_t *add = iu + sizeof(c);
	const uint32_t room = len - sizeof(c);
	if (fmt == desc::direct) {
		if (room < sizeof(DirectBuf))
			return Error(err::EINVAL);
		__builtin_memcpy(desc, add, sizeof(DirectBuf));
		d.ndesc = 1;
	} else if (fmt == desc::indirect) {
		const uint32_t count = out_fmt ? c.data_out_desc_cnt : c.data_in_desc_cnt;
		d.ndesc = WEFT_TRY(indirect(add, room, count, desc));
	} else {
		return Error(err::EINVAL); /* SRP 5.6.2 table 27: 3..15 are reserved */
	}
	uint64_t total = 0;
	for (uint32_t i = 0; i < d.ndesc; i++)
		total += desc[i].len.get();
	if (total > 0xffffffffull)
		return Error(err::EINVAL);
	d.total = static_cast<uint32_t>(total);
	return d;
}

uint32_t rsp(uint8_t *buf, uint32_t cap, uint64_t tag, uint32_t credits, const RspStatus *st,
	     bool rsp_valid, uint8_t code)
{
	Rsp r{};
	uint32_t len = sizeof(r);
	r.opcode = op::rsp;
	r.req_lim_delta.set(credits);
	tag_set(r.tag, tag);
	if (rsp_valid) {
		TmRspData d{};
		d.code = code;
		r.flags |= rsp_flag::rspvalid;
		r.resp_data_len.set(sizeof(d));
		__builtin_memcpy(buf + len, &d, sizeof(d));
		len += sizeof(d);
	}
	if (st) {
		r.status = st->status;
		if (st->under) {
			r.flags |= st->data_in ? rsp_flag::diunder : rsp_flag::dounder;
			(st->data_in ? r.data_in_res_cnt : r.data_out_res_cnt).set(st->resid);
		} else if (st->over) {
			r.flags |= st->data_in ? rsp_flag::diover : rsp_flag::doover;
			(st->data_in ? r.data_in_res_cnt : r.data_out_res_cnt).set(st->resid);
		}
		const uint32_t sense = min<uint32_t>(st->sense_len, cap - len);
		if (st->sense && sense) {
			r.flags |= rsp_flag::snsvalid;
			r.sense_data_len.set(sense);
			__builtin_memcpy(buf + len, st->sense, sense);
			len += sense;
		}
	}
	__builtin_memcpy(buf, &r, sizeof(r));
	return len;
}

} // namespace weft::srpt::parse
