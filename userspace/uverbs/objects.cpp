// SPDX-License-Identifier: GPL-2.0
/*
 * The wrappers' data-path sides (objects.h): completions written to the
 * process's CQ ring, SRQ and RQ WQEs taken through wqe.h, as the stock rxe
 * provider lays its rings out (in-tree 6.1 rxe_queue.h, rxe_cq.c for facts).
 */
#include <weft/copy.h>
#include <weft/log.h>

#include "wqe.h"

namespace weft::uverbs {

/* --- MR ------------------------------------------------------------------------------ */

UMr::~UMr()
{
	if (umem)
		weft_warn(__FILE__, __LINE__, "uverbs MR freed with its pages pinned");
}

void UMr::release()
{
	if (weft_uverbs_umem *u = exchange(umem, nullptr))
		weft_uverbs_umem_release(u);
}

/* --- CQ --------------------------------------------------------------------------------- */

UCq::UCq(Ref<Ring> ring, Ref<CompChannel> ch, Ref<EventQueue> ev, uint64_t uh)
	: UObject(ObjType::Cq), channel(move(ch)), events(move(ev))
{
	rings[0] = move(ring);
	user_handle = uh;
	pending.cq_handle = uh;
}

UCq::~UCq()
{
	if (channel)
		channel->purge(pending);
	events->purge(&async_events);
}

namespace {

uint32_t wc_opcode(verbs::WcOpcode op)
{
	switch (op) {
	case verbs::WcOpcode::Send:
	case verbs::WcOpcode::Lso:
		return rxe::wc::send;
	case verbs::WcOpcode::RdmaWrite:
		return rxe::wc::rdma_write;
	case verbs::WcOpcode::RdmaRead:
		return rxe::wc::rdma_read;
	case verbs::WcOpcode::CompSwap:
		return rxe::wc::comp_swap;
	case verbs::WcOpcode::FetchAdd:
		return rxe::wc::fetch_add;
	case verbs::WcOpcode::LocalInv:
	case verbs::WcOpcode::RegMr:
		return rxe::wc::local_inv;
	case verbs::WcOpcode::BindMw:
		return rxe::wc::bind_mw;
	case verbs::WcOpcode::Recv:
		return rxe::wc::recv;
	case verbs::WcOpcode::RecvRdmaWithImm:
		return rxe::wc::recv_rdma_imm;
	}
	return rxe::wc::send;
}

/* struct ib_uverbs_wc from a verbs completion. */
rxe::Wc to_user(const verbs::Wc &wc)
{
	rxe::Wc u{};
	u.wr_id = wc.wr_id;
	u.status = static_cast<uint32_t>(wc.status);
	u.opcode = wc_opcode(wc.opcode);
	u.vendor_err = wc.vendor_err;
	u.byte_len = wc.byte_len;
	if (wc.wc_flags & verbs::wc_flag::with_imm) {
		u.ex = __builtin_bswap32(wc.imm_data); /* the ABI carries it big-endian */
		u.wc_flags |= rxe::wc::flag_imm;
	} else if (wc.wc_flags & verbs::wc_flag::with_inv) {
		u.ex = wc.invalidate_rkey;
		u.wc_flags |= rxe::wc::flag_inv;
	}
	if (wc.wc_flags & verbs::wc_flag::grh)
		u.wc_flags |= rxe::wc::flag_grh;
	u.qp_num = wc.qp_num;
	u.src_qp = wc.src_qp;
	u.pkey_index = wc.pkey_index;
	u.slid = wc.slid;
	u.sl = wc.sl;
	u.dlid_path_bits = wc.dlid_path_bits;
	u.port_num = wc.port_num;
	return u;
}

} // namespace

bool UCq::put(const verbs::Wc &wc)
{
	const Ring &r = *rings[0];
	const uint32_t next = (prod_ + 1) & r.mask;
	if (next == r.consumer())
		return false;
	const rxe::Wc u = to_user(wc);
	__builtin_memcpy(r.slot(prod_), &u, sizeof(u));
	prod_ = next;
	r.hdr().producer_index.store(prod_, Order::Release);
	return true;
}

/*
 * As rxe's queue resize: the completions the process has not consumed
 * move, in order, to the start of the new ring; the process maps the new
 * ring and polls it from index 0.  @budget at a time: completions the HCA
 * adds between two steps follow; the consumer index is read once (librxe
 * polls nothing during the command).
 */
Result<uint32_t> UCq::resize_step_locked(uint32_t at_least, uint32_t budget, bool first)
{
	const Ring &o = *rings[0], &n = *spare;
	if (first) {
		move_from_ = o.consumer();
		moved_ = 0;
	}
	const uint32_t left = (prod_ - move_from_) & o.mask;
	/* IBA 11.2.6.3, in-tree rxe_cq_chk_attr(): EINVAL if they do not fit. */
	if (at_least < moved_ + left || moved_ + left > n.capacity())
		return Error(err::EINVAL);
	const uint32_t now = min(left, budget);
	for (uint32_t i = 0; i < now; i++)
		__builtin_memcpy(n.slot(moved_ + i), o.slot(move_from_ + i), sizeof(rxe::Wc));
	move_from_ = (move_from_ + now) & o.mask;
	moved_ += now;
	if (now < left)
		return 0u;
	prod_ = moved_;
	n.hdr().producer_index.store(moved_, Order::Release);
	Ref<Ring> old = move(rings[0]);
	rings[0] = move(spare);
	spare = move(old); /* no reference dropped here: the command releases it */
	return n.capacity();
}

bool UCq::empty() const
{
	return prod_ == rings[0]->consumer();
}

void UCq::comp_handler(verbs::Cq &, void *arg)
{
	auto *u = static_cast<UCq *>(arg);
	if (u->channel)
		u->channel->push(u->pending);
}

/* --- SRQ -------------------------------------------------------------------------------- */

USrq::USrq(Ref<Ring> ring, uint32_t ms, Ref<EventQueue> ev, uint64_t uh)
	: UObject(ObjType::Srq), max_sge(ms), events(move(ev)), lock_(WEFT_LOCK_CLASS("weft_uverbs_srq"))
{
	rings[0] = move(ring);
	user_handle = uh;
}

USrq::~USrq()
{
	events->purge(&async_events);
}

bool USrq::take(verbs::RecvEntry &out, bool &limit_reached)
{
	SpinGuardIrq g(lock_);
	const Ring &r = *rings[0];
	if (!take_recv_wqe(r, cons_, max_sge, out))
		return false;
	/* IBA 10.2.9.2: once, when the count falls below the armed limit. */
	if (limit_ && ((r.producer() - cons_) & r.mask) < limit_) {
		limit_ = 0;
		limit_reached = true;
	}
	return true;
}

Result<void> USrq::arm_limit(uint32_t limit)
{
	SpinGuardIrq g(lock_);
	if (limit > rings[0]->capacity())
		return Error(err::EINVAL);
	limit_ = limit;
	return ok();
}

/* WQEs a resize moves per hold of lock_ (irq off): the HCA's receive path waits no longer. */
static constexpr uint32_t srq_resize_batch = 64;

/*
 * IBA 11.2.3.4 (Modify SRQ, resize): the WQEs not yet taken keep their
 * order at the start of the new ring; the process (librxe holds its post
 * lock across the command) maps the new ring before posting again.  They
 * move a batch per hold of lock_ while the HCA goes on taking WQEs from
 * the old ring; those it took meanwhile are consumed in the new one too.
 */
Result<void> USrq::resize(Ref<Ring> &fresh)
{
	uint32_t used = 0;
	const uint32_t start = WEFT_TRY(resize_start(*fresh, used));
	for (uint32_t done = 0;;) {
		{
			SpinGuardIrq g(lock_);
			const Ring &old = *rings[0];
			const uint32_t now = min(used - done, srq_resize_batch);
			for (uint32_t i = 0; i < now; i++)
				copy_bytes(fresh->slot(done + i), old.slot(start + done + i), old.elem_size);
			done += now;
			if (done == used)
				return resize_finish_locked(fresh, start, used);
		}
		weft_cond_resched();
	}
}

/* What to move, read once (librxe posts nothing meanwhile): its first index, and @used of them. */
Result<uint32_t> USrq::resize_start(const Ring &fresh, uint32_t &used)
{
	SpinGuardIrq g(lock_);
	const Ring &old = *rings[0];
	used = (old.producer() - cons_) & old.mask;
	/* rxe_srq_chk_attr(), rxe_queue_resize(): what is posted must fit, and the armed limit. */
	if (used > fresh.capacity() || limit_ > fresh.capacity() || fresh.elem_size != old.elem_size)
		return Error(err::EINVAL);
	return cons_;
}

/* All moved: those the HCA took meanwhile are behind the new consumer index. */
Result<void> USrq::resize_finish_locked(Ref<Ring> &fresh, uint32_t start, uint32_t used)
{
	lock_.assert_held();
	if (limit_ > fresh->capacity())
		return Error(err::EINVAL);
	const uint32_t taken = min((cons_ - start) & rings[0]->mask, used);
	fresh->hdr().consumer_index.store(taken, Order::Relaxed);
	fresh->hdr().producer_index.store(used, Order::Release);
	cons_ = taken;
	swap(rings[0], fresh);
	return ok();
}

uint32_t USrq::count()
{
	SpinGuardIrq g(lock_);
	return (rings[0]->producer() - cons_) & rings[0]->mask;
}

void USrq::handle(const verbs::Event &e)
{
	events->push(static_cast<uint32_t>(e.type), user_handle, &async_events);
}

/* --- QP --------------------------------------------------------------------------------- */

UQp::UQp(Ref<Ring> sq, Ref<Ring> rq, Array<verbs::Ah *> slot_ah, const Caps &c,
	 Ref<EventQueue> ev, uint64_t uh)
	: UObject(ObjType::Qp), caps(c), events(move(ev)),
	  rq_lock_(WEFT_LOCK_CLASS("weft_uverbs_rq")), slot_ah_(move(slot_ah))
{
	rings[0] = move(sq);
	rings[1] = move(rq);
	user_handle = uh;
}

UQp::~UQp()
{
	/* WQEs the QP never retired (destroy completes nothing) still hold their AHs. */
	for (size_t i = 0; i < slot_ah_.size(); i++)
		if (verbs::Ah *ah = exchange(slot_ah_[i], nullptr))
			ah->put();
	events->purge(&async_events);
}

bool UQp::take_recv(verbs::RecvEntry &out)
{
	if (!rings[1])
		return false;
	SpinGuardIrq g(rq_lock_);
	return take_recv_wqe(*rings[1], rq_cons_, caps.max_recv_sge, out);
}

void UQp::send_retired()
{
	const Ring &r = *rings[0];
	if (verbs::Ah *ah = exchange(slot_ah_[sq_cons_ & r.mask], nullptr))
		ah->put();
	sq_cons_ = (sq_cons_ + 1) & r.mask;
	r.hdr().consumer_index.store(sq_cons_, Order::Release);
}

void UQp::handle(const verbs::Event &e)
{
	events->push(static_cast<uint32_t>(e.type), user_handle, &async_events);
}

} // namespace weft::uverbs
