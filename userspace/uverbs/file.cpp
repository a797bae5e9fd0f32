// SPDX-License-Identifier: GPL-2.0
/*
 * One open uverbsN file (file.h): each write() framed (framing.cpp) and
 * run under the file's lock, EIO once the device is gone; the context,
 * the object table and the rings the process may map.
 */
#include <weft/log.h>

#include "commands.h"
#include "device.h"

namespace weft::uverbs {

File::File(UDevice &u, verbs::Device &d)
	: udev(Ref<UDevice>::share(&u)), lock_(WEFT_LOCK_CLASS("weft_uverbs_file")), dev_(&d),
	  rings_lock_(WEFT_LOCK_CLASS("weft_uverbs_rings"))
{
}

Result<void> File::add_object(UObject &o)
{
	lock_.assert_held();
	WEFT_TRY(objs_.insert(o));
	for (Ref<Ring> &r : o.rings)
		if (r)
			list_ring(*r);
	return ok();
}

void File::list_ring(Ring &r)
{
	lock_.assert_held();
	SpinGuard g(rings_lock_);
	/* Offsets are never reused: a stale one maps nothing (EINVAL). */
	r.offset = next_offset_;
	next_offset_ += r.bytes;
	r.get();
	rings_.push_back(r);
}

/* The caller holds a reference: the last one is never put under the spinlock. */
void File::unlist_ring(Ring &r)
{
	lock_.assert_held();
	SpinGuard g(rings_lock_);
	if (r.node.linked()) {
		rings_.remove(r);
		r.put();
	}
}

void File::free_object(UObject &o)
{
	lock_.assert_held();
	objs_.remove(o);
	for (Ref<Ring> &r : o.rings)
		if (r)
			unlist_ring(*r);
	delete &o;
}

void File::add_channel(CompChannel &ch)
{
	lock_.assert_held();
	ch.get();
	channels_.push_back(ch);
}

Result<void> File::mmap(uint64_t offset, size_t len, void *vma)
{
	Ring *ring = nullptr;
	{
		SpinGuard g(rings_lock_);
		for (Ring &r : rings_) {
			if (r.offset == offset) {
				ring = &r;
				ring->get();
				break;
			}
		}
	}
	if (!ring)
		return Error(err::EINVAL);
	Ref<Ring> hold = Ref<Ring>::adopt(ring);
	if (len > ring->bytes)
		return Error(err::EINVAL);
	return from_errno(weft_uverbs_ring_map(vma, ring->kva()));
}

File::~File()
{
	if (ctx_ || handler_on_ || dev_)
		weft_warn(__FILE__, __LINE__, "uverbs file freed before close");
}

Result<size_t> File::write(const void *ubuf, size_t len)
{
	Call c{*this, {}, {}, {}, {}};
	const Method *m = WEFT_TRY(frame_command(static_cast<const uint8_t *>(ubuf), len, c));

	MutexGuard g(lock_);
	if (!dev_)
		return Error(err::EIO);
	WEFT_TRY(m->handler(c));
	return len;
}

void File::set_context(verbs::Context *ctx, Ref<EventQueue> events)
{
	lock_.assert_held();
	ctx_ = ctx;
	events_ = move(events);
	/* Set before the handler is on, cleared after it is off: handle() reads it unlocked. */
	dev_->add_event_handler(*this);
	handler_on_ = true;
}

void File::handle(const verbs::Event &e)
{
	/*
	 * A CQ overrun (IBA 11.6.3.1) of one of this context's CQs: the
	 * async file gets IBV_EVENT_CQ_ERR with the CQ's user handle, as
	 * in-tree ib_uverbs_cq_event_handler().  Every CQ a user context
	 * has is a UCq's ring; the UCq outlives its verbs CQ.
	 */
	if (e.cq) {
		if (&e.cq->ctx == ctx_ && e.cq->sink()) {
			auto *u = static_cast<UCq *>(e.cq->sink());
			events_->push(static_cast<uint32_t>(e.type), u->user_handle, &u->async_events);
		}
		return;
	}
	/* Device and port events; those of QPs and SRQs go to their owners. */
	if (e.qp || e.srq)
		return;
	events_->push(static_cast<uint32_t>(e.type), e.port);
}

void File::release_context_locked(bool fatal)
{
	lock_.assert_held();
	if (handler_on_) {
		dev_->remove_event_handler(*this);
		handler_on_ = false;
	}
	/* Everything the process made through this file goes with its context... */
	if (verbs::Context *ctx = exchange(ctx_, nullptr))
		ctx->close(false);
	/* ...and then the wrappers, which the verbs objects used until they were destroyed. */
	while (UObject *o = objs_.pop())
		free_object(*o);
	while (CompChannel *ch = channels_.pop_front()) {
		ch->close();
		ch->put();
	}
	if (events_) {
		/* In-tree: IB_EVENT_DEVICE_FATAL, then the event file reads EIO. */
		if (fatal)
			events_->push(static_cast<uint32_t>(verbs::EventType::DeviceFatal), 0);
		events_->close();
		events_.reset();
	}
}

void File::kill()
{
	MutexGuard g(lock_);
	if (!dev_)
		return;
	release_context_locked(true);
	dev_ = nullptr;
}

void File::close()
{
	MutexGuard g(lock_);
	if (!dev_)
		return;
	release_context_locked(false);
	dev_ = nullptr;
}

} // namespace weft::uverbs
