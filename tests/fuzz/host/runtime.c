// SPDX-License-Identifier: GPL-2.0
/*
 * The Weft runtime's C API (include/weft/rt/kapi.h) for a host process:
 * what the freestanding C++ parsers call instead of the kernel when they
 * are built for libFuzzer (tests/fuzz/README.md).  Single-threaded: locks
 * are flags (a recursive take is a finding), time is virtual, work runs when a target lets time pass
 * (weft_host_advance), hrtimers never fire.  A kernel WARN is a bug the
 * fuzzer must report, so weft_warn() aborts.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft/layout.h>
#include <weft/rt/kapi.h>

/* --- memory ------------------------------------------------------------- */
static unsigned int fail_nth, fail_count;
static bool fail_sticky;

static bool fail_now(void)
{
	if (!fail_nth)
		return false;
	++fail_count;
	return fail_count == fail_nth || (fail_sticky && fail_count > fail_nth);
}

/* Input-sized allocations beyond this fail, as a kernel's would (kvmalloc's INT_MAX). */
#define HOST_ALLOC_MAX (1ul << 31)

void *weft_kmalloc(size_t size, unsigned int flags)
{
	if (fail_now() || size > HOST_ALLOC_MAX)
		return NULL;
	return (flags & WEFT_GFP_ZERO) ? calloc(1, size ? size : 1) : malloc(size ? size : 1);
}
void *weft_kvmalloc(size_t size, unsigned int flags) { return weft_kmalloc(size, flags); }
void weft_kfree(const void *p) { free((void *)p); }
void weft_kvfree(const void *p) { free((void *)p); }

struct host_cache {
	size_t size;
};
void *weft_kmem_cache_create(const char *name, size_t size, int uninit)
{
	struct host_cache *c = malloc(sizeof(*c));
	(void)name;
	(void)uninit;
	if (c)
		c->size = size;
	return c;
}
void weft_kmem_cache_destroy(void *cache) { free(cache); }
size_t weft_kmem_cache_size(void *cache) { return ((struct host_cache *)cache)->size; }
void *weft_kmem_cache_alloc(void *cache, unsigned int flags)
{
	return weft_kmalloc(((struct host_cache *)cache)->size, flags);
}
void weft_alloc_fail_arm(unsigned int nth, bool sticky)
{
	fail_nth = nth;
	fail_sticky = sticky;
	fail_count = 0;
}
unsigned int weft_alloc_fail_disarm(void)
{
	unsigned int n = fail_count;
	fail_nth = 0;
	fail_count = 0;
	return n;
}

/*
 * --- locks: one thread, so a lock is a held flag; taking one held already
 * (a self-deadlock in the kernel) or releasing one not held is a finding.
 */
static void take(void *lock, const char *what)
{
	if (*(int *)lock)
		weft_warn(__FILE__, __LINE__, what);
	*(int *)lock = 1;
}
static void release(void *lock, const char *what)
{
	if (!*(int *)lock)
		weft_warn(__FILE__, __LINE__, what);
	*(int *)lock = 0;
}
void weft_spin_init(void *lock, const char *name, void *key) { (void)name; (void)key; *(int *)lock = 0; }
void weft_spin_lock(void *lock) { take(lock, "spinlock taken twice"); }
void weft_spin_unlock(void *lock) { release(lock, "spinlock released unheld"); }
void weft_spin_lock_bh(void *lock) { take(lock, "spinlock taken twice"); }
void weft_spin_unlock_bh(void *lock) { release(lock, "spinlock released unheld"); }
unsigned long weft_spin_lock_irqsave(void *lock) { take(lock, "spinlock taken twice"); return 0; }
void weft_spin_unlock_irqrestore(void *lock, unsigned long f) { (void)f; release(lock, "spinlock released unheld"); }
bool weft_spin_is_locked(void *lock) { return *(int *)lock; }
void weft_spin_assert_held(void *lock) { if (!*(int *)lock) weft_warn(__FILE__, __LINE__, "lock not held"); }

void weft_mutex_init(void *m, const char *name, void *key) { weft_spin_init(m, name, key); }
void weft_mutex_destroy(void *m) { if (*(int *)m) weft_warn(__FILE__, __LINE__, "mutex destroyed held"); }
void weft_mutex_lock(void *m) { take(m, "mutex taken twice"); }
int weft_mutex_lock_interruptible(void *m) { take(m, "mutex taken twice"); return 0; }
bool weft_mutex_trylock(void *m) { if (*(int *)m) return false; *(int *)m = 1; return true; }
void weft_mutex_unlock(void *m) { release(m, "mutex released unheld"); }
bool weft_mutex_is_locked(void *m) { return *(int *)m; }
void weft_mutex_assert_held(void *m) { weft_spin_assert_held(m); }

