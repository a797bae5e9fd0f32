/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Capture of fabric traffic to pcap (Documentation/capture.md).
 *
 * Every fabric port is a capture point.  Reading
 * /sys/kernel/debug/weft/<device>/port<N>/capture starts a capture of what
 * that port transmits and receives and returns a pcap stream
 * (LINKTYPE_INFINIBAND, nanosecond timestamps); closing it stops the
 * capture.  The tap is Port::tap() at the start of Port::transmit(): a
 * port receives exactly what its peer transmits, so the transmit side of
 * both ends of a cable sees both directions.
 *
 * The data path never blocks: records go into a byte ring that the reader
 * drains; a record that does not fit is dropped and counted.
 */
#ifndef WEFT_HCA_CAPTURE_H
#define WEFT_HCA_CAPTURE_H

#include <weft/alloc.h>
#include <weft/lock.h>
#include <weft/span.h>
#include <weft/wait.h>
#include <weft/wire.h>

#include "fabric.h"

namespace weft::hca {

/* The pcap savefile format (pcap-savefile(5)), written little-endian. */
struct PcapFileHeader {
	le32 magic;
	le16 version_major;
	le16 version_minor;
	le32 thiszone;
	le32 sigfigs;
	le32 snaplen;
	le32 linktype;
};
static_assert(sizeof(PcapFileHeader) == 24);

struct PcapRecordHeader {
	le32 ts_sec;
	le32 ts_frac; /* nanoseconds: the file uses the nanosecond magic */
	le32 incl_len;
	le32 orig_len;
};
static_assert(sizeof(PcapRecordHeader) == 16);

inline constexpr uint32_t pcap_magic_nsec = 0xa1b23c4d;
inline constexpr uint32_t linktype_infiniband = 247;
/* The largest IBA packet (4096-byte MTU plus every header and the CRCs) fits. */
inline constexpr uint32_t capture_snaplen = 4096 + 128;

/*
 * A byte ring holding a pcap stream: the file header, then whole records.
 * Any number of writers in any context (serialised by a spinlock, never
 * sleeping), one reader at a time (lock-free against the writers: only
 * the reader moves the tail, only writers move the head, and a writer never
 * overwrites bytes the reader has not consumed).
 */
class CaptureRing {
public:
	/* @bytes of ring (at least one full record), holding the file header. */
	static Result<Own<CaptureRing>> create(Gfp gfp, size_t bytes);
	WEFT_NOCOPY(CaptureRing);

	/*
	 * Append a record for @pkt stamped clock() (read under the lock, so the
	 * stream's timestamps never go backwards); false, and counted, if it
	 * does not fit.  Packets longer than the snaplen are truncated.
	 */
	bool push(ConstBytes pkt, uint64_t (*clock)(void));

	/* Bytes the reader may take now. */
	size_t available() const;

	/*
	 * Hand up to @max bytes to sink(const uint8_t *, size_t) -> Result<void>
	 * in at most two pieces, consuming what it accepted.  A sink error on
	 * the first piece is returned; on the second, the first piece counts.
	 */
	template <typename Sink> Result<size_t> read(size_t max, Sink &&sink)
	{
		size_t n = available();
		if (n > max)
			n = max;
		/* Relaxed: only the reader writes tail_, and we are it. */
		const uint64_t tail = tail_.load(Order::Relaxed);
		size_t done = 0;
		while (done < n) {
			size_t off = (tail + done) % buf_.size();
			size_t piece = buf_.size() - off;
			if (piece > n - done)
				piece = n - done;
			auto r = sink(static_cast<const uint8_t *>(buf_.data() + off), piece);
			if (!r) {
				if (!done)
					return r.error();
				break;
			}
			done += piece;
		}
		/* Release: the bytes are copied out before writers may reuse them. */
		tail_.store(tail + done, Order::Release);
		return done;
	}

	uint64_t packets() const { return packets_.load(Order::Relaxed); }
	uint64_t dropped() const { return dropped_.load(Order::Relaxed); }
	size_t size() const { return buf_.size(); }

	explicit CaptureRing(Array<uint8_t> buf);

private:
	/* Copy @len bytes in at ring position @pos, wrapping; the new position. */
	uint64_t put(uint64_t pos, const void *src, size_t len);

	SpinLock lock_;
	Array<uint8_t> buf_;
	Atomic<uint64_t> head_{0}; /* bytes ever written; under lock_, read by the reader */
	Atomic<uint64_t> tail_{0}; /* bytes ever consumed; written by the reader only */
	Atomic<uint64_t> packets_{0}, dropped_{0};
};

/*
 * One open capture file: the ring, and the port it is attached to until
 * the file is closed or the port's device goes away (then the reader gets
 * what is left, then end of file).
 */
class Capture {
public:
	/* Attach to @port: EBUSY if it has a reader, ENODEV if it is going away. */
	static Result<Capture *> open(Port &port);
	/* Detach if still attached, then free (the file's release). */
	void close();
	/*
	 * Copy pcap bytes out through sink(const uint8_t *, size_t) ->
	 * Result<void>; blocks (interruptibly) while empty unless @nonblock
	 * (EAGAIN).  0 means end of capture: the port went away.
	 */
	template <typename Sink> Result<size_t> read(size_t max, bool nonblock, Sink &&sink)
	{
		if (!max)
			return size_t(0);
		/* Readers sharing the file (threads, forks) take turns: one tail. */
		if (read_lock_.lock_interruptible())
			return Error(err::ERESTARTSYS);
		auto r = read_locked(max, nonblock, sink);
		read_lock_.unlock();
		return r;
	}

	/* Data path (Port::tap_slow, under RCU): record @pkt, count at @port. */
	void record(Port &port, ConstBytes pkt);

	/* debugfs: weft/<name>/port<N>/ for @n's external ports (after registration). */
	static void add_node(Node &n, const char *name);
	/*
	 * Before @n goes away: refuse new captures of its ports, detach the
	 * open ones and wake their readers (so no read is left blocking), then
	 * remove the files (which waits for file operations in progress).
	 */
	static void remove_node(Node &n);

	bool detached() const { return detached_.load(Order::Acquire); }
	const CaptureRing &ring() const { return *ring_; }

	Capture(Port &p, Own<CaptureRing> ring);

private:
	template <typename Sink> Result<size_t> read_locked(size_t max, bool nonblock, Sink &sink)
	{
		if (!ring_->available()) {
			if (detached())
				return size_t(0);
			if (nonblock)
				return Error(err::EAGAIN);
			WEFT_TRY(readable_.wait([this] { return ring_->available() || detached(); },
						Timeout::forever(), true));
		}
		return ring_->read(max, sink);
	}

	void detach_locked(); /* Fabric::capture_lock held */

	Own<CaptureRing> ring_;
	WaitQueue readable_;
	Mutex read_lock_;
	Port *port_; /* under Fabric::capture_lock; null once detached */
	Atomic<bool> detached_{false};
	char label_[32]; /* "<device> port<N>", for the log once the port is gone */
};

/* Ring size of new captures, in KiB (module parameter capture_ring_kb). */
extern unsigned int capture_ring_kb;

} // namespace weft::hca

#endif
