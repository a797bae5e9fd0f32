// SPDX-License-Identifier: GPL-2.0
/* One-shot microsecond timers for C++ (weft/timer.h): hrtimers in softirq mode. */
#include <linux/export.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>

#include "shim_timer.h"
#include "weft/layout.h"
#include "weft/rt/kapi.h"

static_assert(WEFT_SIZEOF_HRTIMER == sizeof(struct weft_hrtimer));
static_assert(WEFT_ALIGNOF_HRTIMER == __alignof__(struct weft_hrtimer));

static enum hrtimer_restart weft_hrtimer_fire(struct hrtimer *t)
{
	struct weft_hrtimer *w = container_of(t, struct weft_hrtimer, timer);

	w->fn(w->arg);
	return HRTIMER_NORESTART;
}

void weft_hrtimer_init(void *t, void (*fn)(void *arg), void *arg)
{
	struct weft_hrtimer *w = t;

	hrtimer_init(&w->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	w->timer.function = weft_hrtimer_fire;
	w->fn = fn;
	w->arg = arg;
}
EXPORT_SYMBOL_GPL(weft_hrtimer_init);

void weft_hrtimer_start_us(void *t, uint32_t us)
{
	struct weft_hrtimer *w = t;

	hrtimer_start(&w->timer, ns_to_ktime((u64)us * NSEC_PER_USEC), HRTIMER_MODE_REL_SOFT);
}
EXPORT_SYMBOL_GPL(weft_hrtimer_start_us);

bool weft_hrtimer_cancel(void *t)
{
	struct weft_hrtimer *w = t;

	return hrtimer_cancel(&w->timer);
}
EXPORT_SYMBOL_GPL(weft_hrtimer_cancel);
