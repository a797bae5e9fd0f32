// SPDX-License-Identifier: GPL-2.0
/* Work items and workqueues for C++ (weft/work.h), over opaque storage. */
#include <linux/export.h>
#include <linux/jiffies.h>
#include <linux/lockdep.h>
#include <linux/sched/task_stack.h>
#include <linux/workqueue.h>

#include "weft/layout.h"
#include "weft/rt/kapi.h"

static_assert(WEFT_SIZEOF_WORK_STRUCT == sizeof(struct work_struct));
static_assert(WEFT_SIZEOF_DELAYED_WORK == sizeof(struct delayed_work));
static_assert(WEFT_ALIGNOF_WORK_STRUCT == __alignof__(struct work_struct));
static_assert(WEFT_ALIGNOF_DELAYED_WORK == __alignof__(struct delayed_work));

void weft_work_init(void *work, void (*fn)(struct work_struct *w), const char *name, void *key)
{
	struct work_struct *w = work;

	/* debugobjects must be told about work items on the stack (tests, waits). */
	if (object_is_on_stack(w))
		INIT_WORK_ONSTACK(w, fn);
	else
		INIT_WORK(w, fn);
#ifdef CONFIG_LOCKDEP
	/* Give each C++ use site its own lockdep class for flush/cancel. */
	lockdep_init_map(&w->lockdep_map, name, (struct lock_class_key *)key, 0);
#endif
}
EXPORT_SYMBOL_GPL(weft_work_init);

void weft_delayed_work_init(void *dwork, void (*fn)(struct work_struct *w),
			    const char *name, void *key)
{
	struct delayed_work *dw = dwork;

	if (object_is_on_stack(dw))
		INIT_DELAYED_WORK_ONSTACK(dw, fn);
	else
		INIT_DELAYED_WORK(dw, fn);
#ifdef CONFIG_LOCKDEP
	lockdep_init_map(&dw->work.lockdep_map, name, (struct lock_class_key *)key, 0);
#endif
}
EXPORT_SYMBOL_GPL(weft_delayed_work_init);

void weft_work_destroy(void *work)
{
	if (object_is_on_stack(work))
		destroy_work_on_stack((struct work_struct *)work);
}
EXPORT_SYMBOL_GPL(weft_work_destroy);

void weft_delayed_work_destroy(void *dwork)
{
	if (object_is_on_stack(dwork))
		destroy_delayed_work_on_stack((struct delayed_work *)dwork);
}
EXPORT_SYMBOL_GPL(weft_delayed_work_destroy);

void *weft_delayed_work_of(struct work_struct *w)
{
	return to_delayed_work(w);
}
EXPORT_SYMBOL_GPL(weft_delayed_work_of);

static struct workqueue_struct *wq_or_system(void *wq)
{
	return wq ? wq : system_wq;
}

bool weft_queue_work(void *wq, void *work)
{
	return queue_work(wq_or_system(wq), (struct work_struct *)work);
}
EXPORT_SYMBOL_GPL(weft_queue_work);

bool weft_queue_delayed_work(void *wq, void *dwork, unsigned long delay_ms)
{
	return queue_delayed_work(wq_or_system(wq), (struct delayed_work *)dwork,
				  msecs_to_jiffies(delay_ms));
}
EXPORT_SYMBOL_GPL(weft_queue_delayed_work);

bool weft_mod_delayed_work(void *wq, void *dwork, unsigned long delay_ms)
{
	return mod_delayed_work(wq_or_system(wq), (struct delayed_work *)dwork,
				msecs_to_jiffies(delay_ms));
}
EXPORT_SYMBOL_GPL(weft_mod_delayed_work);

bool weft_cancel_work_sync(void *work)
{
	return cancel_work_sync((struct work_struct *)work);
}
EXPORT_SYMBOL_GPL(weft_cancel_work_sync);

bool weft_cancel_delayed_work_sync(void *dwork)
{
	return cancel_delayed_work_sync((struct delayed_work *)dwork);
}
EXPORT_SYMBOL_GPL(weft_cancel_delayed_work_sync);

bool weft_cancel_delayed_work(void *dwork)
{
	return cancel_delayed_work((struct delayed_work *)dwork);
}
EXPORT_SYMBOL_GPL(weft_cancel_delayed_work);

bool weft_flush_work(void *work)
{
	return flush_work((struct work_struct *)work);
}
EXPORT_SYMBOL_GPL(weft_flush_work);

void *weft_alloc_workqueue(const char *name, bool ordered, int max_active)
{
	if (ordered)
		return alloc_ordered_workqueue("%s", WQ_MEM_RECLAIM, name);
	return alloc_workqueue("%s", WQ_MEM_RECLAIM, max_active, name);
}
EXPORT_SYMBOL_GPL(weft_alloc_workqueue);

void *weft_alloc_highpri_workqueue(const char *name)
{
	return alloc_workqueue("%s", WQ_HIGHPRI | WQ_MEM_RECLAIM, 0, name);
}
EXPORT_SYMBOL_GPL(weft_alloc_highpri_workqueue);

void weft_flush_workqueue(void *wq)
{
	flush_workqueue((struct workqueue_struct *)wq);
}
EXPORT_SYMBOL_GPL(weft_flush_workqueue);

void weft_destroy_workqueue(void *wq)
{
	destroy_workqueue((struct workqueue_struct *)wq);
}
EXPORT_SYMBOL_GPL(weft_destroy_workqueue);
