/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A completion channel (IBA 11.4.2.2 completion event handler, as
 * ibv_create_comp_channel() offers it): an event file whose read() gives
 * one ib_uverbs_comp_event_desc (the CQ's user handle) per completion
 * event of a CQ bound to it.
 *
 * Completion events are raised inside the HCA's data path (any context
 * but hard interrupts), so queueing one allocates nothing: each CQ has a
 * Pending slot with a count, listed while its count is non-zero.  A
 * read() takes one event of the oldest CQ.  Events are counted as read
 * (DESTROY_CQ reports the count); at destroy the CQ's unread ones are
 * taken back.
 */
#ifndef WEFT_UVERBS_COMP_CHANNEL_H
#define WEFT_UVERBS_COMP_CHANNEL_H

#include "events.h"

namespace weft::uverbs {

class CompChannel final : public EventSource {
public:
	/* One CQ's place on the channel. */
	struct Pending {
		uint64_t cq_handle = 0; /* the user's */
		uint32_t count = 0;	/* under the channel's lock */
		ListNode node;		/* on the channel while count > 0 */
		EventCount events;	/* read by the process */
	};

	CompChannel() = default;
	~CompChannel() override;

	/* A completion event of the CQ of @p (any context but hard interrupts). */
	void push(Pending &p);
	/* The CQ goes: its unread events are taken back. */
	void purge(Pending &p);

	Result<size_t> read(void *ubuf, size_t len) override;
	bool is_comp_channel() const override { return true; }

	ListNode file_node; /* on the File that made it (closed with its context) */
	/* That File: in-tree lookup_get_fd_uobject() refuses another file's channel. */
	const void *owner = nullptr;

private:
	bool empty_locked() const override { return queue_.empty(); }

	List<Pending, &Pending::node> queue_; /* under lock_ */
};

} // namespace weft::uverbs

#endif
