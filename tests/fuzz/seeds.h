/* SPDX-License-Identifier: GPL-2.0 */
/* What the seed writers (seeds.cpp, seeds_uverbs.cpp) share. */
#ifndef WEFT_FUZZ_SEEDS_H
#define WEFT_FUZZ_SEEDS_H

#include "fuzz.h"

namespace weft::fuzz {

/* Records (fuzz.h): a 2-byte length, then the bytes. */
struct Out {
	uint8_t buf[16384];
	size_t n = 0;
	void byte(uint8_t b) { buf[n++] = b; }
	void record(const void *p, size_t len)
	{
		byte(uint8_t(len >> 8));
		byte(uint8_t(len));
		__builtin_memcpy(buf + n, p, len);
		n += len;
	}
};

/* Write seed @name of @target into the corpus. */
void put(const char *target, const char *name, const void *data, size_t len);

} // namespace weft::fuzz

/* seeds_uverbs.cpp: the uverbs_frame and uverbs_wqe seeds. */
void uverbs_seeds();

#endif