static int rcu_depth;
void weft_rcu_read_lock(void) { ++rcu_depth; }
void weft_rcu_read_unlock(void) { --rcu_depth; }
bool weft_rcu_read_lock_held(void) { return rcu_depth > 0; }
void weft_synchronize_rcu(void) {}
void weft_synchronize_rcu_expedited(void) {}

void weft_refcount_warn(const void *ref, const char *what) { (void)ref; weft_warn(__FILE__, __LINE__, what); }

/* --- waiting: nothing else runs, so a wait that is not already done times out */
void weft_completion_init(void *c) { *(int *)c = 0; }
void weft_completion_reinit(void *c) { *(int *)c = 0; }
void weft_complete(void *c) { *(int *)c = 1; }
void weft_complete_all(void *c) { *(int *)c = 1; }
void weft_wait_for_completion(void *c)
{
	if (!*(int *)c)
		weft_warn(__FILE__, __LINE__, "wait for a completion nobody completes");
}
int weft_wait_for_completion_timeout(void *c, unsigned long ms) { (void)ms; return *(int *)c; }
bool weft_completion_done(void *c) { return *(int *)c; }
void weft_waitq_init(void *wq, const char *name, void *key) { (void)wq; (void)name; (void)key; }
void weft_waitq_wake_all(void *wq) { (void)wq; }
int weft_waitq_wait(void *wq, bool (*cond)(void *ctx), void *ctx, long timeout_ms, bool intr)
{
	(void)wq;
	(void)intr;
	if (cond(ctx))
		return 0;
	if (timeout_ms < 0)
		weft_warn(__FILE__, __LINE__, "endless wait in a single-threaded host run");
	return -WEFT_ETIMEDOUT;
}

/*
 * --- work: queued on one list and run only when a target lets time pass
 * (weft_host_advance), so that timers and retries are driven by the input.
 */
struct host_work {
	bool pending;
	void (*fn)(struct work_struct *);
	uint64_t due_ms;
	struct host_work *next;
};
static struct host_work *queued;
static uint64_t host_ns;

static uint64_t now_ms(void) { return host_ns / 1000000u; }

static void unlink_work(struct host_work *w)
{
	for (struct host_work **p = &queued; *p; p = &(*p)->next) {
		if (*p == w) {
			*p = w->next;
			break;
		}
	}
	w->pending = false;
}
static bool queue_at(void *work, unsigned long delay_ms, bool modify)
{
	struct host_work *w = work;
	if (w->pending) {
		if (modify)
			w->due_ms = now_ms() + delay_ms;
		return false;
	}
	w->pending = true;
	w->due_ms = now_ms() + delay_ms;
	w->next = queued;
	queued = w;
	return true;
}
static bool cancel(void *work)
{
	struct host_work *w = work;
	bool was = w->pending;
	if (was)
		unlink_work(w);
	return was;
}

void weft_work_init(void *work, void (*fn)(struct work_struct *), const char *n, void *k)
{
	struct host_work *w = work;
	(void)n;
	(void)k;
	_Static_assert(sizeof(struct host_work) <= WEFT_SIZEOF_WORK_STRUCT, "host work fits");
	w->pending = false;
	w->fn = fn;
	w->next = NULL;
}
void weft_delayed_work_init(void *w, void (*fn)(struct work_struct *), const char *n, void *k)
{
	weft_work_init(w, fn, n, k);
}
void weft_work_destroy(void *w)
{
	if (((struct host_work *)w)->pending)
		weft_warn(__FILE__, __LINE__, "work destroyed while queued");
}
void weft_delayed_work_destroy(void *w) { weft_work_destroy(w); }
void *weft_delayed_work_of(struct work_struct *w) { return w; }
bool weft_queue_work(void *wq, void *w) { (void)wq; return queue_at(w, 0, false); }
bool weft_queue_delayed_work(void *wq, void *w, unsigned long ms) { (void)wq; return queue_at(w, ms, false); }
bool weft_mod_delayed_work(void *wq, void *w, unsigned long ms)
{
	(void)wq;
	return !queue_at(w, ms, true);
}
bool weft_cancel_work_sync(void *w) { return cancel(w); }
bool weft_cancel_delayed_work_sync(void *w) { return cancel(w); }
bool weft_cancel_delayed_work(void *w) { return cancel(w); }
bool weft_flush_work(void *w)
{
	struct host_work *hw = w;
	if (!hw->pending)
		return false;
	unlink_work(hw);
	hw->fn((struct work_struct *)hw);
	return true;
}
static int host_wq;
void *weft_alloc_workqueue(const char *n, bool o, int m) { (void)n; (void)o; (void)m; return &host_wq; }
void *weft_alloc_highpri_workqueue(const char *n) { (void)n; return &host_wq; }
void weft_flush_workqueue(void *wq) { (void)wq; }
void weft_destroy_workqueue(void *wq) { (void)wq; }

