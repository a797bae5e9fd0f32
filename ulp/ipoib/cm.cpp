// SPDX-License-Identifier: GPL-2.0
/*
 * IPoIB connected mode (RFC 4755): the mode switch, and connections set
 * up, failed and released through weft_cm (cm.h).  The fast path is in
 * cm_data.cpp.
 */
#include <weft/log.h>
#include <weft/mad/sa.h>

#include "cm.h"
#include "interface.h"
#include "ipoib_module.h"

namespace weft::ipoib {

namespace {
const Logger log("weft_ipoib");
/* A peer that refused or did not answer gets datagrams this long before we ask again. */
constexpr uint64_t retry_ms = 10000;
} // namespace

constinit CmTestHooks cm_test_hooks;

Cm::Cm(Interface &ifc, const CmParams &p)
	: ifc_(ifc), params_(p), events_lock_(WEFT_LOCK_CLASS("weft_ipoib_cm_events")),
	  lock_(WEFT_LOCK_CLASS("weft_ipoib_cm")), mutex_(WEFT_LOCK_CLASS("weft_ipoib_cm_rx")),
	  work_(work_fn, WEFT_LOCK_CLASS("weft_ipoib_cm_work"))
{
}

uint64_t Cm::now_ms() const
{
	return ifc_.now_ms();
}

uint64_t Cm::service_id() const
{
	return cmp::service_id(ifc_.qp_->qpn);
}

static void cm_cq_event(verbs::Cq &, void *arg)
{
	auto *nd = *static_cast<weft_ipoib_netdev **>(arg);
	if (nd)
		weft_ipoib_napi_schedule(nd);
}

Result<void> Cm::setup()
{
	const uint32_t ncqe = params_.srq_size + params_.max_conns * (params_.ring_size + 1);
	cq_ = WEFT_TRY(ifc_.ctx_->create_cq(ncqe, cm_cq_event, &ifc_.nd_, verbs::Cq::HandlerContext::Atomic,
					    ifc_.comp_vector()));
	(void)cq_->req_notify(false);
	srq_ = WEFT_TRY(ifc_.ctx_->create_srq(ifc_.pd_, params_.srq_size, WEFT_IPOIB_CM_SG, nullptr));
	rx_ = WEFT_TRY(Array<RxBuf>::make(Gfp::Sleep, params_.srq_size));
	for (RxBuf &b : rx_)
		b = RxBuf{};
	slots_ = WEFT_TRY(Array<TxConn *>::make(Gfp::Sleep, params_.max_conns));
	for (TxConn *&s : slots_)
		s = nullptr;
	return ok();
}

Result<Cm *> Cm::create(Interface &ifc, const CmParams &p)
{
	auto *c = new (Gfp::Sleep) Cm(ifc, p);
	if (!c)
		return Error(err::ENOMEM);
	auto r = c->setup();
	if (!r) {
		c->destroy();
		return r.error();
	}
	return c;
}

void Cm::kick()
{
	if (!dying_.load(Order::Acquire))
		work_.queue();
}

int Cm::set_mode(bool connected)
{
	if (connected == this->connected())
		return 0;
	if (connected && !params_.advertise)
		return -static_cast<int>(err::EINVAL);
	connected_.store(connected, Order::Release);
	if (connected) {
		/* RFC 4755 §6: up to 64 KiB less the header's alignment. */
		weft_ipoib_set_mtu_rtnl(ifc_.nd_, cmp::max_mtu, cmp::max_mtu);
	} else {
		const uint32_t ud = ifc_.ud_mtu_now();
		const uint32_t cur = weft_ipoib_mtu(ifc_.nd_);
		weft_ipoib_set_mtu_rtnl(ifc_.nd_, ud, cur < ud ? cur : ud);
	}
	weft_ipoib_update_features_rtnl(ifc_.nd_);
	log.info("%s: %s mode", weft_ipoib_name(ifc_.nd_), connected ? "connected" : "datagram");
	kick();
	return 0;
}

void Cm::flush()
{
	flush_.store(true, Order::Release);
	kick();
}

Result<verbs::Qp *> Cm::rc_qp(verbs::EventHandler *events, uint32_t send_wr)
{
	verbs::QpInitAttr init;
	init.type = verbs::QpType::Rc;
	init.send_cq = cq_;
	init.recv_cq = cq_;
	init.srq = srq_;
	init.cap.max_send_wr = send_wr;
	init.cap.max_send_sge = Interface::tx_sge;
	init.sq_sig_all = true;
	init.port = ifc_.port_;
	init.events = events;
	return ifc_.ctx_->create_qp(ifc_.pd_, init);
}

/* --- active side --------------------------------------------------------------- */

void Cm::connect(TxConn &c)
{
	auto fail_with = [&](const char *what, int e) {
		WEFT_LOG_RATELIMITED(log, Level::Info, "%s: connection to QPN %06x: %s failed (%d)",
				     weft_ipoib_name(ifc_.nd_), c.dst.qpn(), what, e);
		fail(c, retry_ms);
	};
	auto path = mad::sa::resolve_path(ifc_.dev_, ifc_.port_, c.dst.gid_value(), ifc_.pkey_);
	if (!path)
		return fail_with("path query", path.error().code());
	auto qp = rc_qp(nullptr, params_.ring_size);
	if (!qp)
		return fail_with("RC QP", qp.error().code());
	auto id = cm::create_id(ifc_.dev_, *this, static_cast<Conn *>(&c));
	if (!id) {
		(void)ifc_.ctx_->destroy_qp(*qp);
		return fail_with("CM Id", id.error().code());
	}
	{
		SpinGuardBh g(lock_);
		c.qp = *qp;
		c.id = *id;
		c.gen = ++gen_ & 0x7fffffff;
	}
	const cmp::PrivData pd = cmp::encode(ifc_.qp_->qpn, cmp::buf_size);
	cm::ConnectParam cp;
	cp.qp = *qp;
	cp.port = ifc_.port_;
	cp.path = *path;
	cp.service_id = cmp::service_id(c.dst.qpn());
	cp.private_data = ConstBytes(reinterpret_cast<const uint8_t *>(&pd), sizeof(pd));
	cp.srq = true;
	auto r = cm::connect(**id, cp);
	if (!r)
		fail_with("REQ", r.error().code());
}

/*
 * The connection is no use: datagrams for the peer from now on (after
 * @retry ms it is tried again); work_ releases Id and QP.  Process
 * context, or NAPI with @from_poll.
 */
void Cm::fail(TxConn &c, uint64_t retry)
{
	void *pending[max_pending];
	uint32_t n;
	{
		SpinGuardBh g(lock_);
		if (c.state == TxState::Up)
			ifc_.uncount(&weft_ipoib_stats::cm_connections);
		if (c.state != TxState::Failed)
			ifc_.count(&weft_ipoib_stats::cm_failures);
		c.state = TxState::Failed;
		c.failed_at = now_ms() + retry;
		c.release = c.id || c.qp;
		n = c.npending;
		for (uint32_t i = 0; i < n; i++)
			pending[i] = c.pending[i];
		c.npending = 0;
	}
	for (uint32_t i = 0; i < n; i++)
		ud_send(pending[i], c.dst);
	kick();
}

void Cm::tx_event(TxConn &c, const cm::Event &e)
{
	switch (e.type) {
	case cm::EventType::Reply: {
		const uint32_t mtu = cmp::decode_mtu(e.private_data);
		if (!mtu) {
			fail(c, retry_ms);
			break;
		}
		SpinGuardBh g(lock_);
		c.mtu = mtu;
		break;
	}
	case cm::EventType::Established: {
		bool up = false;
		{
			SpinGuardBh g(lock_);
			if (c.state == TxState::Connecting && c.mtu) {
				c.state = TxState::Up;
				up = true;
			}
		}
		if (up) {
			ifc_.count(&weft_ipoib_stats::cm_connections);
			ifc_.count(&weft_ipoib_stats::cm_connects);
			send_pending(c);
		}
		break;
	}
	case cm::EventType::Rejected:
	case cm::EventType::Unreachable:
		fail(c, retry_ms);
		break;
	case cm::EventType::Disconnected:
		/* The peer went (mode change, unload): ask again with the next packet. */
		fail(c, 0);
		break;
	default:
		break;
	}
}

/* Destroy a failed connection's Id and QP (work_ only); the TxConn stays, Failed. */
void Cm::release_tx(TxConn &c)
{
	cm::Id *id;
	verbs::Qp *qp;
	{
		SpinGuardBh g(lock_);
		id = c.id;
		qp = c.qp;
		c.id = nullptr;
		c.qp = nullptr;
		c.release = false;
		/* Completions still queued for the old QP no longer match. */
		c.gen = ++gen_ & 0x7fffffff;
	}
	if (id)
		cm::destroy(id);
	if (qp)
		(void)ifc_.ctx_->destroy_qp(qp);
	drain_ring(c);
}

/* --- passive side -------------------------------------------------------------- */

void Cm::RxConn::handle(const verbs::Event &e)
{
	/* IBA 11.6.3.1: data before the RTU counts as the RTU; the only call allowed here. */
	if (e.type != verbs::EventType::CommEst)
		return;
	/* Under the lock: release_rx clears event_id before it destroys the Id. */
	SpinGuardBh g(cm.events_lock_);
	if (event_id)
		cm::established(*event_id);
}

int Cm::on_request(const cm::Event &e)
{
	/* In either mode: the C flag in our address says we take connections (in-tree too). */
	if (dying_.load(Order::Acquire) || !cmp::decode_mtu(e.private_data))
		return -1;
	auto *r = new (Gfp::Sleep) RxConn(*this);
	if (!r)
		return -1;
	auto qp = rc_qp(r, 1);
	if (!qp) {
		delete r;
		return -1;
	}
	r->qp = *qp;
	r->id = e.id;
	{
		/* Before accept() takes the QP to RTR, where data raises CommEst. */
		SpinGuardBh g(events_lock_);
		r->event_id = e.id;
	}
	/* The context is always a Conn * (RxConn has another base first). */
	cm::set_handler(*e.id, *this, static_cast<Conn *>(r));
	const cmp::PrivData pd = cmp::encode(ifc_.qp_->qpn, cmp::buf_size);
	cm::AcceptParam a;
	a.qp = r->qp;
	a.private_data = ConstBytes(reinterpret_cast<const uint8_t *>(&pd), sizeof(pd));
	a.srq = true;
	if (!cm::accept(*e.id, a)) {
		(void)ifc_.ctx_->destroy_qp(r->qp);
		delete r;
		return -1;
	}
	{
		MutexGuard g(mutex_);
		rx_conns_.push_back(*r);
	}
	ifc_.count(&weft_ipoib_stats::cm_accepts);
	ifc_.count(&weft_ipoib_stats::cm_passive);
	return 0;
}

void Cm::rx_event(RxConn &c, const cm::Event &e)
{
	switch (e.type) {
	case cm::EventType::Disconnected:
	case cm::EventType::Rejected:
	case cm::EventType::Unreachable: {
		MutexGuard g(mutex_);
		c.dead = true;
		break;
	}
	default:
		return;
	}
	kick();
}

/*
 * Two phases (cm.h): the QP must outlive the Id, which moves it, yet the
 * QP's events lead to the Id, and the HCA may deliver one it raised
 * earlier (CommEst from its engine's work) at any time until the QP is
 * destroyed.  So: no new work (events stop reaching the Id), drain
 * (cm::destroy: no handler call after; destroy_qp: no QP event after),
 * then free.
 */
void Cm::release_rx(RxConn &c)
{
	ifc_.uncount(&weft_ipoib_stats::cm_passive);
	{
		SpinGuardBh g(events_lock_);
		c.event_id = nullptr;
	}
	cm::destroy(c.id);
	c.id = nullptr;
	if (auto hook = cm_test_hooks.rx_released.load(Order::Acquire))
		hook(c, *c.qp, cm_test_hooks.arg.load(Order::Acquire));
	(void)ifc_.ctx_->destroy_qp(c.qp);
	delete &c;
}

int Cm::event(const cm::Event &e)
{
	if (e.type == cm::EventType::Request)
		return on_request(e);
	auto *c = static_cast<Conn *>(cm::context(*e.id));
	if (!c)
		return 0;
	if (c->passive)
		rx_event(*static_cast<RxConn *>(c), e);
	else
		tx_event(*static_cast<TxConn *>(c), e);
	return 0;
}

/* --- work_ --------------------------------------------------------------------- */

void Cm::work_fn(Work &w)
{
	container_of(&w, &Cm::work_)->reconcile();
}

/* Every sending connection gone, and with @passive the peers' too (work_ or destroy). */
void Cm::teardown_all(bool passive)
{
	List<TxConn, &TxConn::node> tx;
	{
		SpinGuardBh g(lock_);
		while (TxConn *c = tx_conns_.pop_front()) {
			if (c->state == TxState::Up)
				ifc_.uncount(&weft_ipoib_stats::cm_connections);
			c->state = TxState::Failed;
			tx.push_back(*c);
		}
	}
	while (TxConn *c = tx.pop_front()) {
		release_tx(*c);
		{
			SpinGuardBh g(lock_);
			slots_[c->slot] = nullptr;
			nconns_--;
		}
		for (uint32_t i = 0; i < c->npending; i++)
			weft_ipoib_skb_free(c->pending[i], false);
		delete c;
	}
	if (!passive)
		return;
	List<RxConn, &RxConn::rx_node> rx;
	{
		MutexGuard g(mutex_);
		while (RxConn *c = rx_conns_.pop_front())
			rx.push_back(*c);
	}
	while (RxConn *c = rx.pop_front())
		release_rx(*c);
}

void Cm::age()
{
	kick();
}

/*
 * Sending connections nobody used for dest_idle_secs go altogether (Id,
 * QP, slot), as in-tree's go with their neighbour: Up with nothing in
 * flight, or Failed and due for a retry.  A host that sent to many peers
 * over time still connects to new ones (cm_max_conns bounds those in
 * use); the peer's side goes with the DREQ of cm::destroy.
 */
void Cm::age_tx()
{
	const uint64_t idle_ms = Interface::dest_idle_ms();
	if (!idle_ms)
		return;
	for (;;) {
		TxConn *old = nullptr;
		{
			SpinGuardBh g(lock_);
			const uint64_t now = now_ms();
			for (TxConn &c : tx_conns_) {
				const bool quiet = c.head == c.tail && c.npending == 0 && !c.release;
				const bool settled = c.state == TxState::Up ||
						     (c.state == TxState::Failed && now >= c.failed_at);
				if (quiet && settled && c.used_at + idle_ms <= now) {
					old = &c;
					break;
				}
			}
			if (old) {
				tx_conns_.remove(*old);
				if (old->state == TxState::Up)
					ifc_.uncount(&weft_ipoib_stats::cm_connections);
				old->state = TxState::Failed;
			}
		}
		if (!old)
			return;
		release_tx(*old);
		{
			SpinGuardBh g(lock_);
			slots_[old->slot] = nullptr;
			nconns_--;
		}
		ifc_.count(&weft_ipoib_stats::cm_aged);
		delete old;
	}
}

/*
 * The peers' connections that received nothing for twice dest_idle_secs
 * go (cm::destroy sends the DREQ), as in-tree reaps stale passive ones:
 * the peer's own side ages after dest_idle_secs and says so with a DREQ,
 * so this finds only peers that went away without one (a crash, a cable
 * pulled on their side).  Idle means the QP's receive PSN (Query QP)
 * stood still: nothing on the receive path pays for the watch.
 */
void Cm::age_rx()
{
	const uint64_t idle_ms = 2 * Interface::dest_idle_ms();
	if (!idle_ms)
		return;
	MutexGuard g(mutex_);
	const uint64_t now = now_ms();
	for (RxConn &c : rx_conns_) {
		if (c.dead)
			continue;
		verbs::QpAttr a;
		c.qp->query(a);
		if (!c.seen_at || a.rq_psn != c.seen_psn) {
			c.seen_psn = a.rq_psn;
			c.seen_at = now;
		} else if (c.seen_at + idle_ms <= now) {
			c.dead = true;
			ifc_.count(&weft_ipoib_stats::cm_passive_aged);
		}
	}
}

void Cm::reconcile()
{
	if (dying_.load(Order::Acquire))
		return;
	const bool want = connected();
	/*
	 * The passive side, in both modes: in-tree listens whenever its
	 * address has the C flag (ipoib_cm_dev_open), so a datagram-mode
	 * interface still takes a connected-mode peer's connection; only its
	 * own sending goes as datagrams.
	 */
	for (uint32_t i = 0; i < rx_.size(); i++)
		if (!rx_[i].skb && !post_rx(i, true))
			break;
	/* Only work_ writes it: our own reads need no order. */
	if (!listener_.load(Order::Relaxed)) {
		auto id = cm::create_id(ifc_.dev_, *this, nullptr);
		if (id && cm::listen(**id, service_id()))
			listener_.store(*id, Order::Release);
		else if (id)
			cm::destroy(*id);
		if (!listener_.load(Order::Relaxed))
			log.err("%s: cannot listen for connections", weft_ipoib_name(ifc_.nd_));
	}
	/* Datagram mode: our sending connections go; a flush takes the peers' too. */
	const bool flush = flush_.exchange(false, Order::AcqRel);
	if (flush || !want)
		teardown_all(flush);
	age_rx();
	/* Dead passive connections. */
	for (;;) {
		RxConn *dead = nullptr;
		{
			MutexGuard g(mutex_);
			for (RxConn &c : rx_conns_)
				if (c.dead) {
					dead = &c;
					break;
				}
			if (dead)
				rx_conns_.remove(*dead);
		}
		if (!dead)
			break;
		release_rx(*dead);
	}
	if (want)
		age_tx();
	/* Failed connections to release, new ones to start. */
	for (;;) {
		TxConn *rel = nullptr, *start = nullptr;
		{
			SpinGuardBh g(lock_);
			for (TxConn &c : tx_conns_) {
				if (c.release) {
					rel = &c;
					break;
				}
				if (want && c.state == TxState::Connecting && !c.started) {
					c.started = true;
					start = &c;
					break;
				}
			}
		}
		if (rel)
			release_tx(*rel);
		else if (start)
			connect(*start);
		else
			break;
	}
}

void Cm::destroy()
{
	dying_.store(true, Order::Release);
	work_.cancel_sync();
	/* work_ is done: nothing else writes it. */
	if (cm::Id *l = listener_.load(Order::Relaxed))
		cm::destroy(l);
	listener_.store(nullptr, Order::Release);
	teardown_all();
	/* A handler that ran meanwhile may have queued it. */
	work_.cancel_sync();
	teardown_all();
	bool gone = !srq_ || ifc_.ctx_->destroy_srq(srq_);
	srq_ = nullptr;
	if (gone)
		free_rx();
	gone = gone && (!cq_ || ifc_.ctx_->destroy_cq(cq_));
	cq_ = nullptr;
	if (!gone)
		log.err("%s/%u: connected-mode verbs objects still in use", ifc_.dev_.name(), ifc_.port_);
	delete this;
}

} // namespace weft::ipoib

using weft::ipoib::Interface;

int weft_ipoib_set_mode(void *ctx, bool connected)
{
	auto *ifc = static_cast<Interface *>(ctx);
	return ifc->cm() ? ifc->cm()->set_mode(connected) : (connected ? -weft::err::EINVAL : 0);
}

bool weft_ipoib_connected(void *ctx)
{
	auto *ifc = static_cast<Interface *>(ctx);
	return ifc->cm() && ifc->cm()->connected();
}
