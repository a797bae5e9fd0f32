/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The verbs API (IBA Vol 1 ch. 11) as the mid-layer offers it to ULPs, and
 * the contract HCA drivers implement.
 *
 * Ownership: every verbs object belongs to exactly one Context, the
 * resource owner (a kernel client's use of one device; later a user
 * process).  Objects are created and destroyed through their Context, which
 * keeps them on intrusive lists, refuses to destroy an object still in use
 * (EBUSY, IBA 11.2: a PD with MRs or QPs, a CQ with QPs), and on close
 * destroys whatever is left in dependency order.  Refcounts exist so that a
 * data path holding an object (a packet in flight for a QP, an MR being
 * copied into) keeps it alive; destroy is two-phase: the object is unlinked
 * and stopped, in-flight users drain, then it is freed.
 *
 * Devices register with the registry; Clients (ULPs) get add/remove
 * callbacks for every device, present and future.  All of this is process
 * context; the data path verbs (post_send, post_recv, poll, req_notify) may
 * be called from any context that does not hold a spinlock of the same QP/CQ.
 */
#ifndef WEFT_VERBS_VERBS_H
#define WEFT_VERBS_VERBS_H

#include <weft/alloc.h>
#include <weft/atomic.h>
#include <weft/cpu.h>
#include <weft/list.h>
#include <weft/lock.h>
#include <weft/ref.h>
#include <weft/timer.h>
#include <weft/verbs/types.h>
#include <weft/wait.h>
#include <weft/work.h>

struct weft_ib_sysfs;
struct pid;

namespace weft::verbs {

class Device;
class Context;
class Pd;
class Cq;
class Qp;
class Srq;
struct RecvEntry;

/*
 * Memory and queues shared with a user process (weft_uverbs: pinned user
 * pages, and rings in the layout of the stock rxe provider).  The core and
 * the driver call these where they would use their own memory or queue.
 * The uverbs object implementing one outlives the verbs object using it:
 * it is freed only after destroy has drained every user.  What they read
 * from a ring was written by the process; they validate it.
 */
class UserPages {
public:
	/* The MR is gone and drained: unpin and free (process context). */
	virtual void release() = 0;

protected:
	~UserPages() = default;
};

class CqSink {
public:
	/* Store one completion; false when the ring is full.  Under the CQ's lock (irq off). */
	virtual bool put(const Wc &wc) = 0;
	/* The consumer has taken every stored completion. */
	virtual bool empty() const = 0;
	/*
	 * Resize CQ (IBA 11.2.6.3) of a user CQ, a few completions at a time
	 * so that the CQ's lock (irq off) is never held for a whole ring:
	 * each call, under that lock, moves at most @budget stored
	 * completions to the ring the owner prepared, which must hold them
	 * all and @at_least (EINVAL).  @first starts the move.  Answers 0
	 * while some remain (the CQ lets producers in, then calls again),
	 * else the new ring's capacity, the rings exchanged.
	 */
	virtual Result<uint32_t> resize_step_locked(uint32_t at_least, uint32_t budget, bool first)
	{
		(void)at_least;
		(void)budget;
		(void)first;
		return Error(err::EOPNOTSUPP);
	}

protected:
	~CqSink() = default;
};

class QpUserQueues {
public:
	/* The next receive WQE the process posted, checked (never sleeps). */
	virtual bool take_recv(RecvEntry &out) = 0;
	/*
	 * How many receive WQEs the ring holds at most: a flush takes no
	 * more in one pass, for the process can keep producing while the
	 * kernel consumes (a loop "until empty" would never end).
	 */
	virtual uint32_t recv_depth() const = 0;
	/* The oldest outstanding send WQE retired: its ring slot is the process's again. */
	virtual void send_retired() = 0;

protected:
	~QpUserQueues() = default;
};

class SrqUserQueue {
public:
	/* As Srq::take() (never sleeps). */
	virtual bool take(RecvEntry &out, bool &limit_reached) = 0;
	virtual Result<void> arm_limit(uint32_t limit) = 0;
	virtual uint32_t count() = 0;

protected:
	~SrqUserQueue() = default;
};

struct Event {
	EventType type;
	Device *device;
	uint8_t port = 0;
	Qp *qp = nullptr;
	Cq *cq = nullptr;
	Srq *srq = nullptr;
};

/* Receives asynchronous events (IBA 11.6.3); called in process context. */
class EventHandler {
public:
	virtual void handle(const Event &e) = 0;
	ListNode node;

protected:
	~EventHandler() = default;
};

/* A ULP: told about every device that comes and goes (process context). */
class Client {
public:
	explicit Client(const char *name) : name_(name) {}
	WEFT_NOCOPY(Client);
	virtual Result<void> add(Device &dev) = 0;
	/* Must release everything the client holds on @dev before returning. */
	virtual void remove(Device &dev) = 0;
	const char *name() const { return name_; }
	ListNode node;

protected:
	~Client() = default;

private:
	const char *name_;
};

Result<void> register_client(Client &c);
void unregister_client(Client &c);

/* Protection domain (IBA 10.2.3). */
class Pd {
public:
	Context &ctx;
	uint32_t handle;
	ListNode node;
	int usecnt = 0; /* MRs, QPs and AHs using it; under the context's mutex */
	uint32_t res_id = 0; /* resource tracking id (Device::next_res_id) */

