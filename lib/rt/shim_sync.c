// SPDX-License-Identifier: GPL-2.0
/*
 * Spinlocks, mutexes and RCU for C++, over opaque storage (weft/lock.h).
 * The storage sizes C++ reserves come from the same kernel (weft/layout.h);
 * the static_asserts make a mismatch a build error, not memory corruption.
 */
#include <linux/bug.h>
#include <linux/export.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>

#include "weft/layout.h"
#include "weft/rt/kapi.h"

static_assert(WEFT_SIZEOF_SPINLOCK == sizeof(spinlock_t));
static_assert(WEFT_ALIGNOF_SPINLOCK == __alignof__(spinlock_t));
static_assert(WEFT_SIZEOF_MUTEX == sizeof(struct mutex));
static_assert(WEFT_ALIGNOF_MUTEX == __alignof__(struct mutex));
static_assert(WEFT_SIZEOF_LOCK_CLASS_KEY == sizeof(struct lock_class_key));
static_assert(WEFT_ALIGNOF_LOCK_CLASS_KEY == __alignof__(struct lock_class_key));

void weft_spin_init(void *lock, const char *name, void *key)
{
	spinlock_t *l = lock;

	spin_lock_init(l);
#ifdef CONFIG_DEBUG_LOCK_ALLOC
	/* One lockdep class per C++ use site, not one for every Weft lock. */
	lockdep_set_class_and_name(l, (struct lock_class_key *)key, name);
#endif
}
EXPORT_SYMBOL_GPL(weft_spin_init);

void weft_spin_lock(void *lock) __acquires(lock)
{
	spin_lock((spinlock_t *)lock);
}
EXPORT_SYMBOL_GPL(weft_spin_lock);

void weft_spin_unlock(void *lock) __releases(lock)
{
	spin_unlock((spinlock_t *)lock);
}
EXPORT_SYMBOL_GPL(weft_spin_unlock);

void weft_spin_lock_bh(void *lock) __acquires(lock)
{
	spin_lock_bh((spinlock_t *)lock);
}
EXPORT_SYMBOL_GPL(weft_spin_lock_bh);

void weft_spin_unlock_bh(void *lock) __releases(lock)
{
	spin_unlock_bh((spinlock_t *)lock);
}
EXPORT_SYMBOL_GPL(weft_spin_unlock_bh);

unsigned long weft_spin_lock_irqsave(void *lock) __acquires(lock)
{
	unsigned long flags;

	spin_lock_irqsave((spinlock_t *)lock, flags);
	return flags;
}
EXPORT_SYMBOL_GPL(weft_spin_lock_irqsave);

void weft_spin_unlock_irqrestore(void *lock, unsigned long flags) __releases(lock)
{
	spin_unlock_irqrestore((spinlock_t *)lock, flags);
}
EXPORT_SYMBOL_GPL(weft_spin_unlock_irqrestore);

bool weft_spin_is_locked(void *lock)
{
	return spin_is_locked((spinlock_t *)lock);
}
EXPORT_SYMBOL_GPL(weft_spin_is_locked);

void weft_spin_assert_held(void *lock)
{
	lockdep_assert_held((spinlock_t *)lock);
}
EXPORT_SYMBOL_GPL(weft_spin_assert_held);

void weft_mutex_init(void *mutex, const char *name, void *key)
{
	__mutex_init((struct mutex *)mutex, name, (struct lock_class_key *)key);
}
EXPORT_SYMBOL_GPL(weft_mutex_init);

void weft_mutex_destroy(void *mutex)
{
	mutex_destroy((struct mutex *)mutex);
}
EXPORT_SYMBOL_GPL(weft_mutex_destroy);

void weft_mutex_lock(void *mutex)
{
	mutex_lock((struct mutex *)mutex);
}
EXPORT_SYMBOL_GPL(weft_mutex_lock);

int weft_mutex_lock_interruptible(void *mutex)
{
	return mutex_lock_interruptible((struct mutex *)mutex);
}
EXPORT_SYMBOL_GPL(weft_mutex_lock_interruptible);

bool weft_mutex_trylock(void *mutex)
{
	return mutex_trylock((struct mutex *)mutex);
}
EXPORT_SYMBOL_GPL(weft_mutex_trylock);

void weft_mutex_unlock(void *mutex)
{
	mutex_unlock((struct mutex *)mutex);
}
EXPORT_SYMBOL_GPL(weft_mutex_unlock);

bool weft_mutex_is_locked(void *mutex)
{
	return mutex_is_locked((struct mutex *)mutex);
}
EXPORT_SYMBOL_GPL(weft_mutex_is_locked);

void weft_mutex_assert_held(void *mutex)
{
	lockdep_assert_held((struct mutex *)mutex);
}
EXPORT_SYMBOL_GPL(weft_mutex_assert_held);

void weft_rcu_read_lock(void) __acquires(RCU)
{
	rcu_read_lock();
}
EXPORT_SYMBOL_GPL(weft_rcu_read_lock);

void weft_rcu_read_unlock(void) __releases(RCU)
{
	rcu_read_unlock();
}
EXPORT_SYMBOL_GPL(weft_rcu_read_unlock);

bool weft_rcu_read_lock_held(void)
{
	return rcu_read_lock_held();
}
EXPORT_SYMBOL_GPL(weft_rcu_read_lock_held);

void weft_synchronize_rcu(void)
{
	synchronize_rcu();
}
EXPORT_SYMBOL_GPL(weft_synchronize_rcu);

void weft_synchronize_rcu_expedited(void)
{
	synchronize_rcu_expedited();
}
EXPORT_SYMBOL_GPL(weft_synchronize_rcu_expedited);

void weft_refcount_warn(const void *ref, const char *what)
{
	WARN_ONCE(1, "weft: refcount %px: %s\n", ref, what);
}
EXPORT_SYMBOL_GPL(weft_refcount_warn);
