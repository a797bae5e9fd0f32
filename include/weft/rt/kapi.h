/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C API of the Weft runtime shims (lib/rt/shim_*.c).
 *
 * This header is the language boundary: C shims include it next to kernel
 * headers, C++ includes it instead of kernel headers.  Kernel objects that
 * C++ embeds (locks, wait queues, work items) are passed as opaque storage
 * whose size and alignment come from the generated weft/layout.h.
 */
#ifndef WEFT_RT_KAPI_H
#define WEFT_RT_KAPI_H

#ifdef __cplusplus
#include <stddef.h>
#include <stdint.h>
#define WEFT_C_BEGIN extern "C" {
#define WEFT_C_END }
#else
#include <linux/types.h>
#define WEFT_C_BEGIN
#define WEFT_C_END
#endif

#if defined(__CHECKER__) || !defined(__cplusplus)
#ifndef __acquires
#define __acquires(x)
#define __releases(x)
#endif
#else
#define __acquires(x)
#define __releases(x)
#endif

WEFT_C_BEGIN

struct work_struct;

/* --- memory (shim_alloc.c) --------------------------------------------- */
/* Allocation context: may the allocator sleep, and should memory be zeroed. */
#define WEFT_GFP_SLEEP 0u
#define WEFT_GFP_ATOMIC 1u
#define WEFT_GFP_ZERO 2u
/*
 * The size came from input (the wire, user space): failing is the caller's
 * errno or counted drop, so the allocator must not WARN (__GFP_NOWARN).
 */
#define WEFT_GFP_NOWARN 4u

void *weft_kmalloc(size_t size, unsigned int flags);
void *weft_kvmalloc(size_t size, unsigned int flags);
void weft_kfree(const void *p);
void weft_kvfree(const void *p);
/*
 * A slab cache of @size-byte objects (NULL on failure).  With @uninit the
 * kernel's init_on_alloc does not zero them (for buffers always written
 * before they are read).  Objects are freed with weft_kfree; destroy the
 * cache only when all are.
 */
void *weft_kmem_cache_create(const char *name, size_t size, int uninit);
void weft_kmem_cache_destroy(void *cache);
size_t weft_kmem_cache_size(void *cache);
void *weft_kmem_cache_alloc(void *cache, unsigned int flags);
/*
 * Test hook: make the nth allocation (1-based) done by the calling task fail,
 * and every one after it while @sticky.  nth == 0 disarms.  Returns the
 * number of allocations the task made since it was armed.
 */
void weft_alloc_fail_arm(unsigned int nth, bool sticky);
unsigned int weft_alloc_fail_disarm(void);

/* --- locks and RCU (shim_sync.c) ----------------------------------------- */
void weft_spin_init(void *lock, const char *name, void *key);
void weft_spin_lock(void *lock) __acquires(lock);
void weft_spin_unlock(void *lock) __releases(lock);
void weft_spin_lock_bh(void *lock) __acquires(lock);
void weft_spin_unlock_bh(void *lock) __releases(lock);
unsigned long weft_spin_lock_irqsave(void *lock) __acquires(lock);
void weft_spin_unlock_irqrestore(void *lock, unsigned long flags) __releases(lock);
bool weft_spin_is_locked(void *lock);
void weft_spin_assert_held(void *lock);

void weft_mutex_init(void *mutex, const char *name, void *key);
void weft_mutex_destroy(void *mutex);
void weft_mutex_lock(void *mutex);
int weft_mutex_lock_interruptible(void *mutex);
bool weft_mutex_trylock(void *mutex);
void weft_mutex_unlock(void *mutex);
bool weft_mutex_is_locked(void *mutex);
void weft_mutex_assert_held(void *mutex);

void weft_rcu_read_lock(void) __acquires(RCU);
void weft_rcu_read_unlock(void) __releases(RCU);
bool weft_rcu_read_lock_held(void);
void weft_synchronize_rcu(void);
/* The same wait, forced (IPIs): for rare changes made thousands of times in a row. */
void weft_synchronize_rcu_expedited(void);

/* refcount misuse (underflow, increment from zero, saturation): WARN once. */
void weft_refcount_warn(const void *ref, const char *what);

/* --- waiting (shim_wait.c) ---------------------------------------------- */
void weft_completion_init(void *c);
void weft_completion_reinit(void *c);
void weft_complete(void *c);
void weft_complete_all(void *c);
void weft_wait_for_completion(void *c);
/* 1 if completed, 0 on timeout. */
int weft_wait_for_completion_timeout(void *c, unsigned long timeout_ms);
bool weft_completion_done(void *c);

void weft_waitq_init(void *wq, const char *name, void *key);
void weft_waitq_wake_all(void *wq);
/*
 * Sleep on @wq until cond(ctx) is true: 0 when it is, -ETIMEDOUT after
 * @timeout_ms (< 0: no timeout), -ERESTARTSYS on a signal if @interruptible.
 */
int weft_waitq_wait(void *wq, bool (*cond)(void *ctx), void *ctx,
		    long timeout_ms, bool interruptible);

