// SPDX-License-Identifier: GPL-2.0
/*
 * new (weft::Gfp) for the host build: the host's nothrow new, so that
 * AddressSanitizer pairs it with the delete Weft's code calls.  The
 * other forms of new and delete are the host C++ runtime's.
 */
#include <weft/alloc.h>

void *operator new(size_t size, weft::Gfp) noexcept { return ::operator new(size, weft::nothrow_t{}); }
void *operator new[](size_t size, weft::Gfp) noexcept { return ::operator new[](size, weft::nothrow_t{}); }
void operator delete(void *p, weft::Gfp) noexcept { ::operator delete(p, weft::nothrow_t{}); }
void operator delete[](void *p, weft::Gfp) noexcept { ::operator delete[](p, weft::nothrow_t{}); }

extern "C" void __cxa_pure_virtual(void);
