// SPDX-License-Identifier: GPL-2.0
/*
 * The Ids of a file and what their RDMA CM handler does (file.h): every
 * event becomes a QueuedEvent on the file (in-tree ucma_event_handler()),
 * a CONNECT_REQUEST also a new Ctx for the new Id, counted against the
 * listener's backlog (ucma_connect_event_handler()), and DEVICE_REMOVAL
 * has the Id destroyed from a work item (the handler may not destroy its
 * own Id), the Ctx staying for the user to destroy.
 */
#include "file.h"
#include "translate.h"

namespace weft::ucma {

namespace {

constinit Stats g_stats;
constinit Atomic<uint32_t> g_next_num{0};

/* Fill @q from @e for the Id @num with the user's @uid. */
void fill(QueuedEvent &q, const Ctx &c, const rdma_cm::Event &e, uint64_t uid, uint32_t num)
{
	q.resp.uid = uid;
	q.resp.id = num;
	q.resp.event = static_cast<uint32_t>(e.type);
	q.resp.status = static_cast<uint32_t>(e.status);
	if (c.qp_type == verbs::QpType::Ud)
		ud_param_out(e.ud, q.resp.param.ud);
	else
		conn_param_out(e.conn, q.resp.param.conn);
}

} // namespace

Stats &stats()
{
	return g_stats;
}

uint32_t next_num()
{
	return g_next_num.fetch_add(1, Order::Relaxed);
}

Multicast::Multicast(Ctx &c, uint64_t u, const rdma_cm::SockAddr &a)
	: num(next_num()), uid(u), addr(a), ctx(&c)
{
	g_stats.multicasts.fetch_add(1, Order::Relaxed);
}

Multicast::~Multicast()
{
	g_stats.multicasts.fetch_sub(1, Order::Relaxed);
}

QueuedEvent::QueuedEvent()
{
	__builtin_memset(static_cast<void *>(&resp), 0, sizeof(resp));
	g_stats.events.fetch_add(1, Order::Relaxed);
}

QueuedEvent::~QueuedEvent()
{
	g_stats.events.fetch_sub(1, Order::Relaxed);
}

Ctx::Ctx(File &f, verbs::QpType type, Origin origin)
	: num(next_num()), qp_type(type), lock(WEFT_LOCK_CLASS("weft_ucma_ctx")),
	  hlock(origin == Origin::Request ? WEFT_LOCK_CLASS("weft_ucma_handler_request")
					  : WEFT_LOCK_CLASS("weft_ucma_handler")),
	  file(&f),
	  close_work(close_id, WEFT_LOCK_CLASS("weft_ucma_close"))
{
	g_stats.ctxs.fetch_add(1, Order::Relaxed);
}

Ctx::~Ctx()
{
	if (id || !mcs.empty())
		weft_warn(__FILE__, __LINE__, "ucma Id freed before its teardown");
	g_stats.ctxs.fetch_sub(1, Order::Relaxed);
}

/* DEVICE_REMOVAL (in-tree ucma_close_id()): the Id goes, the user's Ctx answers EINVAL/ENXIO after. */
void Ctx::close_id(Work &w)
{
	Ctx *c = container_of(&w, &Ctx::close_work);
	rdma_cm::Id *id;
	{
		MutexGuard g(c->lock);
		id = exchange(c->id, nullptr);
	}
	if (id)
		rdma_cm::destroy(id);
}

int Ctx::event(const rdma_cm::Event &e)
{
	if (e.type == rdma_cm::EventType::ConnectRequest)
		return connect_request(e);

	MutexGuard h(hlock);
	/*
	 * A new Id reports nothing until the user accepted it (in-tree: until
	 * its uid is set); an accept will then fail on its own.
	 */
	if (reporting) {
		Multicast *mc = nullptr;
		if (e.type == rdma_cm::EventType::MulticastJoin ||
		    e.type == rdma_cm::EventType::MulticastError) {
			/* Compared, never dereferenced, until found on our list. */
			for (Multicast &m : mcs)
				if (&m == e.mc_context)
					mc = &m;
			if (!mc)
				return 0;
		}
		auto *q = new (Gfp::Sleep) QueuedEvent;
		if (q) {
			fill(*q, *this, e, mc ? mc->uid : uid, mc ? mc->num : num);
			q->ctx = Ref<Ctx>::share(this);
			q->mc = mc;
			file->push(*q);
		} else {
			g_stats.dropped_nomem.fetch_add(1, Order::Relaxed);
		}
	}
	if (e.type == rdma_cm::EventType::DeviceRemoval)
		close_work.queue();
	return 0;
}

/*
 * A connection request for this listener: a Ctx for the new Id, queued
 * with the event, within the backlog LISTEN set.  Non-zero has the RDMA
 * CM destroy the new Id (and refuse the request).
 */
int Ctx::connect_request(const rdma_cm::Event &e)
{
	MutexGuard h(hlock);
	int left = backlog.load(Order::Relaxed);
	do {
		if (left <= 0) {
			g_stats.rejected_backlog.fetch_add(1, Order::Relaxed);
			return 1;
		}
	} while (!backlog.compare_exchange(left, left - 1, Order::Relaxed, Order::Relaxed));

	auto *child = new (Gfp::Sleep) Ctx(*file, qp_type, Ctx::Origin::Request);
	auto *q = new (Gfp::Sleep) QueuedEvent;
	if (!child || !q) {
		delete q;
		if (child)
			child->put();
		backlog.fetch_add(1, Order::Relaxed);
		g_stats.dropped_nomem.fetch_add(1, Order::Relaxed);
		return 1;
	}
	child->id = e.id; /* not yet published: nobody else sees it */
	rdma_cm::set_handler(*e.id, *child, child);
	fill(*q, *this, e, uid, child->num);
	q->ctx = Ref<Ctx>::share(this);
	q->child = Ref<Ctx>::share(child);
	file->push_connect_request(*q, *child);
	return 0;
}

} // namespace weft::ucma
