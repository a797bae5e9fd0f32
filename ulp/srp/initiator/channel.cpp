// SPDX-License-Identifier: GPL-2.0
/*
 * One SRP RDMA channel of the initiator (SRP 6.2-6.7 over IB RC): login
 * in the CM REQ, SRP_CMD with its data descriptors, SRP_RSP completing
 * the scsi_cmnd, credits (req_lim), SRP_TSK_MGMT, and the target's
 * SRP_CRED_REQ, SRP_AER_REQ and SRP_T_LOGOUT.
 */
#include <weft/log.h>
#include <weft/mad/sa.h>
#include <weft/verbs/conn_events.h>
#include <weft/verbs/drain.h>
#include <weft/verbs/page_list.h>

#include "initiator.h"

namespace weft::srp {

namespace {
const Logger log("weft_srp");
constexpr uint32_t login_timeout_ms = 60000; /* the CM gives up (Unreachable) well before */
constexpr uint32_t tm_timeout_ms = 30000;
} // namespace

using namespace wire;

Channel::Channel(Target &t, uint16_t index)
	: t_(t), index_(index), qp_events_(verbs::on_established<cm::Id, cm::established>, nullptr, this),
	  lock_(WEFT_LOCK_CLASS("weft_srp_ch")),
	  tm_mutex_(WEFT_LOCK_CLASS("weft_srp_tm")), poll_work_(poll_work, WEFT_LOCK_CLASS("weft_srp_poll"))
{
}

Channel::~Channel()
{
	for (verbs::Mr *mr : fr_)
		if (mr)
			(void)t_.port.dom.ctx->dereg_mr(mr);
}

Result<void> Channel::init()
{
	slots_n_ = t_.can_queue;
	iu_len_ = static_cast<uint32_t>(cmd_len(t_.sg_entries));
	slots_ = WEFT_TRY(Array<uintptr_t>::make(Gfp::Sleep, slots_n_));
	tx_ = WEFT_TRY(Array<uint8_t>::make(Gfp::Sleep, size_t(slots_n_) * iu_len_));
	max_pages_ = t_.max_pages;
	fr_ = WEFT_TRY(Array<verbs::Mr *>::make(Gfp::Sleep, slots_n_));
	fr_scratch_ = WEFT_TRY(Array<uint64_t>::make(Gfp::Sleep, size_t(slots_n_) * max_pages_));
	fr_key_ = WEFT_TRY(Array<uint32_t>::make(Gfp::Sleep, slots_n_));
	fr_live_ = WEFT_TRY(Array<uint8_t>::make(Gfp::Sleep, slots_n_));
	for (uint32_t i = 0; i < slots_n_; i++) {
		fr_[i] = WEFT_TRY(t_.port.dom.ctx->alloc_fast_reg_mr(t_.port.dom.pd, max_pages_));
		fr_key_[i] = fr_[i]->lkey;
	}
	return ok();
}

Result<void> Channel::create_qp()
{
	Port &p = t_.port;
	verbs::RcCaps caps;
	/* Per slot: LOCAL_INV, REG_MR and SRP_CMD at most. */
	caps.send_wr = 3 * slots_n_ + misc_ius + 2;
	caps.recv_wr = slots_n_ + misc_ius + 2;
	caps.sq_sig_all = true;
	caps.port = p.num;
	caps.events = &qp_events_;
	WEFT_TRY(rc_.create(*p.dom.ctx, p.dom.pd, caps, cq_event, this));
	rx_n_ = caps.recv_wr;
	return ok();
}

/* SRP 6.2: SRP_LOGIN_REQ in the REQ; SRP_LOGIN_RSP (REP) or SRP_LOGIN_REJ (REJ) answers. */
Result<void> Channel::connect(bool multi)
{
	Port &p = t_.port;
	const TargetOptions &o = t_.opts;
	verbs::Gid dgid;
	__builtin_memcpy(dgid.raw, o.dgid, 16);
	const iba::PathRecord path = WEFT_TRY(mad::sa::resolve_path(p.dev, p.num, dgid, o.pkey));
	WEFT_TRY(create_qp());
	auto id = cm::create_id(p.dev, *this, this);
	if (!id) {
		disconnect(WEFT_SRP_DID_RESET);
		return id.error();
	}
	id_ = *id;
	qp_events_.attach(*id_);

	LoginReq req{};
	req.opcode = op::login_req;
	tag_set(req.tag, cmd_tag(0xffff));
	req.req_it_iu_len.set(iu_len_);
	req.req_buf_fmt.set(buf_fmt::direct | buf_fmt::indirect);
	req.req_flags = multi ? multichan::multi : multichan::single;
	be64 v;
	v.set(o.initiator_ext);
	__builtin_memcpy(req.initiator_port_id, &v, 8);
	__builtin_memcpy(req.initiator_port_id + 8, t_.sgid + 8, 8);
	v.set(o.id_ext);
	__builtin_memcpy(req.target_port_id, &v, 8);
	v.set(o.ioc_guid);
	__builtin_memcpy(req.target_port_id + 8, &v, 8);

	cm::ConnectParam cp;
	cp.qp = rc_.qp;
	cp.port = p.num;
	cp.path = path;
	cp.service_id = o.service_id;
	cp.private_data = ConstBytes(reinterpret_cast<const uint8_t *>(&req), sizeof(req));
	cp.retry_count = static_cast<uint8_t>(o.tl_retry_count);
	{
		/* The old QP is gone with whatever it had queued: the MRs say what is registered. */
		SpinGuardIrq g(lock_);
		for (uint32_t i = 0; i < slots_n_; i++) {
			fr_live_[i] = fr_[i]->valid();
			fr_key_[i] = fr_[i]->lkey;
		}
	}
	login_err_ = 0;
	login_done_.reinit();
	auto r = cm::connect(*id_, cp);
	if (!r) {
		disconnect(WEFT_SRP_DID_RESET);
		return r;
	}
	if (!login_done_.wait(Timeout::msecs(login_timeout_ms)))
		login_err_ = -err::ETIMEDOUT;
	if (login_err_) {
		disconnect(WEFT_SRP_DID_RESET);
		return Error(-login_err_);
	}
	return ok();
}

/* The REP's SRP_LOGIN_RSP: credits, IU sizes; receive IUs posted before the RTU. */
Result<void> Channel::logged_in(ConstBytes pdata)
{
	LoginRsp rsp;
	if (pdata.size() < sizeof(rsp))
		return Error(err::EPROTO);
	__builtin_memcpy(&rsp, pdata.data(), sizeof(rsp));
	if (rsp.opcode != op::login_rsp || rsp.max_it_iu_len.get() < iu_len_ ||
	    rsp.max_ti_iu_len.get() < sizeof(Rsp) || rsp.max_ti_iu_len.get() > 65536)
		return Error(err::EPROTO);
	if (rx_len_ != rsp.max_ti_iu_len.get() || !rx_.size()) {
		rx_len_ = rsp.max_ti_iu_len.get();
		rx_ = WEFT_TRY(Array<uint8_t>::make(Gfp::Sleep, size_t(rx_n_) * rx_len_));
	}
	for (uint32_t i = 0; i < rx_n_; i++)
		post_recv(i);
	SpinGuardIrq g(lock_);
	req_lim_ = static_cast<int>(rsp.req_lim_delta.get());
	return ok();
}

void Channel::login_failed(int e)
{
	login_err_ = e;
	login_done_.complete();
}

int Channel::event(const cm::Event &e)
{
	switch (e.type) {
	case cm::EventType::Reply: {
		auto r = logged_in(e.private_data);
		if (!r) {
			(void)cm::reject(*e.id, iba::cm::rej::consumer);
			login_failed(-r.error().code());
		}
		break;
	}
	case cm::EventType::Established: {
		{
			SpinGuardIrq g(lock_);
			connected_ = true;
		}
		login_done_.complete();
		break;
	}
	case cm::EventType::Rejected: {
		LoginRej rej{};
		if (e.private_data.size() >= sizeof(rej))
			__builtin_memcpy(&rej, e.private_data.data(), sizeof(rej));
		log.warn("%s: login rejected (CM reason %u, SRP reason 0x%08x)", t_.port.dev.name(),
			 e.reason, rej.opcode == op::login_rej ? rej.reason.get() : 0);
		login_failed(-err::ECONNREFUSED);
		break;
	}
	case cm::EventType::Unreachable:
		login_failed(-err::ETIMEDOUT);
		break;
	case cm::EventType::Disconnected:
		lost();
		break;
	default:
		break;
	}
	return 0;
}

/* The connection broke while up: the transport's timers decide (reconnect, fail, remove). */
void Channel::lost()
{
	{
		SpinGuardIrq g(lock_);
		if (!connected_)
			return;
		connected_ = false;
	}
	t_.lost();
}

void Channel::disconnect(uint8_t host_byte)
{
	{
		SpinGuardIrq g(lock_);
		connected_ = false;
	}
	if (id_) {
		qp_events_.detach(); /* no QP event reaches the Id from here on */
		cm::destroy(id_); /* DREQ; the QP goes to Error */
		id_ = nullptr;
	}
	rc_.destroy(*t_.port.dom.ctx, poll_work_);
	fail_all(host_byte);
	SpinGuardIrq g(lock_);
	tm_answered_ = false;
	tm_tag_ = 0;
}

void Channel::fail_all(uint8_t host_byte)
{
	for (uint32_t i = 0; i < slots_n_; i++) {
		uintptr_t c;
		{
			SpinGuardIrq g(lock_);
			c = slots_[i];
			slots_[i] = 0;
		}
		if (c)
			weft_srp_cmd_done(reinterpret_cast<void *>(c), host_byte, 0, nullptr, 0, 0);
	}
}

Result<void> Channel::post_send(const void *buf, uint32_t len, uint64_t wr_id)
{
	verbs::Sge sge;
	sge.addr = reinterpret_cast<uintptr_t>(buf);
	sge.length = len;
	sge.lkey = t_.port.dom.mr->lkey;
	verbs::SendWr wr;
	wr.wr_id = wr_id;
	wr.opcode = verbs::WrOpcode::Send;
	wr.send_flags = verbs::send_flag::signaled;
	wr.sg = Span<const verbs::Sge>(&sge, 1);
	verbs::Qp *qp = rc_.qp;
	if (!qp)
		return Error(err::ENOTCONN);
	return qp->post_send(wr);
}

void Channel::post_recv(uint32_t i)
{
	verbs::Sge sge;
	sge.addr = reinterpret_cast<uintptr_t>(&rx_[size_t(i) * rx_len_]);
	sge.length = rx_len_;
	sge.lkey = t_.port.dom.mr->lkey;
	verbs::RecvWr wr;
	wr.wr_id = wr_recv | i;
	wr.sg = Span<const verbs::Sge>(&sge, 1);
	if (!rc_.qp->post_recv(wr))
		lost();
}

Result<void> Channel::post_local(verbs::WrOpcode op, verbs::Mr *mr, uint32_t key, uint32_t access)
{
	verbs::SendWr wr;
	wr.opcode = op;
	if (op == verbs::WrOpcode::RegMr) {
		wr.reg.mr = mr;
		wr.reg.key = key;
		wr.reg.access = access;
	} else {
		wr.invalidate_rkey = key;
	}
	verbs::Qp *qp = rc_.qp;
	if (!qp)
		return Error(err::ENOTCONN);
	return qp->post_send(wr);
}

/*
 * IBA 10.6.3.5: the slot's data as one region at its kernel address, a
 * new key (the next variant) and the rights its direction needs.  The
 * scatterlist must be a page list: every segment but the first starts on
 * a page, every one but the last ends on one (the host's virt boundary).
 */
Result<uint32_t> Channel::register_data(uint16_t slot, bool invalidate_first, void *scmnd,
					const weft_srp_cmd_info &ci, uint64_t &iova, uint64_t &len)
{
	uint64_t *pages = &fr_scratch_[size_t(slot) * max_pages_];
	const verbs::PageList pl = WEFT_TRY(verbs::page_list<weft_srp_seg>(
		ci.nsg, page_size, Span<uint64_t>(pages, max_pages_),
		[scmnd](uint32_t f, weft_srp_seg *s, uint32_t n) { (void)weft_srp_cmd_sg(scmnd, f, s, n); }));
	iova = pl.iova;
	len = pl.len;
	const uint32_t np = pl.n;
	verbs::Mr *mr = fr_[slot];
	WEFT_TRY(mr->set_pages(Span<const uint64_t>(pages, np), page_size, iova, len));
	uint32_t old_key, key;
	{
		SpinGuardIrq g(lock_);
		old_key = fr_key_[slot];
		key = verbs::next_key(old_key);
		fr_key_[slot] = key;
		fr_live_[slot] = 1;
	}
	if (invalidate_first)
		WEFT_TRY(post_local(verbs::WrOpcode::LocalInv, mr, old_key, 0));
	const uint32_t rights = ci.dir == WEFT_SRP_DIR_TO_DEVICE ? verbs::access::remote_read
								 : verbs::access::local_write |
									   verbs::access::remote_write;
	WEFT_TRY(post_local(verbs::WrOpcode::RegMr, mr, key, rights));
	return key;
}

/* After the response: the target may no longer reach the slot's data (IBA 10.6.3.6). */
void Channel::invalidate_after(uint16_t slot)
{
	uint32_t key;
	{
		SpinGuardIrq g(lock_);
		if (!fr_live_[slot])
			return;
		fr_live_[slot] = 0;
		key = fr_key_[slot];
	}
	if (post_local(verbs::WrOpcode::LocalInv, fr_[slot], key, 0))
		return;
	/* The QP is going: the next command, or the next connection, invalidates it. */
	SpinGuardIrq g(lock_);
	fr_live_[slot] = 1;
}

/* SRP 5.6.2: the command in the slot's IU (its descriptor follows, SRP 5.6.2.1); its length. */
uint32_t Channel::build_cmd(uint8_t *iu, const weft_srp_cmd_info &ci)
{
	Cmd cmd{};
	cmd.opcode = op::cmd;
	tag_set(cmd.tag, cmd_tag(ci.tag));
	__builtin_memcpy(cmd.lun, ci.lun, 8);
	cmd.task_attr = task_attr::simple;
	__builtin_memcpy(cmd.cdb, ci.cdb, min<uint32_t>(ci.cdb_len, sizeof(cmd.cdb)));
	__builtin_memcpy(iu, &cmd, sizeof(cmd));
	return sizeof(cmd);
}

int Channel::queue(void *scmnd, const weft_srp_cmd_info &ci)
{
	if (ci.tag >= slots_n_ || ci.nsg > t_.sg_entries)
		return 1;
	uint8_t *iu = &tx_[size_t(ci.tag) * iu_len_];
	bool invalidate_first;
	{
		SpinGuardIrq g(lock_);
		/* SRP 6.5: one credit kept for task management. */
		if (!connected_ || slots_[ci.tag])
			return 1;
		if (req_lim_ <= 1) {
			t_.zero_req_lim.fetch_add(1, Order::Relaxed);
			return 1;
		}
		req_lim_--;
		slots_[ci.tag] = reinterpret_cast<uintptr_t>(scmnd);
		/* Aborted or failed before its response: still registered. */
		invalidate_first = fr_live_[ci.tag];
	}
	uint32_t len = build_cmd(iu, ci);
	bool sent = true;
	if (ci.nsg && ci.len && ci.dir != WEFT_SRP_DIR_NONE) {
		uint64_t iova = 0, total = 0;
		auto key = register_data(ci.tag, invalidate_first, scmnd, ci, iova, total);
		if (key) {
			DirectBuf b;
			b.va.set(iova);
			b.key.set(key.value());
			b.len.set(static_cast<uint32_t>(total));
			__builtin_memcpy(iu + len, &b, sizeof(b));
			len += sizeof(b);
			Cmd *c = reinterpret_cast<Cmd *>(iu);
			c->buf_fmt = ci.dir == WEFT_SRP_DIR_TO_DEVICE ? uint8_t(desc::direct << 4) : desc::direct;
		} else if (key.error().code() == err::EINVAL) {
			/* Not a page list (the host's virt boundary should make that impossible). */
			WEFT_LOG_RATELIMITED(log, Level::Warn, "%s: a command's data is not a page list: failed",
					     t_.port.dev.name());
			{
				SpinGuardIrq g(lock_);
				if (slots_[ci.tag] == reinterpret_cast<uintptr_t>(scmnd))
					slots_[ci.tag] = 0;
				req_lim_++;
			}
			weft_srp_cmd_done(scmnd, WEFT_SRP_DID_ERROR, 0, nullptr, 0, 0);
			return 0;
		} else {
			sent = false;
		}
	}
	if (sent && post_send(iu, len, ci.tag)) /* the send completion carries no meaning */
		return 0;
	SpinGuardIrq g(lock_);
	if (slots_[ci.tag] == reinterpret_cast<uintptr_t>(scmnd))
		slots_[ci.tag] = 0;
	req_lim_++;
	return 1;
}

bool Channel::connected()
{
	SpinGuardIrq g(lock_);
	return connected_;
}

int Channel::req_lim()
{
	SpinGuardIrq g(lock_);
	return req_lim_;
}

/* SRP 6.7: one function at a time; the answer is the SRP_RSP's response code. */
Result<uint8_t> Channel::task_mgmt(uint8_t function, const uint8_t lun[8], uint64_t task_tag)
{
	MutexGuard m(tm_mutex_);
	TskMgmt tm{};
	{
		SpinGuardIrq g(lock_);
		if (!connected_ || req_lim_ <= 0)
			return Error(err::ENOTCONN);
		req_lim_--;
		tm_tag_ = tm_bit | ++tm_seq_;
		tm_answered_ = false;
		tag_set(tm.tag, tm_tag_);
	}
	tm.opcode = op::tsk_mgmt;
	__builtin_memcpy(tm.lun, lun, 8);
	tm.function = function;
	tag_set(tm.task_tag, task_tag);
	__builtin_memcpy(tm_iu_, &tm, sizeof(tm));
	tm_done_.reinit();
	WEFT_TRY(post_send(tm_iu_, sizeof(tm), 0));
	auto r = tm_done_.wait(Timeout::msecs(tm_timeout_ms));
	SpinGuardIrq g(lock_);
	tm_tag_ = 0;
	if (!r || !tm_answered_)
		return Error(err::ETIMEDOUT);
	return tm_code_;
}

Result<void> Channel::abort(void *scmnd, uint16_t tag)
{
	{
		SpinGuardIrq g(lock_);
		if (tag >= slots_n_ || slots_[tag] != reinterpret_cast<uintptr_t>(scmnd))
			return ok(); /* answered meanwhile */
		slots_[tag] = 0;
	}
	uint8_t lun[8] = {};
	const uint8_t code = WEFT_TRY(task_mgmt(tmf::abort_task, lun, cmd_tag(tag)));
	return code == rsp_code::complete || code == rsp_code::succeeded ? ok() : Error(err::EIO);
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
	if (!verbs::drain_cq(*rc_.cq, 512, [this](const verbs::Wc &wc) { completion(wc); }))
		poll_work_.queue(); /* let others run; come back */
}

void Channel::completion(const verbs::Wc &wc)
{
	if (wc.status != verbs::WcStatus::Success) {
		if (wc.status != verbs::WcStatus::WrFlushErr)
			WEFT_LOG_RATELIMITED(log, Level::Info, "%s: completion error %s",
					     t_.port.dev.name(), verbs::wc_status_str(wc.status));
		lost();
		return;
	}
	if (wc.wr_id & wr_recv)
		received(static_cast<uint32_t>(wc.wr_id & 0xffffffff), wc.byte_len);
}

/* SRP 5: what the target sent. */
void Channel::received(uint32_t i, uint32_t len)
{
	const uint8_t *iu = &rx_[size_t(i) * rx_len_];
	switch (len ? iu[0] : 0xff) {
	case op::rsp:
		handle_rsp(iu, len);
		break;
	case op::cred_req:
	case op::aer_req: {
		if (len < sizeof(CredReq))
			break;
		CredReq c;
		__builtin_memcpy(&c, iu, sizeof(c));
		{
			SpinGuardIrq g(lock_);
			req_lim_ += static_cast<int>(c.req_lim_delta.get());
		}
		if (iu[0] == op::aer_req)
			log.info("%s: asynchronous event from the target", t_.port.dev.name());
		answer(iu[0] == op::cred_req ? op::cred_rsp : op::aer_rsp, c.tag);
		break;
	}
	case op::t_logout:
		log.info("%s: the target logged the channel out", t_.port.dev.name());
		post_recv(i);
		lost();
		return;
	default:
		WEFT_LOG_RATELIMITED(log, Level::Info, "%s: unexpected IU dropped", t_.port.dev.name());
		break;
	}
	post_recv(i);
}

/* SRP 5.5.2 / 5.8.2: the response to a target's request (no credit used). */
void Channel::answer(uint8_t opcode, const uint8_t tag[8])
{
	uint8_t *iu;
	{
		SpinGuardIrq g(lock_);
		iu = misc_iu_[misc_next_++ % misc_ius];
	}
	CredRsp r{};
	r.opcode = opcode;
	__builtin_memcpy(r.tag, tag, 8);
	__builtin_memcpy(iu, &r, sizeof(r));
	(void)post_send(iu, sizeof(r), 0);
}

/* SRP 5.7: credits, then the command (or TM function) it answers. */
void Channel::handle_rsp(const uint8_t *iu, uint32_t len)
{
	Rsp rsp;
	if (len < sizeof(rsp))
		return;
	__builtin_memcpy(&rsp, iu, sizeof(rsp));
	const uint64_t tag = tag_get(rsp.tag);
	const uint32_t resp_len = (rsp.flags & rsp_flag::rspvalid) ? rsp.resp_data_len.get() : 0;
	uint8_t code = rsp_code::complete;
	if (resp_len >= sizeof(TmRspData) && resp_len <= len - sizeof(rsp))
		code = iu[sizeof(rsp) + 3];
	uintptr_t scmnd = 0;
	{
		SpinGuardIrq g(lock_);
		req_lim_ += static_cast<int>(rsp.req_lim_delta.get());
		if (tag & tm_bit) {
			if (tag == tm_tag_) {
				tm_code_ = code;
				tm_answered_ = true;
				tm_done_.complete();
			}
			return;
		}
		const uint16_t slot = tag & 0xffff;
		if ((tag >> 16) == index_ && slot < slots_n_) {
			scmnd = slots_[slot];
			slots_[slot] = 0;
		}
	}
	if (!scmnd)
		return; /* aborted or failed meanwhile */
	invalidate_after(static_cast<uint16_t>(tag & 0xffff));
	int32_t resid = 0;
	if (rsp.flags & rsp_flag::diunder)
		resid = static_cast<int32_t>(rsp.data_in_res_cnt.get());
	else if (rsp.flags & rsp_flag::diover)
		resid = -static_cast<int32_t>(rsp.data_in_res_cnt.get());
	else if (rsp.flags & rsp_flag::dounder)
		resid = static_cast<int32_t>(rsp.data_out_res_cnt.get());
	else if (rsp.flags & rsp_flag::doover)
		resid = -static_cast<int32_t>(rsp.data_out_res_cnt.get());
	const uint8_t *sense = nullptr;
	uint32_t sense_len = 0;
	if (rsp.flags & rsp_flag::snsvalid) {
		const uint64_t at = sizeof(rsp) + uint64_t(resp_len);
		sense_len = rsp.sense_data_len.get();
		if (at + sense_len <= len)
			sense = iu + at;
		else
			sense_len = 0;
	}
	const uint8_t host = code == rsp_code::complete ? WEFT_SRP_DID_OK : WEFT_SRP_DID_ERROR;
	weft_srp_cmd_done(reinterpret_cast<void *>(scmnd), host, rsp.status, sense, sense_len, resid);
}

} // namespace weft::srp
