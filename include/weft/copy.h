/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Bulk copies of the soft datapath: the bytes an HCA would move by DMA.
 *
 * Why not memcpy and csum_partial_copy_nocheck: on x86 CPUs without fast
 * string operations, and in QEMU TCG (where Weft's test hosts run), the
 * kernel's memcpy is a `rep movs` that runs several times slower than a
 * loop of word moves, and the checksumming copy is a chain of `adc`, whose
 * carry flag is costly to emulate.  Measured in the stock-kernel guest
 * (make bench, the copy rows): memcpy ~0.45 GB/s, copy_bytes ~3 GB/s;
 * csum_partial_copy_nocheck 1.5-2.0 GB/s, copy_csum ~3.2 GB/s.  On
 * hardware both loops run near memory speed too.
 *
 * copy_csum()'s sum is the kernel's __wsum: a 32-bit ones' complement sum
 * of 16-bit words in memory order, the first byte taken as even (RFC 1071
 * §2).  Folded, it equals csum_partial()'s for the same bytes.
 */
#ifndef WEFT_COPY_H
#define WEFT_COPY_H

namespace weft {

/* memcpy(): @dst and @src do not overlap. */
void copy_bytes(void *dst, const void *src, size_t n);
/* Copy @n bytes and return their sum. */
uint32_t copy_csum(void *dst, const void *src, size_t n);

} // namespace weft

#endif
