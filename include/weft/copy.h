/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Bulk copies of the soft datapath: the bytes an HCA would move by DMA.
 *
 * Why not csum_partial_copy_nocheck: on x86 it is a chain of `adc`, whose
 * carry flag is costly to emulate in QEMU TCG, where Weft's test hosts
 * run; a word loop that counts its carries apart moves twice as much.
 * copy_bytes, the same loop without the sum, does the plain copies; it
 * also beats the kernel's memcpy there (memcpy_orig: the guest's CPU model
 * has no fast string operations).  Measured in the stock-kernel guest
 * (make bench, the copy rows, 16 KiB-1 MiB): csum_partial_copy_nocheck
 * 1.6 GB/s, copy_csum 3.2-3.6 GB/s; memcpy 3.6-3.7 GB/s, copy_bytes
 * 4.9-5.2 GB/s.  On hardware both loops run near memory speed too.
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
