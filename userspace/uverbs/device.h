/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Weft's devices as user space sees them: every verbs device gets an
 * RDMA netlink index (RDMA_NLDEV_ATTR_DEV_INDEX; assigned in order of
 * arrival, never reused while weft_uverbs is loaded, so a stale index
 * names no other device), and every CA also a uverbsN character device
 * (N the lowest free number) with its open files.
 *
 * A UDevice is refcounted: the table holds one reference from the verbs
 * client's add() to remove(), the char device one until it is freed, each
 * open file one until it is closed.  After remove() (kill()) it keeps no
 * pointer into the verbs device.
 *
 * Lock order: the table's lock, then a UDevice's lock_, then a File's.
 * The table's lock is held across every netlink query of a device, and
 * remove() unlinks the device under it first, so a query never sees a
 * device the registry has let go.
 */
#ifndef WEFT_UVERBS_DEVICE_H
#define WEFT_UVERBS_DEVICE_H

#include <weft/atomic.h>
#include <weft/list.h>
#include <weft/lock.h>
#include <weft/ref.h>
#include <weft/verbs/verbs.h>

#include "file.h"
#include "uverbs_kapi.h"

namespace weft::uverbs {

class UDevice final : public RefCounted<UDevice> {
public:
	/* @num: the uverbsN number, or -1 for a device without one (a switch). */
	UDevice(verbs::Device &dev, uint32_t index, int num);
	WEFT_NOCOPY(UDevice);

	/* Create uverbsN (if it has a number). */
	Result<void> start();
	/*
	 * The device goes (two-phase): mark dead so that opens fail, kill
	 * every open file (its context closed, DEVICE_FATAL to its event
	 * file), forget the device, then remove the node.
	 */
	void kill();

	Result<File *> open_file();
	void close_file(File &f);

	/* For the table's users, under the table's lock (the device is registered). */
	verbs::Device &dev() const { return *device_id; }
	/* The char device, or nullptr (none, or gone). Under the table's lock. */
	weft_uverbs_cdev *cdev() const { return cdev_; }

	const uint32_t index;
	const int num;
	verbs::Device *const device_id; /* identity only after kill() */
	ListNode node;			/* on the table */

private:
	Mutex lock_;
	List<File, &File::file_node> files_; /* under lock_ */
	bool dead_ = false;		/* under lock_ */
	weft_uverbs_cdev *cdev_ = nullptr;
};

/* Every device of the verbs registry, as the client saw it come. */
class Table {
public:
	Table();
	WEFT_NOCOPY(Table);

	/* fn(UDevice &) for the device with netlink index @index; ENODEV if none. */
	template <typename F> Result<void> with_device(uint32_t index, F fn)
	{
		MutexGuard g(lock_);
		for (UDevice &d : devs_)
			if (d.index == index)
				return fn(d);
		return Error(err::ENODEV);
	}
	/* fn(UDevice &) for every device with index >= @start, in index order, until fn is false. */
	template <typename F> void for_each_from(uint32_t start, F fn)
	{
		MutexGuard g(lock_);
		for (UDevice &d : devs_)
			if (d.index >= start && !fn(d))
				return;
	}

private:
	friend class UverbsClient;
	Mutex lock_;
	List<UDevice, &UDevice::node> devs_; /* under lock_, in index order */
	uint32_t next_index_ = 0;	     /* under lock_ */
	uint32_t used_nums_ = 0;	     /* uverbsN numbers in use, under lock_ */
};

/* The module's table (between weft_uverbs_core_init() and _exit()). */
Table &table();

} // namespace weft::uverbs

#endif
