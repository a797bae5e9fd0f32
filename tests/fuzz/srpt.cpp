// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the SRP target's judgement of what an initiator sends
 * (ulp/srp/target/parse.cpp).  The first byte picks what the rest is:
 *  - 0 mod 3: the private data of a CM REQ, for parse::login(); a verdict
 *    of 0 must mean a well-formed login for this target port, any other
 *    must be an SRP_LOGIN_REJ reason of SRP 5.2.3 table 11;
 *  - 1 mod 3: a received IU, for parse::cmd(); an accepted one must have
 *    its descriptors inside the IU, their sum as total, and the direction
 *    its format nibbles say;
 *  - 2 mod 3: the next byte is a response buffer's size, the rest sense
 *    data for parse::rsp(), which must stay inside the buffer.
 * The input is the fuzzer's exact-size buffer, so a read past it is an
 * AddressSanitizer report.
 */
#include "fuzz.h"

#include <weft/alloc.h>

#include "../../ulp/srp/target/parse.h"
#include "../../ulp/srp/target/srpt_kapi.h"

using namespace weft;
using namespace weft::srp::wire;
namespace parse = weft::srpt::parse;
using fuzz::check;

namespace {

/* The seeds' target (seeds.cpp): ID_EXT = IOC GUID = this. */
constexpr uint64_t target_id = 0x0200574654000004ull;
constexpr uint32_t max_req = 8192;

void login(ConstBytes in)
{
	LoginReq out;
	const uint32_t why = parse::login(in, target_id, max_req, out);
	if (!why) {
		check(in.size() >= sizeof(out) && out.opcode == op::login_req, "accepted a login IU");
		be64 id[2];
		__builtin_memcpy(id, out.target_port_id, sizeof(id));
		check(id[0].get() == target_id && id[1].get() == target_id, "accepted this port only");
		const uint32_t it = out.req_it_iu_len.get();
		check(it >= 64 && it <= max_req, "accepted IU length in range");
		check(out.req_buf_fmt.get() & (buf_fmt::direct | buf_fmt::indirect), "a format offered");
		check((out.req_flags & 3) <= multichan::multi, "no reserved action");
		return;
	}
	check(why == rej::unable_establish || why == rej::unable_associate ||
		      why == rej::it_iu_too_large || why == rej::unsupported_fmt,
	      "a reason of SRP table 11");
}

void cmd(ConstBytes in)
{
	static DirectBuf desc[parse::max_desc];
	auto r = parse::cmd(in.data(), static_cast<uint32_t>(in.size()), desc);
	if (!r)
		return;
	check(in.size() >= sizeof(Cmd), "a whole SRP_CMD");
	const uint8_t fmt = in.data()[5];
	check(!((fmt >> 4) && (fmt & 0xf)), "one direction");
	const int want = fmt >> 4 ? WEFT_SRPT_DIR_TO_TARGET
			 : fmt & 0xf ? WEFT_SRPT_DIR_FROM_TARGET
				     : WEFT_SRPT_DIR_NONE;
	check(r->dir == want, "the direction of the format");
	check(r->ndesc <= parse::max_desc, "at most 255 descriptors");
	const size_t need = r->ndesc == 0 ? sizeof(Cmd)
			    : r->ndesc == 1 && ((fmt >> 4) | (fmt & 0xf)) == desc::direct
				    ? sizeof(Cmd) + sizeof(DirectBuf)
				    : sizeof(Cmd) + sizeof(IndirectHdr) + r->ndesc * sizeof(DirectBuf);
	check(in.size() >= need, "descriptors inside the IU");
	uint64_t sum = 0;
	for (uint32_t i = 0; i < r->ndesc; i++)
		sum += desc[i].len.get();
	check(sum == r->total, "total is the descriptors' sum");
}

void rsp(ConstBytes in)
{
	if (in.size() < 1)
		return;
	const uint32_t cap = sizeof(Rsp) + sizeof(TmRspData) + in.data()[0];
	auto a = Array<uint8_t>::make(Gfp::Sleep, cap);
	if (!a)
		return;
	uint8_t *buf = a->data();
	parse::RspStatus st{};
	st.status = 0x02;
	st.sense = in.data() + 1;
	st.sense_len = static_cast<uint32_t>(in.size() - 1);
	st.under = in.size() & 1;
	st.data_in = in.size() & 2;
	const uint32_t len = parse::rsp(buf, cap, 7, 1, &st, in.size() & 4, rsp_code::invalid_iu);
	check(len >= sizeof(Rsp) && len <= cap, "the response inside its buffer");
}

} // namespace

WEFT_FUZZ_TARGET(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	const ConstBytes in(data + 1, size - 1);
	switch (data[0] % 3) {
	case 0:
		login(in);
		break;
	case 1:
		cmd(in);
		break;
	default:
		rsp(in);
		break;
	}
	return 0;
}
