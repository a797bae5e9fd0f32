// SPDX-License-Identifier: GPL-2.0
/* Completion queues (IBA 10.8.2, 11.4.2). */
#include <weft/verbs/verbs.h>

namespace weft::verbs {

Cq::Cq(Context &c, Array<Wc> ring, CompHandler h, void *arg, HandlerContext hc, int cpu,
       CqSink *sink)
	: ctx(c), lock_(WEFT_LOCK_CLASS("weft_verbs_cq")), ring_(move(ring)),
	  ring_size_(ring_.size()), sink_(sink), resize_lock_(WEFT_LOCK_CLASS("weft_verbs_cq_resize")),
	  handler_(h), arg_(arg), handler_ctx_(hc),
	  cpu_(hc == HandlerContext::Atomic ? cpu : no_vector), irq_(vector_irq),
	  notify_work_(notify_deferred, WEFT_LOCK_CLASS("weft_verbs_cq_notify")), mod_timer_(mod_expired)
{
}

void Cq::vector_irq(CpuCall &c)
{
	Cq *cq = container_of(&c, &Cq::irq_);
	cq->handler_(*cq, cq->arg_);
	cq->put(); /* the reference call_handler() took for this call */
}

/*
 * The completion event (IBA 11.4.2.2) of an Atomic handler on a vector
 * is an interrupt to the vector's CPU: the consumer's work (a NAPI poll)
 * then runs there rather than on the producer's CPU, as it would with a
 * real HCA in another host.  A call still pending covers this one.
 */
void Cq::call_handler()
{
	if (cpu_ == no_vector || cpu_ == weft_this_cpu())
		return handler_(*this, arg_);
	get();
	const int r = irq_.send(cpu_);
	if (r == 0)
		return;
	put();
	if (r != -err::EBUSY)
		handler_(*this, arg_); /* the vector's CPU went offline: here */
}

void Cq::notify_deferred(Work &w)
{
	Cq *cq = container_of(&w, &Cq::notify_work_);
	bool notify, error;
	{
		SpinGuardIrq g(cq->lock_);
		notify = exchange(cq->deferred_notify_, false);
		error = exchange(cq->deferred_error_, false);
	}
	if (error)
		cq->ctx.dev.dispatch_event(Event{EventType::CqErr, &cq->ctx.dev, 0, nullptr, cq});
	if (notify)
		cq->handler_(*cq, cq->arg_);
}

size_t Cq::poll(Span<Wc> out)
{
	SpinGuardIrq g(lock_);
	size_t n = 0;
	/* A user CQ is polled in its ring, by the process. */
	while (!sink_ && n < out.size() && head_ != tail_)
		out[n++] = ring_[head_++ % ring_size_];
	/* Held completions the consumer took anyway: the count starts again. */
	if (head_ == tail_)
		mod_held_ = 0;
	return n;
}

bool Cq::req_notify(bool solicited_only)
{
	SpinGuardIrq g(lock_);
	/* IBA 11.4.2.2: a request for "next" is not weakened by a later "solicited". */
	if (arm_ != Arm::Next)
		arm_ = solicited_only ? Arm::Solicited : Arm::Next;
	return sink_ ? !sink_->empty() : head_ != tail_;
}

bool Cq::push(const Wc &wc, bool solicited, bool call_handlers, CqEventBatch *batch)
{
	bool overflow = false, notify = false, defer = false, good;
	{
		SpinGuardIrq g(lock_);
		if (error_ || (sink_ ? !sink_->put(wc) : tail_ - head_ >= ring_size_ - 1)) {
			/* IBA 11.6.3.1: CQ overrun is an affiliated asynchronous error. */
			overflow = !error_;
			error_ = true;
		} else {
			if (!sink_)
				ring_[tail_++ % ring_size_] = wc;
			/* IBA 11.4.2.2: unsuccessful completions also satisfy "solicited". */
			bool sol = solicited || wc.status != WcStatus::Success;
			if ((arm_ == Arm::Next || (arm_ == Arm::Solicited && sol)) && !hold_event_locked()) {
				arm_ = Arm::None;
				mod_held_ = 0;
				notify = handler_ != nullptr;
			}
		}
		/* An Atomic handler is called from here whatever the context; the event never is. */
		const bool later = notify && handler_ctx_ == HandlerContext::Sleepable;
		if (!call_handlers && (overflow || later)) {
			deferred_error_ |= overflow;
			deferred_notify_ |= later;
			notify = notify && !later;
			overflow = false;
			defer = true;
		}
		good = !error_;
	}
	if (defer)
		notify_work_.queue();
	if (overflow)
		ctx.dev.dispatch_event(Event{EventType::CqErr, &ctx.dev, 0, nullptr, this});
	if (notify && !(batch && cpu_ != no_vector && cpu_ != weft_this_cpu() && batch->hold(*this)))
		call_handler();
	return good;
}

void Cq::moderate(uint16_t count, uint16_t usecs)
{
	SpinGuardIrq g(lock_);
	mod_count_ = count;
	mod_usecs_ = usecs;
}

/*
 * A completion that satisfies the arm: held (true) while fewer than
 * mod_count_ have come and the period, started by the first, runs.
 */
bool Cq::hold_event_locked()
{
	lock_.assert_held();
	if (!mod_usecs_ || !handler_)
		return false;
	mod_held_++;
	if (mod_count_ && mod_held_ >= mod_count_)
		return false;
	if (!mod_timer_on_) {
		mod_timer_on_ = true;
		get(); /* the timer's, dropped by mod_expired */
		mod_timer_.start_us(mod_usecs_);
	}
	return true;
}

/* The period ended (softirq): the held event goes, unless the count sent it already. */
void Cq::mod_expired(Timer &t)
{
	Cq *cq = container_of(&t, &Cq::mod_timer_);
	cq->notify_from_timer();
	cq->put();
}

void Cq::notify_from_timer()
{
	bool notify, later;
	{
		SpinGuardIrq g(lock_);
		mod_timer_on_ = false;
		notify = mod_held_ && arm_ != Arm::None;
		if (notify) {
			arm_ = Arm::None;
			mod_held_ = 0;
		}
		later = notify && handler_ctx_ == HandlerContext::Sleepable;
		deferred_notify_ |= later;
	}
	if (later)
		notify_work_.queue();
	else if (notify)
		call_handler();
}

bool CqEventBatch::hold(Cq &cq)
{
	for (uint32_t i = 0; i < n_; i++)
		if (cqs_[i].get() == &cq)
			return true; /* re-armed meanwhile: the held event covers it */
	if (n_ == max)
		return false;
	cqs_[n_++] = Ref<Cq>::share(&cq);
	return true;
}

void CqEventBatch::fire()
{
	for (uint32_t i = 0; i < n_; i++) {
		cqs_[i]->call_handler();
		cqs_[i].reset();
	}
	n_ = 0;
}

constinit Atomic<CqResizeHook> cq_resize_hook;

/*
 * Completions a resize moves per hold of the CQ's lock: producers and
 * pollers (in softirq) wait at most for these, not for a ring of up to
 * max_cqe entries.
 */
static constexpr uint32_t resize_batch = 64;

/* Between two steps of a resize: no lock held. */
static void resize_pause(Cq &cq)
{
	if (CqResizeHook h = cq_resize_hook.load(Order::Acquire); WEFT_UNLIKELY(h))
		h(cq);
	weft_cond_resched();
}

Result<void> Cq::resize(uint32_t cqe)
{
	/* IBA 11.2.6.3: the new size is bounded as at creation (and comes from user space). */
	if (cqe == 0 || cqe > ctx.dev.attr().max_cqe)
		return Error(err::EINVAL);
	MutexGuard r(resize_lock_);
	return sink_ ? resize_sink(cqe) : resize_ring(cqe);
}

/* A user CQ's ring is its owner's to exchange (uverbs RESIZE_CQ), step by step. */
Result<void> Cq::resize_sink(uint32_t cqe)
{
	for (bool first = true;; first = false) {
		{
			SpinGuardIrq g(lock_);
			const uint32_t n = WEFT_TRY(sink_->resize_step_locked(cqe, resize_batch, first));
			if (n) {
				this->cqe.store(n, Order::Relaxed);
				return ok();
			}
		}
		resize_pause(*this);
	}
}

/*
 * Completions go on arriving and being polled while they are copied, a
 * batch per hold of the lock.  Entry i (free-running) goes to slot
 * i % the new size: when the last is copied, at most cqe are present,
 * so none of those shares a slot with a later one, and the exchange is
 * O(1).  Entries polled meanwhile are skipped; EINVAL if at any step more
 * than cqe are present (IBA 11.2.6.3), the old ring kept.
 */
Result<void> Cq::resize_ring(uint32_t cqe)
{
	auto fresh = WEFT_TRY(Array<Wc>::make(Gfp::Sleep, size_t(cqe) + 1));
	uint64_t next = 0;
	for (bool first = true;; first = false) {
		{
			SpinGuardIrq g(lock_);
			if (tail_ - head_ > cqe)
				return Error(err::EINVAL);
			if (first || next < head_)
				next = head_;
			const uint64_t end = min(tail_, next + resize_batch);
			for (; next < end; next++)
				fresh[next % fresh.size()] = ring_[next % ring_size_];
			if (next == tail_) {
				swap(ring_, fresh);
				ring_size_ = ring_.size();
				this->cqe.store(cqe, Order::Relaxed);
				break;
			}
		}
		resize_pause(*this);
	}
	return ok(); /* the old ring is freed here, with no lock held */
}

} // namespace weft::verbs
