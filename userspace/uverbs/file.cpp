// SPDX-License-Identifier: GPL-2.0
/*
 * One open uverbsN file (file.h): the write() framing of the in-tree 6.1
 * ABI (ib_uverbs_write(), verify_hdr()), with its errnos: EINVAL for a
 * malformed header or a size that does not add up, EOPNOTSUPP for a
 * command Weft does not implement, ENOSPC for a request or response
 * smaller than the command's structure, EFAULT for memory that is not
 * there, EIO once the device is gone.
 */
#include <weft/log.h>

#include "commands.h"
#include "device.h"

namespace weft::uverbs {

namespace {

uint64_t user_addr(const void *p)
{
	return reinterpret_cast<uintptr_t>(p);
}

/* The command's ranges, or the in-tree errno of a header that does not fit it. */
Result<void> frame_ex(const uint8_t *ubuf, size_t len, const abi::CmdHdr &hdr,
		      const Method &m, Call &c)
{
	abi::ExCmdHdr ex;
	if (len < sizeof(hdr) + sizeof(ex))
		return Error(err::EINVAL);
	WEFT_TRY(from_errno(weft_uverbs_copy_from_user(&ex, ubuf + sizeof(hdr), sizeof(ex))));
	const size_t count = len - sizeof(hdr) - sizeof(ex);
	if ((size_t(hdr.in_words) + ex.provider_in_words) * 8 != count)
		return Error(err::EINVAL);
	if (size_t(hdr.in_words) * 8 < m.req_size)
		return Error(err::ENOSPC);
	if (ex.cmd_hdr_reserved)
		return Error(err::EINVAL);
	if (ex.response) {
		if (!hdr.out_words && !ex.provider_out_words)
			return Error(err::EINVAL);
		if (size_t(hdr.out_words) * 8 < m.resp_size)
			return Error(err::ENOSPC);
	} else if (hdr.out_words || ex.provider_out_words) {
		return Error(err::EINVAL);
	}
	const uint64_t in = user_addr(ubuf) + sizeof(hdr) + sizeof(ex);
	c.in = {in, size_t(hdr.in_words) * 8};
	c.out = {ex.response, size_t(hdr.out_words) * 8};
	c.drv_in = {in + c.in.len, size_t(ex.provider_in_words) * 8};
	c.drv_out = {ex.response + c.out.len, size_t(ex.provider_out_words) * 8};
	return ok();
}

Result<void> frame(const uint8_t *ubuf, size_t len, const abi::CmdHdr &hdr, const Method &m,
		   Call &c)
{
	if (size_t(hdr.in_words) * 4 != len)
		return Error(err::EINVAL);
	if (len < m.req_size + sizeof(hdr) || size_t(hdr.out_words) * 4 < m.resp_size)
		return Error(err::ENOSPC);
	const uint64_t in = user_addr(ubuf) + sizeof(hdr);
	size_t in_len = len - sizeof(hdr), out_len = size_t(hdr.out_words) * 4;
	if (m.has_udata) {
		c.drv_in = {in + m.req_size, in_len - m.req_size};
		in_len = m.req_size;
	}
	uint64_t response = 0;
	if (m.has_resp) {
		/* The request's first field is the response's address. */
		WEFT_TRY(from_errno(weft_uverbs_copy_from_user(&response, ubuf + sizeof(hdr),
							       sizeof(response))));
		if (m.has_udata) {
			c.drv_out = {response + m.resp_size, out_len - m.resp_size};
			out_len = m.resp_size;
		}
	}
	c.in = {in, in_len};
	c.out = {response, out_len};
	return ok();
}

} // namespace

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
	const auto *p = static_cast<const uint8_t *>(ubuf);
	abi::CmdHdr hdr;
	if (len < sizeof(hdr))
		return Error(err::EINVAL);
	WEFT_TRY(from_errno(weft_uverbs_copy_from_user(&hdr, p, sizeof(hdr))));
	if (hdr.command & ~(abi::cmd_flag_extended | abi::cmd_command_mask))
		return Error(err::EINVAL);
	const Method *m = find_method(hdr.command);
	if (!m)
		return Error(err::EOPNOTSUPP);
	Call c{*this, {}, {}, {}, {}};
	WEFT_TRY(m->is_ex ? frame_ex(p, len, hdr, *m, c) : frame(p, len, hdr, *m, c));

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
