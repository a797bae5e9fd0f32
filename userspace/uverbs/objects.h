/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The objects a process creates through one uverbs file, by handle (the
 * numbers the ABI carries), each wrapping the verbs object it made:
 * PD, MR, CQ, QP, AH, SRQ.  A wrapper outlives its verbs object: the
 * verbs object is destroyed (and drained) first, through the context,
 * then the wrapper is freed; so the queues and pinned pages a wrapper
 * provides to the verbs object (verbs.h UserPages, CqSink, QpUserQueues,
 * SrqUserQueue) are there for as long as anything may use them.
 *
 * Everything here is under the File's lock (commands are serialised per
 * file), except what the data path calls, which says what it takes.
 */
#ifndef WEFT_UVERBS_OBJECTS_H
#define WEFT_UVERBS_OBJECTS_H

#include <weft/verbs/verbs.h>

#include "comp_channel.h"
#include "ring.h"

namespace weft::uverbs {

enum class ObjType : uint8_t { Pd = 1, Mr, Cq, Qp, Ah, Srq, Mw };

class UObject {
public:
	virtual ~UObject() = default;
	WEFT_NOCOPY(UObject);

	const ObjType type;
	uint32_t id = 0; /* the handle the ABI carries */
	uint64_t user_handle = 0;
	/* The rings the process may map (listed in the File's mmap table). */
	Ref<Ring> rings[2];

protected:
	explicit UObject(ObjType t) : type(t) {}
};

class UPd final : public UObject {
public:
	explicit UPd(verbs::Pd *p) : UObject(ObjType::Pd), pd(p) {}
	verbs::Pd *const pd;
};

class UAh final : public UObject {
public:
	explicit UAh(verbs::Ah *a) : UObject(ObjType::Ah), ah(a) {}
	verbs::Ah *const ah;
};

class UMw final : public UObject {
public:
	explicit UMw(verbs::Mw *m) : UObject(ObjType::Mw), mw(m) {}
	verbs::Mw *const mw;
};

/* A user MR's pinned pages; the verbs MR releases them when it is gone. */
class UMr final : public UObject, public verbs::UserPages {
public:
	UMr() : UObject(ObjType::Mr) {}
	~UMr() override;
	void release() override;

	verbs::Mr *mr = nullptr;
	weft_uverbs_umem *umem = nullptr;
};

/*
 * A CQ whose completions go to the process's ring.  Its affiliated
 * event, CQ overrun, reaches the async file through File::handle().
 */
class UCq final : public UObject, public verbs::CqSink {
public:
	UCq(Ref<Ring> ring, Ref<CompChannel> channel, Ref<EventQueue> events, uint64_t user_handle);
	~UCq() override;

	/* verbs::CqSink: under the CQ's lock. */
	bool put(const verbs::Wc &wc) override;
	bool empty() const override;
	/* RESIZE_CQ: move to @spare, step by step (under the CQ's lock); @spare then holds the old ring. */
	Result<uint32_t> resize_step_locked(uint32_t at_least, uint32_t budget, bool first) override;
	/* The CQ's completion handler: an event to the channel (any context). */
	static void comp_handler(verbs::Cq &cq, void *arg);

	verbs::Cq *cq = nullptr;
	Ref<CompChannel> const channel; /* may be null */
	Ref<EventQueue> const events;
	CompChannel::Pending pending;
	EventCount async_events;
	Ref<Ring> spare; /* RESIZE_CQ's ring exchange (File's lock, swapped under the CQ's) */

private:
	uint32_t prod_ = 0; /* the kernel's producer index, under the CQ's lock */
	/* A resize under way (under the CQ's lock): the next entry of the old ring to move, how many moved. */
	uint32_t move_from_ = 0, moved_ = 0;
};

/* An SRQ whose receive WQEs the process posts in its ring. */
class USrq final : public UObject, public verbs::SrqUserQueue, public verbs::EventHandler {
public:
	USrq(Ref<Ring> ring, uint32_t max_sge, Ref<EventQueue> events, uint64_t user_handle);
	~USrq() override;

