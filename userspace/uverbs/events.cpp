// SPDX-License-Identifier: GPL-2.0
/* Event sources and the async event queue of a user context (events.h). */
#include "events.h"

namespace weft::uverbs {

void EventSource::attach(weft_uverbs_evwaiter *w)
{
	SpinGuardIrq g(lock_);
	waiter_ = w;
}

void EventSource::close()
{
	SpinGuardIrq g(lock_);
	closed_ = true;
	wake();
}

bool EventSource::readable()
{
	SpinGuardIrq g(lock_);
	return closed_ || !empty_locked();
}

unsigned int EventSource::poll()
{
	SpinGuardIrq g(lock_);
	const bool empty = empty_locked();
	unsigned int st = empty ? 0 : WEFT_UVERBS_POLL_IN;
	if (closed_ && empty)
		st |= WEFT_UVERBS_POLL_ERR;
	return st;
}

void EventSource::wake()
{
	lock_.assert_held();
	if (waiter_)
		weft_uverbs_event_wake(waiter_);
}

EventQueue::~EventQueue()
{
	while (Entry *e = queue_.pop_front())
		delete e;
}

void EventQueue::push(uint32_t event_type, uint64_t element, EventCount *count)
{
	auto *e = new (Gfp::Sleep) Entry;
	if (!e) {
		dropped_.fetch_add(1, Order::Relaxed);
		return;
	}
	e->desc = abi::AsyncEventDesc{element, event_type, 0};
	e->count = count;
	SpinGuardIrq g(lock_);
	if (closed_ || nqueued_ >= max_queued) {
		dropped_.fetch_add(1, Order::Relaxed);
		delete e;
		return;
	}
	queue_.push_back(*e);
	nqueued_++;
	wake();
}

void EventQueue::purge(EventCount *count)
{
	List<Entry, &Entry::node> gone;
	{
		SpinGuardIrq g(lock_);
		for (Entry &e : queue_) {
			if (e.count != count)
				continue;
			queue_.remove(e);
			nqueued_--;
			gone.push_back(e);
		}
	}
	while (Entry *e = gone.pop_front())
		delete e;
}


Result<size_t> EventQueue::read(void *ubuf, size_t len)
{
	Entry *e;
	{
		SpinGuardIrq g(lock_);
		if (queue_.empty())
			return Error(closed_ ? err::EIO : err::EAGAIN);
		if (len < sizeof(abi::AsyncEventDesc))
			return Error(err::EINVAL);
		e = queue_.pop_front();
		nqueued_--;
		/* Counted as read before the copy, as in-tree (a faulting copy loses the event). */
		if (e->count)
			e->count->reported.fetch_add(1, Order::Relaxed);
	}
	int r = weft_uverbs_copy_to_user(ubuf, &e->desc, sizeof(e->desc));
	delete e;
	if (r)
		return Error(-r);
	return sizeof(abi::AsyncEventDesc);
}



} // namespace weft::uverbs

using weft::uverbs::EventSource;

namespace {

EventSource &source_of(void *ctx)
{
	return *static_cast<EventSource *>(ctx);
}

} // namespace

void weft_uverbs_event_attach(void *queue_ctx, struct weft_uverbs_evwaiter *w)
{
	source_of(queue_ctx).attach(w);
}

long weft_uverbs_event_read(void *queue_ctx, void *buf, size_t len)
{
	auto r = source_of(queue_ctx).read(buf, len);
	return r ? static_cast<long>(r.value()) : static_cast<long>(r.to_errno());
}

bool weft_uverbs_event_readable(void *queue_ctx)
{
	return source_of(queue_ctx).readable();
}

unsigned int weft_uverbs_event_poll(void *queue_ctx)
{
	return source_of(queue_ctx).poll();
}

void weft_uverbs_event_get(void *queue_ctx)
{
	source_of(queue_ctx).get();
}

void weft_uverbs_event_release(void *queue_ctx)
{
	EventSource &q = source_of(queue_ctx);
	q.attach(nullptr);
	q.put(); /* the event file's */
}
