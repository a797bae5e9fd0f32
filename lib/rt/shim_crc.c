// SPDX-License-Identifier: GPL-2.0
/* The kernel's CRC-32 (IEEE 802.3, bit-reflected) for C++; the ICRC uses it. */
#include <linux/crc32.h>
#include <linux/export.h>

#include "weft/rt/kapi.h"

uint32_t weft_crc32_le(uint32_t crc, const void *p, size_t len)
{
	return crc32_le(crc, p, len);
}
EXPORT_SYMBOL_GPL(weft_crc32_le);