	bool take(verbs::RecvEntry &out, bool &limit_reached) override;
	Result<void> arm_limit(uint32_t limit) override;
	uint32_t count() override;
	void handle(const verbs::Event &e) override;
	/* MODIFY_SRQ max_wr: the posted WQEs move to @fresh, which then holds the old ring. */
	Result<void> resize(Ref<Ring> &fresh);

	verbs::Srq *srq = nullptr;
	const uint32_t max_sge;
	Ref<EventQueue> const events;
	EventCount async_events;
	uint32_t limit()
	{
		SpinGuardIrq g(lock_);
		return limit_;
	}

private:
	SpinLock lock_;
	uint32_t cons_ = 0;  /* under lock_ */
	uint32_t limit_ = 0; /* under lock_ */
	Result<uint32_t> resize_start(const Ring &fresh, uint32_t &used);
	Result<void> resize_finish_locked(Ref<Ring> &fresh, uint32_t start, uint32_t used);
};

/* A QP whose send and receive queues are the process's rings. */
class UQp final : public UObject, public verbs::QpUserQueues, public verbs::EventHandler {
public:
	struct Caps {
		uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline;
	};
	UQp(Ref<Ring> sq, Ref<Ring> rq, Array<verbs::Ah *> slot_ah, const Caps &caps,
	    Ref<EventQueue> events, uint64_t user_handle);
	~UQp() override;

	/* verbs::QpUserQueues: from the QP's data path. */
	bool take_recv(verbs::RecvEntry &out) override;
	uint32_t recv_depth() const override { return rings[1] ? rings[1]->capacity() : 0; }
	void send_retired() override;
	void handle(const verbs::Event &e) override;

	/*
	 * The doorbell (POST_SEND, and a move to a state that sends): hand
	 * the WQEs the process produced since the last one to the QP, in
	 * order; a malformed one goes as WrOpcode::Malformed.  EINVAL
	 * before RTS (the WQEs wait).  Under the File's lock; @objs is the
	 * file's (a UD WQE's ah_num is an AH's handle + 1).
	 */
	Result<void> doorbell(const class Objects &objs);

	verbs::Qp *qp = nullptr;
	verbs::Mr *inline_mr = nullptr; /* the SQ ring, for inline data; lkey only the kernel knows */
	const Caps caps;
	Ref<EventQueue> const events;
	EventCount async_events;

private:
	uint32_t fetch_ = 0;   /* next SQ slot to hand over (File's lock) */
	uint32_t sq_cons_ = 0; /* retired slots (the QP's lock, send_retired) */
	SpinLock rq_lock_;
	uint32_t rq_cons_ = 0; /* under rq_lock_ */
	/* The AH a UD WQE in flight holds, by slot: released as it retires. */
	Array<verbs::Ah *> slot_ah_;
};

/* The handle table of one file. */
class Objects {
public:
	static constexpr uint32_t max_objects = 1u << 20;

	Objects() = default;
	WEFT_NOCOPY(Objects);
	~Objects();

	/* Give @o a handle (ENOMEM when full). */
	Result<void> insert(UObject &o);
	UObject *find(uint32_t handle, ObjType t) const;
	template <typename T> T *find(uint32_t handle, ObjType t) const
	{
		return static_cast<T *>(find(handle, t));
	}
	void remove(UObject &o);
	/* Every object, in no order (the context that owned their verbs objects is closed). */
	UObject *pop();
	template <typename F> void for_each(F fn) const
	{
		for (size_t i = 0; i < slots_.size(); i++)
			if (slots_[i])
				fn(*slots_[i]);
	}

private:
	Array<UObject *> slots_;
	uint32_t next_ = 0;   /* where the search for a free slot starts */
	size_t pop_at_ = 0;   /* where pop() looks first */
};

} // namespace weft::uverbs

#endif
