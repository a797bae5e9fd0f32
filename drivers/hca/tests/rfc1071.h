/* SPDX-License-Identifier: GPL-2.0 */
/* KUnit helpers of the checksum suites (csum_test.cpp, lso_test.cpp). */
#ifndef WEFT_HCA_TESTS_RFC1071_H
#define WEFT_HCA_TESTS_RFC1071_H

#include <weft/base.h>

namespace weft::hca::testing {

/* RFC 1071 by the book over big-endian words, from @init: 0xffff when a checksum is valid. */
inline uint16_t rfc1071(const uint8_t *p, size_t n, uint32_t init)
{
	uint32_t s = init;
	for (size_t i = 0; i < n; i += 2)
		s += (uint32_t(p[i]) << 8) | (i + 1 < n ? p[i + 1] : 0);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return static_cast<uint16_t>(s);
}

} // namespace weft::hca::testing

#endif
