// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: what the iSER target makes of received bytes (target/parse.h),
 * the checks its receive completions run before LIO sees a PDU: the
 * declared data must lie in what arrived (RFC 7145 9.1), STags only when
 * RSV/WSV say so (9.2), Hello and other iSER opcodes refused; and how a
 * transfer is cut into RDMA WRs from an offset into the command's buffer
 * (7.3.6: the unsolicited part skipped locally).  Buffers are exact-size
 * heap copies, so a read past what was received is a KASAN report.
 */
#include <weft/alloc.h>
#include <weft/test.h>

#include "../parse.h"

using namespace weft;
using namespace weft::iser::wire;
namespace parse = weft::isert::parse;
using parse::Verdict;
using weft::test::Test;

namespace {

/* A PDU: iSER header with @flags, a BHS of @op declaring @dlen, @body data bytes. */
struct Buf {
	Array<uint8_t> b;
	uint32_t len = 0;
};

Buf make(uint8_t flags, uint8_t op, uint32_t dlen, uint32_t body)
{
	Buf out;
	out.len = static_cast<uint32_t>(hdrs_len) + body;
	auto a = Array<uint8_t>::make(Gfp::Sleep, out.len);
	if (!a)
		return out;
	out.b = move(*a);
	Header h{};
	h.flags.set(flags);
	h.write_stag.set(0x1234);
	h.write_va.set(0x1000200030004000ull);
	h.read_stag.set(0x5678);
	h.read_va.set(0x5000600070008000ull);
	Bhs bhs{};
	bhs.opcode.set(op);
	bhs.hlength_dlength.set(dlen & 0xffffff);
	__builtin_memcpy(out.b.data(), &h, sizeof(h));
	__builtin_memcpy(out.b.data() + sizeof(h), &bhs, sizeof(bhs));
	for (uint32_t i = 0; i < body; i++)
		out.b[hdrs_len + i] = uint8_t(i);
	return out;
}

void pdu_accepted(Test &t)
{
	Buf b = make(0x10 | flag::rsv, iscsi_op::scsi_cmd, 100, 100);
	parse::Pdu p;
	WEFT_EXPECT_TRUE(t, parse::pdu(b.b.data(), b.len, p) == Verdict::Ok);
	WEFT_EXPECT_EQ(t, p.dlen, 100u);
	WEFT_EXPECT_TRUE(t, p.data == b.b.data() + hdrs_len);
	WEFT_EXPECT_EQ(t, p.read_stag, 0x5678u);
	WEFT_EXPECT_EQ(t, p.read_va, 0x5000600070008000ull);
	WEFT_EXPECT_EQ(t, p.write_stag, 0u); /* no WSV: not the header's bytes */
	WEFT_EXPECT_EQ(t, p.write_va, 0ull);
	/* Padding after the data (RFC 7143 11.1.1) is allowed. */
	Buf pad = make(0x10 | flag::wsv, iscsi_op::scsi_cmd, 2, 4);
	WEFT_EXPECT_TRUE(t, parse::pdu(pad.b.data(), pad.len, p) == Verdict::Ok);
	WEFT_EXPECT_EQ(t, p.write_stag, 0x1234u);
	WEFT_EXPECT_EQ(t, p.read_stag, 0u);
	Buf none = make(0x10, iscsi_op::nop_out, 0, 0);
	WEFT_EXPECT_TRUE(t, parse::pdu(none.b.data(), none.len, p) == Verdict::Ok);
	WEFT_EXPECT_EQ(t, p.dlen, 0u);
}

void pdu_malformed(Test &t)
{
	parse::Pdu p;
	/* Declares more than arrived: one byte short, and the 24-bit maximum. */
	Buf s1 = make(0x10, iscsi_op::scsi_cmd, 101, 100);
	WEFT_EXPECT_TRUE(t, parse::pdu(s1.b.data(), s1.len, p) == Verdict::Short);
	Buf s2 = make(0x10, iscsi_op::scsi_cmd, 0xffffff, 8192);
	WEFT_EXPECT_TRUE(t, parse::pdu(s2.b.data(), s2.len, p) == Verdict::Short);
	/* Shorter than the two headers. */
	Buf h = make(0x10, iscsi_op::nop_out, 0, 0);
	static const uint32_t shorts[] = {0, 1, 28, 75};
	for (uint32_t n : shorts)
		WEFT_EXPECT_TRUE(t, parse::pdu(h.b.data(), n, p) == Verdict::Short);
	/* Hello, HelloReply and a reserved opcode. */
	static const uint8_t others[] = {0x20, 0x30, 0x00, 0xf0};
	for (uint8_t f : others) {
		Buf x = make(f, iscsi_op::nop_out, 0, 0);
		WEFT_EXPECT_TRUE(t, parse::pdu(x.b.data(), x.len, p) == Verdict::NotControl);
	}
}

void login_checks(Test &t)
{
	parse::Pdu p;
	Buf ok = make(0x10, iscsi_op::login, 300, 300);
	WEFT_EXPECT_TRUE(t, parse::login(ok.b.data(), ok.len, p) == Verdict::Ok);
	WEFT_EXPECT_EQ(t, p.dlen, 300u);
	/* The immediate bit is not part of the opcode. */
	Buf imm = make(0x10, 0x40 | iscsi_op::login, 0, 0);
	WEFT_EXPECT_TRUE(t, parse::login(imm.b.data(), imm.len, p) == Verdict::Ok);
	Buf text = make(0x10, iscsi_op::text, 0, 0);
	WEFT_EXPECT_TRUE(t, parse::login(text.b.data(), text.len, p) == Verdict::NotLogin);
	Buf s = make(0x10, iscsi_op::login, 8192, 8191);
	WEFT_EXPECT_TRUE(t, parse::login(s.b.data(), s.len, p) == Verdict::Short);
	/* rping's first message: 16 bytes. */
	WEFT_EXPECT_TRUE(t, parse::login(ok.b.data(), 16, p) == Verdict::Short);
}

void rep_header(Test &t)
{
	const CmHeader h = parse::rep_header();
	WEFT_EXPECT_EQ(t, h.flags.get(), uint8_t(0xc0));
	WEFT_EXPECT_EQ(t, h.reserved[0] | h.reserved[1] | h.reserved[2], 0);
	/* Send with Invalidate used: only ZBVA_NOT_SUP; the REQ's 0x40 bit refuses it. */
	WEFT_EXPECT_EQ(t, parse::rep_header(true).flags.get(), uint8_t(0x80));
	const uint8_t inv[4] = {0x80, 0, 0, 0}, no_inv[4] = {0xc0, 0, 0, 0};
	WEFT_EXPECT_TRUE(t, parse::req_accepts_inv(ConstBytes(inv, 4)));
	WEFT_EXPECT_FALSE(t, parse::req_accepts_inv(ConstBytes(no_inv, 4)));
	WEFT_EXPECT_FALSE(t, parse::req_accepts_inv(ConstBytes(inv, 0)));
}

struct Wr {
	uint32_t n, bytes;
	uintptr_t first;
	bool last;
};

/* Split into at most 8 recorded WRs. */
int split(const weft_isert_seg *segs, uint32_t nsegs, uint32_t off, uint32_t len, uint32_t sge, Wr *out)
{
	int i = 0;
	return parse::split(segs, nsegs, off, len, sge,
			    [&](const parse::Piece *pc, uint32_t n, uint32_t bytes, bool last) -> int {
				    if (i < 8)
					    out[i++] = Wr{n, bytes, pc[0].kva, last};
				    return 0;
			    });
}

void rdma_split(Test &t)
{
	/* Four 4 KiB pages, as LIO's t_data_sg has them. */
	const weft_isert_seg segs[4] = {{0x10000, 4096}, {0x30000, 4096}, {0x50000, 4096}, {0x70000, 4096}};
	Wr w[8] = {};
	WEFT_EXPECT_EQ(t, split(segs, 4, 0, 16384, 8, w), 1);
	WEFT_EXPECT_EQ(t, w[0].n, 4u);
	WEFT_EXPECT_EQ(t, w[0].bytes, 16384u);
	WEFT_EXPECT_TRUE(t, w[0].last);
	/* Two pieces a WR: two WRs, the second the last. */
	WEFT_EXPECT_EQ(t, split(segs, 4, 0, 16384, 2, w), 2);
	WEFT_EXPECT_EQ(t, w[0].bytes, 8192u);
	WEFT_EXPECT_FALSE(t, w[0].last);
	WEFT_EXPECT_EQ(t, w[1].first, uintptr_t(0x50000));
	WEFT_EXPECT_TRUE(t, w[1].last);
	/* 8 KiB already came as immediate data: the READ fills from there. */
	WEFT_EXPECT_EQ(t, split(segs, 4, 8192, 8192, 8, w), 1);
	WEFT_EXPECT_EQ(t, w[0].first, uintptr_t(0x50000));
	WEFT_EXPECT_EQ(t, w[0].bytes, 8192u);
	/* An offset inside a page. */
	WEFT_EXPECT_EQ(t, split(segs, 4, 100, 5000, 8, w), 1);
	WEFT_EXPECT_EQ(t, w[0].first, uintptr_t(0x10000 + 100));
	WEFT_EXPECT_EQ(t, w[0].n, 2u);
	WEFT_EXPECT_EQ(t, w[0].bytes, 5000u);
	/* The buffer is shorter than the transfer, nothing to move, no SGE. */
	WEFT_EXPECT_EQ(t, split(segs, 4, 4096, 16384, 8, w), -22);
	WEFT_EXPECT_EQ(t, split(segs, 4, 0, 0, 8, w), -22);
	WEFT_EXPECT_EQ(t, split(segs, 4, 0, 4096, 0, w), -22);
	WEFT_EXPECT_EQ(t, split(segs, 0, 0, 4096, 8, w), -22);
}

} // namespace

WEFT_TEST_SUITE(weft_isert_parse, WEFT_CASE(pdu_accepted), WEFT_CASE(pdu_malformed),
		WEFT_CASE(login_checks), WEFT_CASE(rep_header), WEFT_CASE(rdma_split));
