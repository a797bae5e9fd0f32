// SPDX-License-Identifier: GPL-2.0
/*
 * The send side of a user QP (objects.h UQp::doorbell): the WQEs the
 * process produced in its SQ ring become verbs send work requests
 * (wqe.h convert_send_wqe()) posted in order.  A WQE that does not make
 * sense keeps its place and completes in error (WrOpcode::Malformed), so
 * that the process's ring and its completions stay in step.
 */
#include "wqe.h"

namespace weft::uverbs {

using verbs::WrOpcode;

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
		if (!convert_send_wqe(w, slot, {qp->type, qp->pd, inline_mr->lkey, caps}, objs, wr, sge))
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
