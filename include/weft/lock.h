/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Locks over opaque kernel storage, RAII guards, and Protected<T>: data that
 * can only be reached with its lock held.
 *
 * Every lock is initialised with a LockClass, one static object per kind of
 * lock (WEFT_LOCK_CLASS("name")), which is what lockdep needs to tell lock
 * kinds apart.  Guards cannot be copied or moved; the lock is released when
 * the guard leaves scope.
 */
#ifndef WEFT_LOCK_H
#define WEFT_LOCK_H

#include <weft/layout.h>
#include <weft/rt/kapi.h>
#include <weft/util.h>

namespace weft {

/* A lockdep class: must have static storage duration. */
struct LockClass {
	const char *name;
	Opaque<WEFT_SIZEOF_LOCK_CLASS_KEY, WEFT_ALIGNOF_LOCK_CLASS_KEY> key;
};

/*
 * One LockClass per use site.  constinit: a zero-initialised function-local
 * static, so no guard variable and no static constructor.
 */
#define WEFT_LOCK_CLASS(lockname)                                       \
	(*({                                                            \
		static constinit ::weft::LockClass _weft_cls{lockname, {}}; \
		&_weft_cls;                                             \
	}))

class SpinLock {
public:
	explicit SpinLock(LockClass &cls) { weft_spin_init(raw(), cls.name, cls.key.get()); }
	WEFT_NOCOPY(SpinLock);

	void lock() { weft_spin_lock(raw()); }
	void unlock() { weft_spin_unlock(raw()); }
	void lock_bh() { weft_spin_lock_bh(raw()); }
	void unlock_bh() { weft_spin_unlock_bh(raw()); }
	unsigned long lock_irqsave() { return weft_spin_lock_irqsave(raw()); }
	void unlock_irqrestore(unsigned long f) { weft_spin_unlock_irqrestore(raw(), f); }
	bool is_locked() { return weft_spin_is_locked(raw()); }
	/* Documents (and under lockdep checks) that the caller holds the lock. */
	void assert_held() { weft_spin_assert_held(raw()); }

private:
	void *raw() { return storage_.get(); }
	Opaque<WEFT_SIZEOF_SPINLOCK, WEFT_ALIGNOF_SPINLOCK> storage_;
};

class Mutex {
public:
	explicit Mutex(LockClass &cls) { weft_mutex_init(raw(), cls.name, cls.key.get()); }
	WEFT_NOCOPY(Mutex);
	~Mutex() { weft_mutex_destroy(raw()); }

	void lock() { weft_mutex_lock(raw()); }
	int lock_interruptible() { return weft_mutex_lock_interruptible(raw()); }
	bool try_lock() { return weft_mutex_trylock(raw()); }
	void unlock() { weft_mutex_unlock(raw()); }
	bool is_locked() { return weft_mutex_is_locked(raw()); }
	void assert_held() { weft_mutex_assert_held(raw()); }

private:
	void *raw() { return storage_.get(); }
	Opaque<WEFT_SIZEOF_MUTEX, WEFT_ALIGNOF_MUTEX> storage_;
};

class [[nodiscard]] SpinGuard {
public:
	explicit SpinGuard(SpinLock &l) : l_(l) { l_.lock(); }
	~SpinGuard() { l_.unlock(); }
	WEFT_NOCOPY(SpinGuard);

private:
	SpinLock &l_;
};

/* For locks also taken from softirq context (network receive, timers). */
class [[nodiscard]] SpinGuardBh {
public:
	explicit SpinGuardBh(SpinLock &l) : l_(l) { l_.lock_bh(); }
	~SpinGuardBh() { l_.unlock_bh(); }
	WEFT_NOCOPY(SpinGuardBh);

private:
	SpinLock &l_;
};

/* For locks also taken from hard interrupt context. */
class [[nodiscard]] SpinGuardIrq {
public:
	explicit SpinGuardIrq(SpinLock &l) : l_(l), flags_(l_.lock_irqsave()) {}
	~SpinGuardIrq() { l_.unlock_irqrestore(flags_); }
	WEFT_NOCOPY(SpinGuardIrq);

private:
	SpinLock &l_;
	unsigned long flags_;
};

class [[nodiscard]] MutexGuard {
public:
	explicit MutexGuard(Mutex &m) : m_(m) { m_.lock(); }
	~MutexGuard() { m_.unlock(); }
	WEFT_NOCOPY(MutexGuard);

private:
	Mutex &m_;
};

/* An RCU read-side critical section for the guard's lifetime. */
class [[nodiscard]] RcuReadGuard {
public:
	RcuReadGuard() { weft_rcu_read_lock(); }
	~RcuReadGuard() { weft_rcu_read_unlock(); }
	WEFT_NOCOPY(RcuReadGuard);
};

template <typename L> struct GuardFor;
template <> struct GuardFor<Mutex> { using type = MutexGuard; };
template <> struct GuardFor<SpinLock> { using type = SpinGuard; };

/*
 * Data of type T protected by a lock of type L (SpinLock or Mutex).  The
 * data is private: the only ways in are lock(), which returns an accessor
 * holding the lock, and with(fn), which runs fn on the data under the lock.
 * Guard picks the locking flavour (e.g. SpinGuardBh).
 */
template <typename T, typename L, typename Guard = typename GuardFor<L>::type>
class Protected {
public:
	template <typename... Args>
	explicit Protected(LockClass &cls, Args &&...args)
		: lock_(cls), data_(forward<Args>(args)...)
	{
	}
	WEFT_NOCOPY(Protected);

	class [[nodiscard]] Locked {
	public:
		explicit Locked(Protected &p) : guard_(p.lock_), data_(p.data_) {}
		WEFT_NOCOPY(Locked);
		T *operator->() { return &data_; }
		T &operator*() { return data_; }

	private:
		Guard guard_;
		T &data_;
	};

	Locked lock() { return Locked(*this); }

	template <typename F> auto with(F &&fn)
	{
		Guard g(lock_);
		return fn(data_);
	}

	/* For code that already holds the lock by other means (asserted). */
	T &assume_locked()
	{
		lock_.assert_held();
		return data_;
	}

private:
	L lock_;
	T data_;
};

} // namespace weft

#endif