	Pd(Context &c, uint32_t h) : ctx(c), handle(h) {}
	WEFT_NOCOPY(Pd);
};

/* Address handle (IBA 10.2.2): an address vector for UD sends. */
class Ah : public RefCounted<Ah> {
public:
	Pd &pd;
	AhAttr attr;
	ListNode node;

	Ah(Pd &p, const AhAttr &a) : pd(p), attr(a) {}
};

/*
 * User: pinned pages of a process (UserPages), addressed by the process's iova.
 * Window: a memory window (class Mw), in the same key table but never an MR.
 */
enum class MrKind : uint8_t { Dma, Kernel, FastReg, User, Window };

/*
 * Memory region (IBA 10.6): a range of kernel virtual memory registered
 * for local (lkey) and, with remote rights, remote (rkey) access.  A DMA MR
 * covers all kernel memory (the kernel's "local DMA lkey" idea; here the
 * addresses are kernel virtual).  The key's low byte is the consumer-owned
 * variant (IBA 10.6.3.3); the upper 24 bits index the device's key table.
 */
class Mr : public RefCounted<Mr> {
public:
	Pd &pd;
	MrKind kind;
	uint64_t iova;
	uint64_t length;
	uintptr_t kva; /* kernel address of iova */
	uint32_t access;
	uint32_t lkey = 0, rkey = 0;
	uint32_t res_id = 0; /* resource tracking id (Device::next_res_id) */
	ListNode node;

	Mr(Pd &p, MrKind k, uint64_t va, uint64_t len, uintptr_t kaddr, uint32_t acc)
		: pd(p), kind(k), iova(va), length(len), kva(kaddr), access(acc)
	{
	}

	/*
	 * Kernel address of [va, va+len) if it lies inside the region and the
	 * region grants @need (access:: bits; 0 for local read, which every
	 * MR allows).  EFAULT outside the bounds, EACCES without the right.
	 */
	Result<uint8_t *> map(uint64_t va, uint64_t len, uint32_t need) const;

	/* Bounds and rights of [va, va+len) (EFAULT, EACCES; EACCES while invalid). */
	Result<void> check(uint64_t va, uint64_t len, uint32_t need) const;
	/* Checked copies in and out of the region, page by page where it has pages. */
	Result<void> write(uint64_t va, ConstBytes src, uint32_t need) const;
	Result<void> read(uint64_t va, Bytes dst, uint32_t need) const;

	/*
	 * Fast registration (IBA 10.6.3.5, 11.4.1.1 "Fast Register Physical
	 * MR"): describe the pages the next REG_MR work request will register,
	 * as the kernel's ib_map_mr_sg does.  The list is staged and taken
	 * when that REG_MR executes, as an HCA reads its page list then: the
	 * MR may still be valid, with the invalidation queued ahead of the
	 * REG_MR on the same send queue (the in-tree ULPs' pattern).  Not
	 * while an earlier REG_MR of this MR is still queued.  EINVAL for more
	 * pages than allocated or a page size that is not a power of two of
	 * at least 4 KiB.
	 */
	Result<void> set_pages(Span<const uint64_t> kvas, uint32_t page_size, uint64_t iova,
			       uint64_t length);
	bool valid() const { return valid_.load(Order::Acquire); }
	/*
	 * Checked walk of [va, va+len) in contiguous runs: fn(kernel pointer,
	 * offset, n) returns Result<void>, and its error ends the walk.  What
	 * copies straight between two regions (the soft HCA's in-host path)
	 * walks one region and reads the other inside @fn.
	 */
	template <typename F> Result<void> walk(uint64_t va, size_t len, uint32_t need, F fn) const
	{
		WEFT_TRY(check(va, len, need));
		for (size_t done = 0; done < len;) {
			uint64_t run;
			uint8_t *p = at(va + done, &run);
			size_t n = min<uint64_t>(run, len - done);
			WEFT_TRY(fn(p, done, n));
			done += n;
		}
		return ok();
	}

