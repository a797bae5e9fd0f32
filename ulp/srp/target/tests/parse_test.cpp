// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: what the SRP target makes of a test initiator's malformed login
 * and IUs (target/parse.h), the functions the CM REQ handler and the
 * receive path call: each malformed SRP_LOGIN_REQ gets its SRP_LOGIN_REJ
 * reason (SRP 5.2.3 table 11), each malformed SRP_CMD EINVAL, which the
 * channel answers with an SRP_RSP carrying "invalid IU" (SRP 5.7.2), and
 * good ones the data the target moves.  Buffers are exact-size heap
 * copies, so a read past what was received is a KASAN report.
 */
#include <weft/alloc.h>
#include <weft/test.h>

#include "../parse.h"
#include "../srpt_kapi.h"

using namespace weft;
using namespace weft::srp::wire;
namespace parse = weft::srpt::parse;
using weft::test::Test;

namespace {

constexpr uint64_t target_id = 0x0200574654000004ull;
constexpr uint32_t max_req = 8192;

LoginReq good_login()
{
	LoginReq r{};
	r.opcode = op::login_req;
	r.req_it_iu_len.set(4096);
	r.req_buf_fmt.set(buf_fmt::direct | buf_fmt::indirect);
	r.req_flags = multichan::single;
	be64 id[2];
	id[0].set(target_id);
	id[1].set(target_id);
	__builtin_memcpy(r.target_port_id, id, 16);
	r.initiator_port_id[15] = 0x05;
	return r;
}

/* The reason for @r's first @len bytes, from an exact-size copy. */
uint32_t login_reason(const LoginReq &r, size_t len = sizeof(LoginReq))
{
	auto buf = Array<uint8_t>::make(Gfp::Sleep, len ? len : 1);
	if (!buf)
		return 0xffffffffu;
	__builtin_memcpy(buf->data(), &r, min(len, sizeof(r)));
	LoginReq out;
	return parse::login(ConstBytes(buf->data(), len), target_id, max_req, out);
}

void login_accepted(Test &t)
{
	LoginReq r = good_login();
	WEFT_EXPECT_EQ(t, login_reason(r), 0u);
	/* 92 bytes of REQ private data: the rest is the CM's padding. */
	WEFT_EXPECT_EQ(t, login_reason(r, 92), 0u);
	r.req_flags = multichan::multi | 0x80; /* high bits (SRP-2 immediate data) are ignored */
	WEFT_EXPECT_EQ(t, login_reason(r), 0u);
	r.req_it_iu_len.set(max_req);
	WEFT_EXPECT_EQ(t, login_reason(r), 0u);
	r.req_it_iu_len.set(64);
	WEFT_EXPECT_EQ(t, login_reason(r), 0u);
	r.req_buf_fmt.set(buf_fmt::direct);
	WEFT_EXPECT_EQ(t, login_reason(r), 0u);
}

void login_malformed(Test &t)
{
	const LoginReq g = good_login();
	/* Shorter than SRP_LOGIN_REQ, or no private data at all. */
	WEFT_EXPECT_EQ(t, login_reason(g, 63), rej::unable_establish);
	WEFT_EXPECT_EQ(t, login_reason(g, 0), rej::unable_establish);
	/* Another IU in the REQ. */
	LoginReq r = g;
	r.opcode = op::cmd;
	WEFT_EXPECT_EQ(t, login_reason(r), rej::unable_establish);
	r.opcode = op::login_rsp;
	WEFT_EXPECT_EQ(t, login_reason(r), rej::unable_establish);
	/* Another target port: ID_EXT or IOC GUID differs. */
	r = g;
	r.target_port_id[7] ^= 1;
	WEFT_EXPECT_EQ(t, login_reason(r), rej::unable_associate);
	r = g;
	r.target_port_id[8] ^= 0x80;
	WEFT_EXPECT_EQ(t, login_reason(r), rej::unable_associate);
	/* IU lengths outside 64..max_req_size. */
	r = g;
	r.req_it_iu_len.set(max_req + 1);
	WEFT_EXPECT_EQ(t, login_reason(r), rej::it_iu_too_large);
	r.req_it_iu_len.set(0xffffffffu);
	WEFT_EXPECT_EQ(t, login_reason(r), rej::it_iu_too_large);
	r.req_it_iu_len.set(63);
	WEFT_EXPECT_EQ(t, login_reason(r), rej::it_iu_too_large);
	r.req_it_iu_len.set(0);
	WEFT_EXPECT_EQ(t, login_reason(r), rej::it_iu_too_large);
	/* No descriptor format this target has. */
	r = g;
	r.req_buf_fmt.set(0);
	WEFT_EXPECT_EQ(t, login_reason(r), rej::unsupported_fmt);
	r.req_buf_fmt.set(0xfff9);
	WEFT_EXPECT_EQ(t, login_reason(r), rej::unsupported_fmt);
	/* Reserved MULTI-CHANNEL ACTION codes. */
	r = g;
	r.req_flags = 2;
	WEFT_EXPECT_EQ(t, login_reason(r), rej::unable_establish);
	r.req_flags = 3;
	WEFT_EXPECT_EQ(t, login_reason(r), rej::unable_establish);
}

constexpr uint32_t iu_max = sizeof(Cmd) + sizeof(IndirectHdr) + 255 * sizeof(DirectBuf);

/* An SRP_CMD (in a heap buffer) with @n descriptors of direction @out, as the initiator lays them. */
class CmdIu {
public:
	CmdIu()
	{
		auto b = Array<uint8_t>::make(Gfp::Sleep, iu_max);
		auto d = Array<DirectBuf>::make(Gfp::Sleep, parse::max_desc);
		ok = b.ok() && d.ok();
		if (ok) {
			buf_ = static_cast<Array<uint8_t> &&>(*b);
			desc = static_cast<Array<DirectBuf> &&>(*d);
		}
	}

