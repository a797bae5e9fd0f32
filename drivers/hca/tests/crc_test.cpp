// SPDX-License-Identifier: GPL-2.0
/* KUnit: ICRC and VCRC (drivers/hca/crc.cpp), IBA 7.8. */
#include <weft/test.h>

#include "../crc.h"
#include "sample_packet.h"

using namespace weft;
using namespace weft::iba;
using weft::hca::CrcCheck;
using weft::test::Test;

namespace {

constexpr uint8_t digits[9] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};

Result<size_t> make_packet(Bytes out, bool grh)
{
	static constexpr uint8_t payload[13] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0xff, 0xee, 0xdd};
	return hca::build(out, hca::fixture::sample(opcode(Transport::Rc, op::WriteOnly),
						 ConstBytes(payload), grh));
}

/* Bits a switch or router may change (IBA 7.8.1): the ICRC ignores them. */
bool variant_bit(size_t byte, uint8_t bit, bool grh)
{
	if (byte == 0)
		return bit & 0xf0; /* LRH.VL */
	size_t bth = sizeof(Lrh);
	if (grh) {
		const size_t g = byte - sizeof(Lrh);
		if (byte >= sizeof(Lrh) && g < sizeof(Grh)) {
			if (g == 0)
				return bit & 0x0f; /* TClass, high half */
			if (g >= 1 && g <= 3)
				return true;       /* TClass low half, FlowLabel */
			if (g == 7)
				return true;       /* HopLmt */
		}
		bth += sizeof(Grh);
	}
	return byte == bth + 4; /* BTH.Resv8a */
}

void known_answers(Test &t)
{
	/* The standard check values of the two CRC definitions. */
	WEFT_EXPECT_EQ(t, ~weft_crc32_le(~0u, digits, sizeof(digits)), 0xcbf43926u);
	WEFT_EXPECT_EQ(t, hca::crc16_iba(ConstBytes(digits)), 0x0a3du);
}

void built_packets_check_ok(Test &t)
{
	uint8_t buf[128];
	for (int grh = 0; grh < 2; grh++) {
		auto len = make_packet(Bytes(buf), grh);
		WEFT_ASSERT_OK(t, len);
		auto r = hca::check_crcs(ConstBytes(buf, len.value()));
		WEFT_ASSERT_OK(t, r);
		WEFT_EXPECT_TRUE(t, r.value() == CrcCheck::Ok);
	}
}

/* Every single-bit change is caught by the ICRC, except in the variant fields. */
void icrc_covers_exactly_the_invariant_bits(Test &t)
{
	uint8_t buf[128];
	for (int grh = 0; grh < 2; grh++) {
		auto len = make_packet(Bytes(buf), grh);
		WEFT_ASSERT_OK(t, len);
		ConstBytes wire(buf, len.value());
		const uint32_t good = hca::compute_icrc(wire).value();
		const size_t covered = len.value() - icrc_bytes - vcrc_bytes;
		for (size_t i = 0; i < covered; i++) {
			for (int b = 0; b < 8; b++) {
				const uint8_t bit = static_cast<uint8_t>(1u << b);
				buf[i] ^= bit;
				/* A flipped LNH may make the packet unreadable: that counts as caught. */
				auto now = hca::compute_icrc(wire);
				buf[i] ^= bit;
				const bool same = now.ok() && now.value() == good;
				if (!WEFT_EXPECT_EQ(t, same, variant_bit(i, bit, grh))) {
					char where[64];
					format(where, sizeof(where), "grh=%d byte %zu bit 0x%02x", grh, i, bit);
					t.note(where);
					return;
				}
			}
		}
	}
}

/* A switch rewriting VL recomputes only the VCRC; the packet stays valid. */
void variant_change_needs_only_a_new_vcrc(Test &t)
{
	uint8_t buf[128];
	auto len = make_packet(Bytes(buf), true);
	WEFT_ASSERT_OK(t, len);
	Bytes wire(buf, len.value());
	Lrh::Vl::set(wire.header<Lrh>().value()->vl_lver, 7);
	WEFT_EXPECT_TRUE(t, hca::check_crcs(wire).value() == CrcCheck::BadVcrc);
	WEFT_ASSERT_OK(t, hca::seal(wire));
	WEFT_EXPECT_TRUE(t, hca::check_crcs(wire).value() == CrcCheck::Ok);
}

void corruption_is_detected(Test &t)
{
	uint8_t buf[128];
	auto len = make_packet(Bytes(buf), false);
	WEFT_ASSERT_OK(t, len);
	const size_t n = len.value();
	ConstBytes wire(buf, n);
	/* Payload corrupted on the wire: the VCRC catches it first. */
	buf[30] ^= 0x40;
	WEFT_EXPECT_TRUE(t, hca::check_crcs(wire).value() == CrcCheck::BadVcrc);
	/* Corrupted and re-VCRC'd by a faulty hop: only the ICRC can tell. */
	uint16_t v = hca::compute_vcrc(wire).value();
	buf[n - 2] = static_cast<uint8_t>(v);
	buf[n - 1] = static_cast<uint8_t>(v >> 8);
	WEFT_EXPECT_TRUE(t, hca::check_crcs(wire).value() == CrcCheck::BadIcrc);
	/* A damaged VCRC alone. */
	buf[30] ^= 0x40;
	WEFT_ASSERT_OK(t, hca::seal(Bytes(buf, n)));
	buf[n - 1] ^= 0x01;
	WEFT_EXPECT_TRUE(t, hca::check_crcs(wire).value() == CrcCheck::BadVcrc);
	/* Too short to hold the CRCs at all. */
	WEFT_EXPECT_ERR(t, hca::check_crcs(ConstBytes(buf, 1)), err::EMSGSIZE);
	WEFT_EXPECT_ERR(t, hca::compute_icrc(ConstBytes(buf, 10)), err::EMSGSIZE);
}

} // namespace

WEFT_TEST_SUITE(weft_hca_crc, WEFT_CASE(known_answers), WEFT_CASE(built_packets_check_ok),
		WEFT_CASE(icrc_covers_exactly_the_invariant_bits),
		WEFT_CASE(variant_change_needs_only_a_new_vcrc), WEFT_CASE(corruption_is_detected));
