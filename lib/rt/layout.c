// SPDX-License-Identifier: GPL-2.0
/*
 * Sizes and alignments of the kernel objects that C++ embeds as opaque
 * storage, and the errno values C++ uses, read from the kernel being built
 * against.  Compiled to assembly only (never linked), then turned into
 * weft/layout.h by scripts/gen-layout.sh: the asm-offsets technique of
 * kbuild.  A debug kernel's spinlock_t is many times the stock one's, so
 * these are generated per kernel, never written down.
 */
#include <linux/kbuild.h>
#include <linux/completion.h>
#include <linux/errno.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "shim_timer.h"

#define LAYOUT(name, type)                                  \
	DEFINE(WEFT_SIZEOF_##name, sizeof(type));           \
	DEFINE(WEFT_ALIGNOF_##name, __alignof__(type))

#define ERRNO(name) DEFINE(WEFT_##name, name)

void weft_layout(void);
void weft_layout(void)
{
	LAYOUT(SPINLOCK, spinlock_t);
	LAYOUT(MUTEX, struct mutex);
	LAYOUT(WAIT_QUEUE_HEAD, wait_queue_head_t);
	LAYOUT(COMPLETION, struct completion);
	LAYOUT(WORK_STRUCT, struct work_struct);
	LAYOUT(DELAYED_WORK, struct delayed_work);
	LAYOUT(CSD, call_single_data_t);
	LAYOUT(HRTIMER, struct weft_hrtimer);
	LAYOUT(LOCK_CLASS_KEY, struct lock_class_key);
	DEFINE(WEFT_KMALLOC_MINALIGN, ARCH_KMALLOC_MINALIGN);
	BLANK();
	ERRNO(EPERM);
	ERRNO(ENOENT);
	ERRNO(EBADF);
	ERRNO(EINTR);
	ERRNO(EIO);
	ERRNO(ENXIO);
	ERRNO(E2BIG);
	ERRNO(EAGAIN);
	ERRNO(ENOMEM);
	ERRNO(EACCES);
	ERRNO(EFAULT);
	ERRNO(EBUSY);
	ERRNO(EEXIST);
	ERRNO(ENODEV);
	ERRNO(EINVAL);
	ERRNO(ENOSPC);
	ERRNO(ERANGE);
	ERRNO(ENOSYS);
	ERRNO(ENOTSUPP);
	ERRNO(EOPNOTSUPP);
	ERRNO(EMSGSIZE);
	ERRNO(EPROTO);
	ERRNO(EBADMSG);
	ERRNO(EREMOTEIO);
	ERRNO(EOVERFLOW);
	ERRNO(ENOBUFS);
	ERRNO(ETIMEDOUT);
	ERRNO(ECONNREFUSED);
	ERRNO(ECONNRESET);
	ERRNO(ENETUNREACH);
	ERRNO(EHOSTUNREACH);
	ERRNO(ECANCELED);
	ERRNO(ENOTCONN);
	ERRNO(ESHUTDOWN);
	ERRNO(ERESTARTSYS);
	ERRNO(ENOTTY);
	ERRNO(EPIPE);
	ERRNO(ENOTUNIQ);
	ERRNO(EADDRINUSE);
	ERRNO(EADDRNOTAVAIL);
	ERRNO(EAFNOSUPPORT);
	ERRNO(ENOPROTOOPT);
	ERRNO(EISCONN);
}
