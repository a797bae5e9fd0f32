// SPDX-License-Identifier: GPL-2.0
/* The uverbs KUnit cases' user address space (user_mem.h). */
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include <linux/uaccess.h>

#include "user_mem.h"

/* The loader's address space, from module init until its suites have run. */
static struct mm_struct *weft_uvtest_mm;

int weft_uvtest_take_mm(void)
{
	weft_uvtest_mm = get_task_mm(current);
	return weft_uvtest_mm ? 0 : -ENODEV;
}

void weft_uvtest_drop_mm(void)
{
	if (weft_uvtest_mm)
		mmput(weft_uvtest_mm);
	weft_uvtest_mm = NULL;
}

int weft_uvtest_attach(void)
{
	if (!weft_uvtest_mm || current->mm)
		return -ENODEV;
	kthread_use_mm(weft_uvtest_mm);
	return 0;
}

void weft_uvtest_detach(void)
{
	kthread_unuse_mm(weft_uvtest_mm);
}

uint64_t weft_uvtest_map(size_t len)
{
	unsigned long a = vm_mmap(NULL, 0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, 0);

	return IS_ERR_VALUE(a) ? 0 : a;
}

void weft_uvtest_unmap(uint64_t addr, size_t len)
{
	vm_munmap(addr, len);
}

int weft_uvtest_put(uint64_t dst, const void *src, size_t len)
{
	return copy_to_user(u64_to_user_ptr(dst), src, len) ? -EFAULT : 0;
}

int weft_uvtest_get(void *dst, uint64_t src, size_t len)
{
	return copy_from_user(dst, u64_to_user_ptr(src), len) ? -EFAULT : 0;
}

uint64_t weft_uvtest_pinned(void)
{
	return atomic64_read(&current->mm->pinned_vm);
}

void weft_uvtest_close_fd(int fd)
{
	if (fd < 0)
		return;
	close_fd(fd);
	/* A kernel thread's fput() is deferred: run it before weft_uverbs may be unloaded. */
	flush_delayed_fput();
}
