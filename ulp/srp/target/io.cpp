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
 * IoCtx waits in order and sq_returned() starts it later.  A transfer that
 * needs more WRs than the send queue holds goes in rounds of at most the
 * queue's size, each ended by a signalled WR whose completion reserves the
 * next: reserving it all at once would wait for room that never comes,
 * and every command behind it with it.
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
	rdma_begin(io, 0, 0);
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

/*
 * WRs the rest of @io's transfer may take: one per descriptor left, and
 * one per sges_ pieces of LIO's buffer left.  An estimate: post_rdma()
 * never posts more than a round reserved, and what is left goes on in
 * another round.
 */
uint32_t Channel::rdma_wrs(const IoCtx &io) const
{
	if (!io.left)
		return 0;
	return (io.ndesc - io.rdesc) + (io.nents - io.lseg) / sges_ + 1;
}

/* The send queue slots of @io's next round: never more than the queue holds. */
uint32_t Channel::round_wrs(const IoCtx &io) const
{
	switch (io.stage) {
	case IoCtx::Stage::Read:
		return min(rdma_wrs(io), sq_size_);
	case IoCtx::Stage::Respond: /* the WRITEs, then the SRP_RSP */
		return min(rdma_wrs(io) + 1, sq_size_);
	case IoCtx::Stage::Reply:
		break;
	}
	return 1;
}

/* Send queue slots for @io's next round (io.n_wr); FIFO behind earlier waiters. */
Channel::Reserve Channel::reserve(IoCtx &io)
{
	io.n_wr = round_wrs(io);
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
	/* From piece @idx, @off bytes into it (where an earlier round stopped). */
	LocalCursor(weft_srpt_cmd *c, uint32_t lkey, uint32_t idx = 0, uint32_t off = 0)
		: cmd_(c), lkey_(lkey), first_(idx), idx_(idx), off_(off)
	{
		nents_ = weft_srpt_cmd_data(c, idx, segs_, batch);
		loaded_ = idx < nents_ ? min(nents_ - idx, batch) : 0;
	}
	uint32_t nents() const { return nents_; }
	void pos(uint32_t &idx, uint32_t &off) const
	{
		idx = idx_;
		off = off_;
	}
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
	uint32_t nents_, loaded_, first_, idx_, off_;
	weft_srpt_seg segs_[batch];
};

/* A transfer of @xfer bytes (0: none) with LIO's buffer in @nents pieces, from the start. */
void Channel::rdma_begin(IoCtx &io, uint32_t xfer, uint32_t nents)
{
	io.left = xfer;
	io.nents = nents;
	io.rdesc = io.roff = io.lseg = io.loff = 0;
}

/*
 * One round: up to @budget WRs moving the next io.left bytes between
 * LIO's buffer and the descriptors' remote buffers, in order.  Signalled:
 * a READ round's last WR (wr_read), and the last WRITE of a round that
 * leaves bytes (wr_write); the SRP_RSP's completion covers the others.
 */
Result<void> Channel::post_rdma(IoCtx &io, bool write, uint32_t budget)
{
	LocalCursor cur(io.cmd, hca_.mr->lkey, io.lseg, io.loff);
	const DirectBuf *d = desc_of(io);
	for (uint32_t n = 0; n < budget && io.left; n++) {
		while (io.rdesc < io.ndesc && io.roff >= d[io.rdesc].len.get()) {
			io.rdesc++;
			io.roff = 0;
		}
		if (io.rdesc == io.ndesc)
			return Error(err::EINVAL); /* the transfer was clipped to the descriptors: cannot happen */
		const uint32_t dleft = min(d[io.rdesc].len.get() - io.roff, io.left);
		verbs::Sge sge[max_sge];
		uint32_t ns = 0, bytes = 0;
		while (ns < sges_ && bytes < dleft && cur.next(dleft - bytes, sge[ns]))
			bytes += sge[ns++].length;
		if (!ns)
			return Error(err::EINVAL);
		verbs::SendWr wr;
		wr.opcode = write ? verbs::WrOpcode::RdmaWrite : verbs::WrOpcode::RdmaRead;
		wr.sg = Span<const verbs::Sge>(sge, ns);
		wr.rdma.remote_addr = d[io.rdesc].va.get() + io.roff;
		wr.rdma.rkey = d[io.rdesc].key.get();
		io.roff += bytes;
		io.left -= bytes;
		cur.pos(io.lseg, io.loff);
		if (io.left ? n + 1 == budget : !write) {
			wr.send_flags = verbs::send_flag::signaled;
			wr.wr_id = (uint64_t(io.index) << wr_kind_bits) | (write ? wr_write : wr_read);
		}
		WEFT_TRY(qp_->post_send(wr));
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
		if (!post_rdma(io, false, io.n_wr)) {
			shutdown();
			rdma_done(io, false);
		}
		return;
	case IoCtx::Stage::Respond:
		if (io.left) {
			/* round_wrs() gave at least 2: one slot stays for the SRP_RSP. */
			if (!post_rdma(io, true, io.n_wr - 1)) {
				shutdown();
				rsp_done(io);
				return;
			}
			if (io.left)
				return; /* write_done() goes on */
		}
		send_rsp(io);
		return;
	case IoCtx::Stage::Reply:
		send_rsp(io);
		return;
	}
}

int Channel::write_pending(IoCtx &io)
{
	weft_srpt_status st;
	weft_srpt_cmd_status(io.cmd, &st);
	LocalCursor cur(io.cmd, hca_.mr->lkey);
	const auto xfer = static_cast<uint32_t>(min<uint64_t>(min(st.data_len, io.desc_total), cur.total()));
	if (!xfer) {
		weft_srpt_cmd_execute(io.cmd);
		return 0;
	}
	io.stage = IoCtx::Stage::Read;
	rdma_begin(io, xfer, cur.nents());
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

/* A READ round completed: the next round, or the command runs (or fails). */
void Channel::rdma_done(IoCtx &io, bool good)
{
	bool closing;
	sq_returned(io.n_wr);
	{
		SpinGuard g(lock_);
		closing = closing_;
	}
	if (good && !closing && io.left)
		dispatch(io);
	else if (good && !closing)
		weft_srpt_cmd_execute(io.cmd);
	else
		weft_srpt_cmd_fail(io.cmd);
}

/* A WRITE round that left bytes completed: the next round (a closing channel abandons it). */
void Channel::write_done(IoCtx &io, bool good)
{
	if (!good) {
		rsp_done(io); /* no response: the channel is going (completion()) */
		return;
	}
	sq_returned(io.n_wr);
	dispatch(io);
}

int Channel::queue_response(IoCtx &io, bool data)
{
	weft_srpt_status st;
	weft_srpt_cmd_status(io.cmd, &st);
	uint32_t nents = 0, xfer = 0;
	if (data && st.dir == WEFT_SRPT_DIR_FROM_TARGET) {
		LocalCursor cur(io.cmd, hca_.mr->lkey);
		nents = cur.nents();
		xfer = static_cast<uint32_t>(min<uint64_t>(min(st.data_len, io.desc_total), cur.total()));
	}
	rdma_begin(io, xfer, nents);
	io.rsp_len = build_rsp(io, &st, false, 0);
	io.stage = IoCtx::Stage::Respond;
	dispatch(io);
	return 0;
}

void Channel::queue_tm_rsp(IoCtx &io)
{
	io.rsp_len = build_rsp(io, nullptr, true, weft_srpt_tmr_response(io.cmd));
	io.stage = IoCtx::Stage::Reply;
	rdma_begin(io, 0, 0);
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
