/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Span<T>: a pointer and a length, with bounds-checked slicing.  Parsing
 * input that came from outside (a packet, a MAD, a user buffer) goes through
 * Span so that a short or malformed buffer is an error, never a read past
 * its end.
 */
#ifndef WEFT_SPAN_H
#define WEFT_SPAN_H

#include <weft/result.h>

namespace weft {

template <typename T> class Span {
public:
	constexpr Span() = default;
	constexpr Span(T *p, size_t n) : p_(p), n_(n) {}
	template <size_t N> constexpr Span(T (&a)[N]) : p_(a), n_(N) {}

	constexpr T *data() const { return p_; }
	constexpr size_t size() const { return n_; }
	constexpr size_t size_bytes() const { return n_ * sizeof(T); }
	constexpr bool empty() const { return n_ == 0; }
	constexpr T *begin() const { return p_; }
	constexpr T *end() const { return p_ + n_; }
	/* Unchecked: for loops already bounded by size(). */
	constexpr T &operator[](size_t i) const { return p_[i]; }

	Result<T *> at(size_t i) const
	{
		if (i >= n_)
			return Error(err::ERANGE);
		return p_ + i;
	}
	Result<Span> sub(size_t off, size_t len) const
	{
		if (off > n_ || len > n_ - off)
			return Error(err::ERANGE);
		return Span(p_ + off, len);
	}
	Result<Span> first(size_t len) const { return sub(0, len); }
	Result<Span> skip(size_t off) const
	{
		if (off > n_)
			return Error(err::ERANGE);
		return Span(p_ + off, n_ - off);
	}

	/* View the start of a byte span as a wire header (alignment-1 structs only). */
	template <typename H> Result<H *> header() const
	{
		static_assert(sizeof(T) == 1, "headers are laid over bytes");
		static_assert(alignof(H) == 1, "wire headers must have alignment 1");
		if (n_ < sizeof(H))
			return Error(err::EMSGSIZE);
		return reinterpret_cast<H *>(p_);
	}

	operator Span<const T>() const { return Span<const T>(p_, n_); }

private:
	T *p_ = nullptr;
	size_t n_ = 0;
};

using Bytes = Span<uint8_t>;
using ConstBytes = Span<const uint8_t>;

} // namespace weft

#endif
