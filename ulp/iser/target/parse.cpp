// SPDX-License-Identifier: GPL-2.0
/* The target's receive checks (parse.h). */
#include "parse.h"

namespace weft::isert::parse {

using namespace iser::wire;

namespace {
/* The declared data must lie in what arrived: in-tree checks the same (DataSegmentLength is the sender's). */
Verdict headers(const uint8_t *p, uint32_t byte_len, Pdu &out)
{
	if (byte_len < hdrs_len)
		return Verdict::Short;
	const auto *bhs = reinterpret_cast<const Bhs *>(p + sizeof(Header));
	if (bhs->dlength() > byte_len - hdrs_len)
		return Verdict::Short;
	out = Pdu{};
	out.bhs = bhs;
	out.data = p + hdrs_len;
	out.dlen = bhs->dlength();
	return Verdict::Ok;
}
} // namespace

Verdict pdu(const uint8_t *p, uint32_t byte_len, Pdu &out)
{
	const Verdict v = headers(p, byte_len, out);
	if (v != Verdict::Ok)
		return v;
	const auto *h = reinterpret_cast<const Header *>(p);
	/* RFC 7145 5.1.3: Hello/HelloReply are never negotiated on InfiniBand. */
	if (h->op() != opcode::iscsi_ctrl)
		return Verdict::NotControl;
	if (h->rsv()) {
		out.read_stag = h->read_stag.get();
		out.read_va = h->read_va.get();
	}
	if (h->wsv()) {
		out.write_stag = h->write_stag.get();
		out.write_va = h->write_va.get();
	}
	return Verdict::Ok;
}

Verdict login(const uint8_t *p, uint32_t byte_len, Pdu &out)
{
	const Verdict v = headers(p, byte_len, out);
	if (v != Verdict::Ok)
		return v;
	if (reinterpret_cast<const Header *>(p)->op() != opcode::iscsi_ctrl)
		return Verdict::NotControl;
	return out.bhs->op() == iscsi_op::login ? Verdict::Ok : Verdict::NotLogin;
}

CmHeader rep_header(bool send_w_inv)
{
	CmHeader h{};
	h.flags.set(static_cast<uint8_t>(cm_flag::zbva_not_sup | (send_w_inv ? 0 : cm_flag::send_w_inv_not_sup)));
	return h;
}

bool req_accepts_inv(ConstBytes private_data)
{
	return private_data.size() >= 1 && !(private_data.data()[0] & cm_flag::send_w_inv_not_sup);
}

} // namespace weft::isert::parse
