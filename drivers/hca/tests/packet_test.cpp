// SPDX-License-Identifier: GPL-2.0
/* KUnit: the BTH opcode table and IBA packet parse/build (drivers/hca/packet.cpp). */
#include <weft/test.h>

#include "../crc.h"
#include "sample_packet.h"

using namespace weft;
using namespace weft::iba;
using weft::hca::fixture::sample;
using weft::hca::PacketSpec;
using weft::test::Test;

namespace {

/*
 * Build one packet of every valid opcode, without and with GRH, and hand
 * each to fn(info, grh, wire, payload); stops at the first failure.
 */
template <typename F> void for_each_packet(Test &t, ConstBytes pl, Bytes buf, F fn)
{
	for (int o = 0; o < 256; o++) {
		const OpcodeInfo &info = opcode_info(static_cast<uint8_t>(o));
		if (!info.valid)
			continue;
		for (int grh = 0; grh < 2; grh++) {
			ConstBytes payload = info.payload ? pl : ConstBytes();
			auto len = hca::build(buf, sample(static_cast<uint8_t>(o), payload, grh));
			WEFT_ASSERT_OK(t, len);
			fn(info, grh, ConstBytes(buf.data(), len.value()), payload);
			if (t.failed())
				return;
		}
	}
}

void opcode_table(Test &t)
{
	const OpcodeInfo &w = opcode_info(opcode(Transport::Rc, op::WriteOnlyImm));
	WEFT_EXPECT_TRUE(t, w.valid);
	WEFT_EXPECT_EQ(t, w.headers, HReth | HImmDt);
	WEFT_EXPECT_EQ(t, w.ext_bytes(), 20u);
	WEFT_EXPECT_TRUE(t, w.first && w.last);
	WEFT_EXPECT_EQ(t, opcode_info(opcode(Transport::Rc, op::CompareSwap)).ext_bytes(), 28u);
	WEFT_EXPECT_EQ(t, opcode_info(opcode(Transport::Rc, op::AtomicAcknowledge)).ext_bytes(), 12u);
	WEFT_EXPECT_EQ(t, opcode_info(0x64).headers, HDeth); /* UD SEND_ONLY */
	/* UC has no READ, UD no multi-packet SEND, RD and reserved codes are not spoken. */
	WEFT_EXPECT_FALSE(t, opcode_info(opcode(Transport::Uc, op::ReadRequest)).valid);
	WEFT_EXPECT_FALSE(t, opcode_info(opcode(Transport::Ud, op::SendFirst)).valid);
	WEFT_EXPECT_FALSE(t, opcode_info(opcode(Transport::Rd, op::SendOnly)).valid);
	WEFT_EXPECT_FALSE(t, opcode_info(0x15).valid);
	WEFT_EXPECT_FALSE(t, opcode_info(0x80).valid);
	int valid = 0;
	for (int i = 0; i < 256; i++)
		valid += opcode_info(static_cast<uint8_t>(i)).valid;
	WEFT_EXPECT_EQ(t, valid, 23 + 12 + 2); /* RC, UC, UD */
}

void layout_on_the_wire(Test &t)
{
	uint8_t pl[5] = {1, 2, 3, 4, 5};
	uint8_t buf[128];
	auto len = hca::build(Bytes(buf), sample(opcode(Transport::Rc, op::SendOnly), ConstBytes(pl), false));
	WEFT_ASSERT_OK(t, len);
	/* LRH 8 + BTH 12 + payload 5 + pad 3 + ICRC 4 + VCRC 2 */
	WEFT_EXPECT_EQ(t, len.value(), 34u);
	const uint8_t lrh[8] = {0x30, 0x52, 0x00, 0x12, 0x00, 0x08, 0x00, 0x34};
	for (int i = 0; i < 8; i++)
		WEFT_EXPECT_EQ(t, buf[i], lrh[i]);
	const uint8_t bth[12] = {0x04, 0xb0, 0x80, 0x01, 0x00, 0x12, 0x34, 0x56, 0x80, 0xfe, 0xdc, 0xba};
	for (int i = 0; i < 12; i++)
		WEFT_EXPECT_EQ(t, buf[8 + i], bth[i]);
	WEFT_EXPECT_EQ(t, buf[20], 1);
	WEFT_EXPECT_EQ(t, buf[24], 5);
	WEFT_EXPECT_EQ(t, buf[25] | buf[26] | buf[27], 0); /* pad */
}

/* Every valid opcode, with and without GRH, builds and parses back to the same fields. */
void round_trip_every_opcode(Test &t)
{
	uint8_t pl[61];
	for (size_t i = 0; i < sizeof(pl); i++)
		pl[i] = static_cast<uint8_t>(i * 7);
	uint8_t buf[256];
	for_each_packet(t, ConstBytes(pl), Bytes(buf), [&](const OpcodeInfo &info, int grh,
							    ConstBytes wire, ConstBytes payload) {
		auto p = hca::parse(wire);
		WEFT_ASSERT_OK(t, p);
		WEFT_EXPECT_TRUE(t, p->op == &info);
		WEFT_EXPECT_EQ(t, p->grh != nullptr, grh == 1);
		WEFT_EXPECT_EQ(t, p->lrh->dlid.get(), 0x12u);
		WEFT_EXPECT_EQ(t, Lrh::Vl::get(p->lrh->vl_lver), 3u);
		WEFT_EXPECT_EQ(t, Bth::DestQp::get(p->bth->dqp), 0x123456u);
		WEFT_EXPECT_EQ(t, Bth::Psn::get(p->bth->psn), 0xfedcbau);
		WEFT_EXPECT_EQ(t, p->payload.size(), payload.size());
		if (payload.size())
			WEFT_EXPECT_EQ(t, __builtin_memcmp(p->payload.data(), pl, sizeof(pl)), 0);
		WEFT_EXPECT_EQ(t, p->deth != nullptr, (info.headers & HDeth) != 0);
		WEFT_EXPECT_EQ(t, p->reth != nullptr, (info.headers & HReth) != 0);
		WEFT_EXPECT_EQ(t, p->atomic_eth != nullptr, (info.headers & HAtomicEth) != 0);
		WEFT_EXPECT_EQ(t, p->aeth != nullptr, (info.headers & HAeth) != 0);
		WEFT_EXPECT_EQ(t, p->immdt != nullptr, (info.headers & HImmDt) != 0);
		WEFT_EXPECT_EQ(t, p->ieth != nullptr, (info.headers & HIeth) != 0);
		if (p->reth)
			WEFT_EXPECT_EQ(t, p->reth->va.get(), 0x1122334455667788ull);
		if (p->deth)
			WEFT_EXPECT_EQ(t, p->deth->qkey.get(), 0x80010000u);
		if (p->grh)
			WEFT_EXPECT_EQ(t, Grh::FlowLabel::get(p->grh->ver_tclass_flow), 0xabcdeu);
	});
}

/* A packet cut short anywhere, or padded at the end, is rejected. */
void parse_rejects_wrong_lengths(Test &t)
{
	uint8_t pl[40] = {};
	uint8_t buf[256];
	auto len = hca::build(Bytes(buf), sample(opcode(Transport::Rc, op::WriteOnlyImm), ConstBytes(pl), true));
	WEFT_ASSERT_OK(t, len);
	WEFT_ASSERT_OK(t, hca::parse(ConstBytes(buf, len.value())));
	for (size_t n = 0; n < len.value(); n++)
		if (!WEFT_EXPECT_ERR(t, hca::parse(ConstBytes(buf, n)), err::EMSGSIZE))
			return;
	WEFT_EXPECT_ERR(t, hca::parse(ConstBytes(buf, len.value() + 4)), err::EMSGSIZE);
	/* GRH PayLen disagreeing with the LRH. */
	buf[8 + 4] ^= 0x01;
	WEFT_EXPECT_ERR(t, hca::parse(ConstBytes(buf, len.value())), err::EMSGSIZE);
}

void parse_rejects_bad_headers(Test &t)
{
	uint8_t buf[128];
	auto spec = sample(opcode(Transport::Rc, op::SendOnly), ConstBytes(), false);
	auto len = hca::build(Bytes(buf), spec);
	WEFT_ASSERT_OK(t, len);
	auto again = [&](auto mutate, int want) {
		uint8_t copy[128];
		__builtin_memcpy(copy, buf, sizeof(copy));
		mutate(copy);
		return WEFT_EXPECT_ERR(t, hca::parse(ConstBytes(copy, len.value())), want);
	};
	/* Each line reports its own line number when it fails. */
	WEFT_EXPECT_TRUE(t, again([](uint8_t *p) { p[0] |= 0x01; }, err::EPROTO));      /* LVer 1 */
	WEFT_EXPECT_TRUE(t, again([](uint8_t *p) { p[1] &= 0xfc; }, err::EPROTO));      /* LNH raw */
	WEFT_EXPECT_TRUE(t, again([](uint8_t *p) { p[8 + 1] |= 0x01; }, err::EPROTO));  /* TVer 1 */
	WEFT_EXPECT_TRUE(t, again([](uint8_t *p) { p[8] = 0x15; }, err::EPROTO));       /* reserved */
	WEFT_EXPECT_TRUE(t, again([](uint8_t *p) { p[8] = 0x44; }, err::EPROTO));       /* RD */
	WEFT_EXPECT_TRUE(t, again([](uint8_t *p) { p[8 + 1] |= 0x30; }, err::EBADMSG)); /* pad 3 */
	/* Headers the buffer has no room for: a GRH announced by LNH, an ACK's AETH. */
	WEFT_EXPECT_TRUE(t, again([](uint8_t *p) { p[1] |= 0x03; }, err::EMSGSIZE));
	WEFT_EXPECT_TRUE(t, again([](uint8_t *p) { p[8] = 0x11; }, err::EMSGSIZE));

	/* An ACK carrying payload is malformed. */
	uint8_t ack[64];
	auto s = sample(opcode(Transport::Rc, op::Acknowledge), ConstBytes(), false);
	auto alen = hca::build(Bytes(ack), s);
	WEFT_ASSERT_OK(t, alen);
	uint8_t big[64] = {};
	__builtin_memcpy(big, ack, alen.value());
	/* Grow PktLen by one word and move the CRCs: 4 bytes of payload appear. */
	big[5] = static_cast<uint8_t>(big[5] + 1);
	WEFT_EXPECT_ERR(t, hca::parse(ConstBytes(big, alen.value() + 4)), err::EBADMSG);
}

void build_rejects_bad_specs(Test &t)
{
	uint8_t buf[64];
	uint8_t pl[8] = {};
	auto s = sample(opcode(Transport::Rc, op::SendOnly), ConstBytes(), false);
	s.opcode = 0x15;
	WEFT_EXPECT_ERR(t, hca::build(Bytes(buf), s), err::EINVAL);
	s = sample(opcode(Transport::Rc, op::ReadRequest), ConstBytes(pl), false);
	WEFT_EXPECT_ERR(t, hca::build(Bytes(buf), s), err::EINVAL); /* READ request carries no payload */
	s = sample(opcode(Transport::Rc, op::SendOnly), ConstBytes(), false);
	s.dqp = 0x1000000;
	WEFT_EXPECT_ERR(t, hca::build(Bytes(buf), s), err::EINVAL);
	s = sample(opcode(Transport::Rc, op::SendOnly), ConstBytes(), false);
	s.vl = 16;
	WEFT_EXPECT_ERR(t, hca::build(Bytes(buf), s), err::EINVAL);
	s = sample(opcode(Transport::Ud, op::SendOnly), ConstBytes(), false);
	s.sqp = 0x1000000;
	WEFT_EXPECT_ERR(t, hca::build(Bytes(buf), s), err::EINVAL);
	s = sample(opcode(Transport::Rc, op::SendOnly), ConstBytes(pl), false);
	WEFT_EXPECT_ERR(t, hca::build(Bytes(buf, 20), s), err::ENOSPC);
	s.payload = ConstBytes(pl, iba::max_packet_bytes);
	WEFT_EXPECT_ERR(t, hca::packet_length(s), err::EMSGSIZE);
	s.payload = ConstBytes(pl, iba::mtu_bytes(Mtu::M4096));
	WEFT_EXPECT_EQ(t, hca::packet_length(s).value(), 8u + 12 + 4096 + 4 + 2);
}

/*
 * One packet of every valid opcode, with and without GRH, logged in hex as
 * "WEFT-PKT <hex>".  make check turns them into a pcap (LINKTYPE_INFINIBAND)
 * and has tshark decode it: an independent dissector must find every field
 * where IBA puts it and no malformed packet (tests/hca/dissect.sh).
 */
void dump_for_dissector(Test &t)
{
	uint8_t pl[13];
	for (size_t i = 0; i < sizeof(pl); i++)
		pl[i] = static_cast<uint8_t>(0xa0 + i);
	uint8_t buf[160];
	int dumped = 0;
	for_each_packet(t, ConstBytes(pl), Bytes(buf),
			[&](const OpcodeInfo &, int, ConstBytes wire, ConstBytes) {
				char line[16 + 2 * sizeof(buf)];
				size_t n = format(line, sizeof(line), "WEFT-PKT ");
				for (uint8_t byte : wire)
					n += format(line + n, sizeof(line) - n, "%02x", byte);
				t.note(line);
				dumped++;
			});
	WEFT_EXPECT_EQ(t, dumped, 2 * 37);
}

/*
 * Mutation sweep (issue 22): every single-bit flip of every sample packet
 * is refused by what Hca::receive runs, parse() or the CRC check (IBA
 * 7.8: the VCRC covers every bit from the LRH through the ICRC), never
 * taken as another packet.
 */
void every_bit_flip_refused(Test &t)
{
	const uint8_t pl[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	uint8_t buf[128], bad[128];
	uint32_t flips = 0, refused = 0;
	for_each_packet(t, ConstBytes(pl, sizeof(pl)), Bytes(buf, sizeof(buf)),
			[&](const OpcodeInfo &, int, ConstBytes wire, ConstBytes) {
				for (size_t bit = 0; bit < wire.size() * 8; bit++) {
					__builtin_memcpy(bad, wire.data(), wire.size());
					bad[bit / 8] ^= uint8_t(1u << (bit % 8));
					const ConstBytes w(bad, wire.size());
					auto crc = hca::check_crcs(w);
					flips++;
					refused += !hca::parse(w) || !crc || crc.value() != hca::CrcCheck::Ok;
				}
			});
	WEFT_EXPECT_GT(t, flips, 0u);
	WEFT_EXPECT_EQ(t, refused, flips);
}

/*
 * The parser alone, CRCs made right again after each flip (as a broken
 * sender would seal them): every flip of a header bit gives a packet
 * whose headers and payload lie inside the buffer, or the parser's errno
 * for it (EMSGSIZE, EPROTO, EBADMSG), never anything else.
 */
void resealed_flips_parse_or_refuse(Test &t)
{
	const uint8_t pl[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	uint8_t buf[128], bad[128];
	uint32_t parsed = 0, refused = 0, other = 0, outside = 0;
	for_each_packet(t, ConstBytes(pl, sizeof(pl)), Bytes(buf, sizeof(buf)),
			[&](const OpcodeInfo &, int, ConstBytes wire, ConstBytes payload) {
				const size_t headers = wire.size() - payload.size() - icrc_bytes - vcrc_bytes;
				for (size_t bit = 0; bit < headers * 8; bit++) {
					__builtin_memcpy(bad, wire.data(), wire.size());
					bad[bit / 8] ^= uint8_t(1u << (bit % 8));
					(void)hca::seal(Bytes(bad, wire.size()));
					auto p = hca::parse(ConstBytes(bad, wire.size()));
					if (!p) {
						const int e = p.error().code();
						(e == err::EMSGSIZE || e == err::EPROTO || e == err::EBADMSG ? refused : other)++;
						continue;
					}
					parsed++;
					const uint8_t *end = bad + wire.size() - icrc_bytes - vcrc_bytes;
					const uint8_t *bth = reinterpret_cast<const uint8_t *>(p->bth);
					outside += bth < bad || bth + sizeof(Bth) > end ||
						   p->payload.data() + p->payload.size() > end;
				}
			});
	WEFT_EXPECT_GT(t, parsed, 0u);
	WEFT_EXPECT_GT(t, refused, 0u);
	WEFT_EXPECT_EQ(t, other, 0u);
	WEFT_EXPECT_EQ(t, outside, 0u);
}

} // namespace

WEFT_TEST_SUITE(weft_hca_packet, WEFT_CASE(opcode_table), WEFT_CASE(layout_on_the_wire),
		WEFT_CASE(round_trip_every_opcode), WEFT_CASE(parse_rejects_wrong_lengths),
		WEFT_CASE(parse_rejects_bad_headers), WEFT_CASE(build_rejects_bad_specs),
		WEFT_CASE(dump_for_dissector), WEFT_CASE(every_bit_flip_refused),
		WEFT_CASE(resealed_flips_parse_or_refuse));
