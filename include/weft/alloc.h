/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checked allocation with an explicit context.  Whether an allocation may
 * sleep is a property of the caller's context, so it is always spelled out
 * (Gfp::Sleep or Gfp::Atomic) and never defaulted.  Construction happens only
 * when the allocation succeeded (-fcheck-new); failure is a Result error.
 */
#ifndef WEFT_ALLOC_H
#define WEFT_ALLOC_H

#include <weft/atomic.h>
#include <weft/result.h>

namespace weft {

enum class Gfp : unsigned int {
	Sleep = WEFT_GFP_SLEEP,
	Atomic = WEFT_GFP_ATOMIC,
};

/*
 * Who chose an allocation's size: the code (a failure is a bug worth the
 * allocator's warning) or its input, the wire or user space (a failure is
 * the caller's errno or counted drop, and must never WARN).
 */
enum class Sized : uint8_t { Known, ByInput };

constexpr unsigned int gfp_flags(Gfp g, bool zero = false, Sized s = Sized::Known)
{
	return static_cast<unsigned int>(g) | (zero ? WEFT_GFP_ZERO : 0u) |
	       (s == Sized::ByInput ? WEFT_GFP_NOWARN : 0u);
}

} // namespace weft

/* new (weft::Gfp::Atomic) T(...): kmalloc with that context, nullptr on failure. */
void *operator new(size_t size, weft::Gfp gfp) noexcept;
void *operator new[](size_t size, weft::Gfp gfp) noexcept;
void operator delete(void *p, weft::Gfp gfp) noexcept;
void operator delete[](void *p, weft::Gfp gfp) noexcept;

namespace weft {

/* Sole owner of a heap object: deleted when the Own goes away. */
template <typename T> class Own {
public:
	Own() = default;
	explicit Own(T *p) : p_(p) {}
	Own(Own &&o) : p_(o.release()) {}
	template <typename U> Own(Own<U> &&o) : p_(o.release()) {}
	Own &operator=(Own &&o)
	{
		reset(o.release());
		return *this;
	}
	WEFT_NOCOPY(Own);
	~Own() { reset(); }

	T *get() const { return p_; }
	T *operator->() const { return p_; }
	T &operator*() const { return *p_; }
	explicit operator bool() const { return p_ != nullptr; }
	T *release() { return exchange(p_, nullptr); }
	void reset(T *p = nullptr)
	{
		T *old = exchange(p_, p);
		delete old;
	}

private:
	T *p_ = nullptr;
};

template <typename T, typename... Args> Result<Own<T>> make_own(Gfp gfp, Args &&...args)
{
	T *p = new (gfp) T(forward<Args>(args)...);
	if (!p)
		return Error(err::ENOMEM);
	return Own<T>(p);
}

/*
 * A zeroed array of trivially constructible T, from kvmalloc when it may
 * sleep (large tables), kmalloc otherwise.
 */
template <typename T> class Array {
public:
	Array() = default;
	Array(Array &&o) : p_(exchange(o.p_, nullptr)), n_(exchange(o.n_, 0)) {}
	Array &operator=(Array &&o)
	{
		free();
		p_ = exchange(o.p_, nullptr);
		n_ = exchange(o.n_, 0);
		return *this;
	}
	WEFT_NOCOPY(Array);
	~Array() { free(); }

	/* ENOMEM when there is no memory; EINVAL for 0 or a size that overflows. */
	static Result<Array> make(Gfp gfp, size_t n, Sized sized = Sized::Known)
	{
		/* Zero-filled memory, no constructors run: plain data (or Atomics of it) only. */
		static_assert((__is_trivially_copyable(T) || IsAtomic<T>::value) &&
				      __has_trivial_destructor(T),
			      "Array holds plain data");
		if (n == 0 || n > SIZE_MAX / sizeof(T))
			return Error(err::EINVAL);
		const unsigned int flags = gfp_flags(gfp, true, sized);
		void *p = gfp == Gfp::Sleep ? weft_kvmalloc(n * sizeof(T), flags)
					    : weft_kmalloc(n * sizeof(T), flags);
		if (!p)
			return Error(err::ENOMEM);
		Array a;
		a.p_ = static_cast<T *>(p);
		a.n_ = n;
		return a;
	}

	size_t size() const { return n_; }
	T *data() const { return p_; }
	T &operator[](size_t i) const { return p_[i]; }
	T *begin() const { return p_; }
	T *end() const { return p_ + n_; }

private:
	void free()
	{
		weft_kvfree(p_);
		p_ = nullptr;
		n_ = 0;
	}
	T *p_ = nullptr;
	size_t n_ = 0;
};

} // namespace weft

#endif
