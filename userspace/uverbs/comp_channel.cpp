// SPDX-License-Identifier: GPL-2.0
/* Completion channels (comp_channel.h). */
#include "abi_verbs.h"
#include "comp_channel.h"

namespace weft::uverbs {

/* Every CQ purged itself before it went: the queue is empty (List checks). */
CompChannel::~CompChannel() = default;

void CompChannel::push(Pending &p)
{
	SpinGuardIrq g(lock_);
	if (closed_)
		return;
	if (p.count++ == 0)
		queue_.push_back(p);
	wake();
}

void CompChannel::purge(Pending &p)
{
	SpinGuardIrq g(lock_);
	if (p.count) {
		queue_.remove(p);
		p.count = 0;
	}
}


Result<size_t> CompChannel::read(void *ubuf, size_t len)
{
	abi::CompEventDesc desc;
	{
		SpinGuardIrq g(lock_);
		Pending *p = queue_.front();
		if (!p)
			return Error(closed_ ? err::EIO : err::EAGAIN);
		if (len < sizeof(desc))
			return Error(err::EINVAL);
		desc.cq_handle = p->cq_handle;
		p->events.reported.fetch_add(1, Order::Relaxed);
		if (--p->count == 0)
			queue_.remove(*p);
	}
	WEFT_TRY(from_errno(weft_uverbs_copy_to_user(ubuf, &desc, sizeof(desc))));
	return sizeof(desc);
}

} // namespace weft::uverbs
