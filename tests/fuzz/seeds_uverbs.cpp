// SPDX-License-Identifier: GPL-2.0
/*
 * Seeds of the uverbs targets (seeds.cpp calls uverbs_seeds()):
 *   uverbs_frame: every command Weft answers as libibverbs frames it
 *     (legacy: request, response and rxe's driver data in words of 4;
 *     extended: the second header, words of 8), the response pointed at
 *     a buffer of exactly the words claimed;
 *   uverbs_wqe: an RC and a UD QP as librxe fills their rings: sends
 *     with SGEs, inline data, RDMA, atomics and a bind, receives, a UD
 *     send through an AH's handle, the doorbell and the receive side.
 */
#include "seeds.h"

#include "../../userspace/uverbs/abi_rxe.h"
#include "../../userspace/uverbs/abi_verbs.h"

using namespace weft;
using namespace weft::uverbs;
using fuzz::Out;

namespace {

/* An operation byte and its argument, as one record. */
void op(Out &o, uint8_t code, const void *arg, size_t len)
{
	uint8_t rec[1024];
	rec[0] = code;
	__builtin_memcpy(rec + 1, arg, len);
	o.record(rec, len + 1);
}

void put(const char *target, const char *name, const Out &o)
{
	fuzz::put(target, name, o.buf, o.n);
}

/* One framed command (flags 2: the response pointed at a buffer of the words claimed). */
struct Cmd {
	uint32_t command;
	size_t req, resp, drv_in, drv_out;
};

void frame(Out &o, const Cmd &c)
{
	uint8_t rec[3 + 512] = {2, uint8_t(c.req / 2), uint8_t(c.resp / 2)};
	uint8_t *w = rec + 3;
	size_t len;
	abi::CmdHdr h{c.command, 0, 0};
	if (c.command & abi::cmd_flag_extended) {
		abi::ExCmdHdr ex{0, uint16_t(c.drv_in / 8), uint16_t(c.drv_out / 8), 0};
		h.in_words = uint16_t(c.req / 8);
		h.out_words = uint16_t(c.resp / 8);
		__builtin_memcpy(w + sizeof(h), &ex, sizeof(ex));
		len = sizeof(h) + sizeof(ex) + c.req + c.drv_in;
	} else {
		len = sizeof(h) + c.req + c.drv_in;
		h.in_words = uint16_t(len / 4);
		h.out_words = uint16_t((c.resp + c.drv_out) / 4);
	}
	__builtin_memcpy(w, &h, sizeof(h));
	o.record(rec, 3 + len);
}

void frame_seeds()
{
	using namespace abi;
	constexpr uint32_t ex = cmd_flag_extended;
	const Cmd cmds[] = {
		{cmd::get_context, sizeof(GetContext), sizeof(GetContextResp), 0, 0},
		{cmd::query_device, sizeof(QueryDevice), sizeof(QueryDeviceResp), 0, 0},
		{cmd::query_port, sizeof(QueryPort), sizeof(QueryPortResp), 0, 0},
		{cmd::alloc_pd, sizeof(AllocPd), sizeof(AllocPdResp) + 4, 0, 0},
		{cmd::reg_mr, sizeof(RegMr), sizeof(RegMrResp), 0, 4},
		{cmd::create_cq, sizeof(CreateCq), sizeof(CreateCqResp), 0, sizeof(rxe::CreateCqResp)},
		{cmd::resize_cq, sizeof(ResizeCq), sizeof(ResizeCqResp), 0, sizeof(rxe::ResizeCqResp)},
		{cmd::create_qp, sizeof(CreateQp), sizeof(CreateQpResp), 0, sizeof(rxe::CreateQpResp)},
		{cmd::modify_qp, sizeof(ModifyQp), 0, 0, 0},
		{cmd::post_send, sizeof(PostSend), sizeof(PostSendResp), 0, 0},
		{cmd::destroy_qp, sizeof(DestroyQp), sizeof(DestroyQpResp), 0, 0},
		{cmd::create_ah, sizeof(CreateAh), sizeof(CreateAhResp), 0, sizeof(rxe::CreateAhResp)},
		{cmd::create_srq, sizeof(CreateSrq), sizeof(CreateSrqResp), 0, sizeof(rxe::CreateSrqResp)},
		{cmd::modify_srq, sizeof(ModifySrq), 0, sizeof(rxe::ModifySrqCmd), 0},
		{ex | cmd::query_device, sizeof(ExQueryDevice), sizeof(ExQueryDeviceResp), 0, 0},
		{ex | cmd::create_cq, sizeof(ExCreateCq), sizeof(ExCreateCqResp), 0, sizeof(rxe::CreateCqResp)},
		{ex | cmd::create_qp, sizeof(ExCreateQp), sizeof(ExCreateQpResp), 0, sizeof(rxe::CreateQpResp)},
	};
	Out all;
	for (const Cmd &c : cmds) {
		Out one;
		frame(one, c);
		/* "cmd-NN", or "cmd-ex-NN" for an extended one. */
		const uint32_t num = c.command & 0xff;
		char name[] = "cmd-ex-00";
		char *d = name + (c.command & ex ? 7 : 4);
		d[0] = char('0' + num / 10);
		d[1] = char('0' + num % 10);
		d[2] = 0;
		put("uverbs_frame", name, one);
		frame(all, c);
	}
	put("uverbs_frame", "session", all);
}

/* uverbs_wqe operations (uverbs_wqe.cpp). */
enum : uint8_t { post_send = 0, ring_doorbell = 1, post_recv = 2, take_recv = 3, add_obj = 5 };

void send_wqe(Out &o, uint32_t opcode, uint32_t flags, uint32_t nsge, uint32_t inline_len, uint32_t ah_num)
{
	uint8_t arg[1 + 512] = {0};
	rxe::SendWqe w{};
	w.wr.wr_id = 0x100 + opcode;
	w.wr.opcode = opcode;
	w.wr.send_flags = flags;
	w.wr.wr.ud.ah_num = ah_num;
	w.dma.num_sge = nsge;
	w.dma.length = inline_len;
	__builtin_memcpy(arg + 1, &w, sizeof(w));
	size_t n = sizeof(w);
	for (uint32_t i = 0; i < nsge; i++, n += sizeof(rxe::Sge)) {
		const rxe::Sge s{0x7f0000001000ull + i * 0x1000, 64, 0x300 + i};
		__builtin_memcpy(arg + 1 + n, &s, sizeof(s));
	}
	n += inline_len;
	op(o, post_send, arg, 1 + n);
}

void recv_wqe(Out &o, uint32_t nsge)
{
	uint8_t arg[1 + 256] = {0};
	rxe::RecvWqe w{};
	w.wr_id = 0x200 + nsge;
	w.dma.num_sge = nsge;
	__builtin_memcpy(arg + 1, &w, sizeof(w));
	for (uint32_t i = 0; i < nsge; i++) {
		const rxe::Sge s{0x7f0000100000ull + i * 0x1000, 4096, 0x400 + i};
		__builtin_memcpy(arg + 1 + sizeof(w) + i * sizeof(s), &s, sizeof(s));
	}
	op(o, post_recv, arg, 1 + sizeof(w) + nsge * sizeof(rxe::Sge));
}

void qp(Out &o, uint8_t type)
{
	abi::CreateQp req{};
	req.max_send_wr = 8;
	req.max_recv_wr = 8;
	req.max_send_sge = 2;
	req.max_recv_sge = 2;
	req.max_inline_data = 64;
	req.qp_type = type;
	o.record(&req, sizeof(req));
}

void wqe_seeds()
{
	constexpr uint32_t signaled = 2, inline_data = 8;
	const uint8_t none = 0;
	{
		Out o;
		qp(o, 2); /* IBV_QPT_RC */
		send_wqe(o, rxe::wr::send, signaled, 2, 0, 0);
		send_wqe(o, rxe::wr::send, signaled | inline_data, 0, 48, 0);
		send_wqe(o, rxe::wr::rdma_write_imm, 0, 1, 0, 0);
		send_wqe(o, rxe::wr::atomic_fetch_add, signaled, 1, 0, 0);
		send_wqe(o, rxe::wr::bind_mw, signaled, 0, 0, 0);
		send_wqe(o, rxe::wr::send, 0, 3, 0, 0); /* one SGE too many: malformed */
		op(o, ring_doorbell, &none, 0);
		recv_wqe(o, 2);
		recv_wqe(o, 1);
		recv_wqe(o, 3); /* more than the caps: taken with none */
		const uint8_t n = 4;
		op(o, take_recv, &n, 1);
		put("uverbs_wqe", "rc", o);
	}
	{
		Out o;
		qp(o, 4); /* IBV_QPT_UD */
		const uint8_t mine = 0, other = 1;
		op(o, add_obj, &mine, 1);
		op(o, add_obj, &other, 1);
		send_wqe(o, rxe::wr::send, signaled, 1, 0, 1);
		send_wqe(o, rxe::wr::send_imm, signaled | inline_data, 0, 16, 1);
		send_wqe(o, rxe::wr::send, signaled, 1, 0, 2); /* an AH of another PD */
		op(o, ring_doorbell, &none, 0);
		put("uverbs_wqe", "ud", o);
	}
}

} // namespace

void uverbs_seeds()
{
	frame_seeds();
	wqe_seeds();
}
