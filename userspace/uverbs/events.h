/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the event files of a user context read.  Two kinds, one file type
 * ("[infinibandevent]", the shim's event fops):
 *
 *  - EventQueue, the async event file GET_CONTEXT creates: one
 *    ib_uverbs_async_event_desc per read(), for port events and the
 *    affiliated events of the context's QPs, CQs and SRQs;
 *  - CompChannel (comp_channel.h), a completion channel: one
 *    ib_uverbs_comp_event_desc per read().
 *
 * Both are refcounted event sources: the event file holds a reference
 * until it is closed, and so does whatever pushes events into it.
 * Semantics follow the in-tree 6.1 ib_uverbs_event_read(): a buffer
 * smaller than one event is EINVAL (the event stays); with nothing queued,
 * EAGAIN for O_NONBLOCK, else the shim sleeps; once the source is closed
 * (device removal) and drained, EIO.
 *
 * An object's events are counted as the process reads them (its
 * EventCount), because DESTROY_CQ/QP/SRQ report that count and libibverbs
 * waits until the process acknowledged as many; at destroy, events still
 * unread are taken back (purge()), as in-tree.
 */
#ifndef WEFT_UVERBS_EVENTS_H
#define WEFT_UVERBS_EVENTS_H

#include <weft/list.h>
#include <weft/lock.h>
#include <weft/ref.h>

#include "abi.h"
#include "uverbs_kapi.h"

namespace weft::uverbs {

class EventSource : public RefCounted<EventSource> {
public:
	virtual ~EventSource() = default;
	virtual Result<size_t> read(void *ubuf, size_t len) = 0;
	virtual bool is_comp_channel() const { return false; }
	/* A read would not say EAGAIN; what poll() reports (WEFT_UVERBS_POLL_*). */
	bool readable();
	unsigned int poll();
	/* No more events: readers drain what is queued, then get EIO. */
	void close();
	bool is_closed()
	{
		SpinGuardIrq g(lock_);
		return closed_;
	}
	/* The event file's waiter (the shim's wait queue), or nullptr when it goes. */
	void attach(weft_uverbs_evwaiter *w);

protected:
	EventSource() : lock_(WEFT_LOCK_CLASS("weft_uverbs_events")) {}
	void wake();
	virtual bool empty_locked() const = 0;
	/* Taken from any context but hard interrupts. */
	SpinLock lock_;
	weft_uverbs_evwaiter *waiter_ = nullptr; /* under lock_ */
	bool closed_ = false;			 /* under lock_ */
};

/* Events an object's owner has read (DESTROY_* reports it). */
struct EventCount {
	Atomic<uint32_t> reported{0};
};

class EventQueue final : public EventSource {
public:
	/* Beyond this many unread events new ones are dropped (and counted). */
	static constexpr uint32_t max_queued = 1024;

	EventQueue() = default;
	~EventQueue() override;

	/* Queue one event (process context) and wake the reader; @count is its object's. */
	void push(uint32_t event_type, uint64_t element, EventCount *count = nullptr);
	/* Take back the unread events of the object counted by @count (it is being destroyed). */
	void purge(EventCount *count);

	Result<size_t> read(void *ubuf, size_t len) override;
	uint64_t dropped() const { return dropped_.load(Order::Relaxed); }

private:
	struct Entry {
		ListNode node;
		abi::AsyncEventDesc desc;
		EventCount *count;
	};

	bool empty_locked() const override { return queue_.empty(); }

	List<Entry, &Entry::node> queue_; /* under lock_ */
	uint32_t nqueued_ = 0;		  /* under lock_ */
	Atomic<uint64_t> dropped_{0};
};

} // namespace weft::uverbs

#endif
