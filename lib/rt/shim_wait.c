// SPDX-License-Identifier: GPL-2.0
/* Completions and wait queues for C++ (weft/wait.h), over opaque storage. */
#include <linux/completion.h>
#include <linux/export.h>
#include <linux/jiffies.h>
#include <linux/lockdep.h>
#include <linux/sched.h>
#include <linux/wait.h>

#include "weft/layout.h"
#include "weft/rt/kapi.h"

static_assert(WEFT_SIZEOF_COMPLETION == sizeof(struct completion));
static_assert(WEFT_SIZEOF_WAIT_QUEUE_HEAD == sizeof(wait_queue_head_t));
static_assert(WEFT_ALIGNOF_COMPLETION == __alignof__(struct completion));
static_assert(WEFT_ALIGNOF_WAIT_QUEUE_HEAD == __alignof__(wait_queue_head_t));

/* msecs_to_jiffies takes an unsigned int: clamp rather than wrap. */
static unsigned long weft_ms_to_jiffies(unsigned long ms)
{
	return msecs_to_jiffies(min_t(unsigned long, ms, UINT_MAX));
}

void weft_completion_init(void *c)
{
	init_completion((struct completion *)c);
}
EXPORT_SYMBOL_GPL(weft_completion_init);

void weft_completion_reinit(void *c)
{
	reinit_completion((struct completion *)c);
}
EXPORT_SYMBOL_GPL(weft_completion_reinit);

void weft_complete(void *c)
{
	complete((struct completion *)c);
}
EXPORT_SYMBOL_GPL(weft_complete);

void weft_complete_all(void *c)
{
	complete_all((struct completion *)c);
}
EXPORT_SYMBOL_GPL(weft_complete_all);

void weft_wait_for_completion(void *c)
{
	wait_for_completion((struct completion *)c);
}
EXPORT_SYMBOL_GPL(weft_wait_for_completion);

int weft_wait_for_completion_timeout(void *c, unsigned long timeout_ms)
{
	return wait_for_completion_timeout((struct completion *)c,
					   weft_ms_to_jiffies(timeout_ms)) ? 1 : 0;
}
EXPORT_SYMBOL_GPL(weft_wait_for_completion_timeout);

bool weft_completion_done(void *c)
{
	return completion_done((struct completion *)c);
}
EXPORT_SYMBOL_GPL(weft_completion_done);

void weft_waitq_init(void *wq, const char *name, void *key)
{
	__init_waitqueue_head((wait_queue_head_t *)wq, name, (struct lock_class_key *)key);
}
EXPORT_SYMBOL_GPL(weft_waitq_init);

void weft_waitq_wake_all(void *wq)
{
	wake_up_all((wait_queue_head_t *)wq);
}
EXPORT_SYMBOL_GPL(weft_waitq_wake_all);

int weft_waitq_wait(void *wq, bool (*cond)(void *ctx), void *ctx,
		    long timeout_ms, bool interruptible)
{
	wait_queue_head_t *q = wq;
	long ret;

	might_sleep();
	if (timeout_ms < 0) {
		if (!interruptible) {
			wait_event(*q, cond(ctx));
			return 0;
		}
		return wait_event_interruptible(*q, cond(ctx));
	}
	if (interruptible)
		ret = wait_event_interruptible_timeout(*q, cond(ctx), weft_ms_to_jiffies(timeout_ms));
	else
		ret = wait_event_timeout(*q, cond(ctx), weft_ms_to_jiffies(timeout_ms));
	if (ret < 0)
		return ret;
	return ret ? 0 : -ETIMEDOUT;
}
EXPORT_SYMBOL_GPL(weft_waitq_wait);
