// SPDX-License-Identifier: GPL-2.0
/*
 * The send side of a user QP (objects.h UQp::doorbell): the WQEs the
 * process produced in its SQ ring, as the stock rxe provider writes them
 * (providers/rxe init_send_wqe() of rdma-core 44), become verbs send work
 * requests (IBA 11.4.1.1 Post Send Request), checked as Post Send checks a
 * kernel consumer's.  A WQE that does not make sense keeps its place and
 * completes in error (WrOpcode::Malformed), so that the process's ring and
 * its completions stay in step.
 */
#include "objects.h"

namespace weft::uverbs {

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

bool UQp::convert(const rxe::SendWqe &w, const uint8_t *slot, verbs::SendWr &wr,
		  verbs::Sge *sge, const Objects &objs)
{
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
	if (qp->type == verbs::QpType::Ud) {
		/* The kernel's AH (librxe uses ah_num whenever CREATE_AH gave one). */
		const uint32_t num = w.wr.wr.ud.ah_num;
		UAh *ah = num ? objs.find<UAh>(num - 1, ObjType::Ah) : nullptr;
		if (!ah || &ah->ah->pd != &qp->pd)
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
			sge[0] = verbs::Sge{reinterpret_cast<uintptr_t>(data), w.dma.length, inline_mr->lkey};
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

/* A WQE that cannot run: it completes in error in its place (IBA 11.6.2). */
static verbs::SendWr malformed(uint64_t wr_id)
{
	verbs::SendWr wr;
	wr.wr_id = wr_id;
	wr.opcode = WrOpcode::Malformed;
	wr.send_flags = verbs::send_flag::signaled;
	return wr;
}

Result<void> UQp::doorbell(const Objects &objs)
{
	/*
	 * IBA 10.3.1, 11.4.1.1: a QP sends from RTS (and flushes from Error);
	 * before that the WQEs wait in the ring and the doorbell is EINVAL,
	 * as in-tree rxe answers it.
	 */
	const verbs::QpState st = qp->state();
	if (st == verbs::QpState::Reset || st == verbs::QpState::Init || st == verbs::QpState::Rtr)
		return Error(err::EINVAL);
	const Ring &r = *rings[0];
	const uint32_t prod = r.producer();
	while (fetch_ != prod) {
		const uint8_t *slot = r.slot(fetch_);
		rxe::SendWqe w;
		__builtin_memcpy(&w, slot, sizeof(w)); /* once: the process may rewrite it */
		verbs::SendWr wr;
		verbs::Sge sge[verbs::RecvEntry::max_sge];
		if (!convert(w, slot, wr, sge, objs))
			wr = malformed(w.wr.wr_id);
		/* Held until the WQE retires (send_retired()): the process may destroy the AH meanwhile. */
		verbs::Ah *&held = slot_ah_[fetch_ & r.mask];
		held = wr.ud.ah;
		if (held)
			held->get();
		auto posted = qp->post_send(wr);
		if (!posted && posted.error().code() != err::ENOMEM) {
			/* Post Send refused it (IBA 11.4.1.1 checks): it completes in error instead. */
			if (verbs::Ah *ah = exchange(held, nullptr))
				ah->put();
			posted = qp->post_send(malformed(w.wr.wr_id));
		}
		if (!posted) {
			/* The QP's queue is full or it left the sending states: the rest waits. */
			if (verbs::Ah *ah = exchange(held, nullptr))
				ah->put();
			return ok();
		}
		fetch_ = (fetch_ + 1) & r.mask;
	}
	return ok();
}

} // namespace weft::uverbs