	/* The last reference wakes the deregistering thread (two-phase). */
	static void release(Mr *mr) { mr->drained_.complete(); }

protected:
	friend class Context;
	friend class Device;
	/* Where @va lies and how many bytes from it are contiguous (bounds checked). */
	uint8_t *at(uint64_t va, uint64_t *run) const;
	Completion drained_;
	Array<uint64_t> pages_; /* FastReg, User: kernel addresses of the pages */
	uint32_t page_shift_ = 0;
	/* FastReg: what set_pages() staged for the next REG_MR (taken under the keys lock). */
	struct {
		Array<uint64_t> pages;
		uint32_t n = 0, shift = 0;
		uint64_t iova = 0, length = 0;
	} staged_;
	uint32_t first_off_ = 0; /* User: where iova lies in the first page */
	UserPages *user_pages_ = nullptr; /* User: released after the MR drained */
	/* Read by any data path; written under the device's keys lock. FastReg MRs start invalid. */
	Atomic<bool> valid_{true};
	/* Memory windows bound to this MR (IBA 10.6.7.2.1); under the device's keys lock. */
	uint32_t windows_ = 0;
};

/*
 * Memory window (IBA 10.6.7): an rkey for a part of an MR with
 * MW_BIND rights, granted and taken back by the consumer without
 * re-registering.  It lives in the device's key table (its lkey is never
 * looked up) and is "valid" while bound.  Type 1 is bound by the Bind
 * Memory Window verb and unbound by a zero-length bind; type 2 (2B: QP
 * and PD checked) by a BindMw work request of a QP of its PD, is then
 * usable through that QP only, and goes back to free by an invalidation
 * (IBA 10.6.7.2.4-5).  The binding (MR, bounds, rights, QP) changes only
 * under the device's keys lock; the data path resolves a window's rkey to
 * its MR there (Device::lookup_remote) and keeps the MR, not the window.
 */
class Mw : public Mr {
public:
	const MwType mw_type;
	Mw(Pd &p, MwType t) : Mr(p, MrKind::Window, 0, 0, 0, 0), mw_type(t)
	{
		valid_.store(false, Order::Relaxed);
	}

private:
	friend class Context;
	friend class Device;
	Mr *bound_ = nullptr; /* with a reference and a count in its windows_ */
	/* Type 2: the QP bound through (compared, never followed: it may be gone). */
	const Qp *qp_ = nullptr;
	uint32_t qpn_ = 0;
};

/* Completion queue (IBA 10.8.2, 11.4). */
class Cq : public RefCounted<Cq> {
public:
	using CompHandler = void (*)(Cq &cq, void *arg);
	/*
	 * Where the completion handler may run.  Sleepable: process context
	 * with no driver state held; a completion produced anywhere else
	 * (inside another consumer's post call, in softirq) reaches it
	 * through a work item.  Atomic: any non-hardirq context, at once,
	 * inside the producer's call: like an interrupt handler, it must not
	 * sleep and must only schedule the real work (a NAPI poll, a work
	 * item), because the producer may hold the consumer's own locks.
	 * On a completion vector (create_cq) an Atomic handler runs on the
	 * vector's CPU, in hardirq context when that is not the producer's
	 * CPU, as a device interrupt would.
	 */
	enum class HandlerContext : uint8_t { Sleepable, Atomic };
	static constexpr int no_vector = -1;

	Cq(Context &c, Array<Wc> ring, CompHandler h, void *arg, HandlerContext hc, int cpu,
	   CqSink *sink = nullptr);
	WEFT_NOCOPY(Cq);

	/* Up to out.size() completions, oldest first. */
	size_t poll(Span<Wc> out);
	/*
	 * Arm: the next completion (the next solicited one with
	 * @solicited_only) calls the completion handler once (IBA 11.4.2.2).
	 * Returns true if completions are already waiting (the caller
	 * should poll again: IB_CQ_REPORT_MISSED_EVENTS).
	 */
	bool req_notify(bool solicited_only);
	uint32_t capacity() const { return static_cast<uint32_t>(ring_size_) - 1; }
	/* A user CQ's ring (its owner routes the CQ's events), or nullptr. */
	CqSink *sink() const { return sink_; }
	/* IBA 11.2.6.3 Resize CQ: EINVAL if the entries present do not fit. */
	Result<void> resize(uint32_t cqe);
	/*
	 * Event moderation, as HCAs offer it beyond the IBA (Linux's
	 * rdma_set_cq_moderation): an armed CQ's event waits until @count
	 * completions have arrived (0: no count) or @usecs have passed since
	 * the first of them.  @usecs 0 turns moderation off: every event at
	 * once.  Takes effect from the next completion.
	 */
	void moderate(uint16_t count, uint16_t usecs);

	/*
	 * Driver side.  Add a completion; call with no QP or CQ lock held (the
	 * handler may post).  On overflow the completion is lost, the CQ
	 * enters the error state and a CqErr event is raised (IBA 11.6.3.1);
	 * false then (and for every push after).  Without @call_handlers
	 * (the caller's context may be atomic or hold the consumer's locks),
	 * the event, and a Sleepable handler, run from a work item instead.
	 */
	bool push(const Wc &wc, bool solicited, bool call_handlers = true,
		  class CqEventBatch *batch = nullptr);
	bool in_error() const { return error_; }

