// SPDX-License-Identifier: GPL-2.0
/*
 * The process's WQEs (wqe.h), read out of its rings as the stock rxe
 * provider writes them (providers/rxe init_send_wqe() and
 * post_one_recv() of rdma-core 44, in-tree 6.1 rxe_queue.h and
 * rxe_resp.c for facts), checked as Post Send and Post Receive check a
 * kernel consumer's (IBA 11.4.1.1, 11.4.1.2).
 */
#include "abi_verbs.h"
#include "wqe.h"

namespace weft::uverbs {

namespace {

/* The most inline data a send WQE carries (it lives in the ring slot). */
constexpr uint32_t max_inline = 512;

} // namespace

/*
 * The caps the rings give (in-tree rxe_qp_init_req(): inline room is the
 * SGE room or more).  SGEs are also bounded by what a WQE converts into
 * (verbs::RecvEntry::max_sge, the doorbell's array), whatever a device
 * offers: today's devices offer no more, and convert_send_wqe() relies on it.
 */
Result<UQp::Caps> qp_caps(const abi::CreateQp &req, const verbs::DeviceAttr &a)
{
	constexpr uint32_t wqe_sge = verbs::RecvEntry::max_sge;
	if (req.max_send_wr > a.max_qp_wr || req.max_recv_wr > a.max_qp_wr ||
	    req.max_send_sge > min(a.max_send_sge, wqe_sge) ||
	    req.max_recv_sge > min(a.max_recv_sge, wqe_sge) || req.max_inline_data > max_inline)
		return Error(err::EINVAL);
	UQp::Caps c{};
	c.max_send_sge = req.max_send_sge;
	c.max_recv_sge = req.max_recv_sge;
	c.max_inline = max<uint32_t>(req.max_send_sge * sizeof(rxe::Sge), req.max_inline_data);
	return c;
}

size_t send_slot_size(const UQp::Caps &c)
{
	return sizeof(rxe::SendWqe) + max<uint32_t>(c.max_inline, 16);
}

size_t recv_slot_size(uint32_t max_sge)
{
	return sizeof(rxe::RecvWqe) + max<uint32_t>(max_sge, 1) * sizeof(rxe::Sge);
}

bool take_recv_wqe(const Ring &ring, uint32_t &cons, uint32_t max_sge, verbs::RecvEntry &out)
{
	if (cons == ring.producer())
		return false;
	const uint8_t *slot = ring.slot(cons);
	/* Read once: the process may rewrite the slot while we look. */
	rxe::RecvWqe w;
	__builtin_memcpy(&w, slot, sizeof(w));
	out.wr_id = w.wr_id;
	out.nsge = w.dma.num_sge;
	if (out.nsge > max_sge || out.nsge > verbs::RecvEntry::max_sge) {
		/* Malformed: no buffer at all, so any message is a length error (IBA 9.9.3.1). */
		out.nsge = 0;
	}
	auto *sges = reinterpret_cast<const rxe::Sge *>(slot + sizeof(w));
	for (uint32_t i = 0; i < out.nsge; i++) {
		rxe::Sge s;
		__builtin_memcpy(&s, &sges[i], sizeof(s));
		out.sge[i] = verbs::Sge{s.addr, s.length, s.lkey};
	}
	cons = (cons + 1) & ring.mask;
	ring.hdr().consumer_index.store(cons, Order::Release);
	return true;
}

namespace {

using verbs::WrOpcode;

/* IBV_WR_* (what the process wrote) to the verbs opcode; false if none. */
bool wr_opcode(uint32_t op, WrOpcode &out)
{
	switch (op) {
	case rxe::wr::rdma_write:
		out = WrOpcode::RdmaWrite;
		return true;
	case rxe::wr::rdma_write_imm:
		out = WrOpcode::RdmaWriteWithImm;
		return true;
	case rxe::wr::send:
		out = WrOpcode::Send;
		return true;
	case rxe::wr::send_imm:
		out = WrOpcode::SendWithImm;
		return true;
	case rxe::wr::rdma_read:
		out = WrOpcode::RdmaRead;
		return true;
	case rxe::wr::atomic_cmp_swp:
		out = WrOpcode::AtomicCmpSwap;
		return true;
	case rxe::wr::atomic_fetch_add:
		out = WrOpcode::AtomicFetchAdd;
		return true;
	case rxe::wr::local_inv:
		out = WrOpcode::LocalInv;
		return true;
	case rxe::wr::send_inv:
		out = WrOpcode::SendWithInv;
		return true;
	case rxe::wr::bind_mw:
		out = WrOpcode::BindMw;
		return true;
	default:
		return false;
	}
}

/* ibv_access_flags' relaxed-ordering range: optional, ignored (in-tree IB_ACCESS_OPTIONAL). */
constexpr uint32_t access_optional = 0x3ff00000u;

/* IBV_SEND_FENCE, _SIGNALED, _SOLICITED, _INLINE: the verbs bits are the same. */
constexpr uint32_t user_send_flags = verbs::send_flag::fence | verbs::send_flag::signaled |
				     verbs::send_flag::solicited | verbs::send_flag::inline_data;

} // namespace

bool convert_send_wqe(const rxe::SendWqe &w, const uint8_t *slot, const SendQueue &q,
		      const Objects &objs, verbs::SendWr &wr, verbs::Sge *sge)
{
	const UQp::Caps &caps = q.caps;
	wr.wr_id = w.wr.wr_id;
	if (!wr_opcode(w.wr.opcode, wr.opcode) || (w.wr.send_flags & ~user_send_flags))
		return false;
	wr.send_flags = w.wr.send_flags & ~verbs::send_flag::inline_data;
	wr.imm_data = __builtin_bswap32(w.wr.ex); /* big-endian in the WQE */
	wr.invalidate_rkey = w.wr.ex;
	wr.rdma.remote_addr = w.wr.wr.rdma.remote_addr;
	wr.rdma.rkey = w.wr.wr.rdma.rkey;
	wr.atomic.remote_addr = w.wr.wr.atomic.remote_addr;
	wr.atomic.compare_add = w.wr.wr.atomic.compare_add;
	wr.atomic.swap = w.wr.wr.atomic.swap;
	wr.atomic.rkey = w.wr.wr.atomic.rkey;
	if (wr.opcode == WrOpcode::BindMw) {
		/*
		 * Keys, range and rights go to the HCA as written: it checks
		 * them against its key table when the WQE executes (a bad one
		 * completes with IBV_WC_MW_BIND_ERR, IBA 11.6.2).  No data.
		 */
		const auto &m = w.wr.wr.mw;
		wr.bind.mw_rkey = m.mw_rkey;
		wr.bind.mr_lkey = m.mr_lkey;
		wr.bind.addr = m.addr;
		wr.bind.length = m.length;
		wr.bind.new_rkey = m.rkey;
		wr.bind.access = m.access & ~access_optional;
		return !(w.wr.send_flags & verbs::send_flag::inline_data);
	}
	if (q.type == verbs::QpType::Ud) {
		/* The kernel's AH (librxe uses ah_num whenever CREATE_AH gave one). */
		const uint32_t num = w.wr.wr.ud.ah_num;
		UAh *ah = num ? objs.find<UAh>(num - 1, ObjType::Ah) : nullptr;
		if (!ah || &ah->ah->pd != &q.pd)
			return false;
		wr.ud.ah = ah->ah;
		wr.ud.remote_qpn = w.wr.wr.ud.remote_qpn;
		wr.ud.remote_qkey = w.wr.wr.ud.remote_qkey;
		wr.ud.pkey_index = w.wr.wr.ud.pkey_index;
	}
	const uint8_t *data = slot + sizeof(rxe::SendWqe);
	if (w.wr.send_flags & verbs::send_flag::inline_data) {
		/* Inline data stays in the ring slot until the WQE retires: gathered from there. */
		if (w.dma.length > caps.max_inline)
			return false;
		if (w.dma.length) {
			sge[0] = verbs::Sge{reinterpret_cast<uintptr_t>(data), w.dma.length, q.inline_lkey};
			wr.sg = Span<const verbs::Sge>(sge, 1);
		}
		return true;
	}
	if (w.dma.num_sge > caps.max_send_sge)
		return false;
	for (uint32_t i = 0; i < w.dma.num_sge; i++) {
		rxe::Sge s;
		__builtin_memcpy(&s, data + i * sizeof(s), sizeof(s));
		sge[i] = verbs::Sge{s.addr, s.length, s.lkey};
	}
	wr.sg = Span<const verbs::Sge>(sge, w.dma.num_sge);
	return true;
}

} // namespace weft::uverbs
