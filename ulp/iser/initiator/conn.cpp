// SPDX-License-Identifier: GPL-2.0
/*
 * One iSER connection of the initiator: RDMA CM connection setup with the
 * iSER CM private data (RFC 7145 5.1, IBTA Annex A12), the verbs objects,
 * receive buffers (login, then the full feature ring: RFC 7145 7.3.9),
 * completions to libiscsi, and teardown.
 */
#include <weft/log.h>
#include <weft/verbs/drain.h>
#include <weft/verbs/rc_conn.h>

#include "initiator.h"

namespace weft::iser {

namespace {
const Logger log("weft_iser");
constexpr uint32_t resolve_timeout_ms = 1000; /* as in-tree; iscsid retries */
constexpr uint32_t poll_budget = 256;
} // namespace

Params params = {1024};

Conn::Conn()
	: waitq_(WEFT_LOCK_CLASS("weft_iser_up")), release_mutex_(WEFT_LOCK_CLASS("weft_iser_release")),
	  poll_work_(poll_work, WEFT_LOCK_CLASS("weft_iser_poll")), lock_(WEFT_LOCK_CLASS("weft_iser_conn"))
{
}

Conn::~Conn() { shutdown(); }

/* RFC 7145 5.1: the connection is an RC connection through the RDMA CM's TCP port space. */
Result<void> Conn::connect(const rdma_cm::SockAddr &dst)
{
	dst_ = dst;
	login_rx_ = WEFT_TRY(Array<uint8_t>::make(Gfp::Sleep, login_rx_len));
	rdma_cm::Net *net = rdma_cm::current_net();
	auto id = rdma_cm::create_id(net, rdma_cm::PortSpace::Tcp, verbs::QpType::Rc, *this, this);
	rdma_cm::put_net(net);
	rdma_cm::Id *i = WEFT_TRY(move(id));
	{
		SpinGuardBh g(lock_);
		id_ = i;
	}
	/* Handlers may run from here on; they find id_ set. */
	return rdma_cm::resolve_addr(*i, nullptr, dst, resolve_timeout_ms);
}

int Conn::poll_up(int timeout_ms)
{
	auto done = [this] {
		SpinGuardBh g(lock_);
		return state_ != State::Connecting;
	};
	auto r = waitq_.wait(done, Timeout::msecs(timeout_ms < 0 ? 0 : timeout_ms), true);
	SpinGuardBh g(lock_);
	if (state_ == State::Up)
		return 1;
	if (state_ == State::Down)
		return -1;
	return r || r.error().code() == err::ETIMEDOUT ? 0 : -1;
}

bool Conn::up()
{
	SpinGuardBh g(lock_);
	return state_ == State::Up;
}

Result<rdma_cm::SockAddr> Conn::peer()
{
	SpinGuardBh g(lock_);
	if (!id_)
		return Error(err::ENOTCONN);
	return dst_;
}

/* Own Context on the resolved device: PD, DMA MR (local rights only), the slots' MRs, CQ, QP. */
Result<void> Conn::setup_verbs(rdma_cm::Id &id)
{
	const rdma_cm::Info info = rdma_cm::info(id);
	verbs::Device &dev = *info.dev;
	verbs::DmaDomain dom;
	WEFT_TRY(dom.open(dev, "weft_iser"));
	{
		SpinGuardBh g(lock_);
		ctx_ = dom.ctx; /* release_verbs() closes it from here on */
	}
	pd_ = dom.pd;
	mr_ = dom.mr;
	WEFT_TRY(alloc_regs(*dom.ctx, dev));
	verbs::RcCaps caps;
	caps.send_wr = sq_depth;
	caps.recv_wr = rx_ring + 1;
	caps.send_sge = 2;
	caps.cq_extra = 1;
	caps.sq_sig_all = true;
	caps.port = info.port;
	verbs::RcQueues q;
	WEFT_TRY(q.create(*dom.ctx, pd_, caps, cq_event, this));
	{
		SpinGuardBh g(lock_);
		cq_ = q.cq;
		qp_ = q.qp;
	}
	return rdma_cm::attach_qp(id, *q.qp);
}

void Conn::fail(int e)
{
	{
		SpinGuardBh g(lock_);
		if (state_ == State::Down)
			return;
		state_ = State::Down;
		err_ = e;
	}
	waitq_.wake_all();
}

/* The connection broke while bound: libiscsi's recovery (iscsid relogins). */
void Conn::lost(bool datalen)
{
	void *ic;
	{
		SpinGuardBh g(lock_);
		ic = state_ == State::Up ? iconn_ : nullptr;
		if (state_ != State::Down)
			state_ = State::Down;
	}
	waitq_.wake_all();
	if (ic)
		weft_iser_shim_conn_failure(ic, datalen);
}

int Conn::event(const rdma_cm::Event &e)
{
	using T = rdma_cm::EventType;
	switch (e.type) {
	case T::AddrResolved:
		if (auto r = rdma_cm::resolve_route(*e.id, resolve_timeout_ms); !r)
			fail(-r.error().code());
		break;
	case T::RouteResolved: {
		auto r = setup_verbs(*e.id);
		if (r) {
			/* IBTA Annex A12: no zero-based VAs; STags per command, remote invalidation welcome. */
			wire::CmHeader h;
			pdu::build_cm_req(h, true);
			rdma_cm::ConnParam cp;
			cp.private_data = ConstBytes(reinterpret_cast<const uint8_t *>(&h), sizeof(h));
			cp.responder_resources = static_cast<uint8_t>(min<uint32_t>(
				rdma_cm::info(*e.id).dev->attr().max_qp_rd_atom, 255));
			cp.initiator_depth = 1;
			cp.retry_count = 7;
			cp.rnr_retry_count = 6;
			r = rdma_cm::connect(*e.id, cp);
		}
		if (!r) {
			log.info("connection setup failed: errno %d", r.error().code());
			fail(-r.error().code());
		}
		break;
	}
	case T::Established: {
		{
			SpinGuardBh g(lock_);
			if (state_ == State::Connecting)
				state_ = State::Up;
			remote_inv_ = pdu::rep_uses_remote_inv(e.conn.private_data);
		}
		waitq_.wake_all();
		break;
	}
	case T::Rejected:
		log.info("connection rejected (reason %d)", e.status);
		fail(err::ECONNREFUSED);
		break;
	case T::AddrError:
	case T::RouteError:
	case T::ConnectError:
	case T::Unreachable:
		fail(e.status < 0 ? -e.status : err::EHOSTUNREACH);
		break;
	case T::Disconnected:
	case T::AddrChange:
		lost(false);
		break;
	case T::DeviceRemoval: {
		/* The removal waits for the Id and our objects on the device: fail, let go of both. */
		lost(false);
		release_verbs();
		SpinGuardBh g(lock_);
		if (id_ != e.id)
			return 0; /* shutdown() has it and destroys it when this returns */
		id_ = nullptr;
		return 1;
	}
	default:
		break;
	}
	return 0;
}

void Conn::shutdown()
{
	MutexGuard m(release_mutex_);
	rdma_cm::Id *id;
	{
		SpinGuardBh g(lock_);
		state_ = State::Down;
		id = exchange(id_, nullptr);
	}
	waitq_.wake_all();
	if (id)
		rdma_cm::destroy(id); /* DREQ; waits for a running handler */
	release_verbs();
}

/* Whoever takes the pointers destroys the objects: shutdown() or DEVICE_REMOVAL. */
void Conn::release_verbs()
{
	verbs::Context *ctx;
	verbs::Qp *qp;
	verbs::Cq *cq;
	{
		SpinGuardBh g(lock_);
		state_ = State::Down;
		ctx = exchange(ctx_, nullptr);
		qp = exchange(qp_, nullptr);
		cq = exchange(cq_, nullptr);
	}
	if (!ctx)
		return;
	verbs::RcQueues q{cq, qp};
	q.destroy(*ctx, poll_work_); /* poll() finds cq_ gone if queued again */
	ctx->close(false); /* the MR and PD */
}

/* RFC 7145 7.3.9: the full feature ring is posted before the login request that leads to it. */
Result<void> Conn::bind(void *iconn)
{
	if (!rx_.size())
		rx_ = WEFT_TRY(Array<uint8_t>::make(Gfp::Sleep, size_t(rx_ring) * ffp_rx_len));
	SpinGuardBh g(lock_);
	if (state_ != State::Up || iconn_)
		return Error(err::EINVAL);
	iconn_ = iconn;
	ffp_ = false;
	return ok();
}

void Conn::unbind()
{
	{
		SpinGuardBh g(lock_);
		iconn_ = nullptr;
	}
	shutdown();
}

Result<void> Conn::post_login_rx_locked()
{
	verbs::Sge sge;
	sge.addr = reinterpret_cast<uintptr_t>(login_rx_.data());
	sge.length = login_rx_len;
	sge.lkey = mr_->lkey;
	verbs::RecvWr wr;
	wr.wr_id = wr_login;
	wr.sg = Span<const verbs::Sge>(&sge, 1);
	WEFT_TRY(qp_->post_recv(wr));
	login_posted_ = true;
	return ok();
}

Result<void> Conn::post_rx_locked(uint32_t i)
{
	verbs::Sge sge;
	sge.addr = reinterpret_cast<uintptr_t>(&rx_[size_t(i) * ffp_rx_len]);
	sge.length = ffp_rx_len;
	sge.lkey = mr_->lkey;
	verbs::RecvWr wr;
	wr.wr_id = wr_rx | i;
	wr.sg = Span<const verbs::Sge>(&sge, 1);
	return qp_->post_recv(wr);
}

Result<void> Conn::post_send_locked(uint64_t wr_id, const uint8_t *hdrs, uintptr_t data, uint32_t len,
				    uint32_t lkey)
{
	verbs::Sge sge[2];
	sge[0].addr = reinterpret_cast<uintptr_t>(hdrs);
	sge[0].length = wire::hdrs_len;
	sge[0].lkey = mr_->lkey;
	sge[1].addr = data;
	sge[1].length = len;
	sge[1].lkey = lkey;
	verbs::SendWr wr;
	wr.wr_id = wr_id;
	wr.opcode = verbs::WrOpcode::Send;
	wr.send_flags = verbs::send_flag::signaled;
	wr.sg = Span<const verbs::Sge>(sge, len ? 2 : 1);
	return qp_->post_send(wr);
}

static int send_errno(const Error &e) { return e.code() == err::ENOMEM ? -err::ENOBUFS : -e.code(); }

int Conn::send_control(void *task, uint8_t *hdrs, const void *data, uint32_t len, bool login_task,
		       bool to_ffp, bool no_response)
{
	pdu::build_header(*reinterpret_cast<wire::Header *>(hdrs), pdu::Stags{});
	SpinGuardBh g(lock_);
	if (!qp_ || state_ != State::Up)
		return -err::ENOTCONN;
	/* The login buffer first: the response to this PDU lands in it (RQ order). */
	if (!ffp_ && !login_posted_)
		if (auto r = post_login_rx_locked(); !r)
			return send_errno(r.error());
	if (login_task && to_ffp) {
		for (uint32_t i = 0; i < rx_ring; i++)
			if (auto r = post_rx_locked(i); !r)
				return send_errno(r.error());
		ffp_ = true;
	}
	auto r = post_send_locked(no_response ? wr_put | reinterpret_cast<uintptr_t>(task) : 0, hdrs,
				  reinterpret_cast<uintptr_t>(data), len, mr_->lkey);
	return r ? 0 : send_errno(r.error());
}

namespace {
/* An unsolicited Data-Out's headers, alive until its SEND completes. */
struct DataOut {
	alignas(8) uint8_t hdrs[wire::hdrs_len];
};
} // namespace

/*
 * RFC 7145 7.3.5, 7.3.6: STags for what the target moves by RDMA, each a
 * registration of this command's data with only the rights its
 * direction needs (a write sent all unsolicited: none); immediate data
 * rides in the SEND from the same registration.
 */
int Conn::send_command(void *task, uint8_t *hdrs, const weft_iser_cmd &c)
{
	pdu::Stags s;
	SpinGuardBh g(lock_);
	if (!qp_ || state_ != State::Up)
		return -err::ENOTCONN;
	const bool data = c.dir != WEFT_ISER_DIR_NONE && c.len;
	const bool rdma_read = data && c.dir == WEFT_ISER_DIR_WRITE && c.len > c.imm_len + c.unsol_len;
	uint64_t iova = 0;
	if (data) {
		const uint32_t access = c.dir == WEFT_ISER_DIR_READ
						? verbs::access::local_write | verbs::access::remote_write
						: (rdma_read ? verbs::access::remote_read : 0);
		auto r = register_locked(task, c, access);
		if (!r)
			return r.error().code() == err::EINVAL ? -err::EINVAL : send_errno(r.error());
		iova = *r;
	}
	if (data && c.dir == WEFT_ISER_DIR_READ) {
		s.rsv = true;
		s.read_stag = fr_key_[c.slot];
		s.read_va = iova;
	} else if (rdma_read) {
		/* The target reads what was not sent unsolicited, from the VA after it. */
		s.wsv = true;
		s.write_stag = fr_key_[c.slot];
		s.write_va = iova + c.imm_len + c.unsol_len;
	}
	pdu::build_header(*reinterpret_cast<wire::Header *>(hdrs), s);
	const uint32_t imm = data && c.dir == WEFT_ISER_DIR_WRITE ? c.imm_len : 0;
	auto r = post_send_locked(0, hdrs, iova, imm, imm ? fr_key_[c.slot] : mr_->lkey);
	return r ? 0 : send_errno(r.error());
}

/* RFC 7145 7.3.4: each unsolicited Data-Out is a SEND of its own. */
Result<void> Conn::send_data_outs(void *task, const weft_iser_cmd &c)
{
	for (;;) {
		auto *d = new (Gfp::Atomic) DataOut;
		if (!d)
			return Error(err::ENOMEM);
		uint32_t off, len;
		if (!weft_iser_shim_next_data_out(task, d->hdrs + sizeof(wire::Header), &off, &len)) {
			delete d;
			return ok();
		}
		pdu::build_header(*reinterpret_cast<wire::Header *>(d->hdrs), pdu::Stags{});
		SpinGuardBh g(lock_);
		/* From the command's registration (send_command made it). */
		auto r = qp_ && state_ == State::Up && c.slot < fr_.size() && fr_live_[c.slot]
				 ? post_send_locked(wr_free | reinterpret_cast<uintptr_t>(d), d->hdrs,
						    fr_iova_[c.slot] + off, len, fr_key_[c.slot])
				 : Result<void>(Error(err::ENOTCONN));
		if (!r) {
			delete d;
			return r;
		}
	}
}

void Conn::cq_event(verbs::Cq &, void *arg) { static_cast<Conn *>(arg)->poll_work_.queue(); }

void Conn::poll_work(Work &w) { container_of(&w, &Conn::poll_work_)->poll(); }

void Conn::poll()
{
	verbs::Cq *cq;
	{
		SpinGuardBh g(lock_);
		cq = cq_;
	}
	if (cq && !verbs::drain_cq(*cq, poll_budget, [this](const verbs::Wc &wc) { completion(wc); }))
		poll_work_.queue(); /* let others run; come back */
}

void Conn::completion(const verbs::Wc &wc)
{
	const uint64_t kind = wc.wr_id & ~wr_mask;
	if (kind == wr_free)
		delete reinterpret_cast<DataOut *>(wc.wr_id & wr_mask);
	if (wc.status != verbs::WcStatus::Success) {
		if (wc.status != verbs::WcStatus::WrFlushErr)
			WEFT_LOG_RATELIMITED(log, Level::Info, "completion error %s",
					     verbs::wc_status_str(wc.status));
		lost(false);
		return;
	}
	if (kind == wr_put) {
		weft_iser_shim_put_task(reinterpret_cast<void *>(wc.wr_id & wr_mask));
	} else if (kind == wr_login) {
		{
			SpinGuardBh g(lock_);
			login_posted_ = false;
		}
		received(login_rx_.data(), login_rx_len, wc);
	} else if (kind == wr_rx) {
		const uint32_t i = static_cast<uint32_t>(wc.wr_id & wr_mask);
		if (i < rx_ring) {
			received(&rx_[size_t(i) * ffp_rx_len], ffp_rx_len, wc);
			SpinGuardBh g(lock_);
			if (qp_ && state_ == State::Up && !post_rx_locked(i))
				state_ = State::Down; /* the flush that follows reports it */
		}
	}
}

/* RFC 7145 9.1: a received SEND is one iSCSI PDU behind its iSER header. */
void Conn::received(const uint8_t *buf, uint32_t cap, const verbs::Wc &wc)
{
	void *ic;
	{
		SpinGuardBh g(lock_);
		ic = state_ == State::Up ? iconn_ : nullptr;
	}
	if (!ic)
		return;
	auto rx = pdu::parse_rx(ConstBytes(buf, cap), wc.byte_len);
	if (!rx) {
		WEFT_LOG_RATELIMITED(log, Level::Info, "bad PDU (%u bytes): errno %d", wc.byte_len,
				     rx.error().code());
		lost(rx.error().code() == err::EBADMSG);
		return;
	}
	if (!remote_invalidated(ic, reinterpret_cast<const uint8_t *>(rx->bhs), wc) ||
	    weft_iser_shim_complete_pdu(ic, rx->bhs, rx->data, rx->dlength))
		lost(false);
}

} // namespace weft::iser