/* Let @ms pass, running every work item that falls due (what it queues too). */
void weft_host_advance(unsigned int ms);
void weft_host_advance(unsigned int ms)
{
	host_ns += (uint64_t)ms * 1000000u;
	for (unsigned int rounds = 0; rounds < 1000; rounds++) {
		struct host_work *due = NULL;
		for (struct host_work *w = queued; w; w = w->next)
			if (w->due_ms <= now_ms())
				due = w;
		if (!due)
			return;
		unlink_work(due);
		due->fn((struct work_struct *)due);
	}
	weft_warn(__FILE__, __LINE__, "work requeues itself without end");
}

/* --- CPUs ------------------------------------------------------------------ */
void weft_cpu_call_init(void *csd, void (*fn)(void *), void *info) { (void)csd; (void)fn; (void)info; }
int weft_cpu_call(void *csd, int cpu) { (void)csd; (void)cpu; return -WEFT_ENXIO; }
/* The host has its whole thread stack: never deep enough for Port::transmit to defer. */
unsigned long weft_stack_left(void) { return 1ul << 20; }
int weft_this_cpu(void) { return 0; }
int weft_vector_cpu(unsigned int v) { (void)v; return 0; }
unsigned int weft_online_cpus(void) { return 1; }

/* --- logging and time ----------------------------------------------------- */
void weft_vlog(int level, const char *prefix, const char *fmt, __builtin_va_list ap)
{
	/* Bad input is logged by design; print only when asked (WEFT_FUZZ_LOG=1). */
	static int verbose = -1;
	if (verbose < 0)
		verbose = getenv("WEFT_FUZZ_LOG") != NULL;
	if (!verbose)
		return;
	fprintf(stderr, "<%d>%s", level, prefix ? prefix : "");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}
int weft_vsnprintf(char *buf, size_t size, const char *fmt, __builtin_va_list ap)
{
	return vsnprintf(buf, size, fmt, ap);
}
void weft_warn(const char *file, int line, const char *what)
{
	fprintf(stderr, "WEFT WARN at %s:%d: %s\n", file, line, what);
	abort();
}
/* Time is virtual: a jiffy is a millisecond, and only sleeps and weft_host_advance move it. */
uint64_t weft_jiffies(void) { return now_ms(); }
unsigned long weft_msecs_to_jiffies(unsigned int ms) { return ms; }
void weft_msleep(unsigned int ms) { host_ns += (uint64_t)ms * 1000000u; }
uint64_t weft_ktime_ns(void) { return host_ns; }
void weft_cond_resched(void) {}
const void *weft_current_task(void) { return &host_ns; }

/* --- checksums ------------------------------------------------------------ */
uint32_t weft_crc32_le(uint32_t crc, const void *p, size_t len)
{
	const unsigned char *b = p;
	while (len--) {
		crc ^= *b++;
		for (int i = 0; i < 8; i++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return crc;
}
uint32_t weft_csum(const void *p, size_t len, uint32_t sum)
{
	const unsigned char *b = p;
	uint64_t s = sum;
	for (size_t i = 0; i + 1 < len; i += 2) {
		uint16_t w;
		memcpy(&w, b + i, 2);
		s += w;
	}
	if (len & 1)
		s += b[len - 1]; /* little-endian host: the odd byte is the low half */
	while (s >> 32)
		s = (s & 0xffffffffu) + (s >> 32);
	return (uint32_t)s;
}
uint32_t weft_csum_copy(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
	return weft_csum(dst, len, 0);
}

/* --- timers and randomness ---------------------------------------------- */
void weft_hrtimer_init(void *t, void (*fn)(void *), void *arg) { (void)t; (void)fn; (void)arg; }
void weft_hrtimer_start_us(void *t, uint32_t us) { (void)t; (void)us; }
bool weft_hrtimer_cancel(void *t) { (void)t; return false; }
uint32_t weft_random_u32(void) { return 4; /* deterministic runs */ }
