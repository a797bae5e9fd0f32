/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One open /dev/infiniband/rdma_cm (File) and the RDMA CM Ids made through
 * it (Ctx, in-tree struct ucma_context), with the file's event queue.
 *
 * Ids are numbered from one module-wide counter (MIGRATE_ID keeps an Id's
 * number when it moves to another file) but looked up per file: another
 * file's Id is ENOENT.  The file's list holds one reference on each Ctx;
 * whoever takes a Ctx off that list (DESTROY_ID, MIGRATE_ID, close, the
 * teardown of a listener whose CONNECT_REQUEST was never read) owns its
 * teardown.
 *
 * Locks, in order: Ctx::lock (a command on the Id, and its teardown; RDMA
 * CM calls are made under it, but never under the next two), Ctx::hlock
 * (what the RDMA CM's handler reads: the file, uid, multicast list; held
 * by the handler), File::lock_ (the Id list, the event queue, events
 * reported).  The handler takes hlock then the file's lock; it never takes
 * Ctx::lock, so destroy() (which waits for a running handler) may be
 * called under it.
 *
 * Which file an Id belongs to changes only under its hlock (MIGRATE_ID),
 * and with it, atomically, its place on that file's list, its queued
 * events and its groups on the file's multicast list.  So under an Id's
 * hlock, Ctx::file names the only file that can list it, its events or
 * its groups (null once its teardown is done).  The new Id of an unread
 * CONNECT_REQUEST belongs to the file holding that event: MIGRATE_ID of
 * the listener takes such an Id's hlock inside the listener's (another
 * lock class: an Id made by a request never listens itself).
 */
#ifndef WEFT_UCMA_FILE_H
#define WEFT_UCMA_FILE_H

#include <weft/list.h>
#include <weft/lock.h>
#include <weft/ref.h>
#include <weft/work.h>
#include <weft/rdma_cm/rdma_cm.h>

#include "abi.h"

namespace weft::ucma {

class File;
class Ctx;

/* A multicast group joined through an Id (in-tree struct ucma_multicast). */
struct Multicast {
	Multicast(Ctx &c, uint64_t uid, const rdma_cm::SockAddr &addr);
	~Multicast();
	WEFT_NOCOPY(Multicast);

	const uint32_t num;
	const uint64_t uid;
	const rdma_cm::SockAddr addr;
	Ctx *const ctx;
	uint32_t events_reported = 0; /* under the file's lock */
	ListNode ctx_node;	      /* on the Ctx's list (its owner), under hlock */
	ListNode file_node;	      /* on the File's list (for lookup), under its lock */
};

/* An event waiting for GET_EVENT (in-tree struct ucma_event). */
struct QueuedEvent {
	QueuedEvent();
	~QueuedEvent();
	WEFT_NOCOPY(QueuedEvent);

	ListNode node;
	Ref<Ctx> ctx;		/* counts it in events_reported (the listener for CONNECT_REQUEST) */
	Ref<Ctx> child;		/* CONNECT_REQUEST: the new Id */
	Multicast *mc = nullptr; /* MULTICAST_JOIN/ERROR: purged before the group is freed */
	abi::EventResp resp;
};

class Ctx final : public RefCounted<Ctx>, public rdma_cm::Handler {
public:
	enum class Origin { User, Request };
	Ctx(File &f, verbs::QpType type, Origin origin = Origin::User);
	~Ctx();
	WEFT_NOCOPY(Ctx);

	/* rdma_cm::Handler: queue the event for the file (CONNECT_REQUEST: a new Ctx). */
	int event(const rdma_cm::Event &e) override;

	const uint32_t num;
	const verbs::QpType qp_type;

	Mutex lock;
	rdma_cm::Id *id = nullptr; /* under lock; null once destroyed */

	Mutex hlock;
	File *file;		   /* under hlock; MIGRATE_ID moves it, teardown clears it */
	uint64_t uid = 0;	   /* under hlock */
	bool reporting = false;	   /* under hlock: a new Id reports nothing until ACCEPT */
	List<Multicast, &Multicast::ctx_node> mcs; /* under hlock, owned */

