// SPDX-License-Identifier: GPL-2.0
/* The async event queue of a user context (events.h). */
#include "events.h"

namespace weft::uverbs {

EventQueue::EventQueue() : lock_(WEFT_LOCK_CLASS("weft_uverbs_events")) {}

EventQueue::~EventQueue()
{
	while (Entry *e = queue_.pop_front())
		delete e;
}

void EventQueue::wake_locked()
{
	lock_.assert_held();
	if (waiter_)
		weft_uverbs_event_wake(waiter_);
}

void EventQueue::push(uint32_t event_type, uint64_t element)
{
	auto *e = new (Gfp::Sleep) Entry;
	if (!e) {
		dropped_.fetch_add(1, Order::Relaxed);
		return;
	}
	e->desc = abi::AsyncEventDesc{element, event_type, 0};
	SpinGuardBh g(lock_);
	if (closed_ || nqueued_ >= max_queued) {
		dropped_.fetch_add(1, Order::Relaxed);
		delete e;
		return;
	}
	queue_.push_back(*e);
	nqueued_++;
	wake_locked();
}

void EventQueue::close()
{
	SpinGuardBh g(lock_);
	closed_ = true;
	wake_locked();
}

void EventQueue::attach(weft_uverbs_evwaiter *w)
{
	SpinGuardBh g(lock_);
	waiter_ = w;
}

void EventQueue::detach()
{
	SpinGuardBh g(lock_);
	waiter_ = nullptr;
}

Result<size_t> EventQueue::read(void *ubuf, size_t len)
{
	Entry *e;
	{
		SpinGuardBh g(lock_);
		if (queue_.empty())
			return Error(closed_ ? err::EIO : err::EAGAIN);
		if (len < sizeof(abi::AsyncEventDesc))
			return Error(err::EINVAL);
		e = queue_.pop_front();
		nqueued_--;
	}
	/* In-tree: an event whose copy faults is lost. */
	int r = weft_uverbs_copy_to_user(ubuf, &e->desc, sizeof(e->desc));
	delete e;
	if (r)
		return Error(-r);
	return sizeof(abi::AsyncEventDesc);
}

bool EventQueue::readable()
{
	SpinGuardBh g(lock_);
	return closed_ || !queue_.empty();
}

unsigned int EventQueue::poll()
{
	SpinGuardBh g(lock_);
	unsigned int st = queue_.empty() ? 0 : WEFT_UVERBS_POLL_IN;
	if (closed_ && queue_.empty())
		st |= WEFT_UVERBS_POLL_ERR;
	return st;
}

} // namespace weft::uverbs

using weft::uverbs::EventQueue;

namespace {

EventQueue &queue_of(void *ctx)
{
	return *static_cast<EventQueue *>(ctx);
}

} // namespace

void weft_uverbs_event_attach(void *queue_ctx, struct weft_uverbs_evwaiter *w)
{
	queue_of(queue_ctx).attach(w);
}

long weft_uverbs_event_read(void *queue_ctx, void *buf, size_t len)
{
	auto r = queue_of(queue_ctx).read(buf, len);
	return r ? static_cast<long>(r.value()) : static_cast<long>(r.to_errno());
}

bool weft_uverbs_event_readable(void *queue_ctx)
{
	return queue_of(queue_ctx).readable();
}

unsigned int weft_uverbs_event_poll(void *queue_ctx)
{
	return queue_of(queue_ctx).poll();
}

void weft_uverbs_event_release(void *queue_ctx)
{
	EventQueue &q = queue_of(queue_ctx);
	q.detach();
	q.put(); /* the event file's */
}
