// SPDX-License-Identifier: GPL-2.0
/* The slab cache of full-size fabric packets (packet_cache_kapi.h). */
#include <linux/slab.h>

#include "packet_cache_kapi.h"

static struct kmem_cache *weft_packet_cache;

/*
 * Empty on purpose: a cache with a constructor is exempt from
 * init_on_alloc zeroing (mm/slab.h), and packets need no initial state.
 */
static void weft_packet_ctor(void *obj)
{
}

void weft_packet_cache_init(size_t object_size)
{
	weft_packet_cache = kmem_cache_create("weft_packet", object_size, 0, 0, weft_packet_ctor);
}

void weft_packet_cache_exit(void)
{
	kmem_cache_destroy(weft_packet_cache);
	weft_packet_cache = NULL;
}

void *weft_packet_alloc(size_t size, unsigned int gfp_flags)
{
	/* Small packets (ACKs, requests) are cheap to zero: kmalloc's size classes fit them better. */
	if (weft_packet_cache && size > 512 && size <= kmem_cache_size(weft_packet_cache))
		return kmem_cache_alloc(weft_packet_cache, gfp_flags);
	return kmalloc(size, gfp_flags);
}
