/* SPDX-License-Identifier: GPL-2.0 */
/*
 * IBA packets on the soft fabric: parse a wire buffer into a validated view
 * of its headers (IBA 7.7, 8.3, 9.2-9.3), and build a packet from a
 * description.  Parsing trusts nothing: every length and version is checked
 * against the buffer, so a malformed packet is an errno (for the caller to
 * count and drop), never a read past the end.
 * parse() checks structure only; the CRCs are checked by check_crcs()
 * (crc.h), which build() fills in.
 */
#ifndef WEFT_HCA_PACKET_H
#define WEFT_HCA_PACKET_H

#include <weft/iba/opcode.h>
#include <weft/span.h>

namespace weft::hca {

class CsumAcc;

/*
 * Copies payload bytes [off, off + dst.size()) of a packet out of where
 * they are kept (the sender's registered memory) into @dst; with @acc (a
 * receiver taking the message's checksum, csum.h) through acc->copy().
 */
using FillFn = Result<void> (*)(void *ctx, size_t off, Bytes dst, CsumAcc *acc);

/*
 * A payload as its receiver reads it: bytes in the packet, or, on the
 * in-host fast path, a reference to the sender's memory that @fill copies
 * from on demand, so that data moves from the sender's buffer to the
 * receiver's in one copy.
 */
struct Payload {
	ConstBytes wire;
	FillFn fill = nullptr;
	void *ctx = nullptr;
	size_t len = 0;
	size_t base = 0; /* where this payload starts in what @fill reads */

	static Payload of(ConstBytes b) { return Payload{b, nullptr, nullptr, b.size(), 0}; }
	size_t size() const { return len; }
	/* Bytes [off, off + n) of this payload (the caller keeps them inside). */
	Payload slice(size_t off, size_t n) const
	{
		Payload p = *this;
		if (!fill)
			p.wire = ConstBytes(wire.data() + off, n);
		p.base = base + off;
		p.len = n;
		return p;
	}
	/*
	 * EMSGSIZE beyond the payload; the fill's error (the sender's memory
	 * went away).  With @acc, the bytes are summed as they are copied.
	 */
	Result<void> copy(size_t off, Bytes dst, CsumAcc *acc = nullptr) const;
};

/* A parsed packet: pointers into the wire buffer it was parsed from. */
struct Packet {
	const iba::Lrh *lrh = nullptr;
	const iba::Grh *grh = nullptr; /* only with LNH = IBA global */
	const iba::Bth *bth = nullptr;
	const iba::Deth *deth = nullptr;
	const iba::Reth *reth = nullptr;
	const iba::AtomicEth *atomic_eth = nullptr;
	const iba::Aeth *aeth = nullptr;
	const iba::AtomicAckEth *atomic_ack_eth = nullptr;
	const iba::ImmDt *immdt = nullptr;
	const iba::Ieth *ieth = nullptr;
	const iba::OpcodeInfo *op = nullptr;
	ConstBytes payload; /* without the pad bytes (an empty view when by reference) */
	Payload data;	    /* how the receiver reads the payload */
	/*
	 * A burst (in-host, by reference, PacketBuf::burst): these headers
	 * stand for @burst consecutive packets of one message, PSN up, all
	 * in @data, @each payload bytes but the last (which has the rest).
	 * The first has the BTH's opcode, those after it @mid_op, the last
	 * @last_op (a SEND's FIRST, MIDDLEs and LAST travel as one); AckReq
	 * and SE belong to the last.
	 */
	uint32_t burst = 1;
	uint32_t skipped = 0; /* packets of the burst dropped from its front */
	uint32_t each = 0;
	uint8_t mid_op = 0, last_op = 0;
	uint32_t psn() const { return (iba::Bth::Psn::get(bth->psn) + skipped) & 0xffffff; }
	uint32_t last_psn() const { return (psn() + burst - 1) & 0xffffff; }
	/* The opcode of the first packet still here, and of the last. */
	uint8_t first_opcode() const
	{
		return !skipped ? bth->opcode.get() : burst == 1 ? last_op : mid_op;
	}
	uint8_t last_opcode() const
	{
		return burst == 1 && !skipped ? bth->opcode.get() : last_op;
	}
	/* Drop the first @k (< burst) packets of a burst: a receiver has them already. */
	void skip(uint32_t k)
	{
		data = data.slice(k * each, data.size() - k * each);
		burst -= k;
		skipped += k;
	}
	ConstBytes icrc;
	ConstBytes vcrc;
};

/*
 * Errors: EMSGSIZE (truncated, or lengths that disagree with the buffer),
 * EPROTO (unsupported LVer/LNH/IPVer/NxtHdr/TVer or an opcode Weft does not
 * speak), EBADMSG (payload or pad where the opcode allows none).
 */
Result<Packet> parse(ConstBytes wire);

/* What build() puts on the wire. */
struct PacketSpec {
	/* LRH */
	uint8_t vl = 0, sl = 0;
	uint16_t dlid = 0, slid = 0;
	/* GRH, when sgid and dgid are set */
	const uint8_t *sgid = nullptr, *dgid = nullptr;
	uint8_t tclass = 0, hoplmt = 0;
	uint32_t flow = 0;
	/* BTH */
	uint8_t opcode = 0;
	bool se = false, ackreq = false;
	uint16_t pkey = 0xffff;
	uint32_t dqp = 0, psn = 0;
	/* extended headers, used as the opcode requires */
	uint32_t qkey = 0, sqp = 0;
	uint64_t va = 0;
	uint32_t rkey = 0, dmalen = 0;
	uint64_t swap_add = 0, compare = 0;
	uint8_t syndrome = 0;
	uint32_t msn = 0;
	uint64_t orig = 0;
	uint32_t imm = 0, inv_rkey = 0;
	ConstBytes payload;
	/*
	 * Or: @fill writes @fill_len payload bytes straight into the packet
	 * (a gather from registered memory without a bounce buffer); its
	 * error fails the build.  With @defer_fill, build() leaves the
	 * payload bytes unwritten for the caller to send by reference.
	 */
	FillFn fill = nullptr;
	bool defer_fill = false;
	/*
	 * Packets a by-reference packet stands for (Packet::burst): fill_len
	 * is each one's but the last's, @burst_len all of them together (0:
	 * fill_len each); the opcodes of those after the first (mid_op) and
	 * of the last (last_op).
	 */
	uint32_t burst = 1;
	size_t burst_len = 0;
	uint8_t mid_op = 0, last_op = 0;
	void *fill_ctx = nullptr;
	size_t fill_len = 0;

	size_t payload_size() const { return fill ? fill_len : payload.size(); }
};

/* Wire length of the packet @s describes, VCRC included. */
Result<size_t> packet_length(const PacketSpec &s);

/*
 * Build into @out; returns the wire length.  EINVAL for a field out of
 * range or an opcode that cannot carry what @s has, ENOSPC if @out is too
 * small, EMSGSIZE beyond the largest packet LRH.PktLen can describe.
 * Without @seal_crcs the ICRC/VCRC bytes are left zero: the in-host fast
 * path, where nobody observes the wire until PacketBuf::seal().
 */
Result<size_t> build(Bytes out, const PacketSpec &s, bool seal_crcs = true);

} // namespace weft::hca

#endif
