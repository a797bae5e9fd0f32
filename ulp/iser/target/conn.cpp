// SPDX-License-Identifier: GPL-2.0
/*
 * An iSER connection of the target (RFC 7145 5.1, 7): the ConnectRequest
 * answered with the iSER CM header (IBTA Annex A12), login PDUs over the
 * login buffers, the receive ring of full-feature phase, the RDMA CM's
 * events and the teardown LIO drives.  Sends and RDMA are in io.cpp.
 */
#include <weft/log.h>
#include <weft/verbs/drain.h>

#include "isert.h"
#include "parse.h"

namespace weft::isert {

namespace {
const Logger log("weft_isert");
using namespace iser::wire;
} // namespace

Stats stats;

Conn::Conn(Np &np)
	: np_(np), qp_events_(verbs::on_established<rdma_cm::Id, comm_est>, qp_failed, this),
	  lock_(WEFT_LOCK_CLASS("weft_isert_conn")), wq_(WEFT_LOCK_CLASS("weft_isert_conn_wq")),
	  poll_work_(poll_work, WEFT_LOCK_CLASS("weft_isert_poll")),
	  release_work_(release_work, WEFT_LOCK_CLASS("weft_isert_release"))
{
	stats.conns.fetch_add(1, Order::Relaxed);
}

Conn::~Conn()
{
	if (stats.conns.fetch_sub(1, Order::Relaxed) == 1 && conns_gone)
		conns_gone->wake_all();
}

Result<void> Conn::create_resources(verbs::Device &dev)
{
	const auto &a = dev.attr();
	const uint32_t rq = ring + 1;
	const uint32_t sq = min<uint32_t>(a.max_qp_wr, 4096);
	sges_ = min<uint32_t>(a.max_send_sge, 16);
	if (sges_ < 2)
		return Error(err::EINVAL);
	login_rx_ = WEFT_TRY(Array<uint8_t>::make(Gfp::Sleep, hdrs_len + data_max));
	login_tx_ = WEFT_TRY(Array<uint8_t>::make(Gfp::Sleep, hdrs_len + data_max));
	WEFT_TRY(dom_.open(dev, "weft_isert"));
	verbs::RcCaps caps;
	caps.send_wr = sq;
	caps.recv_wr = rq;
	caps.send_sge = sges_;
	caps.events = &qp_events_;
	WEFT_TRY(rc_.create(*dom_.ctx, dom_.pd, caps, cq_event, this));
	sq_avail_ = sq;
	return ok();
}

/*
 * RFC 7145 5.1, IBTA A12: the login receive is posted before the REP, the
 * REP says ZBVA is not used and neither is remote invalidation (the
 * initiator invalidates its STags itself).
 */
Result<void> Conn::start(const rdma_cm::Event &e)
{
	id_ = e.id;
	qp_events_.attach(*id_);
	rdma_cm::Info i = rdma_cm::info(*e.id);
	if (!i.dev)
		return Error(err::ENODEV);
	WEFT_TRY(create_resources(*i.dev));
	rdma_cm::set_handler(*e.id, *this, this);
	WEFT_TRY(rdma_cm::attach_qp(*e.id, *rc_.qp));
	WEFT_TRY(post_login_recv());
	/* As in-tree isert: the response invalidates the command's STag when the initiator allows it. */
	send_w_inv_ = parse::req_accepts_inv(e.conn.private_data);
	const CmHeader h = parse::rep_header(send_w_inv_);
	rdma_cm::ConnParam cp;
	cp.private_data = ConstBytes(reinterpret_cast<const uint8_t *>(&h), sizeof(h));
	cp.initiator_depth = min<uint8_t>(e.conn.initiator_depth,
					  static_cast<uint8_t>(min<uint32_t>(i.dev->attr().max_qp_init_rd_atom, 255)));
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	return rdma_cm::accept(*e.id, cp);
}

Result<void> Conn::post_login_recv()
{
	verbs::Sge sge;
	sge.addr = reinterpret_cast<uintptr_t>(login_rx_.data());
	sge.length = static_cast<uint32_t>(login_rx_.size());
	sge.lkey = dom_.mr->lkey;
	verbs::RecvWr wr;
	wr.wr_id = k_login_recv;
	wr.sg = Span<const verbs::Sge>(&sge, 1);
	{
		SpinGuardBh g(lock_);
		outstanding_++;
	}
	auto r = rc_.qp->post_recv(wr);
	if (!r)
		outstanding_dec();
	return r;
}

Result<void> Conn::post_recv(uint32_t i)
{
	verbs::Sge sge;
	sge.addr = reinterpret_cast<uintptr_t>(&rx_[size_t(i) * slot + hdr_off]);
	sge.length = hdrs_len + data_max;
	sge.lkey = dom_.mr->lkey;
	verbs::RecvWr wr;
	wr.wr_id = (uint64_t(i) << k_bits) | k_recv;
	wr.sg = Span<const verbs::Sge>(&sge, 1);
	{
		SpinGuardBh g(lock_);
		outstanding_++;
	}
	auto r = rc_.qp->post_recv(wr);
	if (!r)
		outstanding_dec();
	return r;
}

void Conn::outstanding_dec()
{
	bool wake;
	{
		SpinGuardBh g(lock_);
		wake = !--outstanding_;
	}
	if (wake)
		wq_.wake_all();
}

bool Conn::dead() const
{
	return disconnected_ || state_ == State::Terminating;
}

/*
 * The transport failed: LIO reinstates a connection it has (unless it is
 * already tearing it down: wait_conn); waiters learn it.
 */
void Conn::failed()
{
	iscsit_conn *lio;
	{
		SpinGuardBh g(lock_);
		disconnected_ = true;
		lio = state_ == State::Terminating ? nullptr : lio_;
	}
	wq_.wake_all();
	if (lio)
		weft_isert_conn_failed(lio);
	login_kick();
}

/*
 * RFC 7143 6.2: a login the initiator abandoned (it disconnected after a
 * non-final response) must not hold LIO's TPG login lock: its login work
 * runs, finds the connection gone and drops the login.  Once only, and
 * never after the final or a failed response (LIO frees the login then).
 */
void Conn::login_kick()
{
	iscsit_conn *lio;
	{
		SpinGuardBh g(lock_);
		if (!login_waiting_ || !disconnected_ || !lio_)
			return;
		login_waiting_ = false;
		lio = lio_;
	}
	weft_isert_login_abandoned(lio);
}

int Conn::event(const rdma_cm::Event &e)
{
	using T = rdma_cm::EventType;
	switch (e.type) {
	case T::Established:
		np_established();
		return 0;
	case T::Disconnected:
	case T::TimewaitExit:
	case T::AddrChange:
	case T::Rejected:
	case T::Unreachable:
	case T::ConnectError:
	case T::DeviceRemoval:
		break;
	default:
		return 0;
	}
	/* Not LIO's yet: the Np gives it up and it goes; else LIO tears it down. */
	bool bound;
	{
		SpinGuardBh g(lock_);
		bound = lio_ != nullptr;
		disconnected_ = true;
	}
	if (!bound && np_drop()) {
		release_later();
		return 0;
	}
	failed();
	return 0;
}

void Conn::np_established()
{
	{
		SpinGuardBh g(lock_);
		if (state_ == State::Connecting)
			state_ = State::Up;
	}
	np_.established(*this);
}

bool Conn::np_drop()
{
	return np_.drop(*this);
}

/* IBA 12.9.5: data before the RTU counts as the RTU. */
void Conn::comm_est(rdma_cm::Id &id)
{
	(void)rdma_cm::notify_established(id);
}

void Conn::qp_failed(void *conn)
{
	static_cast<Conn *>(conn)->failed();
}

void Conn::bind(iscsit_conn *lio, weft_isert_addr &peer, weft_isert_addr &local)
{
	rdma_cm::Info i = rdma_cm::info(*id_);
	auto conv = [](const rdma_cm::SockAddr &s, weft_isert_addr &a) {
		a.family = s.family;
		a.port = s.port;
		__builtin_memcpy(a.ip, s.ip, 16);
		a.scope_id = s.scope_id;
	};
	conv(i.dst, peer);
	conv(i.src, local);
	SpinGuardBh g(lock_);
	lio_ = lio;
	if (state_ == State::Up)
		state_ = State::Bound;
}

/* RFC 7143 10.12 / RFC 7145 7.3.9: the first login request of the connection. */
int Conn::login_first(uint8_t *bhs, uint8_t *data, uint32_t max, uint32_t &len)
{
	if (int e = login_wait())
		return e;
	/* The login buffer is not posted again before the response: it stays as received. */
	SpinGuardBh g(lock_);
	const uint8_t *p = login_rx_.data() + sizeof(Header);
	__builtin_memcpy(bhs, p, sizeof(Bhs));
	len = min(login_len_, max);
	__builtin_memcpy(data, p + sizeof(Bhs), len);
	return 0;
}

int Conn::login_wait()
{
	auto r = wq_.wait(
		[this] {
			SpinGuardBh g(lock_);
			return login_ready_ || disconnected_;
		},
		Timeout::forever(), true);
	if (!r)
		return -err::EINTR;
	SpinGuardBh g(lock_);
	if (!login_ready_)
		return -err::ENOTCONN;
	login_ready_--;
	return 0;
}

/* A login request arrived (RFC 7145 7.3.9: by SEND into the login buffer). */
void Conn::login_received(uint32_t byte_len)
{
	parse::Pdu pdu;
	if (parse::login(login_rx_.data(), byte_len, pdu) != parse::Verdict::Ok) {
		stats.dropped.fetch_add(1, Order::Relaxed);
		WEFT_LOG_RATELIMITED(log, Level::Info, "login PDU of %u bytes dropped", byte_len);
		(void)post_login_recv();
		return;
	}
	iscsit_conn *lio;
	{
		SpinGuardBh g(lock_);
		login_len_ = pdu.dlen;
		login_waiting_ = false; /* login_next queues the login work itself */
		lio = lio_;
	}
	if (lio)
		(void)weft_isert_login_next(lio, reinterpret_cast<const uint8_t *>(pdu.bhs), pdu.data,
					    pdu.dlen);
	{
		SpinGuardBh g(lock_);
		login_ready_++;
	}
	wq_.wake_all();
}

int Conn::login_tx(const uint8_t *bhs, const void *data, uint32_t len, bool failed_login,
		   bool complete)
{
	if (len > data_max)
		return -err::EINVAL;
	auto *h = reinterpret_cast<Header *>(login_tx_.data());
	*h = Header{};
	h->flags.set(opcode::iscsi_ctrl << 4);
	__builtin_memcpy(login_tx_.data() + sizeof(Header), bhs, sizeof(Bhs));
	if (len)
		__builtin_memcpy(login_tx_.data() + hdrs_len, data, len);
	{
		SpinGuardBh g(lock_);
		login_tx_len_ = hdrs_len + static_cast<uint32_t>(pad4(len));
		if (!failed_login && complete) {
			/* Sent from full_feature(), once the ring is posted (RFC 7145 7.3.9). */
			login_rsp_pending_ = true;
			return 0;
		}
	}
	if (!failed_login) {
		auto r = post_login_recv();
		if (!r)
			return r.to_errno();
	}
	if (int e = post_login_send())
		return e;
	if (!failed_login) {
		{
			SpinGuardBh g(lock_);
			login_waiting_ = true;
		}
		login_kick(); /* the initiator may have gone already */
	}
	return 0;
}

/* LIO's RX thread after the login: the ring, the final login response, then sleep. */
void Conn::full_feature()
{
	{
		SpinGuardBh g(lock_);
		if (!login_rsp_pending_)
			return;
		login_rsp_pending_ = false;
	}
	auto buf = Array<uint8_t>::make(Gfp::Sleep, size_t(ring) * slot);
	if (!buf)
		return;
	rx_ = move(*buf);
	for (uint32_t i = 0; i < ring; i++)
		if (!post_recv(i))
			return;
	{
		SpinGuardBh g(lock_);
		if (state_ == State::Bound)
			state_ = State::FullFeature;
	}
	if (post_login_send())
		return;
	(void)wq_.wait([] { return false; }, Timeout::forever(), true);
}

void Conn::cq_event(verbs::Cq &, void *arg)
{
	static_cast<Conn *>(arg)->poll_work_.queue();
}

void Conn::poll_work(Work &w)
{
	container_of(&w, &Conn::poll_work_)->poll();
}

void Conn::poll()
{
	if (!verbs::drain_cq(*rc_.cq, 512, [this](const verbs::Wc &wc) { completion(wc); }))
		poll_work_.queue(); /* let others run; come back */
}

void Conn::completion(const verbs::Wc &wc)
{
	const uint64_t kind = wc.wr_id & ((1u << k_bits) - 1);
	const bool good = wc.status == verbs::WcStatus::Success;
	if (!good && wc.status != verbs::WcStatus::WrFlushErr) {
		WEFT_LOG_RATELIMITED(log, Level::Info, "completion error %s, reinstating the connection",
				     verbs::wc_status_str(wc.status));
		failed();
	}
	auto *io = reinterpret_cast<weft_isert_io *>(wc.wr_id & ~uint64_t((1u << k_bits) - 1));
	switch (kind) {
	case k_recv:
		if (good)
			received(static_cast<uint32_t>(wc.wr_id >> k_bits), wc.byte_len);
		outstanding_dec();
		break;
	case k_login_recv:
		if (good)
			login_received(wc.byte_len);
		outstanding_dec();
		break;
	case k_login_send:
		retire(1);
		break;
	case k_send: {
		const uint32_t n = io->n_wr;
		weft_isert_sent(io, good);
		retire(n);
		break;
	}
	case k_read: {
		const uint32_t n = io->n_wr;
		weft_isert_read_done(io, good);
		retire(n);
		break;
	}
	default: /* an unsignaled RDMA WR, seen only when it failed */
		break;
	}
}

/* RFC 7145 7.3: a full-feature PDU in ring buffer @i. */
void Conn::received(uint32_t i, uint32_t byte_len)
{
	const uint8_t *p = &rx_[size_t(i) * slot + hdr_off];
	iscsit_conn *lio;
	{
		SpinGuardBh g(lock_);
		lio = dead() ? nullptr : lio_;
	}
	if (!lio)
		return;
	parse::Pdu pdu;
	switch (parse::pdu(p, byte_len, pdu)) {
	case parse::Verdict::Ok:
		break;
	case parse::Verdict::Short:
		/* In-tree reinstates the connection too: its sender cannot be trusted. */
		stats.dropped.fetch_add(1, Order::Relaxed);
		WEFT_LOG_RATELIMITED(log, Level::Info, "PDU of %u bytes shorter than it declares",
				     byte_len);
		failed();
		return;
	default:
		stats.dropped.fetch_add(1, Order::Relaxed);
		(void)post_recv(i);
		return;
	}
	if (weft_isert_rx(lio, reinterpret_cast<const uint8_t *>(pdu.bhs), pdu.data, pdu.dlen,
			  pdu.read_stag, pdu.read_va, pdu.write_stag, pdu.write_va) < 0)
		stats.dropped.fetch_add(1, Order::Relaxed);
	/* LIO copied what it keeps: the buffer goes back at once. */
	(void)post_recv(i);
}

void Conn::ctrl_hold(int delta)
{
	bool wake;
	{
		SpinGuardBh g(lock_);
		ctrl_ += delta;
		wake = !ctrl_;
	}
	if (wake)
		wq_.wake_all();
}

void Conn::logout_posted()
{
	SpinGuardBh g(lock_);
	logout_posted_ = true;
}

void Conn::terminate()
{
	bool first;
	{
		SpinGuardBh g(lock_);
		first = state_ != State::Terminating;
		state_ = State::Terminating;
	}
	wq_.wake_all();
	if (first && id_)
		(void)rdma_cm::disconnect(*id_); /* the QP goes to Error: every WR flushes */
}

/* iscsit_wait_conn: every WR completed (flushed), no control completion running. */
bool Conn::wait_conn()
{
	terminate();
	(void)wq_.wait([this] {
		SpinGuardBh g(lock_);
		return !outstanding_;
	});
	SpinGuardBh g(lock_);
	return logout_posted_;
}

void Conn::wait_ctrl()
{
	(void)wq_.wait([this] {
		SpinGuardBh g(lock_);
		return !ctrl_;
	});
}

void Conn::release()
{
	if (id_) {
		qp_events_.detach(); /* no QP event reaches the Id from here on */
		rdma_cm::destroy(id_);
		id_ = nullptr;
	}
	if (dom_.ctx) /* else no CQ ever queued the poll work */
		rc_.destroy(*dom_.ctx, poll_work_);
	dom_.close();
}

void Conn::release_work(Work &w)
{
	Conn *c = container_of(&w, &Conn::release_work_);
	c->release();
	reap(*c);
}

} // namespace weft::isert
