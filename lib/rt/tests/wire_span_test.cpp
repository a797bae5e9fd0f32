// SPDX-License-Identifier: GPL-2.0
/* KUnit: big-endian wire fields, bit fields and bounds-checked spans. */
#include <weft/span.h>
#include <weft/test.h>
#include <weft/wire.h>

using namespace weft;
using weft::test::Test;

namespace {

/* A header shaped like the IBA BTH (IBA 9.2): 12 bytes, big-endian. */
struct DemoHeader {
	be8 opcode;
	be8 flags; /* SE:1 M:1 PadCnt:2 TVer:4 */
	be16 pkey;
	be32 dqp;  /* reserved:8 DestQP:24 */
	be32 psn;  /* AckReq:1 reserved:7 PSN:24 */
};
static_assert(sizeof(DemoHeader) == 12 && alignof(DemoHeader) == 1);
using PadCnt = BitField<be8, 4, 2>;
using TVer = BitField<be8, 0, 4>;
using DestQp = BitField<be32, 0, 24>;
using Psn = BitField<be32, 0, 24>;
using AckReq = BitField<be32, 31, 1>;

void byte_order_on_the_wire(Test &t)
{
	uint8_t buf[16] = {};
	auto *w16 = reinterpret_cast<be16 *>(buf + 1); /* deliberately unaligned */
	auto *w32 = reinterpret_cast<be32 *>(buf + 3);
	auto *w64 = reinterpret_cast<be64 *>(buf + 7);
	w16->set(0x1234);
	w32->set(0xa1b2c3d4);
	w64->set(0x0102030405060708ull);
	const uint8_t want[16] = {0, 0x12, 0x34, 0xa1, 0xb2, 0xc3, 0xd4,
				  1, 2, 3, 4, 5, 6, 7, 8, 0};
	for (int i = 0; i < 16; i++)
		WEFT_EXPECT_EQ(t, buf[i], want[i]);
	WEFT_EXPECT_EQ(t, w16->get(), 0x1234u);
	WEFT_EXPECT_EQ(t, w32->get(), 0xa1b2c3d4u);
	WEFT_EXPECT_EQ(t, w64->get(), 0x0102030405060708ull);
	WEFT_EXPECT_TRUE(t, be32::from(7) == be32::from(7));
}

void bit_fields(Test &t)
{
	DemoHeader h{};
	WEFT_EXPECT_TRUE(t, Psn::set(h.psn, 0xabcdef));
	WEFT_EXPECT_TRUE(t, AckReq::set(h.psn, 1));
	WEFT_EXPECT_EQ(t, h.psn.get(), 0x80abcdefu);
	WEFT_EXPECT_EQ(t, Psn::get(h.psn), 0xabcdefu);
	WEFT_EXPECT_EQ(t, AckReq::get(h.psn), 1u);
	WEFT_EXPECT_TRUE(t, PadCnt::set(h.flags, 3));
	WEFT_EXPECT_TRUE(t, TVer::set(h.flags, 0));
	WEFT_EXPECT_EQ(t, h.flags.get(), 0x30u);
	WEFT_EXPECT_EQ(t, Psn::max, 0xffffffu);
}

void bit_field_rejects_overflow(Test &t)
{
	DemoHeader h{};
	h.dqp.set(0xff000001);
	WEFT_EXPECT_FALSE(t, DestQp::set(h.dqp, 0x1000000));
	WEFT_EXPECT_EQ(t, h.dqp.get(), 0xff000001u); /* untouched */
	WEFT_EXPECT_FALSE(t, PadCnt::set(h.flags, 4));
	WEFT_EXPECT_TRUE(t, DestQp::set(h.dqp, 0xffffff));
	WEFT_EXPECT_EQ(t, h.dqp.get(), 0xffffffffu); /* reserved bits kept */
}

void span_bounds(Test &t)
{
	uint8_t raw[16] = {};
	Bytes b(raw);
	WEFT_EXPECT_EQ(t, b.size(), 16u);
	WEFT_EXPECT_OK(t, b.sub(0, 16));
	WEFT_EXPECT_OK(t, b.sub(16, 0));
	WEFT_EXPECT_ERR(t, b.sub(17, 0), err::ERANGE);
	WEFT_EXPECT_ERR(t, b.sub(8, 9), err::ERANGE);
	WEFT_EXPECT_ERR(t, b.sub(1, SIZE_MAX), err::ERANGE); /* off + len wraps */
	WEFT_EXPECT_ERR(t, b.at(16), err::ERANGE);
	WEFT_EXPECT_EQ(t, b.skip(10).value().size(), 6u);
	WEFT_EXPECT_ERR(t, b.skip(17), err::ERANGE);
	WEFT_EXPECT_TRUE(t, b.first(4).value().data() == raw);
}

void span_header_parse(Test &t)
{
	uint8_t pkt[20] = {0x64, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01, 0x80, 0x00, 0x00, 0x2a};
	ConstBytes in(pkt, sizeof(pkt));
	auto h = in.header<const DemoHeader>();
	WEFT_ASSERT_OK(t, h);
	WEFT_EXPECT_EQ(t, h.value()->opcode.get(), 0x64u);
	WEFT_EXPECT_EQ(t, h.value()->pkey.get(), 0xffffu);
	WEFT_EXPECT_EQ(t, DestQp::get(h.value()->dqp), 1u);
	WEFT_EXPECT_EQ(t, Psn::get(h.value()->psn), 42u);
	WEFT_EXPECT_EQ(t, AckReq::get(h.value()->psn), 1u);
	/* A truncated packet is an error, not a read past the end. */
	ConstBytes shortpkt(pkt, 11);
	WEFT_EXPECT_ERR(t, shortpkt.header<const DemoHeader>(), err::EMSGSIZE);
}

} // namespace

WEFT_TEST_SUITE(weft_rt_wire, WEFT_CASE(byte_order_on_the_wire), WEFT_CASE(bit_fields),
		WEFT_CASE(bit_field_rejects_overflow), WEFT_CASE(span_bounds),
		WEFT_CASE(span_header_parse));
