// SPDX-License-Identifier: GPL-2.0
/* The kernel SA client (IBA Vol 1 15.4): queries, path cache, multicast joins. */
#include <weft/list.h>
#include <weft/log.h>
#include <weft/mad/port.h>
#include <weft/wait.h>

#include "port_mad.h"
#include "qp_transport.h"
#include "sa_client.h"

namespace weft::mad {

namespace {

const Logger log("weft_mad");

/* IBA 13.4.6.4: how long the SA gets, and how often it is asked again. */
constexpr uint32_t sa_timeout_ms = 1000;
constexpr uint8_t sa_retries = 3;

struct Pending {
	SendReq req;
	Completion done;
};

/* How long a failed subscription waits for its next try. */
constexpr unsigned long inform_retry_ms = 2000;
/*
 * How long after a port event the subscription waits: an SM's sweep
 * brings several (LID, SM, PortActive, ClientReregister) and one
 * subscription follows the last; and the port's peer (a switch port the
 * SM takes to Active in the same sweep) may still be Armed, dropping a
 * GMP sent the moment this port became Active (IBA 7.2.4).
 */
constexpr unsigned long inform_settle_ms = 3000;

/* IBA 14.2.5.1: the SA's traps a port subscribes to, GID in and out of service. */
constexpr uint16_t gid_traps[] = {iba::sa_trap::gid_in_service, iba::sa_trap::gid_out_of_service};

struct Watchers {
	List<sa::GidWatcher, &sa::GidWatcher::node> list;
};
/* Held while a watcher is called: unwatch_gids waits for the call to end. */
using WatchersLock = Protected<Watchers, Mutex>;
WatchersLock *watchers;
alignas(WatchersLock) unsigned char watchers_storage[sizeof(WatchersLock)];

} // namespace

void sa_watchers_init()
{
	watchers = new (watchers_storage) WatchersLock(WEFT_LOCK_CLASS("weft_mad_sa_watchers"));
}

void sa_watchers_exit()
{
	/* Every user of weft_mad is gone, and unwatched before it went. */
	watchers->~WatchersLock();
}

SaPort *find_sa(verbs::Device &dev, uint8_t port)
{
	MadPort *p = find_port(dev, port);
	return p ? &static_cast<PortMad *>(p)->sa() : nullptr;
}

SaPort::SaPort(MadPort &p) :
	port(p), cache_lock_(WEFT_LOCK_CLASS("weft_mad_sa_cache")), inform_lock_(WEFT_LOCK_CLASS("weft_mad_sa_inform")),
	inform_work_(inform_tick, WEFT_LOCK_CLASS("weft_mad_sa_inform_work"))
{
}

SaPort::~SaPort()
{
	stop();
}

Result<void> SaPort::start()
{
	agent_.rmpp = true; /* GetTable answers come in segments (IBA 15.4.2) */
	agent_.add_method(iba::sa_method::report); /* IBA 13.4.8.3: the SA's notices to subscribers */
	WEFT_TRY(port.gsi().register_agent(agent_));
	started_ = true;
	port.device.add_event_handler(*this);
	/* Already ACTIVE under an SM (the module loaded late): subscribe now. */
	verbs::PortAttr pa;
	if (port.device.query_port(port.port, pa) && pa.sm_lid && pa.state == verbs::PortState::Active) {
		SpinGuardBh g(inform_lock_);
		sub_.port_event(true, true);
	}
	inform_work_.modify(0);
	return ok();
}

void SaPort::stop()
{
	if (!exchange(started_, false))
		return;
	port.device.remove_event_handler(*this);
	unsubscribe();
	port.gsi().unregister_agent(agent_); /* queries in flight end with ECANCELED */
	/* Nothing queues it now (no events, no Reports); a subscription in flight was cancelled. */
	inform_work_.cancel_sync();
}

/*
 * IBA 15.2.5.12: InformInfo with Subscribe 0 ends a subscription, so the
 * SA stops reporting to a port nobody listens on any more (the port goes,
 * or weft_mad unloads).  Sent, not waited for: the QP sends it at once
 * (the soft HCA runs a posted send in the poster's context) and
 * unregistering the agent next only cancels the wait for the answer.
 * Waiting would cost each port the SA's timeout when no SM is left, which
 * at a thousand ports is minutes.  If it is lost, the SA drops the
 * subscription when it drops the port.
 */
void SaPort::unsubscribe()
{
	{
		SpinGuardBh g(inform_lock_);
		if (sub_.state() != inform::Subscription::State::Subscribed)
			return;
	}
	for (size_t i = 0; i < sizeof(gid_traps) / sizeof(gid_traps[0]); i++) {
		const iba::InformInfo ii = inform::subscription(gid_traps[i], false);
		if (prepare(unsub_req_[i], iba::sa_method::set, iba::sa_attr::inform_info, 0, &ii, sizeof(ii)))
			(void)port.gsi().send(agent_, unsub_req_[i]);
	}
}

void SaPort::send_done(Agent &, SendReq &r)
{
	if (&r == &sub_req_)
		return subscription_done(r);
	if (&r == &unsub_req_[0] || &r == &unsub_req_[1])
		return; /* cancelled by stop(), or answered before it */
	container_of(&r, &Pending::req)->done.complete();
}

void SaPort::handle(const verbs::Event &e)
{
	using verbs::EventType;
	if (e.port != port.port)
		return;
	switch (e.type) {
	case EventType::LidChange:
	case EventType::SmChange:
	case EventType::PkeyChange:
	case EventType::ClientReregister:
	case EventType::PortActive:
	case EventType::PortErr:
		gen_.fetch_add(1, Order::Relaxed);
		break;
	default:
		return;
	}
	/* IBA 14.4.11: a new SM, or one asking for reregistration, has no subscription of ours. */
	const bool renew = e.type == EventType::SmChange || e.type == EventType::ClientReregister ||
			   e.type == EventType::PortActive;
	verbs::PortAttr pa;
	const bool usable = port.device.query_port(port.port, pa) && pa.sm_lid && pa.state == verbs::PortState::Active;
	{
		SpinGuardBh g(inform_lock_);
		sub_.port_event(usable, renew);
		sub_epoch_++; /* a subscription in flight is for the subnet as it was */
	}
	if (started_)
		inform_work_.modify(inform_settle_ms);
}

void SaPort::recv(Agent &a, const Mad &m, const MadAddr &from)
{
	if (m.hdr().method.get() != iba::sa_method::report)
		return;
	auto n = inform::parse_report(m);
	/* IBA 13.4.8.3: every Report is acknowledged, or the SA sends it again. */
	if (auto r = make_own<SendReq>(Gfp::Atomic)) {
		inform::report_response(m, r.value()->mad);
		r.value()->to = from;
		(void)port.gsi().send(a, *r.value());
	}
	if (!n) {
		other_.fetch_add(1, Order::Relaxed);
		return;
	}
	(n.value().in_service ? gid_in_ : gid_out_).fetch_add(1, Order::Relaxed);
	if (!n.value().in_service)
		forget_path(n.value().gid);
	{
		SpinGuardBh g(inform_lock_);
		if (nevents_ == max_events) {
			lost_.fetch_add(1, Order::Relaxed);
			return;
		}
		events_[nevents_++] = n.value();
	}
	inform_work_.modify(0);
}

/* A GID out of service: paths to it are gone (the mad.md "stale cache" of port events only). */
void SaPort::forget_path(const verbs::Gid &gid)
{
	SpinGuardBh g(cache_lock_);
	for (Cached &c : cache_)
		if (c.gen && c.dgid == gid)
			c.gen = 0;
}

/*
 * IBA 15.2.5.12: SubnAdmSet(InformInfo) for traps 64 then 65, one at a
 * time without waiting (a work item that slept in each port's query would
 * hold a worker per port: hundreds at scale).  From the work item.
 */
void SaPort::subscribe_step()
{
	uint16_t trap;
	{
		SpinGuardBh g(inform_lock_);
		if (!sub_.due() || sub_busy_)
			return;
		sub_busy_ = true;
		sub_sent_epoch_ = sub_epoch_;
		trap = gid_traps[sub_next_];
	}
	const iba::InformInfo ii = inform::subscription(trap, true);
	auto sent = prepare(sub_req_, iba::sa_method::set, iba::sa_attr::inform_info, 0, &ii, sizeof(ii));
	if (sent)
		sent = port.gsi().send(agent_, sub_req_);
	if (!sent)
		subscription_over(false);
}

/* The SA answered the subscription in flight, or it timed out or was cancelled. */
void SaPort::subscription_done(SendReq &r)
{
	const bool ok = !r.status && !sa::status_errno(r.response.hdr().status.get());
	if (ok)
		subscriptions_.fetch_add(1, Order::Relaxed);
	else
		log.info("%s port %u: InformInfo subscription failed (errno %d, status 0x%x)", port.device.name(),
			 port.port, r.status, r.response.hdr().status.get());
	subscription_over(ok);
}

void SaPort::subscription_over(bool ok)
{
	bool again;
	{
		SpinGuardBh g(inform_lock_);
		sub_busy_ = false;
		if (sub_sent_epoch_ != sub_epoch_) {
			sub_next_ = 0; /* the port changed meanwhile: start over */
		} else if (!ok) {
			sub_next_ = 0;
			sub_.result(false);
		} else if (++sub_next_ == 2) {
			sub_next_ = 0;
			sub_.result(true);
		}
		again = sub_.due();
	}
	if (again)
		inform_work_.modify(ok ? 0 : inform_retry_ms);
}

void SaPort::inform_tick(DelayedWork &w)
{
	SaPort *s = container_of(&w, &SaPort::inform_work_);
	s->subscribe_step();
	for (;;) {
		inform::GidNotice n;
		{
			SpinGuardBh g(s->inform_lock_);
			if (!s->nevents_)
				break;
			n = s->events_[0];
			for (uint8_t i = 1; i < s->nevents_; i++)
				s->events_[i - 1] = s->events_[i];
			s->nevents_--;
		}
		auto ws = watchers->lock();
		for (sa::GidWatcher &gw : ws->list)
			gw.gid_event(s->port.device, s->port.port, n.gid, n.in_service);
	}
}

sa::InformStats SaPort::inform_stats()
{
	sa::InformStats st{};
	{
		SpinGuardBh g(inform_lock_);
		st.subscribed = sub_.state() == inform::Subscription::State::Subscribed;
	}
	st.subscriptions = subscriptions_.load(Order::Relaxed);
	st.gid_in = gid_in_.load(Order::Relaxed);
	st.gid_out = gid_out_.load(Order::Relaxed);
	st.other = other_.load(Order::Relaxed);
	st.lost = lost_.load(Order::Relaxed);
	return st;
}

Result<void> SaPort::prepare(SendReq &r, uint8_t method, uint16_t attr, uint64_t comp_mask, const void *rec,
			     size_t len)
{
	verbs::PortAttr pa;
	WEFT_TRY(port.device.query_port(port.port, pa));
	if (len > iba::sa_data_size)
		return Error(err::EINVAL);
	/* An SA behind a port that is not ACTIVE cannot answer: no point waiting out the retries. */
	if (!pa.sm_lid || pa.state != verbs::PortState::Active)
		return Error(err::ENODEV);
	r.mad = Mad{};
	iba::MadHeader &h = r.mad.hdr();
	h.base_version.set(1);
	h.mgmt_class.set(iba::mgmt_class::subn_adm);
	h.class_version.set(iba::sa_class_version);
	h.method.set(method);
	h.tid.set(next_tid_.fetch_add(1, Order::Relaxed));
	h.attr_id.set(attr);
	auto *sah = reinterpret_cast<iba::SaHeader *>(r.mad.bytes + iba::sa_header_offset);
	sah->comp_mask.set(comp_mask);
	__builtin_memcpy(r.mad.bytes + iba::sa_data_offset, rec, len);
	r.to = MadAddr{pa.sm_lid, 1, gsi_qkey, 0, pa.sm_sl};
	r.timeout_ms = sa_timeout_ms;
	r.retries = sa_retries;
	return ok();
}

Result<void> SaPort::ask(uint8_t method, uint16_t attr, uint64_t comp_mask, const void *rec, size_t len,
			 Answer &out)
{
	auto pending = WEFT_TRY(make_own<Pending>(Gfp::Sleep));
	SendReq &r = pending->req;
	WEFT_TRY(prepare(r, method, attr, comp_mask, rec, len));
	WEFT_TRY(port.gsi().send(agent_, r));
	pending->done.wait(); /* bounded: the service times the request out */
	if (r.status)
		return Error(r.status);
	if (int e = sa::status_errno(r.response.hdr().status.get()))
		return Error(e);
	out.first = r.response;
	out.len = r.long_len ? r.long_len : iba::mad_size;
	out.all = move(r.long_response);
	return ok();
}

/* IBA 15.2.5.16: one reversible path from this port to @dgid in @pkey. */
Result<iba::PathRecord> SaPort::resolve_path(const verbs::Gid &dgid, uint16_t pkey)
{
	uint64_t gen = gen_.load(Order::Relaxed);
	{
		SpinGuardBh g(cache_lock_);
		for (Cached &c : cache_)
			if (c.gen == gen && c.pkey == pkey && c.dgid == dgid)
				return c.rec;
	}
	auto sgid = WEFT_TRY(port.device.query_gid(port.port, 0));
	iba::PathRecord want{};
	__builtin_memcpy(want.dgid, dgid.raw, 16);
	__builtin_memcpy(want.sgid, sgid.raw, 16);
	want.pkey.set(pkey);
	iba::PathRecord::Reversible::set(want.num_path, 1);
	iba::PathRecord::NumbPath::set(want.num_path, 1);
	auto rec = WEFT_TRY(sa::get_path(port.device, port.port, want,
					 iba::pr_comp::dgid | iba::pr_comp::sgid | iba::pr_comp::pkey |
						 iba::pr_comp::reversible | iba::pr_comp::numb_path));
	SpinGuardBh g(cache_lock_);
	Cached &c = cache_[cache_next_++ % cache_size];
	c = Cached{dgid, pkey, gen, rec};
	return rec;
}

namespace sa {

Result<iba::PathRecord> get_path(verbs::Device &dev, uint8_t port, const iba::PathRecord &want,
				 uint64_t comp_mask)
{
	SaPort *s = find_sa(dev, port);
	if (!s)
		return Error(err::ENODEV);
	SaPort::Answer a;
	WEFT_TRY(s->ask(iba::sa_method::get, iba::sa_attr::path_record, comp_mask, &want, sizeof(want), a));
	iba::PathRecord rec;
	WEFT_TRY(WEFT_TRY(a.records()).first(&rec, sizeof(rec)));
	return rec;
}

Result<iba::PathRecord> resolve_path(verbs::Device &dev, uint8_t port, const verbs::Gid &dgid,
				     uint16_t pkey)
{
	SaPort *s = find_sa(dev, port);
	if (!s)
		return Error(err::ENODEV);
	return s->resolve_path(dgid, pkey);
}

void watch_gids(GidWatcher &w)
{
	watchers->lock()->list.push_back(w);
}

void unwatch_gids(GidWatcher &w)
{
	watchers->lock()->list.remove(w);
}

Result<InformStats> inform_stats(verbs::Device &dev, uint8_t port)
{
	SaPort *s = find_sa(dev, port);
	if (!s)
		return Error(err::ENODEV);
	return s->inform_stats();
}

Result<iba::ClassPortInfo> class_port_info(verbs::Device &dev, uint8_t port)
{
	SaPort *s = find_sa(dev, port);
	if (!s)
		return Error(err::ENODEV);
	/* IBA 13.4.8.1: a Get of ClassPortInfo carries no record of its own. */
	const iba::ClassPortInfo none{};
	SaPort::Answer a;
	WEFT_TRY(s->ask(iba::sa_method::get, iba::sa_attr::class_port_info, 0, &none, sizeof(none), a));
	iba::ClassPortInfo cpi;
	WEFT_TRY(WEFT_TRY(a.records()).first(&cpi, sizeof(cpi)));
	return cpi;
}

Result<size_t> get_services(verbs::Device &dev, uint8_t port, const iba::ServiceRecord &want,
			    uint64_t comp_mask, iba::ServiceRecord *out, size_t max)
{
	SaPort *s = find_sa(dev, port);
	if (!s)
		return Error(err::ENODEV);
	SaPort::Answer a;
	WEFT_TRY(s->ask(iba::sa_method::get_table, iba::sa_attr::service_record, comp_mask, &want,
			sizeof(want), a));
	auto recs = WEFT_TRY(a.records());
	size_t n = recs.count();
	for (size_t i = 0; i < n && i < max; i++)
		recs.copy(i, &out[i], sizeof(iba::ServiceRecord));
	return n;
}

} // namespace sa

} // namespace weft::mad
