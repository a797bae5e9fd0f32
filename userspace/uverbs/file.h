/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One open /dev/infiniband/uverbsN: the write() command ABI (framing,
 * size checks and dispatch, as the in-tree 6.1 ib_uverbs_write() and
 * verify_hdr() do it) and the user context GET_CONTEXT creates.  The
 * context (a verbs::Context) owns every object the process creates
 * through this file and is closed, with all of them, when the file is
 * closed or the device goes away.
 *
 * Locking: lock_ (a mutex) is held across each command, and by kill()
 * and close(), so a device going away waits for the command in progress
 * and every later command sees the file dead (EIO, as in-tree after
 * disassociation).  The per-command handlers are in commands.h.
 */
#ifndef WEFT_UVERBS_FILE_H
#define WEFT_UVERBS_FILE_H

#include <weft/list.h>
#include <weft/lock.h>
#include <weft/ref.h>
#include <weft/verbs/verbs.h>

#include "comp_channel.h"
#include "events.h"
#include "objects.h"

namespace weft::uverbs {

class UDevice;

class File final : public verbs::EventHandler {
public:
	File(UDevice &udev, verbs::Device &dev);
	WEFT_NOCOPY(File);
	/* close() must have run. */
	~File();

	/* One command: header, request and response as the ABI lays them out. */
	Result<size_t> write(const void *ubuf, size_t len);
	/* The device goes away (under the UDevice's lock). */
	void kill();
	/* The file is closed: as kill(), without the fatal event. */
	void close();

	/* Port events to the event file (verbs::EventHandler). */
	void handle(const verbs::Event &e) override;

	/* For the handlers, under lock_ during a command. */
	verbs::Device &device()
	{
		lock_.assert_held();
		return *dev_;
	}
	verbs::Context *context()
	{
		lock_.assert_held();
		return ctx_;
	}
	/* GET_CONTEXT: the file's context and its event queue, from now on. */
	void set_context(verbs::Context *ctx, Ref<EventQueue> events);
	Objects &objects()
	{
		lock_.assert_held();
		return objs_;
	}
	Ref<EventQueue> events()
	{
		lock_.assert_held();
		return events_;
	}
	/* A new object: its rings become mappable (ENOMEM: the table is full). */
	Result<void> add_object(UObject &o);
	/* An object whose verbs object is gone: off the table, its rings unlisted, freed. */
	void free_object(UObject &o);
	/* A ring that replaces another of an object (RESIZE_CQ): @fresh listed at a new offset. */
	void list_ring(Ring &fresh);
	void unlist_ring(Ring &old);
	/* A completion channel made through this file (closed with its context). */
	void add_channel(CompChannel &ch);

	/* mmap(): map the ring listed at @offset (no lock a command holds). */
	Result<void> mmap(uint64_t offset, size_t len, void *vma);

	Ref<UDevice> const udev; /* keeps the UDevice (and its list) alive */
	ListNode file_node;	 /* on the UDevice's file list */

private:
	void release_context_locked(bool fatal);

	Mutex lock_;
	verbs::Device *dev_;		  /* under lock_; nullptr once dead */
	verbs::Context *ctx_ = nullptr;	  /* under lock_ */
	/*
	 * Written under lock_ (set_context(), release_context_locked()), and
	 * only while the port-event handler is off; handle() reads it
	 * unlocked, serialised with those by the device's handler list.
	 */
	Ref<EventQueue> events_;
	bool handler_on_ = false;	  /* under lock_: registered for port events */
	Objects objs_;			  /* under lock_ */
	List<CompChannel, &CompChannel::file_node> channels_; /* under lock_, a reference each */

	/*
	 * The rings the process may map, by offset.  A spinlock of its own:
	 * mmap() runs under the process's mmap lock, which a command may
	 * take while holding lock_ (a copy from user memory that faults).
	 */
	SpinLock rings_lock_;
	List<Ring, &Ring::node> rings_;	  /* under rings_lock_, a reference each */
	uint64_t next_offset_ = 0;	  /* under rings_lock_ */
};

} // namespace weft::uverbs

#endif
