// SPDX-License-Identifier: GPL-2.0
/*
 * One open rdma_cm file (file.h): its Ids, its event queue (GET_EVENT,
 * poll) and its teardown.  Semantics of the in-tree 6.1 ucma.c: an event
 * is copied out before it leaves the queue (EFAULT keeps it), a
 * CONNECT_REQUEST read gives its slot back to the listener's backlog, and
 * destroying an Id frees its unread events, with the new Ids of unread
 * CONNECT_REQUESTs.
 */
#include <weft/log.h>

#include "file.h"

namespace weft::ucma {

File::File(weft_ucma_waiter *w) : waiter_(w), lock_(WEFT_LOCK_CLASS("weft_ucma_file"))
{
	stats().files.fetch_add(1, Order::Relaxed);
}

File::~File()
{
	stats().files.fetch_sub(1, Order::Relaxed);
}

unsigned int File::poll() const
{
	return queued_.load(Order::Acquire) ? WEFT_UCMA_POLL_IN : 0;
}

bool File::ready(void *file)
{
	return static_cast<File *>(file)->queued_.load(Order::Acquire) != 0;
}

Result<Ref<Ctx>> File::get(uint32_t num)
{
	MutexGuard g(lock_);
	for (Ctx &c : ctxs_)
		if (c.num == num)
			return Ref<Ctx>::share(&c);
	return Error(err::ENOENT);
}

Result<Ref<Ctx>> File::take(uint32_t num)
{
	MutexGuard g(lock_);
	for (Ctx &c : ctxs_) {
		if (c.num == num) {
			ctxs_.remove(c);
			return Ref<Ctx>::adopt(&c);
		}
	}
	return Error(err::ENOENT);
}

void File::publish(Ctx &c)
{
	MutexGuard g(lock_);
	ctxs_.push_back(c);
}

void File::push(QueuedEvent &q)
{
	{
		MutexGuard g(lock_);
		events_.push_back(q);
		queued_.fetch_add(1, Order::Release);
	}
	weft_ucma_wake(waiter_);
}

void File::push_connect_request(QueuedEvent &q, Ctx &child)
{
	{
		MutexGuard g(lock_);
		ctxs_.push_back(child); /* the list takes the creation reference */
		events_.push_back(q);
		queued_.fetch_add(1, Order::Release);
	}
	weft_ucma_wake(waiter_);
}

void File::unqueue_locked(Ctx &c, List<QueuedEvent, &QueuedEvent::node> &out)
{
	lock_.assert_held();
	for (QueuedEvent &q : events_) {
		if (q.ctx.get() != &c)
			continue;
		events_.remove(q);
		queued_.fetch_sub(1, Order::Relaxed);
		out.push_back(q);
	}
}

Result<void> File::get_event(uint64_t response, size_t room, bool nonblock)
{
	for (;;) {
		{
			MutexGuard g(lock_);
			if (QueuedEvent *q = events_.front()) {
				WEFT_TRY(from_errno(weft_ucma_copy_to_user(
					reinterpret_cast<void *>(static_cast<uintptr_t>(response)),
					&q->resp, min(room, sizeof(q->resp)))));
				events_.remove(*q);
				queued_.fetch_sub(1, Order::Relaxed);
				q->ctx->events_reported++;
				if (q->mc)
					q->mc->events_reported++;
				if (q->child)
					q->ctx->backlog.fetch_add(1, Order::Relaxed);
				/* The Refs go with it: never the last ones (the lists hold theirs). */
				delete q;
				return ok();
			}
		}
		if (nonblock)
			return Error(err::EAGAIN);
		const int r = weft_ucma_wait(waiter_, ready, this);
		if (r)
			return Error(-r);
	}
}

uint32_t File::destroy(Ref<Ctx> c)
{
	/* No command reaches @c any more; stop the device-removal work, then the Id. */
	c->close_work.cancel_sync();
	rdma_cm::Id *id;
	{
		MutexGuard g(c->lock);
		id = exchange(c->id, nullptr);
	}
	List<Multicast, &Multicast::ctx_node> groups;
	{
		MutexGuard h(c->hlock);
		while (Multicast *m = c->mcs.pop_front()) {
			unlink_multicast(*m);
			groups.push_back(*m);
		}
	}
	for (Multicast &m : groups)
		if (id)
			(void)rdma_cm::leave_multicast(*id, m.addr); /* best effort: the Id goes next */
	if (id)
		rdma_cm::destroy(id); /* waits for a running handler; none after */
	/* A DEVICE_REMOVAL handler may have queued the work again before destroy(). */
	c->close_work.cancel_sync();

	List<QueuedEvent, &QueuedEvent::node> gone;
	uint32_t reported;
	{
		MutexGuard h(c->hlock);
		MutexGuard g(lock_);
		unqueue_locked(*c, gone);
		reported = c->events_reported;
		/* No file may be reached through it now: this one may go once we return. */
		c->file = nullptr;
	}
	/* New Ids whose CONNECT_REQUEST nobody read go with their listener. */
	List<Ctx, &Ctx::node> orphans;
	for (QueuedEvent &q : gone)
		if (q.child && claim_unread(*q.child))
			orphans.push_back(*q.child);
	while (QueuedEvent *q = gone.pop_front())
		delete q;
	while (Multicast *m = groups.pop_front())
		delete m;
	while (Ctx *o = orphans.pop_front())
		(void)destroy(Ref<Ctx>::adopt(o)); /* the list's reference */
	return reported;
}

/*
 * The new Id may have left this file since its CONNECT_REQUEST was queued
 * (its number guessed: DESTROY_ID or MIGRATE_ID of it alone), and then it
 * is whoever took it's.  Under its hlock, Ctx::file names the only list it
 * can be on; the pointer is only compared here.
 */
bool File::claim_unread(Ctx &child)
{
	MutexGuard h(child.hlock);
	if (child.file != this)
		return false;
	MutexGuard g(lock_);
	if (!child.node.linked())
		return false; /* taken by a command on this file, which tears it down */
	ctxs_.remove(child);
	return true;
}

void File::add_multicast(Multicast &m)
{
	MutexGuard g(lock_);
	mcs_.push_back(m);
}

void File::unlink_multicast(Multicast &m)
{
	MutexGuard g(lock_);
	if (m.file_node.linked())
		mcs_.remove(m);
}

Result<Ref<Ctx>> File::find_multicast(uint32_t num, Multicast *&out)
{
	MutexGuard g(lock_);
	for (Multicast &m : mcs_) {
		if (m.num == num) {
			out = &m;
			return Ref<Ctx>::share(m.ctx);
		}
	}
	return Error(err::ENOENT);
}

uint32_t File::purge_multicast(Multicast &m)
{
	List<QueuedEvent, &QueuedEvent::node> gone;
	uint32_t reported;
	{
		MutexGuard g(lock_);
		for (QueuedEvent &q : events_) {
			if (q.mc != &m)
				continue;
			events_.remove(q);
			queued_.fetch_sub(1, Order::Relaxed);
			gone.push_back(q);
		}
		reported = m.events_reported;
	}
	while (QueuedEvent *q = gone.pop_front())
		delete q;
	return reported;
}

/*
 * MIGRATE_ID (in-tree ucma_migrate_id()), under @c's handler lock: no
 * event of it is queued meanwhile, and its file, list, events and groups
 * change together.  The new Ids of its unread CONNECT_REQUESTs move with
 * the events that name them, so the reader of such an event here finds
 * its Id here (in-tree leaves them in the old file, where no event names
 * them any more).
 */
uint32_t File::adopt(File &from, Ctx &c)
{
	MutexGuard h(c.hlock);
	if (&from == this) {
		MutexGuard g(lock_);
		ctxs_.push_back(c);
		return c.events_reported;
	}
	List<QueuedEvent, &QueuedEvent::node> moving;
	uint32_t reported;
	{
		MutexGuard g(from.lock_);
		from.release_locked(c, moving);
		reported = c.events_reported;
	}
	for (QueuedEvent &q : moving)
		if (q.child)
			move_unread(from, *q.child);
	{
		MutexGuard g(lock_);
		take_in_locked(c, moving);
	}
	weft_ucma_wake(waiter_);
	return reported;
}

/*
 * An Id taken from @from by its number alone (or destroyed) stays where it
 * is; one accepted by its guessed number may have events and groups of
 * its own.
 */
void File::move_unread(File &from, Ctx &child)
{
	MutexGuard h(child.hlock);
	if (child.file != &from)
		return;
	List<QueuedEvent, &QueuedEvent::node> own;
	{
		MutexGuard g(from.lock_);
		if (!child.node.linked())
			return;
		from.ctxs_.remove(child);
		from.release_locked(child, own);
	}
	MutexGuard g(lock_);
	take_in_locked(child, own);
}

/* @c's events into @out and its groups off our list (lock_ held; @c off our list, its hlock held). */
void File::release_locked(Ctx &c, List<QueuedEvent, &QueuedEvent::node> &out)
{
	unqueue_locked(c, out);
	for (Multicast &m : c.mcs)
		if (m.file_node.linked())
			mcs_.remove(m);
}

/* @c, its @events and its groups on our lists, @c ours (lock_ held, @c's hlock held). */
void File::take_in_locked(Ctx &c, List<QueuedEvent, &QueuedEvent::node> &events)
{
	const uint32_t n = static_cast<uint32_t>(events.size());
	events_.splice_back(events);
	queued_.fetch_add(n, Order::Release);
	for (Multicast &m : c.mcs)
		mcs_.push_back(m);
	ctxs_.push_back(c);
	c.file = this;
}

void File::close()
{
	for (;;) {
		Ctx *c;
		{
			MutexGuard g(lock_);
			c = ctxs_.pop_front();
		}
		if (!c)
			break;
		(void)destroy(Ref<Ctx>::adopt(c));
	}
	/* Every event belonged to an Id destroyed above. */
	MutexGuard g(lock_);
	if (!events_.empty() || !mcs_.empty())
		weft_warn(__FILE__, __LINE__, "ucma file closed with events or groups left");
}

} // namespace weft::ucma
