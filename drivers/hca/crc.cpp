// SPDX-License-Identifier: GPL-2.0
/* ICRC and VCRC, IBA 7.8 (crc.h). */
#include "crc.h"

#include <weft/iba/headers.h>

namespace weft::hca {
namespace {

using namespace weft::iba;

/* x^16 + x^12 + x^3 + x + 1 (0x100b), bit-reversed for LSB-first processing. */
constexpr uint16_t vcrc_poly_reflected = 0xd008;

struct Crc16Table {
	uint16_t v[256];
};

constexpr Crc16Table make_crc16_table()
{
	Crc16Table t{};
	for (unsigned i = 0; i < 256; i++) {
		uint16_t c = static_cast<uint16_t>(i);
		for (int b = 0; b < 8; b++)
			c = static_cast<uint16_t>((c & 1) ? (c >> 1) ^ vcrc_poly_reflected : c >> 1);
		t.v[i] = c;
	}
	return t;
}

constinit const Crc16Table crc16_table = make_crc16_table();

/* The ICRC'd copy of the headers before the payload is at most LRH+GRH+BTH. */
constexpr size_t masked_max = sizeof(Lrh) + sizeof(Grh) + sizeof(Bth);

/*
 * IBA 7.8.1: copy LRH, GRH (if any) and BTH with their variant fields set to
 * ones; returns how many bytes were copied.
 */
Result<size_t> masked_headers(ConstBytes wire, uint8_t (&out)[masked_max])
{
	const Lrh *lrh = WEFT_TRY(wire.header<const Lrh>());
	const bool global = static_cast<iba::Lnh>(Lrh::Lnh::get(lrh->sl_lnh)) == iba::Lnh::IbaGlobal;
	const size_t n = sizeof(Lrh) + (global ? sizeof(Grh) : 0) + sizeof(Bth);
	ConstBytes hdrs = WEFT_TRY(wire.first(n));
	__builtin_memcpy(out, hdrs.data(), n);

	Bytes m(out, n);
	Lrh *l = WEFT_TRY(m.header<Lrh>());
	Lrh::Vl::set(l->vl_lver, 0xf);
	size_t off = sizeof(Lrh);
	if (global) {
		Grh *g = WEFT_TRY(WEFT_TRY(m.skip(off)).header<Grh>());
		Grh::TClass::set(g->ver_tclass_flow, 0xff);
		Grh::FlowLabel::set(g->ver_tclass_flow, Grh::FlowLabel::max);
		g->hoplmt.set(0xff);
		off += sizeof(Grh);
	}
	Bth *b = WEFT_TRY(WEFT_TRY(m.skip(off)).header<Bth>());
	Bth::Resv8a::set(b->dqp, 0xff);
	return n;
}

Result<Trailer *> trailer(Bytes wire)
{
	if (wire.size() < sizeof(Trailer))
		return Error(err::EMSGSIZE);
	return WEFT_TRY(wire.skip(wire.size() - sizeof(Trailer))).header<Trailer>();
}

Result<const Trailer *> trailer(ConstBytes wire)
{
	if (wire.size() < sizeof(Trailer))
		return Error(err::EMSGSIZE);
	return WEFT_TRY(wire.skip(wire.size() - sizeof(Trailer))).header<const Trailer>();
}

} // namespace

uint16_t crc16_iba(ConstBytes data)
{
	uint16_t c = 0xffff;
	for (uint8_t byte : data)
		c = static_cast<uint16_t>((c >> 8) ^ crc16_table.v[(c ^ byte) & 0xff]);
	return static_cast<uint16_t>(~c);
}

Result<uint32_t> compute_icrc(ConstBytes wire)
{
	if (wire.size() < sizeof(Lrh) + sizeof(Bth) + icrc_bytes + vcrc_bytes)
		return Error(err::EMSGSIZE);
	uint8_t masked[masked_max];
	const size_t n = WEFT_TRY(masked_headers(wire, masked));
	const size_t covered = wire.size() - icrc_bytes - vcrc_bytes;
	if (n > covered)
		return Error(err::EMSGSIZE);
	uint32_t c = weft_crc32_le(~0u, masked, n);
	c = weft_crc32_le(c, wire.data() + n, covered - n);
	return ~c;
}

Result<uint16_t> compute_vcrc(ConstBytes wire)
{
	if (wire.size() < vcrc_bytes)
		return Error(err::EMSGSIZE);
	return crc16_iba(WEFT_TRY(wire.first(wire.size() - vcrc_bytes)));
}

Result<void> seal(Bytes wire)
{
	Trailer *t = WEFT_TRY(trailer(wire));
	/* The VCRC covers the ICRC: ICRC first. */
	t->icrc.set(WEFT_TRY(compute_icrc(wire)));
	t->vcrc.set(WEFT_TRY(compute_vcrc(wire)));
	return ok();
}

Result<bool> check_vcrc(ConstBytes wire)
{
	const Trailer *t = WEFT_TRY(trailer(wire));
	return t->vcrc.get() == WEFT_TRY(compute_vcrc(wire));
}

Result<CrcCheck> check_crcs(ConstBytes wire)
{
	const Trailer *t = WEFT_TRY(trailer(wire));
	if (!WEFT_TRY(check_vcrc(wire)))
		return CrcCheck::BadVcrc;
	if (t->icrc.get() != WEFT_TRY(compute_icrc(wire)))
		return CrcCheck::BadIcrc;
	return CrcCheck::Ok;
}

} // namespace weft::hca
