// SPDX-License-Identifier: GPL-2.0
/*
 * The target's commands (SRP 6.4-6.6): an SRP_CMD or SRP_TSK_MGMT takes an
 * IoCtx and goes to LIO; data-out is fetched by RDMA READ from the
 * initiator's buffers (write_pending), data-in placed by RDMA WRITE before
 * the SRP_RSP (queue_response), both with the initiator's keys from the
 * command's descriptors.
 *
 * An IoCtx's steps:
 *  1. received() takes it for a request IU (or the IU waits for one);
 *  2. a malformed request is answered here (reply(), lio = false), a good
 *     one is submitted to LIO (lio = true);
 *  3. LIO asks for data-out: stage Read, RDMA READs, the last signalled;
 *     its completion runs the command (or fails it);
 *  4. LIO has the status: stage Respond (RDMA WRITEs of data-in, then the
 *     SRP_RSP) or, for a TM function, Reply;
 *  5. the response's completion hands the command back to LIO, whose
 *     release puts the IoCtx back (a local reply puts it back at once).
 * Every step that posts first reserves send-queue room; without room the
 * IoCtx waits in order and sq_returned() starts it later.
 */
#include <weft/log.h>

#include "srpt.h"

namespace weft::srpt {

namespace {
const Logger log("weft_srpt");
constexpr uint8_t sam_check_condition = 0x02, sam_busy = 0x08;
} // namespace

using namespace srp::wire;

IoCtx *Channel::get_ioctx()
{
	SpinGuard g(lock_);
	if (!nfree_)
		return nullptr;
	return &io_[free_stack_[--nfree_]];
}

void Channel::put_ioctx(IoCtx &io)
{
	bool pending;
	{
		SpinGuard g(lock_);
		free_stack_[nfree_++] = io.index;
		pending = npending_ != 0;
	}
	if (pending)
		poll_work_.queue();
}

/* SRP 5.6.2.1: the descriptors of the one direction with data (parse::cmd()). */
Result<void> Channel::parse_desc(IoCtx &io, const uint8_t *iu, uint32_t len, int &dir,
				 uint32_t &data_len)
{
	io.ndesc = 0;
	io.desc_total = 0;
	const parse::CmdData d = WEFT_TRY(parse::cmd(iu, len, desc_of(io)));
	if (!parse::fmt_negotiated(fmts_, d.fmt))
		return Error(err::EINVAL);
	io.ndesc = d.ndesc;
	io.desc_total = d.total;
	dir = d.dir;
	data_len = d.total;
	return ok();
}

void Channel::handle_cmd(IoCtx &io, const uint8_t *iu, uint32_t len)
{
	Cmd cmd;
	io.lio = false;
	io.tag = 0;
	if (len < sizeof(cmd)) {
		/* Too short to have a tag worth answering: counted and dropped. */
		count_drop();
		put_ioctx(io);
		return;
	}
	__builtin_memcpy(&cmd, iu, sizeof(cmd));
	io.tag = tag_get(cmd.tag);
	int dir;
	uint32_t data_len;
	/* SRP 5.2.1: no IU may exceed the length the login agreed on. */
	if (len > it_iu_ || !parse_desc(io, iu, len, dir, data_len)) {
		io.ndesc = 0;
		reply(io, sam_check_condition, true, rsp_code::invalid_iu);
		return;
	}
	io.lio = true;
	if (weft_srpt_cmd_submit(io.cmd, cmd.cdb, cmd.lun, data_len, dir, cmd.task_attr & 7, io.tag)) {
		io.lio = false;
		reply(io, sam_busy, false, 0);
	}
}

void Channel::handle_tsk_mgmt(IoCtx &io, const uint8_t *iu, uint32_t len)
{
	TskMgmt tm;
	io.lio = false;
	if (len < sizeof(tm)) {
		count_drop();
		put_ioctx(io);
		return;
	}
	__builtin_memcpy(&tm, iu, sizeof(tm));
	io.tag = tag_get(tm.tag);
	io.ndesc = 0;
	if (len > it_iu_) {
		reply(io, 0, true, rsp_code::invalid_iu);
		return;
	}
	io.lio = true;
	if (weft_srpt_tmr_submit(io.cmd, tm.lun, tm.function, tag_get(tm.task_tag), io.tag)) {
		io.lio = false;
		reply(io, 0, true, rsp_code::not_supported);
	}
}

/* SRP 5.7.2: the SRP_RSP, with the credits owed (one for this request, more for aborted ones). */
uint32_t Channel::build_rsp(IoCtx &io, const weft_srpt_status *st, bool rsp_valid, uint8_t code)
{
	uint32_t credits;
	{
		SpinGuard g(lock_);
		credits = 1 + credit_delta_;
		credit_delta_ = 0;
	}
	parse::RspStatus s{};
	if (st) {
		s.status = st->status;
		s.sense = st->sense;
		s.sense_len = st->sense_len;
		s.resid = st->resid;
		s.under = st->under;
		s.over = st->over;
		s.data_in = st->dir == WEFT_SRPT_DIR_FROM_TARGET;
	}
	return parse::rsp(rsp_of(io), params.max_rsp_size, io.tag, credits, st ? &s : nullptr,
			  rsp_valid, code);
}

/* Answer a request ourselves (malformed, or LIO would not take it). */
void Channel::reply(IoCtx &io, uint8_t status, bool rsp_valid, uint8_t code)
{
	weft_srpt_status st{};
	st.status = status;
	io.rsp_len = build_rsp(io, &st, rsp_valid, code);
	io.stage = IoCtx::Stage::Reply;
	io.xfer = 0;
	io.n_wr = 1;
	dispatch(io);
}

/* Post @io now, later (it waits for send-queue room), or never (the channel is closing). */
void Channel::dispatch(IoCtx &io)
{
	switch (reserve(io)) {
	case Reserve::Ok:
		start(io);
		break;
	case Reserve::Closed:
		abandon(io);
		break;
	case Reserve::Wait:
		break;
	}
}

/* Send queue slots for @io's WRs (io.n_wr); FIFO behind earlier waiters. */
Channel::Reserve Channel::reserve(IoCtx &io)
{
	SpinGuard g(lock_);
	if (closing_)
		return Reserve::Closed;
	if (!nwait_ && sq_avail_ >= io.n_wr) {
		sq_avail_ -= io.n_wr;
		return Reserve::Ok;
	}
	waiting_[(wait_head_ + nwait_++) % params.rq_size] = io.index;
	return Reserve::Wait;
}

void Channel::sq_returned(uint32_t n)
{
	for (;;) {
		IoCtx *io = nullptr;
		{
			SpinGuard g(lock_);
			sq_avail_ += n;
			n = 0;
			if (closing_ || !nwait_)
				return;
			IoCtx &front = io_[waiting_[wait_head_]];
			if (front.n_wr > sq_avail_)
				return;
			sq_avail_ -= front.n_wr;
			wait_head_ = (wait_head_ + 1) % params.rq_size;
			nwait_--;
			io = &front;
		}
		start(*io);
	}
}

/* The channel is closing: what would have been posted is given up. */
void Channel::abandon(IoCtx &io)
{
	if (io.stage == IoCtx::Stage::Read)
		weft_srpt_cmd_fail(io.cmd);
	else if (io.lio)
		weft_srpt_cmd_finished(io.cmd);
	else
		put_ioctx(io);
}

void Channel::fail_waiting()
{
	for (;;) {
		IoCtx *io;
		{
			SpinGuard g(lock_);
			if (!nwait_)
				return;
			io = &io_[waiting_[wait_head_]];
			wait_head_ = (wait_head_ + 1) % params.rq_size;
			nwait_--;
		}
		abandon(*io);
	}
}

/* Walks a command's data buffer (LIO's scatterlist) in SGE-sized pieces. */
class LocalCursor {
public:
	LocalCursor(weft_srpt_cmd *c, uint32_t lkey) : cmd_(c), lkey_(lkey)
	{
		nents_ = weft_srpt_cmd_data(c, 0, segs_, batch);
		loaded_ = min(nents_, batch);
	}
	uint32_t nents() const { return nents_; }
	/* The next up to @max bytes as one SGE; false at the end. */
	bool next(uint32_t max, verbs::Sge &out)
	{
		while (idx_ < nents_) {
			if (idx_ - first_ >= loaded_) {
				first_ = idx_;
				(void)weft_srpt_cmd_data(cmd_, first_, segs_, batch);
				loaded_ = min(nents_ - first_, batch);
			}
			const weft_srpt_seg &s = segs_[idx_ - first_];
			if (off_ >= s.len) {
				idx_++;
				off_ = 0;
				continue;
			}
			const uint32_t n = min(max, s.len - off_);
			out.addr = s.kva + off_;
			out.length = n;
			out.lkey = lkey_;
			off_ += n;
			return true;
		}
		return false;
	}
	uint64_t total()
	{
		uint64_t t = 0;
		for (uint32_t f = 0; f < nents_; f += batch) {
			(void)weft_srpt_cmd_data(cmd_, f, segs_, batch);
			for (uint32_t i = 0; i < min(nents_ - f, batch); i++)
				t += segs_[i].len;
		}
		(void)weft_srpt_cmd_data(cmd_, first_, segs_, batch);
		return t;
	}

private:
	static constexpr uint32_t batch = 16;
	weft_srpt_cmd *cmd_;
	uint32_t lkey_;
	uint32_t nents_, loaded_, first_ = 0, idx_ = 0, off_ = 0;
	weft_srpt_seg segs_[batch];
};

/* io.xfer bytes between LIO's buffer and the descriptors' remote buffers, in order. */
Result<void> Channel::post_rdma(IoCtx &io, bool write)
{
	LocalCursor cur(io.cmd, hca_.mr->lkey);
	const DirectBuf *d = desc_of(io);
	uint32_t left = io.xfer;
	for (uint32_t k = 0; k < io.ndesc && left; k++) {
		uint64_t raddr = d[k].va.get();
		uint32_t dleft = min(d[k].len.get(), left);
		while (dleft) {
			verbs::Sge sge[max_sge];
			uint32_t ns = 0, bytes = 0;
			while (ns < sges_ && bytes < dleft && cur.next(dleft - bytes, sge[ns]))
				bytes += sge[ns++].length;
			if (!ns)
				return Error(err::EINVAL); /* io.xfer was clipped: cannot happen */
			verbs::SendWr wr;
			wr.opcode = write ? verbs::WrOpcode::RdmaWrite : verbs::WrOpcode::RdmaRead;
			wr.sg = Span<const verbs::Sge>(sge, ns);
			wr.rdma.remote_addr = raddr;
			wr.rdma.rkey = d[k].key.get();
			raddr += bytes;
			dleft -= bytes;
			left -= bytes;
			if (!write && !left) {
				wr.send_flags = verbs::send_flag::signaled;
				wr.wr_id = (uint64_t(io.index) << wr_kind_bits) | wr_read;
			}
			WEFT_TRY(qp_->post_send(wr));
		}
	}
	return ok();
}

void Channel::send_rsp(IoCtx &io)
{
	verbs::Sge sge;
	sge.addr = reinterpret_cast<uintptr_t>(rsp_of(io));
	sge.length = io.rsp_len;
	sge.lkey = hca_.mr->lkey;
	verbs::SendWr wr;
	wr.wr_id = (uint64_t(io.index) << wr_kind_bits) | wr_rsp;
	wr.opcode = verbs::WrOpcode::Send;
	wr.send_flags = verbs::send_flag::signaled;
	wr.sg = Span<const verbs::Sge>(&sge, 1);
	if (!qp_->post_send(wr)) {
		shutdown();
		rsp_done(io);
	}
}

/* Post what the IoCtx's stage needs; its send-queue room is reserved. */
void Channel::start(IoCtx &io)
{
	switch (io.stage) {
	case IoCtx::Stage::Read:
		if (!post_rdma(io, false)) {
			shutdown();
			rdma_done(io, false);
		}
		return;
	case IoCtx::Stage::Respond:
		if (io.xfer && !post_rdma(io, true)) {
			shutdown();
			rsp_done(io);
			return;
		}
		send_rsp(io);
		return;
	case IoCtx::Stage::Reply:
		send_rsp(io);
		return;
	}
}

/* WRs for io.xfer bytes: one per descriptor, more where a piece needs more SGEs. */
static uint32_t rdma_wrs(const IoCtx &io, uint32_t nents, uint32_t sges)
{
	return io.xfer ? io.ndesc + nents / sges + 1 : 0;
}

int Channel::write_pending(IoCtx &io)
{
	weft_srpt_status st;
	weft_srpt_cmd_status(io.cmd, &st);
	LocalCursor cur(io.cmd, hca_.mr->lkey);
	io.xfer = static_cast<uint32_t>(min<uint64_t>(min(st.data_len, io.desc_total), cur.total()));
	if (!io.xfer) {
		weft_srpt_cmd_execute(io.cmd);
		return 0;
	}
	io.stage = IoCtx::Stage::Read;
	io.n_wr = rdma_wrs(io, cur.nents(), sges_);
	switch (reserve(io)) {
	case Reserve::Ok:
		start(io);
		return 0;
	case Reserve::Wait:
		return 0;
	case Reserve::Closed:
		break;
	}
	return -err::ENOTCONN; /* LIO answers with CHECK CONDITION (queue_status) */
}

void Channel::rdma_done(IoCtx &io, bool good)
{
	bool closing;
	sq_returned(io.n_wr);
	{
		SpinGuard g(lock_);
		closing = closing_;
	}
	if (good && !closing)
		weft_srpt_cmd_execute(io.cmd);
	else
		weft_srpt_cmd_fail(io.cmd);
}

int Channel::queue_response(IoCtx &io, bool data)
{
	weft_srpt_status st;
	weft_srpt_cmd_status(io.cmd, &st);
	io.xfer = 0;
	uint32_t nents = 0;
	if (data && st.dir == WEFT_SRPT_DIR_FROM_TARGET) {
		LocalCursor cur(io.cmd, hca_.mr->lkey);
		nents = cur.nents();
		io.xfer = static_cast<uint32_t>(
			min<uint64_t>(min(st.data_len, io.desc_total), cur.total()));
	}
	io.rsp_len = build_rsp(io, &st, false, 0);
	io.stage = IoCtx::Stage::Respond;
	io.n_wr = 1 + rdma_wrs(io, nents, sges_);
	dispatch(io);
	return 0;
}

void Channel::queue_tm_rsp(IoCtx &io)
{
	io.rsp_len = build_rsp(io, nullptr, true, weft_srpt_tmr_response(io.cmd));
	io.stage = IoCtx::Stage::Reply;
	io.xfer = 0;
	io.n_wr = 1;
	dispatch(io);
}

void Channel::rsp_done(IoCtx &io)
{
	sq_returned(io.n_wr);
	if (io.lio)
		weft_srpt_cmd_finished(io.cmd);
	else
		put_ioctx(io);
}

/* SRP 6.4: an aborted command gets no response; its credit rides on the next one. */
void Channel::aborted(IoCtx &)
{
	SpinGuard g(lock_);
	credit_delta_++;
}

void Channel::released(IoCtx &io)
{
	put_ioctx(io);
}

} // namespace weft::srpt
