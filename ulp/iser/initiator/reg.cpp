// SPDX-License-Identifier: GPL-2.0
/*
 * Fast registration of the initiator's data buffers: the STags of a
 * command name a region scoped to that command (RFC 7145 7.3.5, 7.3.6,
 * 8.3.2; IBA 10.6.3.5), invalidated when the task is done, locally
 * (IBA 10.6.3.6) or by the target's Send with Invalidate.
 *
 * One fast-reg MR per task slot (libiscsi's task index), each REG_MR with
 * the slot key's next variant and the rights of the command's direction
 * only.  Everything here runs under lock_, so a REG_MR, the SEND behind
 * it and a slot's LOCAL_INV reach the send queue in the order decided.
 */
#include <weft/log.h>
#include <weft/verbs/page_list.h>

#include "initiator.h"

namespace weft::iser {

namespace {
const Logger log("weft_iser");

/* in-tree iser_calc_scsi_params: a page per 4 KiB of max_sectors, one more for a misaligned start. */
uint32_t sg_tablesize(const verbs::Device &dev)
{
	const uint32_t want = (params.max_sectors * 512 + page_size - 1) / page_size;
	return min(want, dev.attr().max_fast_reg_page_list_len - 1);
}
} // namespace

/* From setup_verbs, before the QP exists: one MR per slot, all invalid. */
Result<void> Conn::alloc_regs(verbs::Context &ctx, const verbs::Device &dev)
{
	if (dev.attr().max_fast_reg_page_list_len < 2)
		return Error(err::EOPNOTSUPP);
	fr_pages_max_ = sg_tablesize(dev) + 1;
	fr_pages_ = WEFT_TRY(Array<uint64_t>::make(Gfp::Sleep, fr_pages_max_));
	auto keys = WEFT_TRY(Array<uint32_t>::make(Gfp::Sleep, max_cmds));
	auto live = WEFT_TRY(Array<uint8_t>::make(Gfp::Sleep, max_cmds));
	auto iovas = WEFT_TRY(Array<uint64_t>::make(Gfp::Sleep, max_cmds));
	auto mrs = WEFT_TRY(Array<verbs::Mr *>::make(Gfp::Sleep, max_cmds));
	for (uint32_t i = 0; i < max_cmds; i++) {
		/* The Context frees what was made if this fails (release_verbs). */
		mrs[i] = WEFT_TRY(ctx.alloc_fast_reg_mr(pd_, fr_pages_max_));
		keys[i] = mrs[i]->lkey;
	}
	SpinGuardBh g(lock_);
	fr_ = move(mrs);
	fr_key_ = move(keys);
	fr_live_ = move(live);
	fr_iova_ = move(iovas);
	return ok();
}

void Conn::limits(struct weft_iser_limits &out)
{
	out.max_cmds = max_cmds;
	out.sg_tablesize = fr_pages_max_ - 1;
	out.max_sectors = min(params.max_sectors, out.sg_tablesize * (page_size / 512));
}

Result<void> Conn::post_local_locked(verbs::WrOpcode op, uint32_t slot, uint32_t key, uint32_t access)
{
	verbs::SendWr wr;
	wr.opcode = op;
	if (op == verbs::WrOpcode::RegMr) {
		wr.reg.mr = fr_[slot];
		wr.reg.key = key;
		wr.reg.access = access;
	} else {
		wr.invalidate_rkey = key;
	}
	return qp_->post_send(wr);
}

/*
 * The command's scatterlist as one region at its first entry's kernel
 * address (the IOVA the header's VAs count from), a new key for the slot
 * with @access; a registration the slot still holds (a task that failed
 * before its cleanup could invalidate) goes first.  The IOVA, or EINVAL
 * (not a page list, slot out of range), ENOMEM/ENOBUFS (send queue).
 */
Result<uint64_t> Conn::register_locked(void *task, const weft_iser_cmd &c, uint32_t access)
{
	lock_.assert_held();
	if (c.slot >= fr_.size() || !c.nsg)
		return Error(err::EINVAL);
	const verbs::PageList pl = WEFT_TRY(verbs::page_list<weft_iser_seg>(
		c.nsg, page_size, Span<uint64_t>(fr_pages_.data(), fr_pages_.size()),
		[task](uint32_t f, weft_iser_seg *s, uint32_t n) { weft_iser_shim_cmd_sg(task, f, s, n); }));
	if (pl.len < c.len)
		return Error(err::EINVAL);
	verbs::Mr *mr = fr_[c.slot];
	WEFT_TRY(mr->set_pages(Span<const uint64_t>(fr_pages_.data(), pl.n), page_size, pl.iova, c.len));
	const uint32_t old_key = fr_key_[c.slot], key = verbs::next_key(old_key);
	if (fr_live_[c.slot]) {
		WEFT_TRY(post_local_locked(verbs::WrOpcode::LocalInv, c.slot, old_key, 0));
		fr_live_[c.slot] = 0;
	}
	WEFT_TRY(post_local_locked(verbs::WrOpcode::RegMr, c.slot, key, access));
	fr_key_[c.slot] = key;
	fr_live_[c.slot] = 1;
	fr_iova_[c.slot] = pl.iova;
	return pl.iova;
}

/* libiscsi's cleanup_task, before the command completes: the target may no longer reach it. */
void Conn::task_done(uint32_t slot)
{
	SpinGuardBh g(lock_);
	if (!qp_ || slot >= fr_.size() || !fr_live_[slot])
		return;
	/* A failed post (the QP is going) leaves it live: the next registration invalidates first. */
	if (post_local_locked(verbs::WrOpcode::LocalInv, slot, fr_key_[slot], 0))
		fr_live_[slot] = 0;
}

/*
 * RFC 7145 8.3.2: a SCSI Response that came as Send with Invalidate
 * invalidated the STag of its own command, and nothing else (as in-tree:
 * a key that is not the task's, or remote invalidation the REP refused,
 * fails the connection).  True when the receive may go on to libiscsi.
 */
bool Conn::remote_invalidated(void *iconn, const uint8_t *bhs, const verbs::Wc &wc)
{
	if (!(wc.wc_flags & verbs::wc_flag::with_inv))
		return true;
	const int slot = weft_iser_shim_rsp_slot(iconn, bhs);
	SpinGuardBh g(lock_);
	if (remote_inv_ && slot >= 0 && uint32_t(slot) < fr_.size() && fr_live_[slot] &&
	    fr_key_[slot] == wc.invalidate_rkey) {
		fr_live_[slot] = 0;
		return true;
	}
	WEFT_LOG_RATELIMITED(log, Level::Warn, "unexpected remote invalidation of %#x (slot %d)",
			     wc.invalidate_rkey, slot);
	return false;
}

} // namespace weft::iser
