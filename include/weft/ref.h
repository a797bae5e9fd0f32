/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Intrusive reference counting.
 *
 * RefCount follows the kernel's refcount_t rules: it saturates instead of
 * wrapping, an increment from zero is a use-after-free and is refused, and
 * misuse WARNs once (weft_refcount_warn).  It is inline because it sits on
 * data paths.  RefCounted<T> gives a class a count; Ref<T> is the smart
 * pointer that holds one reference.
 */
#ifndef WEFT_REF_H
#define WEFT_REF_H

#include <weft/alloc.h>
#include <weft/atomic.h>

namespace weft {

class RefCount {
public:
	/* As refcount_t: far from both 0 and INT_MAX, so a saturated count stays saturated. */
	static constexpr int saturated = -0x40000000;

	constexpr explicit RefCount(int initial = 1) : v_(initial) {}
	WEFT_NOCOPY(RefCount);

	int read() const { return v_.load(Order::Relaxed); }

	void inc()
	{
		int old = v_.fetch_add(1, Order::Relaxed);
		if (WEFT_UNLIKELY(old <= 0 || old == __INT_MAX__))
			misuse(old == 0 ? "increment on 0; use-after-free" : "saturated");
	}

	/* Take a reference unless the count already dropped to zero. */
	bool inc_not_zero()
	{
		int old = read();
		do {
			if (old == 0)
				return false;
			if (WEFT_UNLIKELY(old < 0)) {
				misuse("saturated");
				return true;
			}
		} while (!v_.compare_exchange(old, old + 1, Order::Relaxed, Order::Relaxed));
		return true;
	}

	/* Drop a reference; true when it was the last (acquire ordering then). */
	bool dec_and_test()
	{
		int old = v_.fetch_sub(1, Order::Release);
		if (old == 1) {
			fence(Order::Acquire);
			return true;
		}
		if (WEFT_UNLIKELY(old <= 0))
			misuse(old == 0 ? "underflow; use-after-free" : "saturated");
		return false;
	}

private:
	void misuse(const char *what)
	{
		v_.store(saturated, Order::Relaxed);
		weft_refcount_warn(this, what);
	}
	Atomic<int> v_;
};

/*
 * Base for refcounted classes (CRTP).  The last put() calls T::release(p),
 * which by default deletes; classes with two-phase teardown provide their
 * own (e.g. hand the object to an RCU callback).
 */
template <typename T> class RefCounted {
public:
	void get() const { refs_.inc(); }
	bool get_unless_zero() const { return refs_.inc_not_zero(); }
	void put() const
	{
		if (refs_.dec_and_test())
			T::release(const_cast<T *>(static_cast<const T *>(this)));
	}
	int ref_count() const { return refs_.read(); }
	static void release(T *obj) { delete obj; }

protected:
	RefCounted() = default;
	~RefCounted() = default;
	WEFT_NOCOPY(RefCounted);

private:
	mutable RefCount refs_{1};
};

/* Holds one reference to a T. */
template <typename T> class Ref {
public:
	Ref() = default;
	/* Take over the reference the caller holds (e.g. a new object's). */
	static Ref adopt(T *p)
	{
		Ref r;
		r.p_ = p;
		return r;
	}
	/* Take a new reference. */
	static Ref share(T *p)
	{
		if (p)
			p->get();
		return adopt(p);
	}
	Ref(const Ref &o) : p_(o.p_)
	{
		if (p_)
			p_->get();
	}
	Ref(Ref &&o) : p_(exchange(o.p_, nullptr)) {}
	Ref &operator=(const Ref &o)
	{
		Ref tmp(o);
		swap(p_, tmp.p_);
		return *this;
	}
	Ref &operator=(Ref &&o)
	{
		Ref tmp(move(o));
		swap(p_, tmp.p_);
		return *this;
	}
	~Ref() { reset(); }

	void reset()
	{
		if (T *p = exchange(p_, nullptr))
			p->put();
	}
	/* Give up the reference without dropping it (to a C owner). */
	T *leak() { return exchange(p_, nullptr); }
	T *get() const { return p_; }
	T *operator->() const { return p_; }
	T &operator*() const { return *p_; }
	explicit operator bool() const { return p_ != nullptr; }
	bool operator==(const Ref &o) const { return p_ == o.p_; }

private:
	T *p_ = nullptr;
};

template <typename T, typename... Args> Result<Ref<T>> make_ref(Gfp gfp, Args &&...args)
{
	T *p = new (gfp) T(forward<Args>(args)...);
	if (!p)
		return Error(err::ENOMEM);
	return Ref<T>::adopt(p);
}

} // namespace weft

#endif
