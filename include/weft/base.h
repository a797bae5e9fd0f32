/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Included first into every Weft C++ translation unit (-include).
 *
 * Weft's C++ is freestanding: no exceptions, no RTTI, no static
 * constructors, and no standard library.  The few declarations the compiler
 * itself needs from namespace std (aligned and nothrow new) are made here,
 * then the name std is poisoned so that nothing else can reach for it.
 */
#ifndef WEFT_BASE_H
#define WEFT_BASE_H

#ifndef __cplusplus
#error "weft/base.h is for C++ translation units"
#endif

#include <stddef.h>
#include <stdint.h>

namespace std {
enum class align_val_t : size_t {};
struct nothrow_t {
	explicit nothrow_t() = default;
};
inline constexpr nothrow_t nothrow{};
} // namespace std

namespace weft {
using align_val_t = std::align_val_t;
using nothrow_t = std::nothrow_t;
} // namespace weft

/* The replaceable allocation functions, defined in lib/rt/cxxabi.cpp. */
void *operator new(size_t size, const std::nothrow_t &) noexcept;
void *operator new[](size_t size, const std::nothrow_t &) noexcept;
void *operator new(size_t size, std::align_val_t, const std::nothrow_t &) noexcept;
void *operator new[](size_t size, std::align_val_t, const std::nothrow_t &) noexcept;
void operator delete(void *p, const std::nothrow_t &) noexcept;
void operator delete[](void *p, const std::nothrow_t &) noexcept;

/* Placement new: not replaceable, so defining it here is allowed. */
inline void *operator new(size_t, void *where) noexcept { return where; }
inline void *operator new[](size_t, void *where) noexcept { return where; }

#pragma GCC poison std

#define WEFT_LIKELY(x) __builtin_expect(!!(x), 1)
#define WEFT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define WEFT_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define WEFT_NOCOPY(T)                  \
	T(const T &) = delete;          \
	T &operator=(const T &) = delete

#endif /* WEFT_BASE_H */