	Context &ctx;
	ListNode node;
	int usecnt = 0; /* QPs using it; under the context's mutex */
	/* Resource tracking: the entries the owner was given (a user ring's too; resize changes it), and the id. */
	Atomic<uint32_t> cqe;
	uint32_t res_id = 0;
	HandlerContext handler_context() const { return handler_ctx_; }
	static void release(Cq *cq) { cq->drained_.complete(); }

private:
	friend class Context;
	friend class CqEventBatch;
	Completion drained_;
	SpinLock lock_;
	Array<Wc> ring_; /* one slot always empty */
	size_t ring_size_;
	CqSink *const sink_; /* a user CQ's ring, used instead of ring_ */
	/* Free-running (slot: % ring_size_), so that a resize keeps its place across unlocked steps. */
	uint64_t head_ = 0, tail_ = 0; /* consume at head, produce at tail */
	Mutex resize_lock_; /* one resize at a time: its steps drop lock_ */
	Result<void> resize_ring(uint32_t cqe);
	Result<void> resize_sink(uint32_t cqe);
	enum class Arm : uint8_t { None, Next, Solicited } arm_ = Arm::None;
	bool error_ = false;
	CompHandler handler_;
	void *arg_;
	const HandlerContext handler_ctx_;
	/* The completion vector's CPU (Atomic handlers only), or -1: wherever produced. */
	const int cpu_;
	/* The "interrupt" to cpu_; each one sent holds a reference. */
	CpuCall irq_;
	static void vector_irq(CpuCall &c);
	void call_handler();
	/* Handler calls and the overrun event left to notify_work_ (under lock_). */
	bool deferred_notify_ = false, deferred_error_ = false;
	Work notify_work_;
	static void notify_deferred(Work &w);
	/* Moderation (under lock_): completions held since the arm, the timer pending (a reference). */
	uint16_t mod_count_ = 0, mod_usecs_ = 0;
	uint32_t mod_held_ = 0;
	bool mod_timer_on_ = false;
	Timer mod_timer_;
	bool hold_event_locked();
	static void mod_expired(Timer &t);
	void notify_from_timer();
};

/*
 * Completion events a producer holds back until its call ends (Cq::push
 * with @batch): a burst of completions on a remote vector then costs one
 * interrupt, not one per completion the consumer happens to be armed
 * for, as an HCA's event moderation would have it.  Only events to
 * another CPU are held; the batch raises them in fire() or when it dies.
 */
class CqEventBatch {
public:
	static constexpr uint32_t max = 4;
	CqEventBatch() = default;
	WEFT_NOCOPY(CqEventBatch);
	~CqEventBatch() { fire(); }
	/* Hold @cq's event (true), or false when full: raise it now. */
	bool hold(Cq &cq);
	void fire();

private:
	Ref<Cq> cqs_[max];
	uint32_t n_ = 0;
};

/* A posted receive as queues keep it (the WR's SGEs copied). */
struct RecvEntry {
	static constexpr uint32_t max_sge = 8;
	uint64_t wr_id;
	uint32_t nsge;
	Sge sge[max_sge];

	/* Copy @wr in; the caller checked wr.sg.size() <= max_sge. */
	void set(const RecvWr &wr)
	{
		wr_id = wr.wr_id;
		nsge = static_cast<uint32_t>(wr.sg.size());
		for (size_t i = 0; i < wr.sg.size(); i++)
			sge[i] = wr.sg[i];
	}
};

/*
 * Shared receive queue (IBA 10.2.9, 11.2.3.3-11.2.3.6): receive WQEs
 * consumed by any QP attached to it, in posting order.  When armed with a
 * limit, the first time the queue drops below it raises SrqLimitReached
 * (IBA 10.2.9.2) and disarms.
 */
class Srq : public RefCounted<Srq> {
public:
	Srq(Context &c, Pd &p, Array<RecvEntry> ring, uint32_t max_sge, EventHandler *events,
	    SrqUserQueue *user = nullptr);
	WEFT_NOCOPY(Srq);

	Result<void> post_recv(const RecvWr &wr);
	/* IBA 11.2.3.4 Modify SRQ: arm the limit (0 disarms). */
	Result<void> arm_limit(uint32_t limit);
	uint32_t capacity() const { return static_cast<uint32_t>(ring_.size()); }
	uint32_t count();

	/*
	 * Driver side: the oldest WQE.  When it takes the count below the
	 * armed limit, *limit_reached is set for the caller to raise the
	 * event from where handlers may run (raise_limit()).
	 */
	bool take(RecvEntry &out, bool &limit_reached);
	/* IBA 11.6.3.1 SRQ Limit Reached: to the SRQ's event handler. */
	void raise_limit();

	Context &ctx;
	Pd &pd;
	EventHandler *events;
	ListNode node;
	int usecnt = 0; /* QPs attached; under the context's mutex */
	static void release(Srq *srq) { srq->drained_.complete(); }

private:
	friend class Context;
	friend class CqEventBatch;
	Completion drained_;
	SpinLock lock_;
	Array<RecvEntry> ring_;
	SrqUserQueue *const user_; /* a user SRQ's ring, used instead of ring_ */
	uint32_t max_sge_;
	uint32_t head_ = 0, tail_ = 0; /* free-running */
	uint32_t limit_ = 0;
};

struct QpInitAttr {
	QpType type = QpType::Rc;
	Cq *send_cq = nullptr;
	Cq *recv_cq = nullptr;
	Srq *srq = nullptr; /* receives come from here; the QP has no RQ */
	QpCap cap;
	bool sq_sig_all = false; /* IBA 11.2.4.1: every WR signalled */
	uint8_t port = 0;	 /* for Smi/Gsi: which port's special QP */
	EventHandler *events = nullptr;
	/* A user QP: its work queues are the process's rings (its own RQ unused). */
	QpUserQueues *user = nullptr;
};

/*
 * Queue pair: implemented by the driver.  The core validates every Modify QP
 * (IBA 10.3, 11.2.5) before calling modify(); the driver owns the state,
 * since its data path also moves a QP to Sqe or Err.
 *
 * Concurrency (Documentation/verbs.md, "Concurrency contract"): post_send,
 * post_recv, query and state may run in parallel with each other and with
 * one Modify QP; Context serialises Modify QPs of one QP and Destroy QP
 * against them (modify_lock_), and a QP being destroyed refuses further
 * modifies (EINVAL).
 */
class Qp : public RefCounted<Qp> {
public:
	Device &dev;
	Pd &pd;
	const QpType type;
	const uint32_t qpn;
	Cq &send_cq, &recv_cq;
	Srq *const srq;
	const QpCap cap;
	const bool sq_sig_all;
	EventHandler *const events;
	QpUserQueues *const user;
	ListNode node;

