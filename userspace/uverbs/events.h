/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The async event queue of a user context: what the context's event file
 * ("[infinibandevent]", created by GET_CONTEXT) reads, one
 * ib_uverbs_async_event_desc per read().  Refcounted: the context's File
 * holds one reference while it exists, the event file one until it is
 * closed; events pushed after the reader went are simply dropped.
 *
 * Semantics follow the in-tree 6.1 ib_uverbs_event_read(): a buffer
 * smaller than one event is EINVAL (the event stays); with nothing queued,
 * EAGAIN for O_NONBLOCK, else the shim sleeps; once the context is closed
 * (device removal) and the queue drained, EIO.
 */
#ifndef WEFT_UVERBS_EVENTS_H
#define WEFT_UVERBS_EVENTS_H

#include <weft/list.h>
#include <weft/lock.h>
#include <weft/ref.h>

#include "abi.h"
#include "uverbs_kapi.h"

namespace weft::uverbs {

class EventQueue final : public RefCounted<EventQueue> {
public:
	/* Beyond this many unread events new ones are dropped (and counted). */
	static constexpr uint32_t max_queued = 1024;

	EventQueue();
	WEFT_NOCOPY(EventQueue);
	~EventQueue();

	/* Queue one event (process context) and wake the reader. */
	void push(uint32_t event_type, uint64_t element);
	/* No more events: a reader drains what is queued, then gets EIO. */
	void close();

	/* The event file's side (shim_uverbs.c). */
	void attach(weft_uverbs_evwaiter *w);
	void detach();
	Result<size_t> read(void *ubuf, size_t len);
	bool readable();
	unsigned int poll();
	uint64_t dropped() const { return dropped_.load(Order::Relaxed); }

private:
	struct Entry {
		ListNode node;
		abi::AsyncEventDesc desc;
	};
	void wake_locked();

	SpinLock lock_;
	List<Entry, &Entry::node> queue_; /* under lock_ */
	uint32_t nqueued_ = 0;		  /* under lock_ */
	bool closed_ = false;		  /* under lock_ */
	weft_uverbs_evwaiter *waiter_ = nullptr; /* under lock_ */
	Atomic<uint64_t> dropped_{0};
};

} // namespace weft::uverbs

#endif
