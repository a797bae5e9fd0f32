// SPDX-License-Identifier: GPL-2.0
/* Shared receive queues (IBA 10.2.9). */
#include <weft/verbs/verbs.h>

namespace weft::verbs {

Srq::Srq(Context &c, Pd &p, Array<RecvEntry> ring, uint32_t max_sge, EventHandler *ev,
	 SrqUserQueue *user)
	: ctx(c), pd(p), events(ev), lock_(WEFT_LOCK_CLASS("weft_verbs_srq")), ring_(move(ring)),
	  user_(user), max_sge_(max_sge)
{
}

Result<void> Srq::post_recv(const RecvWr &wr)
{
	/* A user SRQ is posted to in its ring, by the process. */
	if (user_ || wr.sg.size() > max_sge_ || wr.sg.size() > RecvEntry::max_sge)
		return Error(err::EINVAL);
	SpinGuardIrq g(lock_);
	if (tail_ - head_ >= ring_.size())
		return Error(err::ENOMEM);
	ring_[tail_ % ring_.size()].set(wr);
	tail_++;
	return ok();
}

/* IBA 11.2.3.4: a limit beyond the queue's size is invalid. */
Result<void> Srq::arm_limit(uint32_t limit)
{
	if (user_)
		return user_->arm_limit(limit);
	if (limit > ring_.size())
		return Error(err::EINVAL);
	SpinGuardIrq g(lock_);
	limit_ = limit;
	return ok();
}

uint32_t Srq::count()
{
	if (user_)
		return user_->count();
	SpinGuardIrq g(lock_);
	return tail_ - head_;
}

bool Srq::take(RecvEntry &out, bool &limit_reached)
{
	if (user_)
		return user_->take(out, limit_reached);
	SpinGuardIrq g(lock_);
	if (head_ == tail_)
		return false;
	out = ring_[head_ % ring_.size()];
	head_++;
	/* IBA 10.2.9.2: fires once when the count falls below the limit. */
	if (limit_ && tail_ - head_ < limit_) {
		limit_ = 0;
		limit_reached = true;
	}
	return true;
}

void Srq::raise_limit()
{
	if (events)
		events->handle(Event{EventType::SrqLimitReached, &ctx.dev, 0, nullptr, nullptr, this});
}

} // namespace weft::verbs
