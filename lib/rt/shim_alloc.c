// SPDX-License-Identifier: GPL-2.0
/*
 * Memory for Weft's C++: kmalloc/kvmalloc with an explicit context, plus a
 * per-task failure injector so tests can walk every allocation-failure path
 * of the code they drive.
 */
#include <linux/export.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "weft/rt/kapi.h"

/*
 * Failure injection state: which task is armed, how many allocations it has
 * made since, and at which one to start failing.  Only a test arms it, and
 * only for itself, so production allocations never see it beyond one
 * READ_ONCE of a NULL pointer.
 */
static struct {
	struct task_struct *task;
	unsigned int count;
	unsigned int nth;
	bool sticky;
} inject;
static DEFINE_SPINLOCK(inject_lock);

static bool weft_alloc_should_fail(void)
{
	bool fail = false;
	unsigned long flags;

	if (likely(READ_ONCE(inject.task) != current))
		return false;
	spin_lock_irqsave(&inject_lock, flags);
	if (inject.task == current) {
		inject.count++;
		fail = inject.count == inject.nth || (inject.sticky && inject.count > inject.nth);
	}
	spin_unlock_irqrestore(&inject_lock, flags);
	return fail;
}

void weft_alloc_fail_arm(unsigned int nth, bool sticky)
{
	unsigned long flags;

	spin_lock_irqsave(&inject_lock, flags);
	inject.count = 0;
	inject.nth = nth;
	inject.sticky = sticky;
	WRITE_ONCE(inject.task, nth ? current : NULL);
	spin_unlock_irqrestore(&inject_lock, flags);
}
EXPORT_SYMBOL_GPL(weft_alloc_fail_arm);

unsigned int weft_alloc_fail_disarm(void)
{
	unsigned long flags;
	unsigned int n;

	spin_lock_irqsave(&inject_lock, flags);
	n = inject.count;
	WRITE_ONCE(inject.task, NULL);
	inject.nth = 0;
	spin_unlock_irqrestore(&inject_lock, flags);
	return n;
}
EXPORT_SYMBOL_GPL(weft_alloc_fail_disarm);

static gfp_t weft_gfp(unsigned int flags)
{
	gfp_t gfp = (flags & WEFT_GFP_ATOMIC) ? GFP_ATOMIC : GFP_KERNEL;

	if (flags & WEFT_GFP_ZERO)
		gfp |= __GFP_ZERO;
	if (flags & WEFT_GFP_NOWARN)
		gfp |= __GFP_NOWARN;
	return gfp;
}

void *weft_kmalloc(size_t size, unsigned int flags)
{
	if (!(flags & WEFT_GFP_ATOMIC))
		might_sleep();
	if (unlikely(weft_alloc_should_fail()))
		return NULL;
	return kmalloc(size, weft_gfp(flags));
}
EXPORT_SYMBOL_GPL(weft_kmalloc);

/* Empty on purpose: a cache with a constructor is exempt from init_on_alloc zeroing (mm/slab.h). */
static void weft_kmem_cache_no_init(void *obj)
{
}

void *weft_kmem_cache_create(const char *name, size_t size, int uninit)
{
	return kmem_cache_create(name, size, 0, 0, uninit ? weft_kmem_cache_no_init : NULL);
}
EXPORT_SYMBOL_GPL(weft_kmem_cache_create);

void weft_kmem_cache_destroy(void *cache)
{
	kmem_cache_destroy(cache);
}
EXPORT_SYMBOL_GPL(weft_kmem_cache_destroy);

size_t weft_kmem_cache_size(void *cache)
{
	return cache ? kmem_cache_size(cache) : 0;
}
EXPORT_SYMBOL_GPL(weft_kmem_cache_size);

void *weft_kmem_cache_alloc(void *cache, unsigned int flags)
{
	if (!(flags & WEFT_GFP_ATOMIC))
		might_sleep();
	if (unlikely(weft_alloc_should_fail()))
		return NULL;
	return kmem_cache_alloc(cache, weft_gfp(flags));
}
EXPORT_SYMBOL_GPL(weft_kmem_cache_alloc);

void *weft_kvmalloc(size_t size, unsigned int flags)
{
	/* vmalloc may sleep: an atomic caller gets kmalloc semantics. */
	if (flags & WEFT_GFP_ATOMIC)
		return weft_kmalloc(size, flags);
	if (unlikely(weft_alloc_should_fail()))
		return NULL;
	return kvmalloc(size, weft_gfp(flags));
}
EXPORT_SYMBOL_GPL(weft_kvmalloc);

void weft_kfree(const void *p)
{
	kfree(p);
}
EXPORT_SYMBOL_GPL(weft_kfree);

void weft_kvfree(const void *p)
{
	kvfree(p);
}
EXPORT_SYMBOL_GPL(weft_kvfree);
