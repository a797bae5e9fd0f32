// SPDX-License-Identifier: GPL-2.0
/*
 * The C++ ABI pieces the compiler calls on its own: every form of operator
 * new/delete (a virtual destructor alone references sized delete), and
 * __cxa_pure_virtual, which g++ references weakly, so a missing definition
 * would silently leave a NULL in the vtable.  Plain new may sleep; code in
 * atomic context uses new (weft::Gfp::Atomic).  Exported to the other Weft
 * modules by lib/rt/module.c.
 */
#include <weft/alloc.h>

namespace {
/* kmalloc aligns to at least KMALLOC_MINALIGN; larger alignments are refused. */
void *alloc_aligned(size_t size, weft::align_val_t align, unsigned flags)
{
	if (static_cast<size_t>(align) > 4096) {
		weft_warn(__FILE__, __LINE__, "over-aligned new beyond a page");
		return nullptr;
	}
	/* kmalloc aligns power-of-two sizes naturally (and only those). */
	size_t a = static_cast<size_t>(align);
	if (a > WEFT_KMALLOC_MINALIGN) {
		size_t p = a;
		while (p < size)
			p <<= 1;
		size = p;
	}
	return weft_kmalloc(size, flags);
}
} // namespace

void *operator new(size_t size) { return weft_kmalloc(size, WEFT_GFP_SLEEP); }
void *operator new[](size_t size) { return weft_kmalloc(size, WEFT_GFP_SLEEP); }
void *operator new(size_t size, const weft::nothrow_t &) noexcept { return weft_kmalloc(size, WEFT_GFP_SLEEP); }
void *operator new[](size_t size, const weft::nothrow_t &) noexcept { return weft_kmalloc(size, WEFT_GFP_SLEEP); }
void *operator new(size_t size, weft::align_val_t a) { return alloc_aligned(size, a, WEFT_GFP_SLEEP); }
void *operator new[](size_t size, weft::align_val_t a) { return alloc_aligned(size, a, WEFT_GFP_SLEEP); }
void *operator new(size_t size, weft::align_val_t a, const weft::nothrow_t &) noexcept
{
	return alloc_aligned(size, a, WEFT_GFP_SLEEP);
}
void *operator new[](size_t size, weft::align_val_t a, const weft::nothrow_t &) noexcept
{
	return alloc_aligned(size, a, WEFT_GFP_SLEEP);
}
void *operator new(size_t size, weft::Gfp gfp) noexcept { return weft_kmalloc(size, weft::gfp_flags(gfp)); }
void *operator new[](size_t size, weft::Gfp gfp) noexcept { return weft_kmalloc(size, weft::gfp_flags(gfp)); }

void operator delete(void *p) noexcept { weft_kfree(p); }
void operator delete[](void *p) noexcept { weft_kfree(p); }
void operator delete(void *p, size_t) noexcept { weft_kfree(p); }
void operator delete[](void *p, size_t) noexcept { weft_kfree(p); }
void operator delete(void *p, weft::align_val_t) noexcept { weft_kfree(p); }
void operator delete[](void *p, weft::align_val_t) noexcept { weft_kfree(p); }
void operator delete(void *p, size_t, weft::align_val_t) noexcept { weft_kfree(p); }
void operator delete[](void *p, size_t, weft::align_val_t) noexcept { weft_kfree(p); }
void operator delete(void *p, const weft::nothrow_t &) noexcept { weft_kfree(p); }
void operator delete[](void *p, const weft::nothrow_t &) noexcept { weft_kfree(p); }
/* Called only if a constructor after new (gfp) could fail; ours cannot, but the pair must exist. */
void operator delete(void *p, weft::Gfp) noexcept { weft_kfree(p); }
void operator delete[](void *p, weft::Gfp) noexcept { weft_kfree(p); }

extern "C" void __cxa_pure_virtual(void);
extern "C" void __cxa_pure_virtual(void)
{
	weft_warn(__FILE__, __LINE__, "pure virtual function called");
	/* Returning would run the caller on garbage: stop here (an oops, like BUG()). */
	__builtin_trap();
}