	virtual ~Qp() = default;
	/* The last reference wakes destroy_qp(), which frees (two-phase). */
	static void release(Qp *qp) { qp->drained_.complete(); }

	/*
	 * The port the QP is bound to (IBA 11.2.5.2 port_num; Smi/Gsi: theirs
	 * from creation), 0 before RESET->INIT.  The driver publishes it before
	 * the state that needs it, so any reader that sees the QP out of Reset
	 * sees its port (packet acceptance reads it with no lock).
	 */
	uint8_t port() const { return port_.load(Order::Acquire); }

	/* IBA 11.4.1.1: EINVAL for a malformed WR, ENOMEM when the queue is full. */
	virtual Result<void> post_send(const SendWr &wr) = 0;
	virtual Result<void> post_recv(const RecvWr &wr) = 0;
	virtual QpState state() const = 0;
	virtual void query(QpAttr &out) const = 0;

	/*
	 * Core-validated attribute change, checked against state @from.  The
	 * driver re-checks, under the lock its data path takes to change the
	 * state, that the QP is still in @from (or that the target is Reset or
	 * Err, reachable from every state, IBA 10.3.1): a QP its data path
	 * moved meanwhile (to Err, say) is not moved on, EINVAL.
	 */
	virtual Result<void> modify(const QpAttr &attr, uint32_t mask, QpState from) = 0;
	/*
	 * Phase one of destroy: stop accepting work, let in-flight packets and
	 * callbacks drain, flush nothing (destroy does not complete WRs).  After
	 * it returns, no completion for this QP reaches its CQs.
	 */
	virtual void shutdown() = 0;

	/* IBA 11.3.1: multicast group membership of a UD QP (core-validated). */
	virtual Result<void> attach_mcast(const Gid &mgid, uint16_t mlid) = 0;
	virtual Result<void> detach_mcast(const Gid &mgid, uint16_t mlid) = 0;

	/* Async event for this QP (IBA 11.6.3.1), to its handler if any. */
	void raise(EventType t);

protected:
	Qp(Device &d, Pd &p, const QpInitAttr &init, uint32_t num);
	/* Driver side: bind to @p, before publishing a state that needs it. */
	void publish_port(uint8_t p) { port_.store(p, Order::Release); }

private:
	friend class Context;
	Atomic<uint8_t> port_;
	Mutex modify_lock_;
	bool destroyed_ = false; /* under modify_lock_: destroy began, modify refused */
	Completion drained_;
};

/*
 * Testing seam: called (when set) at the named points of Context::modify_qp,
 * so that a KUnit case can run the racing operation exactly there.  Never
 * set outside tests; reading it costs one load per Modify QP.
 */
enum class ModifyStep : uint8_t {
	Found,	 /* the QP looked up and held, its modify lock not yet taken */
	Checked, /* the request validated against the current state */
	Applied, /* the driver applied it */
};
using ModifyHook = void (*)(Qp &qp, ModifyStep step);
extern Atomic<ModifyHook> modify_hook;

/*
 * Test hook: called between the steps of a CQ resize, with no lock held
 * (a test produces and polls there).  Null in production.
 */
using CqResizeHook = void (*)(Cq &cq);
extern Atomic<CqResizeHook> cq_resize_hook;

/* The kinds of object user contexts count device-wide (Device::user_objects). */
enum class Quota : uint8_t { Pd, Cq, Srq, Ah, Mw, Mr, Count };

/*
 * A resource owner on one device.  Every create/destroy verb goes through
 * it; close() destroys what is left (QPs, CQs, AHs, MRs, PDs, in that
 * order) and frees the context.
 */
class Context {
public:
	/* A kernel consumer's context; @owner names it (in logs and `rdma res`). */
	static Result<Context *> open(Device &dev, const char *owner);
	/*
	 * A process's context (uverbs): the calling process (its thread group
	 * and comm) is recorded as the owner, for resource tracking.
	 */
	static Result<Context *> open_user(Device &dev, const char *owner);
	/* With @expect_empty, objects still owned are reported as leaks. */
	void close(bool expect_empty = true);

