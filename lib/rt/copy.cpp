// SPDX-License-Identifier: GPL-2.0
/* The datapath's bulk copies (weft/copy.h). */
#include <weft/copy.h>

namespace weft {

namespace {

/* Unaligned word access; compiles to one move on x86. */
inline uint64_t load64(const uint8_t *p)
{
	uint64_t w;
	__builtin_memcpy(&w, p, 8);
	return w;
}

inline void store64(uint8_t *p, uint64_t w) { __builtin_memcpy(p, &w, 8); }

/* One step of the copy loops: 32 bytes, all loads before the stores; the words moved. */
inline void move_block(uint8_t *d, const uint8_t *s, uint64_t &a, uint64_t &b, uint64_t &c, uint64_t &e)
{
	a = load64(s);
	b = load64(s + 8);
	c = load64(s + 16);
	e = load64(s + 24);
	store64(d, a);
	store64(d + 8, b);
	store64(d + 16, c);
	store64(d + 24, e);
}

/* sum += w, its carry out counted in @carries. */
inline void add_counting(uint64_t &sum, uint64_t &carries, uint64_t w)
{
	sum += w;
	carries += sum < w;
}

/* The last n < 8 bytes, as a word in memory order with zeros after them. */
inline uint64_t copy_tail(uint8_t *d, const uint8_t *s, size_t n)
{
	uint64_t w = 0;
	uint8_t *wb = reinterpret_cast<uint8_t *>(&w);
	for (size_t i = 0; i < n; i++)
		d[i] = wb[i] = s[i];
	return w;
}

/* a + b in 64-bit ones' complement (end-around carry, RFC 1071 §2(A)). */
inline uint64_t add_ec(uint64_t a, uint64_t b)
{
	const uint64_t r = a + b;
	return r + (r < b);
}

/* 2^64 = 1 modulo 2^32 - 1, so the halves of a 64-bit sum add up to the same sum. */
inline uint32_t fold64(uint64_t s)
{
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffffffu) + (s >> 32);
	return static_cast<uint32_t>(s);
}

} // namespace

/*
 * Four words per step, with no loads or stores between steps the compiler
 * could fuse into a call to memcpy (the loop has a store it cannot see
 * through: the barrier).
 */
void copy_bytes(void *dst, const void *src, size_t n)
{
	uint8_t *d = static_cast<uint8_t *>(dst);
	const uint8_t *s = static_cast<const uint8_t *>(src);
	uint64_t a, b, c, e;
	for (; n >= 32; n -= 32, d += 32, s += 32) {
		move_block(d, s, a, b, c, e);
		asm volatile("" ::: "memory");
	}
	for (; n >= 8; n -= 8, d += 8, s += 8)
		store64(d, load64(s));
	copy_tail(d, s, n);
}

/*
 * A 64-bit sum with its carries counted apart rather than added back at
 * each step, folded at the end: sum + carries * 2^64 = sum + carries
 * modulo 2^64 - 1, of which 2^16 - 1 is a factor.
 */
uint32_t copy_csum(void *dst, const void *src, size_t n)
{
	uint8_t *d = static_cast<uint8_t *>(dst);
	const uint8_t *s = static_cast<const uint8_t *>(src);
	uint64_t sum = 0, carries = 0;
	uint64_t a, b, c, e;
	for (; n >= 32; n -= 32, d += 32, s += 32) {
		move_block(d, s, a, b, c, e);
		add_counting(sum, carries, a);
		add_counting(sum, carries, b);
		add_counting(sum, carries, c);
		add_counting(sum, carries, e);
	}
	for (; n >= 8; n -= 8, d += 8, s += 8) {
		a = load64(s);
		store64(d, a);
		add_counting(sum, carries, a);
	}
	sum = add_ec(sum, copy_tail(d, s, n));
	return fold64(add_ec(sum, carries));
}

} // namespace weft
