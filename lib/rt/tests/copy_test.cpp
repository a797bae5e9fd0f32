// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the datapath's bulk copies (weft/copy.h).  Every length up to a
 * few words past the unrolled step, at every source and destination
 * alignment: the bytes arrive, nothing around them is touched, and the sum
 * folds to the kernel's csum_partial() and to a byte-wise RFC 1071 sum.
 * Long runs of 0xff make the 64-bit sum carry on every word.
 */
#include <weft/alloc.h>
#include <weft/copy.h>
#include <weft/test.h>
#include <weft/test_csum.h>

using namespace weft;
using weft::test::Test;
using weft::testing::fold16;
using weft::testing::native_fold;

namespace {

constexpr size_t max_len = 200, guard = 8, big = 65536 + 7;

struct Bufs {
	uint8_t *src = new (Gfp::Sleep) uint8_t[big + 2 * guard];
	uint8_t *dst = new (Gfp::Sleep) uint8_t[big + 2 * guard];
	~Bufs()
	{
		delete[] src;
		delete[] dst;
	}
	bool ok() const { return src && dst; }
};

/* Copy [soff, soff+n) to doff; false if a byte is wrong or a guard byte changed. */
bool copied_exactly(Bufs &b, size_t soff, size_t doff, size_t n, bool sum, uint32_t *out)
{
	__builtin_memset(b.dst, 0xa5, n + 2 * guard);
	if (sum)
		*out = copy_csum(b.dst + guard + doff, b.src + soff, n);
	else
		copy_bytes(b.dst + guard + doff, b.src + soff, n);
	for (size_t i = 0; i < guard + doff; i++)
		if (b.dst[i] != 0xa5)
			return false;
	for (size_t i = guard + doff + n; i < n + 2 * guard; i++)
		if (b.dst[i] != 0xa5)
			return false;
	return __builtin_memcmp(b.dst + guard + doff, b.src + soff, n) == 0;
}

void copy_every_length_and_alignment(Test &t)
{
	Bufs b;
	WEFT_ASSERT_TRUE(t, b.ok());
	for (size_t i = 0; i < max_len + guard; i++)
		b.src[i] = static_cast<uint8_t>(i * 37 + 11);
	unsigned int bad = 0, runs = 0;
	for (size_t n = 0; n <= max_len; n++)
		for (size_t so = 0; so < 8; so++)
			for (size_t d = 0; d < 8; d++, runs++)
				bad += !copied_exactly(b, so, d, n, false, nullptr);
	WEFT_EXPECT_EQ(t, runs, 201u * 64);
	WEFT_EXPECT_EQ(t, bad, 0u);
}

void csum_every_length_and_alignment(Test &t)
{
	Bufs b;
	WEFT_ASSERT_TRUE(t, b.ok());
	for (size_t i = 0; i < max_len + guard; i++)
		b.src[i] = static_cast<uint8_t>(i * 101 + 7);
	unsigned int bad_copy = 0, bad_kernel = 0, bad_ref = 0;
	for (size_t n = 0; n <= max_len; n++)
		for (size_t so = 0; so < 8; so++)
			for (size_t d = 0; d < 8; d++) {
				uint32_t s = 0;
				bad_copy += !copied_exactly(b, so, d, n, true, &s);
				bad_kernel += fold16(s) != fold16(weft_csum(b.src + so, n, 0));
				bad_ref += fold16(s) != native_fold(b.src + so, n);
			}
	WEFT_EXPECT_EQ(t, bad_copy, 0u);
	WEFT_EXPECT_EQ(t, bad_kernel, 0u);
	WEFT_EXPECT_EQ(t, bad_ref, 0u);
}

/* All-ones words carry on every add; all-zero data sums to 0, not 0xffff. */
void csum_carries_and_zero(Test &t)
{
	Bufs b;
	WEFT_ASSERT_TRUE(t, b.ok());
	__builtin_memset(b.src, 0xff, big);
	uint32_t s = copy_csum(b.dst, b.src, big);
	WEFT_EXPECT_EQ(t, fold16(s), fold16(weft_csum(b.src, big, 0)));
	WEFT_EXPECT_EQ(t, fold16(s), native_fold(b.src, big));
	WEFT_EXPECT_EQ(t, __builtin_memcmp(b.dst, b.src, big), 0);
	for (size_t i = 0; i < big; i++)
		b.src[i] = static_cast<uint8_t>(0xf0 | (i * 13));
	s = copy_csum(b.dst + 3, b.src + 1, big - 1);
	WEFT_EXPECT_EQ(t, fold16(s), native_fold(b.src + 1, big - 1));
	__builtin_memset(b.src, 0, big);
	WEFT_EXPECT_EQ(t, copy_csum(b.dst, b.src, big), 0u);
	copy_bytes(b.dst + 5, b.src + 2, big - 7);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(b.dst + 5, b.src + 2, big - 7), 0);
}

} // namespace

WEFT_TEST_SUITE(weft_rt_copy, WEFT_CASE(copy_every_length_and_alignment),
		WEFT_CASE(csum_every_length_and_alignment), WEFT_CASE(csum_carries_and_zero));
