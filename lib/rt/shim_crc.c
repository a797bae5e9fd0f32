// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's CRC-32 (IEEE 802.3, bit-reflected) for C++, which the ICRC
 * uses, and its Internet checksum sums (checksum offload).
 */
#include <linux/crc32.h>
#include <linux/export.h>
#include <net/checksum.h>

#include "weft/rt/kapi.h"

uint32_t weft_crc32_le(uint32_t crc, const void *p, size_t len)
{
	return crc32_le(crc, p, len);
}
EXPORT_SYMBOL_GPL(weft_crc32_le);

uint32_t weft_csum(const void *p, size_t len, uint32_t sum)
{
	return (__force uint32_t)csum_partial(p, len, (__force __wsum)sum);
}
EXPORT_SYMBOL_GPL(weft_csum);

uint32_t weft_csum_copy(void *dst, const void *src, size_t len)
{
	return (__force uint32_t)csum_partial_copy_nocheck(src, dst, len);
}
EXPORT_SYMBOL_GPL(weft_csum_copy);
