// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the iSER initiator's reading of what a target sends
 * (ulp/iser/initiator/pdu.cpp).  Records; the first byte of each picks
 * what the rest is:
 *  - 0, 1 mod 4: a received SEND: two bytes of byte_len (the HCA's word,
 *    believed only up to the buffer), then the buffer's contents, in a
 *    buffer of exactly the posted size: 204 bytes (full feature) or
 *    76 + 32768 (login); an accepted PDU must lie inside byte_len, its
 *    data right after the 76 bytes of headers, its DataSegmentLength in
 *    the window [r - 4, r] for r = byte_len - 76;
 *  - 2 mod 4: Hello and HelloReply (RFC 7145 9.3, 9.4) of any length;
 *  - 3 mod 4: a CM REP's private data of any length (IBTA Annex A12).
 * Every buffer is allocated at its exact size, so a read past it is an
 * AddressSanitizer report.
 */
#include "fuzz.h"

#include <weft/alloc.h>

#include "../../ulp/iser/initiator/pdu.h"

using namespace weft;
using namespace weft::iser;
using fuzz::check;

namespace {

constexpr size_t ffp_cap = wire::hdrs_len + 128, login_cap = wire::hdrs_len + 32768;

void rx(ConstBytes in, size_t cap)
{
	if (in.size() < 2)
		return;
	const uint32_t byte_len = uint32_t(in.data()[0]) << 8 | in.data()[1];
	uint8_t *buf = new (Gfp::Sleep) uint8_t[cap];
	if (!buf)
		return;
	const size_t n = min(in.size() - 2, cap);
	__builtin_memcpy(buf, in.data() + 2, n);
	__builtin_memset(buf + n, 0, cap - n);
	auto r = pdu::parse_rx(ConstBytes(buf, cap), byte_len);
	if (r) {
		check(byte_len >= wire::hdrs_len && byte_len <= cap, "accepted length inside the buffer");
		check(reinterpret_cast<const uint8_t *>(r->bhs) == buf + sizeof(wire::Header), "BHS after the iSER header");
		check(r->data == buf + wire::hdrs_len, "data after the headers");
		const uint32_t room = byte_len - uint32_t(wire::hdrs_len);
		check(r->dlength <= room && r->dlength + 4 >= room, "DataSegmentLength in the window");
		check(r->dlength == r->bhs->dlength(), "the BHS's own length");
		volatile uint8_t sum = 0;
		for (uint32_t i = 0; i < r->dlength; i++)
			sum = uint8_t(sum + r->data[i]);
		(void)sum;
	} else {
		const int e = r.error().code();
		check(e == err::EMSGSIZE || e == err::EPROTO || e == err::EBADMSG, "a documented errno");
	}
	delete[] buf;
}

void hello(ConstBytes in)
{
	uint8_t *buf = new (Gfp::Sleep) uint8_t[in.size() ? in.size() : 1];
	if (!buf)
		return;
	__builtin_memcpy(buf, in.data(), in.size());
	ConstBytes b(buf, in.size());
	auto h = pdu::parse_hello(b);
	auto r = pdu::parse_hello_reply(b);
	check(!(h && r), "one opcode");
	if (h) {
		check(b.size() >= sizeof(wire::Hello) && (buf[0] >> 4) == wire::opcode::hello, "a Hello");
		check(h->max_ver < 16 && h->other_ver < 16 && !h->rej, "Hello fields");
	}
	if (r) {
		check(b.size() >= sizeof(wire::HelloReply) && (buf[0] >> 4) == wire::opcode::hello_reply,
		      "a HelloReply");
		check(r->rej == bool(buf[0] & 1), "Rej bit");
	}
	delete[] buf;
}

void cm(ConstBytes in)
{
	uint8_t *buf = new (Gfp::Sleep) uint8_t[in.size() ? in.size() : 1];
	if (!buf)
		return;
	__builtin_memcpy(buf, in.data(), in.size());
	const bool inv = pdu::rep_uses_remote_inv(ConstBytes(buf, in.size()));
	check(!inv || (in.size() && !(buf[0] & wire::cm_flag::send_w_inv_not_sup)), "remote invalidation only when offered");
	delete[] buf;
}

} // namespace

WEFT_FUZZ_TARGET(const uint8_t *data, size_t size)
{
	fuzz::Records recs(data, size);
	ConstBytes rec;
	while (recs.next(rec, 2 + login_cap + 1)) {
		if (!rec.size())
			continue;
		ConstBytes rest(rec.data() + 1, rec.size() - 1);
		switch (rec.data()[0] % 4) {
		case 0: rx(rest, ffp_cap); break;
		case 1: rx(rest, login_cap); break;
		case 2: hello(rest); break;
		default: cm(rest); break;
		}
	}
	return 0;
}
