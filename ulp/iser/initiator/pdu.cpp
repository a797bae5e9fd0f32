// SPDX-License-Identifier: GPL-2.0
/*
 * iSER header build and parse (RFC 7145 9.1-9.4) and the iSER CM private
 * data (IBTA Annex A12), as Linux 6.1 uses them on InfiniBand.
 */
#include "pdu.h"

namespace weft::iser::pdu {

using namespace wire;

void build_header(Header &h, const Stags &s)
{
	h = {};
	uint8_t f = opcode::iscsi_ctrl << 4;
	if (s.wsv) {
		f |= flag::wsv;
		h.write_stag.set(s.write_stag);
		h.write_va.set(s.write_va);
	}
	if (s.rsv) {
		f |= flag::rsv;
		h.read_stag.set(s.read_stag);
		h.read_va.set(s.read_va);
	}
	h.flags.set(f);
}

void build_hello(Hello &h, uint8_t max_ver, uint8_t min_ver, uint16_t ird)
{
	h = {};
	h.flags.set(opcode::hello << 4);
	h.version.set(static_cast<uint8_t>((max_ver & 0xf) << 4 | (min_ver & 0xf)));
	h.ird.set(ird);
}

void build_hello_reply(HelloReply &h, bool rej, uint8_t max_ver, uint8_t cur_ver, uint16_t ord)
{
	h = {};
	h.flags.set(static_cast<uint8_t>(opcode::hello_reply << 4 | (rej ? 1 : 0)));
	h.version.set(static_cast<uint8_t>((max_ver & 0xf) << 4 | (cur_ver & 0xf)));
	h.ord.set(ord);
}

namespace {

/* Both are 12 bytes: opcode nibble, version byte, a 16-bit IRD/ORD (RFC 7145 9.3, 9.4). */
Result<HelloInfo> parse_hello_like(ConstBytes b, uint8_t op)
{
	if (b.size() < sizeof(Hello))
		return Error(err::EPROTO);
	Hello h;
	__builtin_memcpy(&h, b.data(), sizeof(h));
	if (h.flags.bits<4, 4>() != op)
		return Error(err::EPROTO);
	HelloInfo i;
	i.max_ver = h.version.bits<4, 4>();
	i.other_ver = h.version.bits<0, 4>();
	i.ird_ord = h.ird.get();
	i.rej = op == opcode::hello_reply && (h.flags.get() & 1);
	return i;
}

} // namespace

Result<HelloInfo> parse_hello(ConstBytes b) { return parse_hello_like(b, opcode::hello); }
Result<HelloInfo> parse_hello_reply(ConstBytes b) { return parse_hello_like(b, opcode::hello_reply); }

/* RFC 7145 9.1: iSER header, BHS, data segment padded to 4 (RFC 7143 11.1.1). */
Result<Rx> parse_rx(ConstBytes buf, uint32_t byte_len)
{
	if (byte_len < hdrs_len || byte_len > buf.size())
		return Error(err::EMSGSIZE);
	const auto *h = reinterpret_cast<const Header *>(buf.data());
	if (h->op() != opcode::iscsi_ctrl)
		return Error(err::EPROTO);
	const auto *bhs = reinterpret_cast<const Bhs *>(buf.data() + sizeof(Header));
	const uint32_t d = bhs->dlength(), r = byte_len - static_cast<uint32_t>(hdrs_len);
	if (d > r || uint64_t(d) + 4 < r)
		return Error(err::EBADMSG);
	return Rx{bhs, buf.data() + hdrs_len, d};
}

void build_cm_req(CmHeader &h, bool accept_remote_inv)
{
	h = {};
	h.flags.set(static_cast<uint8_t>(cm_flag::zbva_not_sup |
					 (accept_remote_inv ? 0 : cm_flag::send_w_inv_not_sup)));
}

bool rep_uses_remote_inv(ConstBytes private_data)
{
	return private_data.size() >= 1 && !(private_data.data()[0] & cm_flag::send_w_inv_not_sup);
}

} // namespace weft::iser::pdu
