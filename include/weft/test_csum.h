/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit reference sums for the checksum suites (lib/rt copy_test,
 * drivers/hca csum_test and lso_test): RFC 1071 written the slow, obvious
 * way, to check the fast ones against.
 */
#ifndef WEFT_TEST_CSUM_H
#define WEFT_TEST_CSUM_H

#include <weft/base.h>

namespace weft::testing {

inline uint16_t fold16(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return static_cast<uint16_t>(s);
}

/* RFC 1071 by the book over big-endian words, from @init: 0xffff when a checksum is valid. */
inline uint16_t rfc1071(const uint8_t *p, size_t n, uint32_t init)
{
	uint32_t s = init;
	for (size_t i = 0; i < n; i += 2)
		s += (uint32_t(p[i]) << 8) | (i + 1 < n ? p[i + 1] : 0);
	return fold16(s);
}

/* The same bytes summed as memory-order words (the kernel's __wsum, wc.csum), folded. */
inline uint16_t native_fold(const uint8_t *p, size_t n)
{
	uint32_t s = 0;
	for (size_t i = 0; i < n; i += 2) {
		uint16_t w = 0;
		uint8_t *wb = reinterpret_cast<uint8_t *>(&w);
		wb[0] = p[i];
		wb[1] = i + 1 < n ? p[i + 1] : 0;
		s += w;
	}
	return fold16(s);
}

} // namespace weft::testing

#endif