	void build(uint32_t n, bool out, uint32_t seg_len = 4096)
	{
		__builtin_memset(buf_.data(), 0, iu_max);
		len = sizeof(Cmd);
		cmd().opcode = op::cmd;
		tag_set(cmd().tag, 0x1122334455667788ull);
		if (!n)
			return;
		const uint8_t fmt = n == 1 ? desc::direct : desc::indirect;
		cmd().buf_fmt = out ? uint8_t(fmt << 4) : fmt;
		if (n > 1) {
			(out ? cmd().data_out_desc_cnt : cmd().data_in_desc_cnt) = uint8_t(n);
			IndirectHdr &h = hdr();
			h.table.va.set(0xabc000);
			h.table.len.set(n * sizeof(DirectBuf));
			h.total_len.set(n * seg_len);
			len += sizeof(IndirectHdr);
		}
		for (uint32_t i = 0; i < n; i++) {
			DirectBuf &d = *reinterpret_cast<DirectBuf *>(buf_.data() + len);
			d.va.set(0x10000ull * (i + 1));
			d.key.set(0x100 + i);
			d.len.set(seg_len);
			len += sizeof(DirectBuf);
		}
	}

	Cmd &cmd() { return *reinterpret_cast<Cmd *>(buf_.data()); }
	IndirectHdr &hdr() { return *reinterpret_cast<IndirectHdr *>(buf_.data() + sizeof(Cmd)); }

	/* parse::cmd() of the first @n bytes, from an exact-size heap copy. */
	Result<parse::CmdData> run(uint32_t n)
	{
		auto c = Array<uint8_t>::make(Gfp::Sleep, n ? n : 1);
		if (!c)
			return Error(err::ENOMEM);
		__builtin_memcpy(c->data(), buf_.data(), n);
		return parse::cmd(c->data(), n, desc.data());
	}
	Result<parse::CmdData> run() { return run(len); }
	int err(uint32_t n)
	{
		auto r = run(n);
		return r ? 0 : r.error().code();
	}
	int err() { return err(len); }

