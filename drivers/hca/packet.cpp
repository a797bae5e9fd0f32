// SPDX-License-Identifier: GPL-2.0
/* Parsing and building IBA packets (packet.h). */
#include "packet.h"

#include <weft/copy.h>

#include "crc.h"
#include "csum.h"

namespace weft::hca {
namespace {

using namespace weft::iba;

/* Walks a byte span header by header. */
template <typename B> class Cursor {
public:
	explicit Cursor(Span<B> s) : rest_(s) {}
	template <typename H> Result<H *> take()
	{
		H *h = WEFT_TRY(rest_.template header<H>());
		rest_ = rest_.skip(sizeof(H)).take();
		return h;
	}
	Span<B> rest() const { return rest_; }

private:
	Span<B> rest_;
};

/* Step 7 of parse(): the extended headers the opcode implies, in IBA order. */
Result<void> parse_ext(Cursor<const uint8_t> &c, Packet &p)
{
	const uint8_t h = p.op->headers;
	if (h & HDeth)
		p.deth = WEFT_TRY(c.take<const Deth>());
	if (h & HReth)
		p.reth = WEFT_TRY(c.take<const Reth>());
	if (h & HAtomicEth)
		p.atomic_eth = WEFT_TRY(c.take<const AtomicEth>());
	if (h & HAeth)
		p.aeth = WEFT_TRY(c.take<const Aeth>());
	if (h & HAtomicAckEth)
		p.atomic_ack_eth = WEFT_TRY(c.take<const AtomicAckEth>());
	if (h & HImmDt)
		p.immdt = WEFT_TRY(c.take<const ImmDt>());
	if (h & HIeth)
		p.ieth = WEFT_TRY(c.take<const Ieth>());
	return ok();
}

constexpr size_t min_packet = sizeof(Lrh) + sizeof(Bth) + icrc_bytes + vcrc_bytes;

} // namespace

Result<Packet> parse(ConstBytes wire)
{
	Packet p;
	/* 1. Room for the smallest packet: LRH, BTH, ICRC, VCRC. */
	if (wire.size() < min_packet)
		return Error(err::EMSGSIZE);
	/* 2. IBA 7.7: link version 0, and an IBA transport next. */
	p.lrh = WEFT_TRY(wire.header<const Lrh>());
	const auto lnh = static_cast<iba::Lnh>(Lrh::Lnh::get(p.lrh->sl_lnh));
	if (Lrh::LVer::get(p.lrh->vl_lver) != 0 ||
	    (lnh != iba::Lnh::IbaLocal && lnh != iba::Lnh::IbaGlobal))
		return Error(err::EPROTO);
	/* 3. IBA 7.7.8: PktLen counts words from the LRH through the ICRC. */
	if (size_t(Lrh::PktLen::get(p.lrh->pktlen)) * 4 != wire.size() - vcrc_bytes)
		return Error(err::EMSGSIZE);
	/* 4. Split off the CRCs; the headers and payload lie between. */
	const size_t body_len = wire.size() - sizeof(Lrh) - icrc_bytes - vcrc_bytes;
	ConstBytes body = WEFT_TRY(wire.sub(sizeof(Lrh), body_len));
	p.icrc = WEFT_TRY(wire.sub(wire.size() - vcrc_bytes - icrc_bytes, icrc_bytes));
	p.vcrc = WEFT_TRY(wire.sub(wire.size() - vcrc_bytes, vcrc_bytes));
	Cursor<const uint8_t> c(body);
	/* 5. IBA 8.3: a GRH of version 6 announcing a BTH, whose PayLen agrees. */
	if (lnh == iba::Lnh::IbaGlobal) {
		p.grh = WEFT_TRY(c.take<const Grh>());
		if (Grh::IpVer::get(p.grh->ver_tclass_flow) != grh_ipver ||
		    p.grh->nxthdr.get() != grh_nxthdr_iba)
			return Error(err::EPROTO);
		if (p.grh->paylen.get() != c.rest().size() + icrc_bytes)
			return Error(err::EMSGSIZE);
	}
	/* 6. IBA 9.2: transport version 0 and an opcode Weft speaks. */
	p.bth = WEFT_TRY(c.take<const Bth>());
	p.op = &opcode_info(p.bth->opcode.get());
	if (Bth::TVer::get(p.bth->flags) != 0 || !p.op->valid)
		return Error(err::EPROTO);
	/* 7. The extended headers of this opcode. */
	WEFT_TRY(parse_ext(c, p));
	/* 8. IBA 9.2.4: PadCnt pad bytes end the payload; none without payload. */
	const size_t pad = Bth::PadCnt::get(p.bth->flags);
	ConstBytes rest = c.rest();
	if (!p.op->payload && (pad || !rest.empty()))
		return Error(err::EBADMSG);
	if (pad > rest.size())
		return Error(err::EBADMSG);
	p.payload = WEFT_TRY(rest.first(rest.size() - pad));
	p.data = Payload::of(p.payload);
	return p;
}

Result<size_t> packet_length(const PacketSpec &s)
{
	const OpcodeInfo &op = opcode_info(s.opcode);
	const size_t plen = s.payload_size();
	if (!op.valid || (!op.payload && plen))
		return Error(err::EINVAL);
	if (plen > max_packet_bytes)
		return Error(err::EMSGSIZE);
	const size_t headers = sizeof(Lrh) + (s.sgid && s.dgid ? sizeof(Grh) : 0) + sizeof(Bth) +
			       op.ext_bytes();
	const size_t through_icrc = headers + ((plen + 3) & ~size_t(3)) + icrc_bytes;
	if (through_icrc > max_packet_bytes)
		return Error(err::EMSGSIZE);
	return through_icrc + vcrc_bytes;
}

namespace {

/* Writes one header of @s into @c; false if a field is out of range. */
Result<bool> build_lrh(Cursor<uint8_t> &c, const PacketSpec &s, size_t len)
{
	Lrh *l = WEFT_TRY(c.take<Lrh>());
	*l = Lrh{};
	bool ok = Lrh::Vl::set(l->vl_lver, s.vl) && Lrh::Sl::set(l->sl_lnh, s.sl);
	ok &= Lrh::Lnh::set(l->sl_lnh, static_cast<uint8_t>(s.sgid && s.dgid ? iba::Lnh::IbaGlobal
									       : iba::Lnh::IbaLocal));
	ok &= Lrh::PktLen::set(l->pktlen, static_cast<uint16_t>((len - vcrc_bytes) / 4));
	l->dlid.set(s.dlid);
	l->slid.set(s.slid);
	return ok;
}

Result<bool> build_grh(Cursor<uint8_t> &c, const PacketSpec &s, size_t after_grh)
{
	Grh *g = WEFT_TRY(c.take<Grh>());
	*g = Grh{};
	bool ok = Grh::IpVer::set(g->ver_tclass_flow, grh_ipver) &&
		  Grh::TClass::set(g->ver_tclass_flow, s.tclass) &&
		  Grh::FlowLabel::set(g->ver_tclass_flow, s.flow);
	g->paylen.set(static_cast<uint16_t>(after_grh));
	g->nxthdr.set(grh_nxthdr_iba);
	g->hoplmt.set(s.hoplmt);
	__builtin_memcpy(g->sgid, s.sgid, sizeof(g->sgid));
	__builtin_memcpy(g->dgid, s.dgid, sizeof(g->dgid));
	return ok;
}

Result<bool> build_bth(Cursor<uint8_t> &c, const PacketSpec &s, uint8_t pad)
{
	Bth *b = WEFT_TRY(c.take<Bth>());
	*b = Bth{};
	b->opcode.set(s.opcode);
	bool ok = Bth::Se::set(b->flags, s.se) && Bth::PadCnt::set(b->flags, pad);
	b->pkey.set(s.pkey);
	ok &= Bth::DestQp::set(b->dqp, s.dqp) && Bth::Psn::set(b->psn, s.psn);
	ok &= Bth::AckReq::set(b->psn, s.ackreq);
	return ok;
}

Result<bool> build_ext(Cursor<uint8_t> &c, const PacketSpec &s, uint8_t h)
{
	bool ok = true;
	if (h & HDeth) {
		Deth *d = WEFT_TRY(c.take<Deth>());
		*d = Deth{};
		d->qkey.set(s.qkey);
		ok &= Deth::SrcQp::set(d->sqp, s.sqp);
	}
	if (h & HReth) {
		Reth *r = WEFT_TRY(c.take<Reth>());
		r->va.set(s.va);
		r->rkey.set(s.rkey);
		r->dmalen.set(s.dmalen);
	}
	if (h & HAtomicEth) {
		AtomicEth *a = WEFT_TRY(c.take<AtomicEth>());
		a->va.set(s.va);
		a->rkey.set(s.rkey);
		a->swap_add.set(s.swap_add);
		a->compare.set(s.compare);
	}
	if (h & HAeth) {
		Aeth *a = WEFT_TRY(c.take<Aeth>());
		*a = Aeth{};
		ok &= Aeth::Syndrome::set(a->syn_msn, s.syndrome) && Aeth::Msn::set(a->syn_msn, s.msn);
	}
	if (h & HAtomicAckEth)
		WEFT_TRY(c.take<AtomicAckEth>())->orig.set(s.orig);
	if (h & HImmDt)
		WEFT_TRY(c.take<ImmDt>())->imm.set(s.imm);
	if (h & HIeth)
		WEFT_TRY(c.take<Ieth>())->rkey.set(s.inv_rkey);
	return ok;
}

} // namespace

Result<void> Payload::copy(size_t off, Bytes dst, CsumAcc *acc) const
{
	if (off > len || dst.size() > len - off)
		return Error(err::EMSGSIZE);
	if (fill)
		return fill(ctx, base + off, dst, acc);
	if (acc)
		acc->copy(dst.data(), wire.data() + off, dst.size());
	else if (dst.size())
		copy_bytes(dst.data(), wire.data() + off, dst.size());
	return ok();
}

Result<size_t> build(Bytes out, const PacketSpec &s, bool seal_crcs)
{
	const size_t len = WEFT_TRY(packet_length(s));
	if (s.defer_fill && seal_crcs)
		return Error(err::EINVAL); /* CRCs over bytes not yet there */
	if (len > out.size())
		return Error(err::ENOSPC);
	const OpcodeInfo &op = opcode_info(s.opcode);
	const size_t plen = s.payload_size();
	const uint8_t pad = static_cast<uint8_t>((4 - plen % 4) % 4);
	Cursor<uint8_t> c(WEFT_TRY(out.first(len)));

	bool ok = WEFT_TRY(build_lrh(c, s, len));
	if (s.sgid && s.dgid)
		ok &= WEFT_TRY(build_grh(c, s, len - sizeof(Lrh) - sizeof(Grh) - vcrc_bytes));
	ok &= WEFT_TRY(build_bth(c, s, pad));
	ok &= WEFT_TRY(build_ext(c, s, op.headers));
	if (!ok)
		return Error(err::EINVAL);
	/* Payload, zero pad, then the CRCs over all of it. */
	Bytes rest = c.rest();
	if (s.fill && !s.defer_fill)
		WEFT_TRY(s.fill(s.fill_ctx, 0, WEFT_TRY(rest.first(plen)), nullptr));
	else if (plen && !s.fill)
		copy_bytes(rest.data(), s.payload.data(), plen);
	__builtin_memset(rest.data() + plen, 0, rest.size() - plen);
	if (seal_crcs)
		WEFT_TRY(seal(WEFT_TRY(out.first(len))));
	return len;
}

} // namespace weft::hca
