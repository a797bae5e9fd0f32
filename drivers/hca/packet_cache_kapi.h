/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between PacketBuf (fabric.cpp) and its slab cache (shim_packet_cache.c).
 *
 * Full-size packets come from a cache of their own so that the kernel's
 * init_on_alloc does not zero ~4 KiB per packet (every byte of a packet is
 * written before it is read).  Free with kfree (weft_kfree), as any slab
 * object; without the cache (creation failed) allocations fall back to
 * kmalloc.
 */
#ifndef WEFT_HCA_PACKET_CACHE_KAPI_H
#define WEFT_HCA_PACKET_CACHE_KAPI_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

/* Create the cache of @object_size-byte packets (at module init). */
void weft_packet_cache_init(size_t object_size);
/* Destroy it (at module exit, every packet freed). */
void weft_packet_cache_exit(void);
/* @size bytes for a packet: from the cache if it fits, else kmalloc. */
void *weft_packet_alloc(size_t size, unsigned int gfp_flags);

WEFT_C_END

#endif
