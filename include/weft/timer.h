/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Timer: a one-shot microsecond timer (an hrtimer underneath) whose
 * callback runs in softirq context.  Starting a pending timer moves it.
 *
 * Lifetime: the owner keeps a pending timer's object alive (a reference
 * taken when starting, dropped by the callback); the destructor waits for
 * a callback still running.  Heap objects only.
 */
#ifndef WEFT_TIMER_H
#define WEFT_TIMER_H

#include <weft/layout.h>
#include <weft/rt/kapi.h>
#include <weft/util.h>

namespace weft {

class Timer {
public:
	using Fn = void (*)(Timer &t);

	explicit Timer(Fn fn) : fn_(fn) { weft_hrtimer_init(storage_.get(), trampoline, this); }
	~Timer() { (void)weft_hrtimer_cancel(storage_.get()); }
	WEFT_NOCOPY(Timer);

	void start_us(uint32_t us) { weft_hrtimer_start_us(storage_.get(), us); }

private:
	static void trampoline(void *arg)
	{
		Timer *t = static_cast<Timer *>(arg);
		t->fn_(*t);
	}
	Opaque<WEFT_SIZEOF_HRTIMER, WEFT_ALIGNOF_HRTIMER> storage_;
	Fn fn_;
};

} // namespace weft

#endif /* WEFT_TIMER_H */
