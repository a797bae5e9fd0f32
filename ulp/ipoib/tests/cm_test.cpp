// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: IPoIB connected mode on the wire (ulp/ipoib/cm_proto.h): the C
 * flag of the address, the service ID (RFC 4755 §4, as the in-tree
 * driver forms it), and REQ/REP private data (RFC 4755 §5).
 */
#include <weft/test.h>

#include "../cm_proto.h"
#include "../ipoib_kapi.h"

using namespace weft;
using namespace weft::ipoib;
using weft::test::Test;

namespace {

void c_flag(Test &t)
{
	HwAddr a = HwAddr::make(0x123456, verbs::Gid::make(0xfe80000000000000ull, 1));
	WEFT_EXPECT_FALSE(t, cmp::has_flag(a));
	cmp::set_flag(a);
	WEFT_EXPECT_TRUE(t, cmp::has_flag(a));
	/* The flag is the top bit of the first byte; the QPN is untouched. */
	WEFT_EXPECT_EQ(t, reinterpret_cast<const uint8_t *>(&a)[0], 0x80);
	WEFT_EXPECT_EQ(t, a.qpn(), 0x123456u);
	/* Other flag bits do not count as connected mode. */
	HwAddr b{};
	HwAddr::Flags::set(b.flags_qpn, 0x40);
	WEFT_EXPECT_FALSE(t, cmp::has_flag(b));
}

void service_ids(Test &t)
{
	WEFT_EXPECT_EQ(t, cmp::service_id(0x48), 0x1000000000000048ull);
	WEFT_EXPECT_EQ(t, cmp::service_id(0xffffff), 0x1000000000ffffffull);
	/* Only the 24 bits of a QPN. */
	WEFT_EXPECT_EQ(t, cmp::service_id(0x81000002), 0x1000000000000002ull);
}

void private_data(Test &t)
{
	WEFT_EXPECT_EQ(t, cmp::max_mtu, 65520u);
	WEFT_EXPECT_EQ(t, cmp::buf_size, 65524u);
	WEFT_EXPECT_TRUE(t, WEFT_IPOIB_CM_HEAD + WEFT_IPOIB_CM_FRAGS * WEFT_IPOIB_CM_FRAG >= cmp::buf_size);
	const cmp::PrivData p = cmp::encode(0x1abcdef, cmp::buf_size);
	const uint8_t *b = reinterpret_cast<const uint8_t *>(&p);
	/* Big-endian QPN (24 bits), then the receive buffer size. */
	const uint8_t want[8] = {0x00, 0xab, 0xcd, 0xef, 0x00, 0x00, 0xff, 0xf4};
	WEFT_EXPECT_EQ(t, __builtin_memcmp(b, want, 8), 0);
	uint32_t qpn = 0;
	WEFT_EXPECT_EQ(t, cmp::decode_mtu(ConstBytes(b, 8), &qpn), 65520u);
	WEFT_EXPECT_EQ(t, qpn, 0xabcdefu);
	/* The QPN's top byte is ignored on receive. */
	const uint8_t top[8] = {0xff, 0x00, 0x00, 0x05, 0x00, 0x00, 0x08, 0x04};
	WEFT_EXPECT_EQ(t, cmp::decode_mtu(ConstBytes(top, 8), &qpn), 2048u);
	WEFT_EXPECT_EQ(t, qpn, 5u);
	/* Too short, no room for a packet, larger than we can take. */
	WEFT_EXPECT_EQ(t, cmp::decode_mtu(ConstBytes(b, 7)), 0u);
	const uint8_t tiny[8] = {0, 0, 0, 1, 0, 0, 0, 4};
	WEFT_EXPECT_EQ(t, cmp::decode_mtu(ConstBytes(tiny, 8)), 0u);
	const uint8_t huge[8] = {0, 0, 0, 1, 0, 1, 0, 0};
	WEFT_EXPECT_EQ(t, cmp::decode_mtu(ConstBytes(huge, 8)), 65520u);
}

} // namespace

WEFT_TEST_SUITE(weft_ipoib_cm, WEFT_CASE(c_flag), WEFT_CASE(service_ids), WEFT_CASE(private_data));