	Result<Pd *> alloc_pd();
	Result<void> dealloc_pd(Pd *pd);
	Result<Mr *> get_dma_mr(Pd *pd, uint32_t access);
	Result<Mr *> reg_kernel_mr(Pd *pd, void *addr, uint64_t len, uint32_t access);
	/*
	 * A process's memory at @iova: @pages (kernel addresses of pinned
	 * 4 KiB pages, the first holding iova at @first_off).  The MR takes
	 * @pages; @owner is released when the MR is gone (also on failure).
	 */
	Result<Mr *> reg_user_mr(Pd *pd, uint64_t iova, uint64_t len, uint32_t access,
				 Array<uint64_t> pages, uint32_t first_off, UserPages *owner);
	/* IBA 10.6.3.5: an MR for fast registration, invalid until a REG_MR. */
	Result<Mr *> alloc_fast_reg_mr(Pd *pd, uint32_t max_pages);
	/* IBA 11.2.8.2: EBUSY while memory windows are bound to it (IBA 10.6.7.2.1). */
	Result<void> dereg_mr(Mr *mr);
	/*
	 * IBA 11.2.9.1 Allocate Memory Window (type 1 or 2; EINVAL for
	 * another, EOPNOTSUPP on a device without windows), 11.2.9.3
	 * Deallocate: a bound window is unbound first (its rkey then fails).
	 */
	Result<Mw *> alloc_mw(Pd *pd, MwType type);
	Result<void> dealloc_mw(Mw *mw);
	/*
	 * @comp_vector (0 .. DeviceAttr::num_comp_vectors - 1, or
	 * Cq::no_vector): the interrupt vector whose CPU runs an Atomic
	 * handler (IBA 11.2.8.1 leaves the choice of event handler to the
	 * consumer; this is the verbs' comp_vector).
	 */
	Result<Cq *> create_cq(uint32_t cqe, Cq::CompHandler handler, void *arg,
			       Cq::HandlerContext hc = Cq::HandlerContext::Sleepable,
			       int comp_vector = Cq::no_vector, CqSink *sink = nullptr);
	Result<void> destroy_cq(Cq *cq);
	Result<Qp *> create_qp(Pd *pd, const QpInitAttr &init);
	Result<void> modify_qp(Qp *qp, const QpAttr &attr, uint32_t mask);
	Result<void> destroy_qp(Qp *qp);
	Result<Ah *> create_ah(Pd *pd, const AhAttr &attr);
	Result<void> destroy_ah(Ah *ah);
	Result<void> attach_mcast(Qp *qp, const Gid &mgid, uint16_t mlid);
	Result<void> detach_mcast(Qp *qp, const Gid &mgid, uint16_t mlid);
	Result<Srq *> create_srq(Pd *pd, uint32_t max_wr, uint32_t max_sge, EventHandler *events,
				 SrqUserQueue *user = nullptr);
	Result<void> destroy_srq(Srq *srq);

	Device &dev;
	const char *const owner;
	ListNode node; /* on the device's context list */
	const uint32_t res_id; /* resource tracking id (Device::next_res_id) */

	/*
	 * Resource tracking (`rdma res`, Documentation/uverbs.md).  A user
	 * context's process: its id in the calling process's PID namespace,
	 * 0 when it is not visible there or has exited (as in-tree
	 * task_pid_vnr()), and its comm at open.  Kernel contexts: 0, "".
	 */
	bool is_user() const { return task_ != nullptr; }
	uint32_t owner_pid() const;
	const char *owner_comm() const { return comm_; }

	/* The object lists, for inspect(): read them, change nothing. */
	struct Objects {
		List<Pd, &Pd::node> &pds;
		List<Mr, &Mr::node> &mrs;
		List<Cq, &Cq::node> &cqs;
		List<Qp, &Qp::node> &qps;
		List<Ah, &Ah::node> &ahs;
		List<Srq, &Srq::node> &srqs;
	};
	/*
	 * fn(const Objects &) under the context's lock: no object is created
	 * or destroyed, and no usecnt changes, while it runs.  @fn may query
	 * QPs (Qp::query, state) but must not call this context's verbs.
	 */
	template <typename F> auto inspect(F fn)
	{
		MutexGuard g(lock_);
		return fn(Objects{pds_, mrs_, cqs_, qps_, ahs_, srqs_});
	}

private:
	Context(Device &d, const char *o);
	~Context() = default;
	static Result<Context *> make(Device &dev, const char *owner, bool user);
	struct pid *task_ = nullptr; /* a user context's thread group (a reference) */
	char comm_[16] = {};
	bool owns(Pd *pd);
	Result<void> publish_mr_locked(Mr &mr);
	void destroy_qp_locked(Qp *qp);
	void destroy_cq_locked(Cq *cq);
	void destroy_srq_locked(Srq *srq);
	void dereg_mr_locked(Mr *mr);
	void dealloc_mw_locked(Mw *mw);
	/* One more object of @k, or an error beyond @max (@have: this context's). */
	Result<void> take_quota(Quota k, size_t have, uint32_t max);
	void put_quota(Quota k);

