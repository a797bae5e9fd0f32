// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: a received packet as the soft HCA and the switch take it
 * (drivers/hca/hca.cpp Hca::receive, switch_smi.cpp port0_parse): parse
 * the headers (IBA 7.7, 8.3, 9.2-9.3), check the CRCs (IBA 7.8) before or
 * after parsing, and read the payload out as a receiver does.
 */
#include "fuzz.h"

#include "../../drivers/hca/crc.h"
#include "../../drivers/hca/packet.h"

using namespace weft;
using namespace weft::hca;
using iba::icrc_bytes, iba::vcrc_bytes;

WEFT_FUZZ_TARGET(const uint8_t *data, size_t size)
{
	const ConstBytes wire(data, size);
	/* The switch's port 0 checks the CRCs of a packet nobody parsed yet. */
	(void)check_crcs(wire);
	(void)check_vcrc(wire);
	auto parsed = parse(wire);
	if (!parsed)
		return 0;
	const Packet &p = parsed.value();
	/* What parse() promises: every header it returns lies inside the buffer. */
	fuzz::inside(wire, p.lrh);
	fuzz::inside(wire, p.bth);
	fuzz::inside(wire, p.grh);
	fuzz::inside(wire, p.deth);
	fuzz::inside(wire, p.reth);
	fuzz::inside(wire, p.atomic_eth);
	fuzz::inside(wire, p.aeth);
	fuzz::inside(wire, p.atomic_ack_eth);
	fuzz::inside(wire, p.immdt);
	fuzz::inside(wire, p.ieth);
	fuzz::check(p.payload.size() == p.data.size(), "payload view and size agree");
	fuzz::check(p.icrc.size() == icrc_bytes && p.vcrc.size() == vcrc_bytes, "CRC views");
	/* A receiver copies the payload out in pieces (responder.cpp, ud.cpp). */
	uint8_t buf[256];
	for (size_t off = 0; off < p.data.size(); off += sizeof(buf)) {
		size_t n = p.data.size() - off < sizeof(buf) ? p.data.size() - off : sizeof(buf);
		fuzz::check(p.data.copy(off, Bytes(buf, n)).ok(), "in-bounds payload copy");
	}
	fuzz::check(!p.data.copy(p.data.size(), Bytes(buf, 1)).ok(), "copy past the end refused");
	(void)p.psn();
	(void)p.last_psn();
	return 0;
}
