/* SPDX-License-Identifier: GPL-2.0 */
/* The storage behind weft/timer.h (shim_timer.c; sized by layout.c). */
#ifndef WEFT_SHIM_TIMER_H
#define WEFT_SHIM_TIMER_H

#include <linux/hrtimer.h>

struct weft_hrtimer {
	struct hrtimer timer;
	void (*fn)(void *arg);
	void *arg;
};

#endif
