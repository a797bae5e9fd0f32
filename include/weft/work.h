/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deferred work: Work and DelayedWork run a callback in process context on a
 * workqueue; WorkQueue owns a dedicated queue.  The object that embeds the
 * work item finds itself again with container_of().
 *
 * Lifetime rule (two-phase teardown): before freeing the embedding object,
 * stop whatever queues the work, then cancel_sync(), which waits for a
 * running callback to finish.  The destructors do that, so a callback must
 * never free the object that embeds its own work item (it would wait on
 * itself): hand the final put to another context instead.
 */
#ifndef WEFT_WORK_H
#define WEFT_WORK_H

#include <weft/lock.h>
#include <weft/result.h>

namespace weft {

class Work {
public:
	using Fn = void (*)(Work &w);

	Work(Fn fn, LockClass &cls) : fn_(fn) { weft_work_init(raw(), trampoline, cls.name, cls.key.get()); }
	WEFT_NOCOPY(Work);
	~Work()
	{
		cancel_sync();
		weft_work_destroy(raw());
	}

	/* False if it was already pending. */
	bool queue(void *wq = nullptr) { return weft_queue_work(wq, raw()); }
	/* True if it was pending (and now is not). */
	bool cancel_sync() { return weft_cancel_work_sync(raw()); }
	bool flush() { return weft_flush_work(raw()); }

private:
	static void trampoline(struct work_struct *ws)
	{
		Work *w = container_of(reinterpret_cast<Storage *>(ws), &Work::storage_);
		w->fn_(*w);
	}
	void *raw() { return storage_.get(); }

	using Storage = Opaque<WEFT_SIZEOF_WORK_STRUCT, WEFT_ALIGNOF_WORK_STRUCT>;
	Storage storage_;
	Fn fn_;
};

class DelayedWork {
public:
	using Fn = void (*)(DelayedWork &w);

	DelayedWork(Fn fn, LockClass &cls) : fn_(fn)
	{
		weft_delayed_work_init(raw(), trampoline, cls.name, cls.key.get());
	}
	WEFT_NOCOPY(DelayedWork);
	~DelayedWork()
	{
		cancel_sync();
		weft_delayed_work_destroy(raw());
	}

	bool queue(unsigned long delay_ms, void *wq = nullptr)
	{
		return weft_queue_delayed_work(wq, raw(), delay_ms);
	}
	/* Queue, or move the deadline of an already queued one. */
	bool modify(unsigned long delay_ms, void *wq = nullptr)
	{
		return weft_mod_delayed_work(wq, raw(), delay_ms);
	}
	bool cancel_sync() { return weft_cancel_delayed_work_sync(raw()); }
	/* Dequeue if pending, without waiting for a run in progress (any context). */
	bool cancel() { return weft_cancel_delayed_work(raw()); }

private:
	static void trampoline(struct work_struct *ws)
	{
		auto *s = static_cast<Storage *>(weft_delayed_work_of(ws));
		DelayedWork *w = container_of(s, &DelayedWork::storage_);
		w->fn_(*w);
	}
	void *raw() { return storage_.get(); }

	using Storage = Opaque<WEFT_SIZEOF_DELAYED_WORK, WEFT_ALIGNOF_DELAYED_WORK>;
	Storage storage_;
	Fn fn_;
};

class WorkQueue {
public:
	static Result<WorkQueue> create(const char *name, bool ordered = false, int max_active = 0)
	{
		void *wq = weft_alloc_workqueue(name, ordered, max_active);
		if (!wq)
			return Error(err::ENOMEM);
		return WorkQueue(wq);
	}
	WorkQueue(WorkQueue &&o) : wq_(exchange(o.wq_, nullptr)) {}
	WEFT_NOCOPY(WorkQueue);
	/* Drains: destroy_workqueue waits for queued and running work. */
	~WorkQueue()
	{
		if (wq_)
			weft_destroy_workqueue(wq_);
	}
	void flush() { weft_flush_workqueue(wq_); }
	void *raw() const { return wq_; }

private:
	explicit WorkQueue(void *wq) : wq_(wq) {}
	void *wq_;
};

} // namespace weft

#endif
