// SPDX-License-Identifier: GPL-2.0
/* The kernel's random numbers for C++ (fault injection decisions). */
#include <linux/export.h>
#include <linux/random.h>

#include "weft/rt/kapi.h"

uint32_t weft_random_u32(void)
{
	return get_random_u32();
}
EXPORT_SYMBOL_GPL(weft_random_u32);
