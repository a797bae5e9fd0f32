// SPDX-License-Identifier: GPL-2.0
/*
 * What KCSAN's compiler instrumentation of C++ needs beyond C's (the race
 * kernel, tests/kernel/race.config): g++ -fsanitize=thread also reports
 * every store of an object's vtable pointer, in constructors and
 * destructors, to __tsan_vptr_update, which the kernel (C only) does not
 * provide.  It is a plain pointer-sized write to KCSAN: a virtual call on
 * another CPU racing with construction or destruction is reported as the
 * data race it is.  Empty on every other kernel.
 */
#include <linux/compiler.h>
#include <linux/export.h>

#ifdef CONFIG_KCSAN
void __tsan_write8(void *ptr);
void __tsan_vptr_update(void *vptr_p, void *new_val);

void __tsan_vptr_update(void *vptr_p, void *new_val)
{
	/* Only a change is a write (as TSan has it): a re-store of the same vtable races with nothing. */
	if (*(void **)vptr_p != new_val)
		__tsan_write8(vptr_p);
}
EXPORT_SYMBOL(__tsan_vptr_update);
#endif