/* --- deferred work (shim_work.c) ----------------------------------------- */
void weft_work_init(void *work, void (*fn)(struct work_struct *w),
		    const char *name, void *key);
void weft_delayed_work_init(void *dwork, void (*fn)(struct work_struct *w),
			    const char *name, void *key);
/* Before the storage of a (delayed) work item goes away; it must be idle. */
void weft_work_destroy(void *work);
void weft_delayed_work_destroy(void *dwork);
/* The delayed_work that holds @w (for the callback of a delayed work). */
void *weft_delayed_work_of(struct work_struct *w);
/* @wq NULL: the system workqueue. */
bool weft_queue_work(void *wq, void *work);
bool weft_queue_delayed_work(void *wq, void *dwork, unsigned long delay_ms);
bool weft_mod_delayed_work(void *wq, void *dwork, unsigned long delay_ms);
bool weft_cancel_work_sync(void *work);
bool weft_cancel_delayed_work_sync(void *dwork);
/* Take a pending delayed work off its timer without waiting (true: it was pending). */
bool weft_cancel_delayed_work(void *dwork);
bool weft_flush_work(void *work);
void *weft_alloc_workqueue(const char *name, bool ordered, int max_active);
/*
 * Per-CPU, high priority (WQ_HIGHPRI): for data path engines, which must
 * not wait behind long-running normal work items on the same CPU.
 */
void *weft_alloc_highpri_workqueue(const char *name);
void weft_flush_workqueue(void *wq);
void weft_destroy_workqueue(void *wq);

/* --- calls on another CPU (shim_cpu.c) ----------------------------------- */
/* @csd (opaque call_single_data_t storage) will call fn(info). */
void weft_cpu_call_init(void *csd, void (*fn)(void *info), void *info);
/*
 * Call it on @cpu in hardirq context (an IPI; at once, IRQs off, when @cpu
 * is this one): 0, -EBUSY while a call of it is still pending (that call
 * will run), -ENXIO for a CPU that is offline.
 */
int weft_cpu_call(void *csd, int cpu);
/* The CPU the caller runs on (a hint: the caller may move unless atomic). */
int weft_this_cpu(void);
/* The CPU for interrupt vector @v of a device: the online CPUs in turn. */
int weft_vector_cpu(unsigned int v);
unsigned int weft_online_cpus(void);
/*
 * Bytes left below the caller on its task's kernel stack; THREAD_SIZE
 * when it runs on another stack (an interrupt stack), where this cannot tell.
 */
unsigned long weft_stack_left(void);

/* --- logging, formatting, diagnostics, time (shim_log.c) ----------------- */
/* Kernel log levels 0 (emerg) .. 7 (debug). */
void weft_vlog(int level, const char *prefix, const char *fmt, __builtin_va_list ap)
	__attribute__((format(printf, 3, 0)));
int weft_vsnprintf(char *buf, size_t size, const char *fmt, __builtin_va_list ap)
	__attribute__((format(printf, 3, 0)));
void weft_warn(const char *file, int line, const char *what);
uint64_t weft_jiffies(void);
unsigned long weft_msecs_to_jiffies(unsigned int ms);
void weft_msleep(unsigned int ms);
/* Monotonic clock in nanoseconds (ktime_get_ns), for measurements. */
uint64_t weft_ktime_ns(void);
/* Let other work run during a long loop in process context. */
void weft_cond_resched(void);
/* The running task, as an opaque identity (tests: "which thread ran this"). */
const void *weft_current_task(void);

/* --- checksums (shim_crc.c) ---------------------------------------------- */
/* CRC-32/IEEE, bit-reflected, no pre/post inversion (the kernel's crc32_le). */
uint32_t weft_crc32_le(uint32_t crc, const void *p, size_t len);
/*
 * RFC 1071 Internet checksum sums (the kernel's __wsum: unfolded, 16-bit
 * words in memory order, @p taken as an even position): of @len bytes at
 * @p added to @sum (csum_partial); and of @len bytes copied from @src to
 * @dst in the same pass (csum_partial_copy_nocheck).
 */
uint32_t weft_csum(const void *p, size_t len, uint32_t sum);
uint32_t weft_csum_copy(void *dst, const void *src, size_t len);

/* --- microsecond timers (shim_timer.c) ------------------------------------ */
/* One-shot; @fn(@arg) runs in softirq context.  The storage is heap memory. */
void weft_hrtimer_init(void *t, void (*fn)(void *arg), void *arg);
/* (Re)start it to fire in @us microseconds. */
void weft_hrtimer_start_us(void *t, uint32_t us);
/* Stop it, waiting for a callback that is running; true if it was pending. */
bool weft_hrtimer_cancel(void *t);

/* --- randomness (shim_random.c) ------------------------------------------ */
/* Not for secrets: fault injection and test decisions (get_random_u32). */
uint32_t weft_random_u32(void);

WEFT_C_END

#endif /* WEFT_RT_KAPI_H */
