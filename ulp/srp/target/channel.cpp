// SPDX-License-Identifier: GPL-2.0
/*
 * An SRP RDMA channel of the target (SRP 6.2-6.4): login, the RC QP and
 * its receive IUs, completions, the CM's events, and the two-phase
 * release described in srpt.h.  Commands are in io.cpp.
 */
#include <weft/log.h>

#include "../poll.h"
#include "srpt.h"

namespace weft::srpt {

namespace {
const Logger log("weft_srpt");

unsigned long long be64_at(const uint8_t *p)
{
	be64 v;
	__builtin_memcpy(&v, p, 8);
	return v.get();
}
} // namespace

using namespace srp::wire;

constinit TestHooks test_hooks;

Channel::Channel(Hca &h, uint8_t port)
	: hca_(h), port_(port), events_lock_(WEFT_LOCK_CLASS("weft_srpt_ch_events")),
	  lock_(WEFT_LOCK_CLASS("weft_srpt_ch")),
	  poll_work_(poll_work, WEFT_LOCK_CLASS("weft_srpt_poll")),
	  release_work_(release_work, WEFT_LOCK_CLASS("weft_srpt_release"))
{
}

Channel::~Channel() = default;

bool Channel::same_nexus(const uint8_t i_port_id[16]) const
{
	return !__builtin_memcmp(i_port_id_, i_port_id, 16);
}

Result<void> Channel::create_resources()
{
	const uint32_t rq = params.rq_size;
	const auto &a = hca_.dev.attr();
	/* A command's RDMA plus its response; more waits for room (reserve()). */
	const uint32_t sq = min<uint32_t>(rq * 4, a.max_qp_wr);
	sq_size_ = sq;
	sges_ = min<uint32_t>(max_sge, a.max_send_sge);
	recv_buf_ = WEFT_TRY(Array<uint8_t>::make(Gfp::Sleep, size_t(rq) * params.max_req_size));
	rsp_buf_ = WEFT_TRY(Array<uint8_t>::make(Gfp::Sleep, size_t(rq) * params.max_rsp_size));
	desc_buf_ = WEFT_TRY(Array<DirectBuf>::make(Gfp::Sleep, size_t(rq) * max_desc));
	io_ = WEFT_TRY(Array<IoCtx>::make(Gfp::Sleep, rq));
	free_stack_ = WEFT_TRY(Array<uint32_t>::make(Gfp::Sleep, rq));
	waiting_ = WEFT_TRY(Array<uint32_t>::make(Gfp::Sleep, rq));
	pending_rx_ = WEFT_TRY(Array<uint32_t>::make(Gfp::Sleep, rq));
	rx_len_ = WEFT_TRY(Array<uint32_t>::make(Gfp::Sleep, rq));
	for (uint32_t i = 0; i < rq; i++) {
		io_[i].ch = this;
		io_[i].index = i;
		io_[i].cmd = weft_srpt_cmd_alloc(sess_, &io_[i]);
		if (!io_[i].cmd)
			return Error(err::ENOMEM);
		free_stack_[i] = i;
	}
	nfree_ = rq;
	sq_avail_ = sq;
	cq_ = WEFT_TRY(hca_.ctx->create_cq(rq + sq, cq_event, this));
	verbs::QpInitAttr init;
	init.type = verbs::QpType::Rc;
	init.send_cq = cq_;
	init.recv_cq = cq_;
	init.cap.max_send_wr = sq;
	init.cap.max_recv_wr = rq;
	init.cap.max_send_sge = sges_;
	init.cap.max_recv_sge = 1;
	init.port = port_;
	init.events = this;
	qp_ = WEFT_TRY(hca_.ctx->create_qp(hca_.pd, init));
	(void)cq_->req_notify(false);
	return ok();
}

/*
 * From the Channel's listing until login() returns, a shutdown (a SINGLE
 * CHANNEL login of the same nexus, LIO's close_session or TPG disable once
 * the session is open, a CM or QP event once accepted) only marks it
 * closing: releasing it then would free the session, QP and memory this
 * call still uses.  The login ends by queueing the release itself.
 */
Result<void> Channel::login(cm::Id &id, const cm::RequestInfo &req, const LoginReq &lreq,
			    uint32_t &reason, uint8_t rsp_flags)
{
	if (auto hook = test_hooks.login_started.load(Order::Acquire))
		hook(*this, test_hooks.arg.load(Order::Acquire));
	auto r = accept_login(id, req, lreq, reason, rsp_flags);
	login_done(static_cast<bool>(r));
	return r;
}

/* The login is over: release now if it failed or the channel was shut down meanwhile. */
void Channel::login_done(bool accepted)
{
	bool closing;
	{
		SpinGuard g(lock_);
		in_login_ = false;
		if (!accepted) {
			closing_ = true;
			live_ = false;
		}
		closing = closing_;
	}
	if (closing)
		release_work_.queue();
}

/* SRP 6.2: accept the login with SRP_LOGIN_RSP, or say why not. */
Result<void> Channel::accept_login(cm::Id &id, const cm::RequestInfo &req, const LoginReq &lreq,
				   uint32_t &reason, uint8_t rsp_flags)
{
	const uint32_t it_iu = lreq.req_it_iu_len.get(); /* checked: parse::login() */
	__builtin_memcpy(i_port_id_, lreq.initiator_port_id, 16);
	it_iu_ = it_iu;
	fmts_ = lreq.req_buf_fmt.get();
	char gid_name[40], guid_name[24];
	if (!hca_.port_names(port_, gid_name, guid_name)) {
		reason = rej::unable_establish;
		return Error(err::ENODEV);
	}
	int e = 0;
	sess_ = weft_srpt_session_open(gid_name, guid_name, i_port_id_, this, &e);
	if (!sess_) {
		log.info("%s: login from initiator 0x%016llx%016llx refused (%d: %s)", hca_.dev.name(),
			 be64_at(i_port_id_), be64_at(i_port_id_ + 8), e,
			 e == -err::ENOENT ? "no enabled target port" : "no ACL");
		reason = e == -err::ENOMEM ? rej::insufficient_resources : rej::channel_limit;
		return Error(-e);
	}
	if (!create_resources()) {
		reason = rej::insufficient_resources;
		return Error(err::ENOMEM);
	}
	LoginRsp rsp{};
	rsp.opcode = op::login_rsp;
	rsp.req_lim_delta.set(params.rq_size);
	__builtin_memcpy(rsp.tag, lreq.tag, 8);
	rsp.max_it_iu_len.set(it_iu);
	rsp.max_ti_iu_len.set(params.max_rsp_size);
	rsp.sup_buf_fmt.set(buf_fmt::direct | buf_fmt::indirect);
	rsp.rsp_flags = rsp_flags;
	cm::AcceptParam ap;
	ap.qp = qp_;
	ap.private_data = ConstBytes(reinterpret_cast<const uint8_t *>(&rsp), sizeof(rsp));
	ap.responder_resources = min<uint8_t>(req.initiator_depth, 4);
	ap.initiator_depth = min<uint8_t>(req.responder_resources, 4);
	cm::set_handler(id, *this, this);
	{
		/* Before accept() takes the QP to RTR, where data raises CommEst. */
		SpinGuardBh g(events_lock_);
		id_ = &id;
	}
	auto r = cm::accept(id, ap);
	if (!r) {
		/* The caller's REJ ends the Id (its handler's negative return). */
		SpinGuardBh g(events_lock_);
		id_ = nullptr;
		reason = rej::unable_establish;
		return r;
	}
	/*
	 * The QP left Reset in accept(); a command that comes before these
	 * are posted meets RNR NAKs and is retried (rnr_retry 7: for ever).
	 */
	for (uint32_t i = 0; i < params.rq_size; i++)
		post_recv(i);
	return ok();
}

void Channel::post_recv(uint32_t i)
{
	verbs::Sge sge;
	sge.addr = reinterpret_cast<uintptr_t>(&recv_buf_[size_t(i) * params.max_req_size]);
	sge.length = params.max_req_size;
	sge.lkey = hca_.mr->lkey;
	verbs::RecvWr wr;
	wr.wr_id = (uint64_t(i) << wr_kind_bits) | wr_recv;
	wr.sg = Span<const verbs::Sge>(&sge, 1);
	if (!qp_->post_recv(wr))
		shutdown(); /* the QP left RTR/RTS: the channel is going */
}

int Channel::event(const cm::Event &e)
{
	switch (e.type) {
	case cm::EventType::Established: {
		SpinGuard g(lock_);
		live_ = !closing_;
		break;
	}
	case cm::EventType::Rejected:
	case cm::EventType::Unreachable:
	case cm::EventType::Disconnected:
		shutdown();
		break;
	default:
		break;
	}
	return 0;
}

void Channel::handle(const verbs::Event &e)
{
	if (e.type == verbs::EventType::CommEst) {
		/* Under the lock: release() clears id_ before it destroys the Id. */
		SpinGuardBh g(events_lock_);
		if (id_)
			cm::established(*id_); /* IBA 12.9.5: data before the RTU */
	} else if (e.type == verbs::EventType::QpFatal || e.type == verbs::EventType::QpReqErr ||
		 e.type == verbs::EventType::QpAccessErr)
		shutdown();
}

void Channel::shutdown()
{
	{
		SpinGuard g(lock_);
		if (closing_)
			return;
		closing_ = true;
		live_ = false;
		if (in_login_)
			return; /* login_done() releases */
	}
	release_work_.queue();
}

void Channel::cq_event(verbs::Cq &, void *arg)
{
	static_cast<Channel *>(arg)->poll_work_.queue();
}

void Channel::poll_work(Work &w)
{
	container_of(&w, &Channel::poll_work_)->poll();
}

void Channel::poll()
{
	run_pending();
	if (!srp::drain_cq(*cq_, 512, [this](const verbs::Wc &wc) { completion(wc); }))
		poll_work_.queue(); /* let others run; come back */
}

void Channel::completion(const verbs::Wc &wc)
{
	const uint32_t i = static_cast<uint32_t>(wc.wr_id >> wr_kind_bits);
	const bool good = wc.status == verbs::WcStatus::Success;
	if (!good && wc.status != verbs::WcStatus::WrFlushErr) {
		WEFT_LOG_RATELIMITED(log, Level::Info, "%s: completion error %s, logging the channel out",
				     hca_.dev.name(), verbs::wc_status_str(wc.status));
		shutdown();
	}
	switch (wc.wr_id & ((1u << wr_kind_bits) - 1)) {
	case wr_recv: {
		bool closing;
		{
			SpinGuard g(lock_);
			closing = closing_;
		}
		if (good && !closing)
			received(i, wc.byte_len);
		break;
	}
	case wr_rsp:
		rsp_done(io_[i]);
		break;
	case wr_read:
		rdma_done(io_[i], good);
		break;
	case wr_write:
		write_done(io_[i], good);
		break;
	}
}

/*
 * SRP 5: what the initiator sent; the buffer goes back to the receive
 * queue after.  A request (SRP_CMD, SRP_TSK_MGMT) needs an IoCtx: the
 * credit its response returned may reach the initiator before LIO
 * released the command, so a request finding none waits, in order, in
 * pending_rx_ (with its buffer) until one is released (run_pending()).
 */
void Channel::received(uint32_t i, uint32_t len)
{
	const uint8_t *iu = &recv_buf_[size_t(i) * params.max_req_size];
	const uint8_t opc = len ? iu[0] : 0xff;
	if (opc == op::cmd || opc == op::tsk_mgmt) {
		IoCtx *io = nullptr;
		{
			SpinGuard g(lock_);
			if (!npending_ && nfree_) {
				io = &io_[free_stack_[--nfree_]];
			} else {
				rx_len_[i] = len;
				pending_rx_[(pending_head_ + npending_++) % params.rq_size] = i;
				return;
			}
		}
		if (opc == op::cmd)
			handle_cmd(*io, iu, len);
		else
			handle_tsk_mgmt(*io, iu, len);
	} else if (opc == op::i_logout) {
		shutdown(); /* SRP 6.3: the initiator ends the channel */
		return;
	} else if (opc != op::cred_rsp && opc != op::aer_rsp) {
		count_drop();
	}
	post_recv(i);
}

void Channel::run_pending()
{
	for (;;) {
		IoCtx *io;
		uint32_t i;
		{
			SpinGuard g(lock_);
			if (!npending_ || !nfree_ || closing_)
				return;
			i = pending_rx_[pending_head_];
			pending_head_ = (pending_head_ + 1) % params.rq_size;
			npending_--;
			io = &io_[free_stack_[--nfree_]];
		}
		const uint8_t *iu = &recv_buf_[size_t(i) * params.max_req_size];
		if (iu[0] == op::cmd)
			handle_cmd(*io, iu, rx_len_[i]);
		else
			handle_tsk_mgmt(*io, iu, rx_len_[i]);
		post_recv(i);
	}
}

void Channel::release_work(Work &w)
{
	container_of(&w, &Channel::release_work_)->release();
}

/*
 * Two-phase release, run once and only after login() ended: the CM Id
 * goes (DREQ or REJ, the QP to Error, its WRs flushed and completed by
 * poll()), commands waiting for room fail, the LIO session closes once
 * every command was released, then the verbs objects and memory go; the
 * Hca frees the Channel.  QP events may come until destroy_qp(): id_ is
 * cleared under events_lock_ first, so none reaches the destroyed Id.
 */
void Channel::release()
{
	if (auto hook = test_hooks.release_started.load(Order::Acquire))
		hook(*this, test_hooks.arg.load(Order::Acquire));
	cm::Id *id;
	{
		SpinGuardBh g(events_lock_);
		id = id_;
		id_ = nullptr;
	}
	if (id) {
		cm::destroy(id);
		if (auto hook = test_hooks.id_destroyed.load(Order::Acquire); hook && qp_)
			hook(*this, *qp_, test_hooks.arg.load(Order::Acquire));
	}
	fail_waiting();
	if (sess_) {
		weft_srpt_session_close(sess_);
		sess_ = nullptr;
	}
	/* No completion after the QP is gone; then no poll can be running or queued. */
	if (qp_)
		(void)hca_.ctx->destroy_qp(qp_);
	poll_work_.cancel_sync();
	if (cq_)
		(void)hca_.ctx->destroy_cq(cq_);
	qp_ = nullptr;
	cq_ = nullptr;
	for (IoCtx &io : io_)
		weft_srpt_cmd_free(io.cmd);
	hca_.channel_gone(*this);
}

} // namespace weft::srpt

using namespace weft::srpt;

int weft_srpt_write_pending(void *ctx)
{
	IoCtx &io = *static_cast<IoCtx *>(ctx);
	return io.ch->write_pending(io);
}

int weft_srpt_queue_response(void *ctx, bool data)
{
	IoCtx &io = *static_cast<IoCtx *>(ctx);
	return io.ch->queue_response(io, data);
}

void weft_srpt_queue_tm_rsp(void *ctx)
{
	IoCtx &io = *static_cast<IoCtx *>(ctx);
	io.ch->queue_tm_rsp(io);
}

void weft_srpt_aborted(void *ctx)
{
	IoCtx &io = *static_cast<IoCtx *>(ctx);
	io.ch->aborted(io);
}

void weft_srpt_released(void *ctx)
{
	IoCtx &io = *static_cast<IoCtx *>(ctx);
	io.ch->released(io);
}

void weft_srpt_session_shutdown(void *ctx)
{
	static_cast<Channel *>(ctx)->shutdown();
}
