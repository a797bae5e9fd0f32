// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: iSER wire formats as the initiator builds and reads them
 * (ulp/iser/initiator/pdu.h): the 28-byte header (RFC 7145 9.2) for every
 * flag combination, Hello/HelloReply (9.3, 9.4), the received-PDU window
 * rule on DataSegmentLength, and the Annex A12 CM private data.
 */
#include <weft/test.h>
#include <weft/verbs/page_list.h>

#include "../initiator/pdu.h"

using namespace weft;
using namespace weft::iser;
using weft::test::Test;

namespace {

const uint8_t *raw(const void *p) { return static_cast<const uint8_t *>(p); }

void header_layout(Test &t)
{
	for (int combo = 0; combo < 4; combo++) {
		pdu::Stags s;
		s.wsv = combo & 1;
		s.rsv = combo & 2;
		s.write_stag = 0x11223344;
		s.write_va = 0x0102030405060708ull;
		s.read_stag = 0xa1b2c3d4;
		s.read_va = 0xf1f2f3f4f5f6f7f8ull;
		wire::Header h;
		__builtin_memset(static_cast<void *>(&h), 0xee, sizeof(h));
		pdu::build_header(h, s);
		const uint8_t *b = raw(&h);
		WEFT_EXPECT_EQ(t, b[0], 0x10u | (s.wsv ? 0x08u : 0u) | (s.rsv ? 0x04u : 0u));
		WEFT_EXPECT_EQ(t, b[1] | b[2] | b[3], 0);
		WEFT_EXPECT_EQ(t, h.op(), wire::opcode::iscsi_ctrl);
		WEFT_EXPECT_EQ(t, h.wsv(), s.wsv);
		WEFT_EXPECT_EQ(t, h.rsv(), s.rsv);
		/* Big endian at offsets 4, 8, 16, 20; zero when the STag is not valid. */
		WEFT_EXPECT_EQ(t, b[4], s.wsv ? 0x11u : 0u);
		WEFT_EXPECT_EQ(t, b[7], s.wsv ? 0x44u : 0u);
		WEFT_EXPECT_EQ(t, b[8], s.wsv ? 0x01u : 0u);
		WEFT_EXPECT_EQ(t, b[15], s.wsv ? 0x08u : 0u);
		WEFT_EXPECT_EQ(t, b[16], s.rsv ? 0xa1u : 0u);
		WEFT_EXPECT_EQ(t, b[19], s.rsv ? 0xd4u : 0u);
		WEFT_EXPECT_EQ(t, b[20], s.rsv ? 0xf1u : 0u);
		WEFT_EXPECT_EQ(t, b[27], s.rsv ? 0xf8u : 0u);
		WEFT_EXPECT_EQ(t, h.read_va.get(), s.rsv ? s.read_va : 0);
	}
}

void hello_round_trip(Test &t)
{
	wire::Hello h;
	pdu::build_hello(h, 10, 10, 0x1234);
	const uint8_t *b = raw(&h);
	WEFT_EXPECT_EQ(t, b[0], 0x20u);
	WEFT_EXPECT_EQ(t, b[1], 0xaau); /* what Wireshark's dissector wants */
	WEFT_EXPECT_EQ(t, b[2], 0x12u);
	WEFT_EXPECT_EQ(t, b[3], 0x34u);
	for (int i = 4; i < 12; i++)
		WEFT_EXPECT_EQ(t, b[i], 0u);
	auto p = pdu::parse_hello(ConstBytes(b, sizeof(h)));
	WEFT_ASSERT_OK(t, p);
	WEFT_EXPECT_EQ(t, p->max_ver, 10u);
	WEFT_EXPECT_EQ(t, p->other_ver, 10u);
	WEFT_EXPECT_EQ(t, p->ird_ord, 0x1234u);
	WEFT_EXPECT_FALSE(t, p->rej);
	/* Short, or a HelloReply where a Hello is expected. */
	WEFT_EXPECT_ERR(t, pdu::parse_hello(ConstBytes(b, 11)), err::EPROTO);
	WEFT_EXPECT_ERR(t, pdu::parse_hello_reply(ConstBytes(b, sizeof(h))), err::EPROTO);

	wire::HelloReply r;
	pdu::build_hello_reply(r, true, 10, 9, 0x00ff);
	b = raw(&r);
	WEFT_EXPECT_EQ(t, b[0], 0x31u);
	WEFT_EXPECT_EQ(t, b[1], 0xa9u);
	auto q = pdu::parse_hello_reply(ConstBytes(b, sizeof(r)));
	WEFT_ASSERT_OK(t, q);
	WEFT_EXPECT_TRUE(t, q->rej);
	WEFT_EXPECT_EQ(t, q->other_ver, 9u);
	WEFT_EXPECT_EQ(t, q->ird_ord, 0xffu);
	pdu::build_hello_reply(r, false, 1, 1, 0);
	auto q2 = pdu::parse_hello_reply(ConstBytes(raw(&r), sizeof(r)));
	WEFT_ASSERT_OK(t, q2);
	WEFT_EXPECT_FALSE(t, q2->rej);
}

/* A received SEND: iSER header + BHS with @dlength, in a buffer of @cap bytes. */
struct RxBuf {
	uint8_t b[204 + 8] = {};
	void set(uint32_t dlength, uint8_t iser_op = wire::opcode::iscsi_ctrl)
	{
		b[0] = static_cast<uint8_t>(iser_op << 4);
		uint8_t *bhs = b + sizeof(wire::Header);
		bhs[0] = wire::iscsi_op::nop_in;
		bhs[4] = 0x7; /* TotalAHSLength: not data */
		bhs[5] = static_cast<uint8_t>(dlength >> 16);
		bhs[6] = static_cast<uint8_t>(dlength >> 8);
		bhs[7] = static_cast<uint8_t>(dlength);
	}
	ConstBytes span(size_t cap = 204) const { return ConstBytes(b, cap); }
};

void dlength_window(Test &t)
{
	RxBuf rx;
	/* No data segment: exactly the headers. */
	rx.set(0);
	auto r = pdu::parse_rx(rx.span(), 76);
	WEFT_ASSERT_OK(t, r);
	WEFT_EXPECT_EQ(t, r->dlength, 0u);
	WEFT_EXPECT_EQ(t, r->bhs->op(), wire::iscsi_op::nop_in);
	WEFT_EXPECT_EQ(t, r->bhs->ahs_words(), 7u);
	WEFT_EXPECT_TRUE(t, r->data == rx.b + 76);
	/* Sense of 18 + 2 bytes padded to 20; and 18 bytes padded to 20. */
	rx.set(20);
	WEFT_EXPECT_OK(t, pdu::parse_rx(rx.span(), 96));
	rx.set(18);
	auto r18 = pdu::parse_rx(rx.span(), 96);
	WEFT_ASSERT_OK(t, r18);
	WEFT_EXPECT_EQ(t, r18->dlength, 18u);
	/* d + 4 == r still accepted, one more byte is not. */
	rx.set(16);
	WEFT_EXPECT_OK(t, pdu::parse_rx(rx.span(), 96));
	rx.set(15);
	WEFT_EXPECT_ERR(t, pdu::parse_rx(rx.span(), 96), err::EBADMSG);
	/* Data missing: d > r. */
	rx.set(21);
	WEFT_EXPECT_ERR(t, pdu::parse_rx(rx.span(), 96), err::EBADMSG);
	/* The full 24 bits of DataSegmentLength are read. */
	rx.set(0xffffff);
	WEFT_EXPECT_ERR(t, pdu::parse_rx(rx.span(), 204), err::EBADMSG);
	rx.set(0x010000 | 128);
	WEFT_EXPECT_ERR(t, pdu::parse_rx(rx.span(), 204), err::EBADMSG);
	rx.set(128);
	WEFT_EXPECT_OK(t, pdu::parse_rx(rx.span(), 204));
}

void short_and_foreign(Test &t)
{
	RxBuf rx;
	rx.set(0);
	WEFT_EXPECT_ERR(t, pdu::parse_rx(rx.span(), 75), err::EMSGSIZE);
	WEFT_EXPECT_ERR(t, pdu::parse_rx(rx.span(), 0), err::EMSGSIZE);
	/* A length beyond the posted buffer is never believed. */
	WEFT_EXPECT_ERR(t, pdu::parse_rx(rx.span(100), 104), err::EMSGSIZE);
	/* Hello and HelloReply (never negotiated on IB), and unknown opcodes. */
	const uint8_t foreign[] = {0, wire::opcode::hello, wire::opcode::hello_reply, 0xf};
	for (uint8_t op : foreign) {
		rx.set(0, op);
		WEFT_EXPECT_ERR(t, pdu::parse_rx(rx.span(), 76), err::EPROTO);
	}
	/* Flag bits of a received header do not change the verdict. */
	rx.set(0);
	rx.b[0] |= 0x0f;
	rx.b[1] = rx.b[2] = rx.b[3] = 0xff;
	WEFT_EXPECT_OK(t, pdu::parse_rx(rx.span(), 76));
}

void cm_private_data(Test &t)
{
	wire::CmHeader h;
	__builtin_memset(static_cast<void *>(&h), 0xff, sizeof(h));
	pdu::build_cm_req(h, true);
	WEFT_EXPECT_EQ(t, raw(&h)[0], 0x80u);
	WEFT_EXPECT_EQ(t, raw(&h)[1] | raw(&h)[2] | raw(&h)[3], 0);
	pdu::build_cm_req(h, false);
	WEFT_EXPECT_EQ(t, raw(&h)[0], 0xc0u);

	const uint8_t rep_inv[4] = {0x80, 0, 0, 0}, rep_no_inv[4] = {0xc0, 0, 0, 0};
	WEFT_EXPECT_TRUE(t, pdu::rep_uses_remote_inv(ConstBytes(rep_inv, 4)));
	WEFT_EXPECT_TRUE(t, pdu::rep_uses_remote_inv(ConstBytes(rep_inv, 1)));
	WEFT_EXPECT_FALSE(t, pdu::rep_uses_remote_inv(ConstBytes(rep_no_inv, 4)));
	WEFT_EXPECT_FALSE(t, pdu::rep_uses_remote_inv(ConstBytes(rep_inv, 0)));
}

/* verbs/page_list.h: a scatterlist as a fast registration's page list (the initiator's reg.cpp). */
struct Seg {
	uintptr_t kva;
	uint32_t len;
};

Result<verbs::PageList> pages_of(const Seg *s, uint32_t n, uint64_t *pages, uint32_t max)
{
	/* As the shims: up to @m entries, none past the list's end. */
	return verbs::page_list<Seg>(n, 4096, Span<uint64_t>(pages, max),
				     [s, n](uint32_t f, Seg *out, uint32_t m) {
					     for (uint32_t i = 0; i < m && f + i < n; i++)
						     out[i] = s[f + i];
				     });
}

void page_lists(Test &t)
{
	uint64_t pg[8];
	/* Mid-page start, a two-page entry, a short last one: 4 pages from the first's page. */
	const Seg ok[3] = {{0x10200, 0xe00}, {0x20000, 0x2000}, {0x40000, 0x100}};
	auto r = pages_of(ok, 3, pg, 8);
	WEFT_ASSERT_OK(t, r);
	WEFT_EXPECT_EQ(t, r->iova, uint64_t(0x10200));
	WEFT_EXPECT_EQ(t, r->len, uint64_t(0xe00 + 0x2000 + 0x100));
	WEFT_EXPECT_EQ(t, r->n, 4u);
	WEFT_EXPECT_EQ(t, pg[0], uint64_t(0x10000));
	WEFT_EXPECT_EQ(t, pg[1], uint64_t(0x20000));
	WEFT_EXPECT_EQ(t, pg[2], uint64_t(0x21000));
	WEFT_EXPECT_EQ(t, pg[3], uint64_t(0x40000));
	WEFT_EXPECT_ERR(t, pages_of(ok, 3, pg, 3), err::EINVAL); /* more pages than the MR */
	/* A gap: the first entry ends mid-page, or a later one starts mid-page. */
	const Seg gap_end[2] = {{0x10000, 0x800}, {0x20000, 0x1000}};
	WEFT_EXPECT_ERR(t, pages_of(gap_end, 2, pg, 8), err::EINVAL);
	const Seg gap_start[2] = {{0x10000, 0x1000}, {0x20200, 0x100}};
	WEFT_EXPECT_ERR(t, pages_of(gap_start, 2, pg, 8), err::EINVAL);
	/* A new registration's key: the same index, the next variant, wrapping. */
	WEFT_EXPECT_EQ(t, verbs::next_key(0x1234ff), 0x123400u);
	WEFT_EXPECT_EQ(t, verbs::next_key(0x123401), 0x123402u);
}

} // namespace

WEFT_TEST_SUITE(weft_iser_wire, WEFT_CASE(header_layout), WEFT_CASE(hello_round_trip),
		WEFT_CASE(dlength_window), WEFT_CASE(short_and_foreign), WEFT_CASE(cm_private_data),
		WEFT_CASE(page_lists));
