/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sleeping until something happens: Completion (one event, or "all done")
 * and WaitQueue (sleep until a condition holds, with timeout and signals).
 */
#ifndef WEFT_WAIT_H
#define WEFT_WAIT_H

#include <weft/lock.h>
#include <weft/result.h>

namespace weft {

/* Timeouts in milliseconds; forever() never times out. */
struct Timeout {
	long ms;
	static constexpr Timeout forever() { return {-1}; }
	static constexpr Timeout msecs(long ms) { return {ms}; }
};

class Completion {
public:
	Completion() { weft_completion_init(raw()); }
	WEFT_NOCOPY(Completion);

	void complete() { weft_complete(raw()); }
	void complete_all() { weft_complete_all(raw()); }
	void reinit() { weft_completion_reinit(raw()); }
	bool done() { return weft_completion_done(raw()); }
	void wait() { weft_wait_for_completion(raw()); }
	/* ETIMEDOUT if not completed within @t. */
	Result<void> wait(Timeout t)
	{
		if (t.ms < 0) {
			wait();
			return ok();
		}
		if (weft_wait_for_completion_timeout(raw(), static_cast<unsigned long>(t.ms)))
			return ok();
		return Error(err::ETIMEDOUT);
	}

private:
	void *raw() { return storage_.get(); }
	Opaque<WEFT_SIZEOF_COMPLETION, WEFT_ALIGNOF_COMPLETION> storage_;
};

class WaitQueue {
public:
	explicit WaitQueue(LockClass &cls) { weft_waitq_init(raw(), cls.name, cls.key.get()); }
	WEFT_NOCOPY(WaitQueue);

	void wake_all() { weft_waitq_wake_all(raw()); }

	/*
	 * Sleep until pred() is true.  pred is re-evaluated after every wake-up
	 * and must not sleep.  ETIMEDOUT after @t; with @interruptible, a signal
	 * ends the wait with ERESTARTSYS.
	 */
	template <typename Pred>
	Result<void> wait(Pred pred, Timeout t = Timeout::forever(), bool interruptible = false)
	{
		auto trampoline = [](void *ctx) -> bool { return (*static_cast<Pred *>(ctx))(); };
		return from_errno(weft_waitq_wait(raw(), trampoline, &pred, t.ms, interruptible));
	}

private:
	void *raw() { return storage_.get(); }
	Opaque<WEFT_SIZEOF_WAIT_QUEUE_HEAD, WEFT_ALIGNOF_WAIT_QUEUE_HEAD> storage_;
};

} // namespace weft

#endif