	bool ok;
	uint32_t len = 0;
	Array<DirectBuf> desc;

private:
	Array<uint8_t> buf_;
};

void cmd_good(Test &t)
{
	CmdIu iu;
	WEFT_ASSERT_TRUE(t, iu.ok);

	iu.build(0, false);
	auto none = iu.run();
	WEFT_ASSERT_TRUE(t, none.ok());
	WEFT_EXPECT_EQ(t, none->dir, WEFT_SRPT_DIR_NONE);
	WEFT_EXPECT_EQ(t, none->ndesc, 0u);

	iu.build(1, false, 512);
	auto direct = iu.run();
	WEFT_ASSERT_TRUE(t, direct.ok());
	WEFT_EXPECT_EQ(t, direct->dir, WEFT_SRPT_DIR_FROM_TARGET);
	WEFT_EXPECT_EQ(t, direct->ndesc, 1u);
	WEFT_EXPECT_EQ(t, direct->total, 512u);
	WEFT_EXPECT_EQ(t, iu.desc[0].key.get(), 0x100u);

	static const uint32_t counts[] = {2, 16, 255};
	for (uint32_t n : counts) {
		iu.build(n, true);
		auto r = iu.run();
		WEFT_ASSERT_TRUE(t, r.ok());
		WEFT_EXPECT_EQ(t, r->dir, WEFT_SRPT_DIR_TO_TARGET);
		WEFT_EXPECT_EQ(t, r->ndesc, n);
		WEFT_EXPECT_EQ(t, r->total, n * 4096);
		WEFT_EXPECT_EQ(t, iu.desc[n - 1].va.get(), 0x10000ull * n);
		WEFT_EXPECT_EQ(t, iu.desc[n - 1].key.get(), 0x100 + n - 1);
	}
}

void cmd_malformed(Test &t)
{
	CmdIu iu;
	WEFT_ASSERT_TRUE(t, iu.ok);
	/* Shorter than SRP_CMD. */
	iu.build(0, false);
	WEFT_EXPECT_EQ(t, iu.err(sizeof(Cmd) - 1), err::EINVAL);
	WEFT_EXPECT_EQ(t, iu.err(1), err::EINVAL);
	/* Additional CDB bytes. */
	iu.cmd().add_cdb_len = 4 << 2;
	WEFT_EXPECT_EQ(t, iu.err(), err::EINVAL);
	/* Both directions. */
	iu.build(1, false);
	iu.cmd().buf_fmt |= desc::direct << 4;
	WEFT_EXPECT_EQ(t, iu.err(), err::EINVAL);
	/* Reserved formats, either direction. */
	static const uint8_t reserved[] = {3, 0xf};
	for (uint8_t f : reserved) {
		iu.build(1, false);
		iu.cmd().buf_fmt = f;
		WEFT_EXPECT_EQ(t, iu.err(), err::EINVAL);
		iu.cmd().buf_fmt = uint8_t(f << 4);
		WEFT_EXPECT_EQ(t, iu.err(), err::EINVAL);
	}
	/* A direct descriptor cut short. */
	iu.build(1, true);
	WEFT_EXPECT_EQ(t, iu.err(iu.len - 1), err::EINVAL);
	WEFT_EXPECT_EQ(t, iu.err(sizeof(Cmd)), err::EINVAL);
	/* Indirect: header cut short, table cut short, a zero count. */
	iu.build(4, false);
	WEFT_EXPECT_EQ(t, iu.err(sizeof(Cmd) + sizeof(IndirectHdr) - 1), err::EINVAL);
	WEFT_EXPECT_EQ(t, iu.err(iu.len - 1), err::EINVAL);
	iu.cmd().data_in_desc_cnt = 0;
	WEFT_EXPECT_EQ(t, iu.err(), err::EINVAL);
	/* The count in SRP_CMD and the table's length disagree (an external table, or a lie). */
	iu.build(4, false);
	iu.cmd().data_in_desc_cnt = 5;
	WEFT_EXPECT_EQ(t, iu.err(), err::EINVAL);
	iu.cmd().data_in_desc_cnt = 3;
	WEFT_EXPECT_EQ(t, iu.err(), err::EINVAL);
	iu.build(4, false);
	iu.hdr().table.len.set(4 * sizeof(DirectBuf) + 1);
	WEFT_EXPECT_EQ(t, iu.err(), err::EINVAL);
	iu.hdr().table.len.set(0xffffffffu);
	WEFT_EXPECT_EQ(t, iu.err(), err::EINVAL);
	/* The count of the other direction does not stand in for this one's. */
	iu.build(4, true);
	iu.cmd().data_in_desc_cnt = 4;
	iu.cmd().data_out_desc_cnt = 0;
	WEFT_EXPECT_EQ(t, iu.err(), err::EINVAL);
	/* More than 4 GiB in all; just under is fine. */
	iu.build(2, true, 0x80000000u);
	WEFT_EXPECT_EQ(t, iu.err(), err::EINVAL);
	iu.build(2, true, 0x7fffffffu);
	WEFT_EXPECT_EQ(t, iu.err(), 0);
}

/* A refused command's answer: SRP_RSP, the tag echoed, RSPVALID with "invalid IU". */
void rsp_invalid_iu(Test &t)
{
	uint8_t buf[64] = {};
	parse::RspStatus st{};
	st.status = 0x02; /* CHECK CONDITION */
	uint8_t raw[8] = {0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11};
	const uint64_t tag = tag_get(raw);
	const uint32_t len = parse::rsp(buf, sizeof(buf), tag, 3, &st, true, rsp_code::invalid_iu);
	WEFT_ASSERT_EQ(t, len, uint32_t(sizeof(Rsp) + sizeof(TmRspData)));
	Rsp r;
	__builtin_memcpy(&r, buf, sizeof(r));
	WEFT_EXPECT_EQ(t, r.opcode, op::rsp);
	WEFT_EXPECT_EQ(t, r.req_lim_delta.get(), 3u);
	WEFT_EXPECT_EQ(t, r.tag[0], 0x88u); /* the initiator's bytes, unchanged */
	WEFT_EXPECT_EQ(t, r.tag[7], 0x11u);
	WEFT_EXPECT_EQ(t, r.flags, rsp_flag::rspvalid);
	WEFT_EXPECT_EQ(t, r.status, 0x02u);
	WEFT_EXPECT_EQ(t, r.resp_data_len.get(), 4u);
	WEFT_EXPECT_EQ(t, buf[sizeof(Rsp) + 3], rsp_code::invalid_iu);
}

/* Sense data is cut to what the response buffer holds; residuals go with the direction. */
void rsp_sense_clipped(Test &t)
{
	uint8_t sense[96];
	for (uint32_t i = 0; i < sizeof(sense); i++)
		sense[i] = uint8_t(i);
	uint8_t buf[64] = {};
	parse::RspStatus st{};
	st.status = 0x02;
	st.sense = sense;
	st.sense_len = sizeof(sense);
	st.under = true;
	st.resid = 512;
	st.data_in = true;
	const uint32_t len = parse::rsp(buf, sizeof(buf), 1, 1, &st, false, 0);
	WEFT_EXPECT_EQ(t, len, uint32_t(sizeof(buf)));
	Rsp r;
	__builtin_memcpy(&r, buf, sizeof(r));
	WEFT_EXPECT_EQ(t, r.flags, uint8_t(rsp_flag::snsvalid | rsp_flag::diunder));
	WEFT_EXPECT_EQ(t, r.sense_data_len.get(), uint32_t(sizeof(buf) - sizeof(Rsp)));
	WEFT_EXPECT_EQ(t, r.data_in_res_cnt.get(), 512u);
	WEFT_EXPECT_EQ(t, r.data_out_res_cnt.get(), 0u);
	WEFT_EXPECT_EQ(t, buf[sizeof(buf) - 1], uint8_t(sizeof(buf) - sizeof(Rsp) - 1));
}

} // namespace

WEFT_TEST_SUITE(weft_srpt_parse, WEFT_CASE(login_accepted), WEFT_CASE(login_malformed),
		WEFT_CASE(cmd_good), WEFT_CASE(cmd_malformed), WEFT_CASE(rsp_invalid_iu),
		WEFT_CASE(rsp_sense_clipped));
