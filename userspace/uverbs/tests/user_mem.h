/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A user address space for the uverbs KUnit cases (user_mem.c).  The
 * commands read and write user memory with the real copy_from_user(), so
 * a case needs a process's memory: the module borrows the address space
 * of the insmod that loads it (held only while its suites run), and each
 * case adopts it (kthread_use_mm()) and maps anonymous pages there.  The
 * async event fd GET_CONTEXT installs goes into the case thread's file
 * table, so a case closes it.
 */
#ifndef WEFT_UVERBS_TESTS_USER_MEM_H
#define WEFT_UVERBS_TESTS_USER_MEM_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

/* Module init/exit: take and drop the loader's address space (0, or -ENODEV without one). */
int weft_uvtest_take_mm(void);
void weft_uvtest_drop_mm(void);

/* In a case: adopt the address space (-ENODEV if none), and leave it. */
int weft_uvtest_attach(void);
void weft_uvtest_detach(void);
/* Anonymous read-write memory there (0 on failure), and its unmapping. */
uint64_t weft_uvtest_map(size_t len);
void weft_uvtest_unmap(uint64_t addr, size_t len);
/* Copies into and out of it: 0 or -EFAULT. */
int weft_uvtest_put(uint64_t dst, const void *src, size_t len);
int weft_uvtest_get(void *dst, uint64_t src, size_t len);
/* Pages pinned against the address space (mm->pinned_vm): MRs hold theirs. */
uint64_t weft_uvtest_pinned(void);
/* Close an fd of the case thread (the async event file), its release run now. */
void weft_uvtest_close_fd(int fd);

WEFT_C_END

#endif