	Atomic<int> backlog{0};	   /* CONNECT_REQUESTs this listener may still queue */
	uint32_t events_reported = 0; /* under the file's lock */
	ListNode node;		   /* on the file's list, under its lock */
	/* DEVICE_REMOVAL: the Id is destroyed here, the Ctx stays for the user. */
	Work close_work;

private:
	int connect_request(const rdma_cm::Event &e);
	static void close_id(Work &w);
};

class File {
public:
	explicit File(weft_ucma_waiter *w);
	~File();
	WEFT_NOCOPY(File);

	/* One command (header, request and response as the ABI lays them out). */
	Result<size_t> write(const void *ubuf, size_t len, bool nonblock);
	unsigned int poll() const;
	/* The last close: every Id destroyed, every event freed. */
	void close();

	/* --- for the commands (commands.cpp) ------------------------------ */
	/* The Id @num of this file, with a reference; ENOENT. */
	Result<Ref<Ctx>> get(uint32_t num);
	/* Take the Id off the file's list: the caller owns its teardown; ENOENT. */
	Result<Ref<Ctx>> take(uint32_t num);
	/* A new Id joins the file (the list takes over @c's reference). */
	void publish(Ctx &c);
	/* Tear down an Id taken off the list: events reported to the user. */
	uint32_t destroy(Ref<Ctx> c);
	/* Queue an event / a CONNECT_REQUEST with its new Id (published). */
	void push(QueuedEvent &q);
	void push_connect_request(QueuedEvent &q, Ctx &child);
	/* GET_EVENT: copy the oldest event to @response (min(@room, its size) bytes). */
	Result<void> get_event(uint64_t response, size_t room, bool nonblock);

	/* Multicast groups on the file's list, for lookup (both under the Id's hlock). */
	void add_multicast(Multicast &m);
	void unlink_multicast(Multicast &m);
	/* LEAVE_MCAST's lookup: the Id of group @num, with a reference; @out is compared, not owned. */
	Result<Ref<Ctx>> find_multicast(uint32_t num, Multicast *&out);
	/* Free the queued events of @m; the events the user read of it. */
	uint32_t purge_multicast(Multicast &m);
	/*
	 * MIGRATE_ID: move @c (taken off @from) here with its events, its
	 * groups and the new Ids of its unread CONNECT_REQUESTs.
	 */
	uint32_t adopt(File &from, Ctx &c);

private:
	static bool ready(void *file);
	/* Unlink @c's queued events into @out (lock_ held). */
	void unqueue_locked(Ctx &c, List<QueuedEvent, &QueuedEvent::node> &out);
	/* Take an unread CONNECT_REQUEST's new Id off our list: false if it is no longer ours. */
	bool claim_unread(Ctx &child);
	/* Move @child, an unread CONNECT_REQUEST's new Id, from @from's list to ours. */
	void move_unread(File &from, Ctx &child);
	/* MIGRATE_ID's halves: what leaves the old file, what joins the new one. */
	void release_locked(Ctx &c, List<QueuedEvent, &QueuedEvent::node> &out);
	void take_in_locked(Ctx &c, List<QueuedEvent, &QueuedEvent::node> &events);

	weft_ucma_waiter *const waiter_;
	Mutex lock_;
	List<Ctx, &Ctx::node> ctxs_;			      /* under lock_, a reference each */
	List<QueuedEvent, &QueuedEvent::node> events_;	      /* under lock_ */
	List<Multicast, &Multicast::file_node> mcs_;	      /* under lock_ */
	Atomic<uint32_t> queued_{0};			      /* events_ length, for poll and waits */
};

/* Module-wide counts for leak checks (/sys/class/misc/rdma_cm/weft_stats). */
struct Stats {
	Atomic<uint32_t> files, ctxs, events, multicasts;
	Atomic<uint64_t> rejected_backlog, dropped_nomem;
};
Stats &stats();
/* The next Id or multicast number (module-wide, never 0... until it wraps). */
uint32_t next_num();

} // namespace weft::ucma

#endif
