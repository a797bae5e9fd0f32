// SPDX-License-Identifier: GPL-2.0
/*
 * Ids: creation and destruction, the table of connections by local
 * communication ID, the retransmission/time-wait timer, and delivery of
 * handler calls outside the CM lock, in order, one caller at a time.
 */
#include "cm_priv.h"

namespace weft::cm {

const Logger log("weft_cm");
Cm *cm;

uint64_t now_ms()
{
	return weft_ktime_ns() / 1000000;
}

Cm::Cm() :
	lock(WEFT_LOCK_CLASS("weft_cm")), next_local_id(weft_random_u32() | 1),
	reap_lock(WEFT_LOCK_CLASS("weft_cm_reap")),
	reaper([](Work &) {
		for (;;) {
			Id *id;
			{
				SpinGuard g(cm->reap_lock);
				id = cm->reap.pop_front();
			}
			if (!id)
				return;
			/* Whoever found it in the table without a reference is done with it. */
			{
				MutexGuard g(cm->lock);
			}
			delete id;
		}
	}, WEFT_LOCK_CLASS("weft_cm_reaper")),
	delivered(WEFT_LOCK_CLASS("weft_cm_delivered")), freed_wq(WEFT_LOCK_CLASS("weft_cm_freed"))
{
}

Id::Id(verbs::Device &d, Handler &h, void *ctx) :
	dev(Ref<verbs::Device>::share(&d)), handler(&h), context(ctx),
	timer(timer_fn, WEFT_LOCK_CLASS("weft_cm_timer")),
	comm_est(comm_est_work, WEFT_LOCK_CLASS("weft_cm_comm_est"))
{
	cm->live.fetch_add(1, Order::Relaxed);
}

Id::~Id()
{
	while (Pending *p = pending.pop_front())
		delete p;
	{
		MutexGuard g(cm->lock);
		cm->all.remove(*this);
		if (ulp_gone)
			cm->lingering.fetch_sub(1, Order::Release);
	}
	cm->live.fetch_sub(1, Order::Release);
	/* Inside the reaper: drain_ids() flushes it before the CM goes. */
	cm->freed.fetch_add(1, Order::Release);
	cm->freed_wq.wake_all();
}

void owner_gone_locked(Id &id)
{
	cm->lock.assert_held();
	if (id.ulp_gone)
		return;
	id.ulp_gone = true;
	cm->lingering.fetch_add(1, Order::Release);
}

void stop_all_timers()
{
	/* One Id per round, so that no lock is held while its works are waited for. */
	for (;;) {
		Ref<Id> found;
		{
			MutexGuard g(cm->lock);
			for (Id &id : cm->all)
				if (!id.stopped && id.get_unless_zero()) {
					found = Ref<Id>::adopt(&id);
					break;
				}
			if (!found)
				return;
			found->stopped = true;
			found->deadline = 0;
		}
		found->timer.cancel_sync();
		if (found->comm_est.cancel_sync())
			found->put(); /* the work's reference */
		MutexGuard g(cm->lock);
		if (found->timer_ref) {
			found->timer_ref = false;
			found->put();
		}
	}
}

void Id::release(Id *id)
{
	{
		SpinGuard g(cm->reap_lock);
		cm->reap.push_back(*id);
	}
	cm->reaper.queue();
}

void Pending::set_pdata(const uint8_t *p, size_t n)
{
	pdata_len = static_cast<uint8_t>(min(n, sizeof(pdata)));
	__builtin_memcpy(pdata, p, pdata_len);
}

/* --- the table --------------------------------------------------------- */

void table_add_locked(Id &id)
{
	cm->lock.assert_held();
	if (id.in_table)
		return;
	if (!id.local_id) {
		/* IBA 12.6.5 Local Communication ID: not reused while a peer may remember it. */
		do {
			id.local_id = cm->next_local_id++;
		} while (!id.local_id || find_local_locked(id.local_id));
	}
	id.get();
	id.in_table = true;
	cm->ids.push_back(id);
}

void table_remove_locked(Id &id)
{
	cm->lock.assert_held();
	if (!id.in_table)
		return;
	id.in_table = false;
	cm->ids.remove(id);
	id.put();
}

Id *find_local_locked(uint32_t local_id)
{
	cm->lock.assert_held();
	for (Id &id : cm->ids)
		if (id.local_id == local_id && id.state != State::Listen)
			return &id;
	return nullptr;
}

CmPort *find_port_locked(verbs::Device &dev, uint8_t port)
{
	cm->lock.assert_held();
	for (CmPort &p : cm->ports)
		if (&p.dev == &dev && p.num == port)
			return &p;
	return nullptr;
}

/* --- timer -------------------------------------------------------------- */

void arm_locked(Id &id, uint32_t ms)
{
	cm->lock.assert_held();
	if (!ms) {
		id.deadline = 0;
		/* Off the timer now; a run already under way finds nothing to do and drops its reference. */
		if (id.timer_ref && id.timer.cancel()) {
			id.timer_ref = false;
			id.put(); /* never the last inside the lock: release() defers to the reaper */
		}
		return;
	}
	id.deadline = now_ms() + ms;
	if (!id.timer_ref) {
		id.get();
		id.timer_ref = true;
	}
	id.timer.modify(ms);
}

void timer_fn(DelayedWork &w)
{
	Id *id = container_of(&w, &Id::timer);
	Ref<Id> hold;
	{
		MutexGuard g(cm->lock);
		if (!id->timer_ref)
			return; /* a run left over from a re-arm: no reference of its own */
		uint64_t now = now_ms();
		if (id->deadline && now < id->deadline) {
			id->timer.modify(id->deadline - now); /* re-armed while this run was due */
			return;
		}
		hold = Ref<Id>::adopt(id); /* the timer's reference */
		id->timer_ref = false;
		if (id->deadline && id->port) {
			id->deadline = 0;
			expire_locked(*id);
		}
	}
	deliver(*id);
}

/* --- sending ------------------------------------------------------------ */

void format_hdr(mad::Mad &m, uint16_t attr, uint64_t tid)
{
	__builtin_memset(m.bytes, 0, sizeof(m.bytes));
	auto &h = m.hdr();
	h.base_version.set(1);
	h.mgmt_class.set(iba::mgmt_class::cm);
	h.class_version.set(iba::cm::class_version);
	h.method.set(iba::method::send);
	h.tid.set(tid);
	h.attr_id.set(attr);
}

void send_raw_locked(CmPort &p, mad::Mad &m, const mad::MadAddr &to)
{
	cm->lock.assert_held();
	mad::SendReq &r = cm->scratch;
	r.mad = m;
	r.to = to;
	r.timeout_ms = 0;
	r.retries = 0;
	auto sent = p.gsi.send(p.agent, r);
	if (!sent)
		log.dbg("send of CM attribute 0x%x failed (errno %d)", m.hdr().attr_id.get(),
			sent.error().code());
	cm->stats.sent++;
}

void send_msg_locked(Id &id)
{
	cm->lock.assert_held();
	if (id.port && id.has_msg)
		send_raw_locked(*id.port, id.msg, id.peer);
}

/* --- delivery ----------------------------------------------------------- */

Pending *queue_locked(Id &id, EventType t, QpMove qp)
{
	cm->lock.assert_held();
	if (id.ulp_gone)
		return nullptr;
	auto *p = new (Gfp::Sleep) Pending();
	if (!p) {
		log.warn("cm id %08x: event %u lost (no memory)", id.local_id, unsigned(t));
		return nullptr;
	}
	p->type = t;
	p->qp = qp;
	id.pending.push_back(*p);
	return p;
}

namespace {

bool move_qp(verbs::Qp &qp, QpMove m, const QpSetup &s)
{
	switch (m) {
	case QpMove::None: return true;
	case QpMove::Error: qp_to_error(qp); return true;
	case QpMove::RtrRts: return qp_to_rtr(qp, s) && qp_to_rts(qp, s);
	case QpMove::Rts: return qp_to_rts(qp, s).ok(); /* a no-op if accept() did it */
	}
	return true;
}

int call(Id &id, Handler &h, Pending &p)
{
	Event e{};
	e.type = p.type;
	e.id = &id;
	e.listen_id = p.listener.get();
	e.req = p.type == EventType::Request ? &p.req : nullptr;
	e.sidr = (p.type == EventType::SidrRequest || p.type == EventType::SidrReply) ? &p.sidr : nullptr;
	e.reason = p.reason;
	e.ari = ConstBytes(p.ari, p.ari_len);
	e.private_data = ConstBytes(p.pdata, p.pdata_len);
	return h.event(e);
}

} // namespace

void deliver(Id &id)
{
	Ref<Id> hold = Ref<Id>::share(&id);
	{
		MutexGuard g(cm->lock);
		if (id.delivering.load(Order::Relaxed))
			return; /* that caller runs what was just queued too */
		id.delivering.store(true, Order::Release);
		id.deliverer.store(weft_current_task(), Order::Release);
	}
	for (;;) {
		Own<Pending> p;
		verbs::Qp *qp = nullptr;
		Handler *h = nullptr;
		QpSetup setup;
		{
			MutexGuard g(cm->lock);
			if (id.ulp_gone) {
				while (Pending *x = id.pending.pop_front())
					delete x;
			}
			p = Own<Pending>(id.pending.pop_front());
			if (!p) {
				id.deliverer.store(nullptr, Order::Release);
				id.delivering.store(false, Order::Release);
				break;
			}
			qp = id.qp;
			h = id.handler;
			setup = id.setup;
		}
		if (qp && !move_qp(*qp, p->qp, setup)) {
			MutexGuard g(cm->lock);
			qp_move_failed_locked(id, *p);
			continue;
		}
		Id *l = p->silent ? nullptr : p->listener.get();
		bool orphan = false, gone;
		{
			MutexGuard g(cm->lock);
			gone = id.ulp_gone; /* destroyed while the QP moved: no more calls */
			/* A Request whose listener went meanwhile is refused; else the listener waits for it. */
			orphan = l && l->ulp_gone;
			if (l && !orphan && !gone) {
				l->requests_in_flight.fetch_add(1, Order::Release);
				id.serving = l;
			}
		}
		if (gone || p->silent)
			continue;
		int r = orphan ? -1 : call(id, *h, *p);
		if (l && !orphan) {
			{
				MutexGuard g(cm->lock);
				id.serving = nullptr;
				l->requests_in_flight.fetch_sub(1, Order::Release);
			}
			cm->delivered.wake_all();
		}
		if (r < 0)
			destroy(&id);
		else if (p->then_rtu)
			reply_accepted(id);
	}
	cm->delivered.wake_all();
}

/* --- the API ------------------------------------------------------------ */

Result<Id *> create_id(verbs::Device &dev, Handler &h, void *context)
{
	if (dev.node_type() != verbs::NodeType::Ca)
		return Error(err::ENODEV);
	auto *id = new (Gfp::Sleep) Id(dev, h, context);
	if (!id)
		return Error(err::ENOMEM);
	MutexGuard g(cm->lock);
	cm->all.push_back(*id);
	return id;
}

void destroy(Id *id)
{
	verbs::Qp *qp;
	uint32_t mine = 0; /* Requests of this listener our caller is inside of */
	{
		MutexGuard g(cm->lock);
		if (id->ulp_gone)
			return; /* a second destroy from a handler returning < 0 */
		owner_gone_locked(*id);
		abandon_locked(*id);
		qp = exchange(id->qp, nullptr);
		for (Id &x : cm->all)
			if (x.serving == id && x.deliverer.load(Order::Relaxed) == weft_current_task())
				mine++;
	}
	/*
	 * No handler call runs after this returns (unless it is our caller):
	 * neither one for this Id nor a Request handler this listener's
	 * handler is running on a new Id.
	 */
	bool self = id->deliverer.load(Order::Acquire) == weft_current_task();
	(void)cm->delivered.wait([&] {
		return (self || !id->delivering.load(Order::Acquire)) &&
		       id->requests_in_flight.load(Order::Acquire) <= mine;
	});
	if (qp && qp->state() != verbs::QpState::Reset)
		qp_to_error(*qp);
	id->put(); /* the owner's reference */
}

void *context(const Id &id)
{
	return id.context;
}

void set_handler(Id &id, Handler &h, void *ctx)
{
	MutexGuard g(cm->lock);
	id.handler = &h;
	id.context = ctx;
}

State state(const Id &id)
{
	MutexGuard g(cm->lock);
	return id.state;
}

uint32_t local_comm_id(const Id &id)
{
	return id.local_id;
}

const char *state_name(State s)
{
	static const char *const names[] = {
		"idle",	       "listen",      "req-sent",    "rep-wait",     "req-rcvd",    "mra-req-sent",
		"rep-sent",    "mra-rep-rcvd", "rep-rcvd",   "mra-rep-sent", "established", "dreq-sent",
		"timewait",    "sidr-req-sent", "sidr-req-rcvd",
	};
	auto i = static_cast<size_t>(s);
	return i < sizeof(names) / sizeof(names[0]) ? names[i] : "?";
}

Stats stats()
{
	MutexGuard g(cm->lock);
	Stats s = cm->stats;
	s.ids = cm->live.load(Order::Relaxed);
	s.lingering = cm->lingering.load(Order::Relaxed);
	s.comm_est = cm->comm_est.load(Order::Relaxed);
	return s;
}

namespace {

uint64_t freed_now()
{
	return cm->freed.load(Order::Acquire);
}

/*
 * Sleep until @done() or until an Id is freed; false if neither happened
 * within @quiet_ms.  Time-wait and DREQ retries end by the CM's own
 * timers, so waiting for frees (not for a fixed time) keeps the callers
 * independent of how fast the host is.
 */
template <typename Done> bool wait_progress(Done done, uint32_t quiet_ms)
{
	const uint64_t seen = freed_now();
	return cm->freed_wq
		.wait([&] { return done() || freed_now() != seen; }, Timeout::msecs(quiet_ms))
		.ok();
}

} // namespace

Result<void> settle(uint32_t quiet_ms)
{
	auto done = [] { return cm->lingering.load(Order::Acquire) == 0; };
	while (!done())
		if (!wait_progress(done, quiet_ms))
			return Error(err::ETIMEDOUT);
	return ok();
}

uint32_t drain_ids(uint32_t keep, uint32_t quiet_ms)
{
	auto live = [] { return cm->live.load(Order::Acquire); };
	auto done = [&] { return live() <= keep; };
	while (!done())
		if (!wait_progress(done, quiet_ms))
			break;
	/* The last Id was freed, and woke us, from inside the reaper: let that run end. */
	cm->reaper.flush();
	const uint32_t n = live();
	return n > keep ? n - keep : 0;
}

void report_left_ids(uint32_t left)
{
	log.err("%u ids left: not freed while the CM goes (their memory is leaked)", left);
	MutexGuard g(cm->lock);
	for (Id &id : cm->all)
		log.err("cm id %08x: %s, %s, %d references%s", id.local_id, state_name(id.state),
			id.ulp_gone ? "destroyed by its owner" : "never destroyed by its owner",
			id.ref_count(), id.in_table ? ", in the table" : "");
	weft_warn(__FILE__, __LINE__, "weft_cm: ids left at unload");
}

Result<void> listen(Id &id, uint64_t service_id, uint64_t mask)
{
	MutexGuard g(cm->lock);
	if (id.state != State::Idle || id.ulp_gone)
		return Error(err::EINVAL);
	for (Id &o : cm->ids)
		if (o.state == State::Listen && o.dev.get() == id.dev.get() &&
		    ((o.service_id ^ service_id) & o.service_mask & mask) == 0)
			return Error(err::EBUSY);
	id.service_id = service_id & mask;
	id.service_mask = mask;
	id.state = State::Listen;
	table_add_locked(id);
	return ok();
}

} // namespace weft::cm
