/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Atomic<T>: a value shared between contexts without a lock.  Every access
 * names its memory order, and there is no plain access at all, so a field
 * can never be read atomically in one place and plainly in another (which
 * is a data race the compiler may tear or fuse).  T is an integer, an enum,
 * a bool or a pointer: what the compiler's __atomic builtins take lock-free.
 *
 * The orders are the C++ memory model's (the kernel's READ_ONCE/WRITE_ONCE
 * are Relaxed; smp_load_acquire/smp_store_release are Acquire/Release).
 */
#ifndef WEFT_ATOMIC_H
#define WEFT_ATOMIC_H

namespace weft {

enum class Order : int {
	Relaxed = __ATOMIC_RELAXED,
	Acquire = __ATOMIC_ACQUIRE,
	Release = __ATOMIC_RELEASE,
	AcqRel = __ATOMIC_ACQ_REL,
	SeqCst = __ATOMIC_SEQ_CST,
};

/* What an Atomic<T> stores: an enum as its underlying integer, which clang's builtins require. */
template <typename T, bool = __is_enum(T)> struct AtomicRep {
	using type = T;
};
template <typename T> struct AtomicRep<T, true> {
	using type = __underlying_type(T);
};

template <typename T> class Atomic {
	static_assert(sizeof(T) <= 8 && __atomic_always_lock_free(sizeof(T), 0),
		      "Atomic<T> needs a lock-free T");
	using Rep = typename AtomicRep<T>::type;

public:
	constexpr Atomic() : v_() {}
	constexpr explicit Atomic(T v) : v_(static_cast<Rep>(v)) {}
	Atomic(const Atomic &) = delete;
	Atomic &operator=(const Atomic &) = delete;

	T load(Order o) const { return static_cast<T>(__atomic_load_n(&v_, int(o))); }
	void store(T v, Order o) { __atomic_store_n(&v_, static_cast<Rep>(v), int(o)); }
	T exchange(T v, Order o) { return static_cast<T>(__atomic_exchange_n(&v_, static_cast<Rep>(v), int(o))); }
	/* On failure @expected gets the value found. */
	bool compare_exchange(T &expected, T desired, Order success, Order failure)
	{
		Rep e = static_cast<Rep>(expected);
		bool ok = __atomic_compare_exchange_n(&v_, &e, static_cast<Rep>(desired), false, int(success),
						      int(failure));
		expected = static_cast<T>(e);
		return ok;
	}
	T fetch_add(T d, Order o) { return __atomic_fetch_add(&v_, d, int(o)); }
	T fetch_sub(T d, Order o) { return __atomic_fetch_sub(&v_, d, int(o)); }
	T fetch_or(T d, Order o) { return __atomic_fetch_or(&v_, d, int(o)); }
	T fetch_and(T d, Order o) { return __atomic_fetch_and(&v_, d, int(o)); }

private:
	Rep v_;
};

/*
 * A fence for orders a single access cannot carry cheaply: e.g. acquire
 * only on the path that needs it, after a release fetch_sub (RefCount).
 */
inline void fence(Order o) { __atomic_thread_fence(int(o)); }

/* Zero bytes are a value-initialized Atomic<T>, so zero-filled memory may hold one (Array). */
template <typename T> struct IsAtomic {
	static constexpr bool value = false;
};
template <typename T> struct IsAtomic<Atomic<T>> {
	static constexpr bool value = true;
};

} // namespace weft

#endif