	Mutex lock_; /* guards the lists below and the objects' usecnt */
	uint32_t next_pd_ = 1;
	List<Pd, &Pd::node> pds_;
	List<Mr, &Mr::node> mrs_;
	List<Mr, &Mr::node> mws_; /* every one an Mw */
	List<Cq, &Cq::node> cqs_;
	List<Qp, &Qp::node> qps_;
	List<Ah, &Ah::node> ahs_;
	List<Srq, &Srq::node> srqs_;
};

/* The port and device queries a driver answers (IBA 11.2.1). */
class Device : public RefCounted<Device> {
public:
	virtual ~Device();
	static void release(Device *d) { delete d; }

	virtual Result<void> query_port(uint8_t port, PortAttr &out) = 0;
	virtual Result<Gid> query_gid(uint8_t port, uint32_t index) = 0;
	virtual Result<uint16_t> query_pkey(uint8_t port, uint16_t index) = 0;
	virtual Result<Qp *> create_qp(Pd &pd, const QpInitAttr &init) = 0;
	virtual Result<void> query_counters(uint8_t port, PortCounterValues &out)
	{
		(void)port;
		(void)out;
		return Error(err::EOPNOTSUPP);
	}

	/*
	 * The device's own management agents, as an adapter's firmware runs
	 * them: the SMA (IBA 14.2.5) and the PMA (IBA 16.1).  The MAD layer
	 * offers each request arriving on QP0/QP1 (after directed-route
	 * processing) here first.  @mad and @out are 256 bytes; on Reply @out
	 * holds the whole response, R bit and status set.
	 */
	virtual MadOutcome process_mad(const MadIn &in, const uint8_t *mad, uint8_t *out)
	{
		(void)in;
		(void)mad;
		(void)out;
		return MadOutcome::NotMine;
	}
	/*
	 * IBA 11.2.1.3 Modify HCA port attributes: capability bits the host
	 * owns (IsSM while an SM holds issmN, IBA 14.2.5.6 CapabilityMask).
	 */
	virtual Result<void> modify_port(uint8_t port, uint32_t set_caps, uint32_t clear_caps)
	{
		(void)port;
		(void)set_caps;
		(void)clear_caps;
		return Error(err::EOPNOTSUPP);
	}

	/*
	 * IBA 14.2.5.2 NodeDescription: up to 64 bytes, shown in sysfs, set by
	 * writes there, read by the SMA.  Copied in and out whole under a lock,
	 * so a reader never sees half of one write and half of another.
	 */
	void node_desc(char out[65]);
	/* EINVAL for more than 64 bytes; the rest of the 64 are zeroed. */
	Result<void> set_node_desc(const char *desc, size_t len);

	const char *name() const { return name_; }
	NodeType node_type() const { return node_type_; }
	/* In /sys/class/infiniband: a device of this host, as its tools see it. */
	bool sysfs_visible() const { return sysfs_visible_; }
	uint8_t first_port() const { return node_type_ == NodeType::Switch ? 0 : 1; }
	uint8_t num_ports() const { return num_ports_; }
	const DeviceAttr &attr() const { return attr_; }

	/* Key table: the valid MR (never a window) with this lkey/rkey, with a reference. */
	Ref<Mr> lookup_mr(uint32_t key, bool remote);
	/*
	 * IBA 10.6.7.2.6, 9.7.5.2.x: what an incoming RDMA READ/WRITE or
	 * atomic on @qp may touch through @rkey, an MR's or a bound window's:
	 * [va, va+len) inside it, with @need granted, of @qp's PD, and a type 2
	 * window bound through @qp.  Answers the MR with a reference (empty
	 * when any check fails: a remote access error) and in @recheck the
	 * rights to pass to its accessors from then on (a window's MR need not
	 * grant them itself; its bounds and validity are still checked).
	 */
	Ref<Mr> lookup_remote(uint32_t rkey, const Qp &qp, uint64_t va, uint64_t len,
			      uint32_t need, uint32_t &recheck);
	/* IBA 10.6.7.2.2-3: a BindMw work request of @qp (EINVAL when any rule is broken). */
	Result<void> bind_mw(const Qp &qp, const SendWr &wr);
	/*
	 * Data path side of REG_MR and (local or remote) invalidation: only
	 * fast-reg MRs of @pd qualify (IBA 10.6.3.5, 10.6.3.6).  EINVAL for a
	 * key that names no such MR, or (register) a different table slot.
	 * Invalidation also takes a bound type 2 window of @pd back to free
	 * (IBA 10.6.7.2.5; a SEND with Invalidate's, @remote, only through the
	 * QP it was bound through); a type 1 window refuses it.
	 */
	Result<void> fast_register(Mr &mr, Pd &pd, uint32_t key, uint32_t access);
	Result<void> invalidate(uint32_t key, Pd &pd, const Qp *remote = nullptr);

	/*
	 * Resource tracking (`rdma res`): fn(Context &) for each open context,
	 * oldest first, until fn returns false.  Under the device's context
	 * list lock: no context is opened or closed meanwhile (a close in
	 * progress has left the list already).  Lock order: the context list,
	 * then a context's lock (Context::inspect).
	 */
	template <typename F> void for_each_context(F fn)
	{
		auto l = contexts_.lock();
		for (Context &c : *l)
			if (!fn(c))
				return;
	}
	/* Ids of PDs, CQs, MRs and contexts: per device and kind, from 0, as in-tree restrack. */
	enum class ResKind : uint8_t { Pd, Cq, Mr, Ctx, Count };
	uint32_t next_res_id(ResKind k)
	{
		return next_res_id_[static_cast<uint8_t>(k)].fetch_add(1, Order::Relaxed);
	}

	/*
	 * Objects of user contexts, counted device-wide against the
	 * attributes' max_* (in-tree rxe's pools are per device): one process
	 * cannot take more than the device advertises by opening many files,
	 * and user space as a whole cannot take the MR keys kernel ULPs need
	 * (keys_).  Kernel contexts count per context (their few objects are
	 * bounded by the ULPs).
	 */
	uint32_t user_objects(Quota k) const
	{
		return user_objs_[static_cast<uint8_t>(k)].load(Order::Relaxed);
	}

	/*
	 * Answers of this device's own SMA/PMA that the MAD layer could not
	 * send (its QP0/QP1 send queue full: the requester retries, as
	 * in-tree's agent_send_response drops them).  Counted here, not in
	 * the MAD layer above, so that the device's hw_counters/ shows them
	 * (mad_replies_dropped) next to out_of_buffer.  Per port, from
	 * registration on; a port the device lacks counts nothing.
	 */
	void count_mad_reply_dropped(uint8_t port)
	{
		if (port < mad_replies_dropped_.size())
			mad_replies_dropped_[port].fetch_add(1, Order::Relaxed);
	}
	uint64_t mad_replies_dropped(uint8_t port) const
	{
		return port < mad_replies_dropped_.size() ? mad_replies_dropped_[port].load(Order::Relaxed) : 0;
	}

	/* Port events from the driver (PortActive, PortErr, LidChange, ...). */
	void dispatch_event(const Event &e);
	void add_event_handler(EventHandler &h);
	void remove_event_handler(EventHandler &h);

	ListNode node;

protected:
	Device(NodeType t, uint8_t num_ports, const DeviceAttr &a);

	void set_guids(uint64_t node, uint64_t sys_image)
	{
		attr_.node_guid = node;
		attr_.sys_image_guid = sys_image;
	}

	/* Name format for registration, e.g. "weft%d" or "weftsw%d". */
	const char *name_fmt_ = "weft%d";
	/*
	 * Shown in /sys/class/infiniband (set before registration).  A device
	 * there must be usable the way libibumad assumes: it takes a switch
	 * to mean its port 0 has a umad device (Documentation/umad.md).
	 */
	bool sysfs_visible_ = true;

private:
	friend class Context;
	friend Result<void> register_device(Device &dev);
	friend void unregister_device(Device &dev);
	friend class Registry;

	Result<uint32_t> insert_mr(Mr &mr);
	void erase_mr(Mr &mr);
	/* erase_mr() unless windows are bound to @mr (EBUSY), atomically with binds. */
	Result<void> erase_unbound_mr(Mr &mr);
	/* Under keys_lock_: the window gives back its MR (and QP), invalid. */
	static void unbind_locked(Mw &mw);

	char name_[20] = {};
	struct weft_ib_sysfs *sysfs_ = nullptr;
	NodeType node_type_;
	uint8_t num_ports_;
	DeviceAttr attr_;
	bool registered_ = false;

	/* Contexts open on this device. */
	Protected<List<Context, &Context::node>, Mutex> contexts_;
	Atomic<uint32_t> next_res_id_[static_cast<uint8_t>(ResKind::Count)];
	Atomic<uint32_t> user_objs_[static_cast<uint8_t>(Quota::Count)];

	SpinLock keys_lock_;
	/*
	 * Index = key >> 8; MRs and windows.  Room for max_mr user MRs and
	 * max_mw windows (the most user contexts may hold together) and
	 * max_mr more that only kernel contexts can reach (device.cpp).
	 */
	Array<Mr *> keys_;
	/* Index = port number; made at the first registration, before any client sees the device. */
	Array<Atomic<uint64_t>> mad_replies_dropped_;
	uint8_t key_variant_ = 0;

	Protected<List<EventHandler, &EventHandler::node>, Mutex> handlers_;

	struct NodeDesc {
		char text[65] = {};
	};
	/* Taken from process context and the SMA's MAD path (softirq). */
	Protected<NodeDesc, SpinLock, SpinGuardBh> node_desc_;
};

/*
 * Driver side: make a device visible (named from its name format, sysfs,
 * clients' add()), and take it away again (clients' remove(), contexts
 * still open are closed and reported, sysfs removed).  The registry holds a
 * reference from register to unregister.
 */
Result<void> register_device(Device &dev);
void unregister_device(Device &dev);

/* Look a device up by name, with a reference (for tests and tools). */
Ref<Device> find_device(const char *name);

/*
 * For code that runs inside a client's add() or remove() and documents
 * that it does (the CM's handler calls for the Ids of a port going away):
 * checked by lockdep, a no-op on kernels without it.
 */
void assert_registry_locked();

} // namespace weft::verbs

#endif
