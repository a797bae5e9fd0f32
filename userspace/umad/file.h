/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One open umadN file: its agents (ids 0..31, each a mad::Agent on the
 * port's QP0 or QP1 service), the MADs queued for read(), and the ioctl,
 * read and write operations of the user_mad ABI (abi.h).  No kernel
 * object here: the port's services, user memory and the reader wake-up
 * come in through the small interfaces below, so tests drive a File over a
 * loopback MadService and kernel buffers.
 *
 * Locking: lock_ (a mutex) serialises registration, unregistration and
 * sends; qlock_ (a spinlock) guards the receive queue and dead_, and is
 * all the agents' callbacks take.  Unregistration runs under lock_ and
 * waits for callbacks, which never take lock_.
 */
#ifndef WEFT_UMAD_FILE_H
#define WEFT_UMAD_FILE_H

#include <weft/atomic.h>
#include <weft/list.h>
#include <weft/lock.h>
#include <weft/mad/service.h>

#include "abi.h"

namespace weft::umad {

/* The MAD services of the port a file is open on. */
class Services {
public:
	/* QP0 (@qpn 0) or QP1 (@qpn 1); nullptr once the port is gone. */
	virtual mad::MadService *service(uint8_t qpn) = 0;

protected:
	~Services() = default;
};

/* The user memory of one call: size bytes at some user address. */
class UserBuf {
public:
	explicit UserBuf(size_t n) : size(n) {}
	/* EFAULT when the memory is not there; the caller checked the bounds. */
	virtual Result<void> copy_in(void *dst, size_t off, size_t n) = 0;
	virtual Result<void> copy_out(size_t off, const void *src, size_t n) = 0;
	const size_t size;

protected:
	~UserBuf() = default;
};

/* Wake readers and pollers of the file (from the agents' callbacks). */
struct Waker {
	void (*fn)(void *ctx) = nullptr;
	void *ctx = nullptr;
	void wake() const
	{
		if (fn)
			fn(ctx);
	}
};

/* The 128-bit method mask of a registration as four little-endian words. */
struct MethodMask {
	uint32_t w[4] = {};
	static MethodMask from_longs(const uint32_t m[4]);
	static MethodMask from_u64(const uint64_t m[2]);
	bool has(uint8_t method) const { return method < 128 && ((w[method / 32] >> (method % 32)) & 1); }
};

/* A registration request, from either ioctl, before validation. */
struct Registration {
	uint32_t qpn = 0;
	uint8_t mgmt_class = 0; /* 0: send-only, no class */
	uint8_t class_version = 0;
	uint32_t oui = 0;
	uint8_t rmpp_version = 0;
	uint32_t flags = 0;
	MethodMask methods;

	/* The in-tree rules (ib_register_mad_agent): EINVAL when broken. */
	Result<void> validate() const;
};

/* The QP a class travels on: 0 for the subnet management classes, else 1. */
inline uint8_t qpn_of_class(uint8_t mgmt_class)
{
	return mgmt_class == iba::mgmt_class::subn_lid_routed ||
			       mgmt_class == iba::mgmt_class::subn_directed_route
		       ? 0
		       : 1;
}

class File;

/* A MAD waiting for read(), or a request waiting for its response. */
struct Packet {
	ListNode node;	/* on the file's queue */
	abi::Hdr hdr;	/* what read() returns in front of the MAD */
	uint32_t mad_len = 0;
	bool received = false; /* counts against File::max_queued */
	mad::SendReq req; /* req.mad: the MAD read() returns */
	Array<uint8_t> whole; /* a reassembled RMPP message instead, mad_len bytes */
};

/* One registered agent of a file. */
class FileAgent final : public mad::AgentHandler {
public:
	FileAgent(File &f, mad::MadService &s, uint8_t id, const Registration &r)
		: file(f), svc(s), id(id), qpn(static_cast<uint8_t>(r.qpn)),
		  rmpp_version(r.rmpp_version), agent(*this, r.mgmt_class, r.class_version)
	{
	}
	void recv(mad::Agent &a, const mad::Mad &m, const mad::MadAddr &from) override;
	void send_done(mad::Agent &a, mad::SendReq &r) override;
	bool recv_message(mad::Agent &a, Array<uint8_t> &msg, size_t len, const mad::MadAddr &from) override;

	File &file;
	mad::MadService &svc;
	const uint8_t id, qpn, rmpp_version;
	mad::Agent agent;
};

class File {
public:
	/*
	 * A reader that never reads: received MADs beyond this many, or beyond
	 * this many bytes (reassembled RMPP messages are long) unless the queue
	 * is empty, are dropped and counted.  In-tree drops past 200,000 MADs
	 * (MAX_UMAD_RECV_LIST_SIZE) and does not count the bytes.
	 */
	static constexpr uint32_t max_queued = 4096;
	static constexpr size_t max_queued_bytes = size_t(64) << 20;

	File(Services &s, Waker w);
	WEFT_NOCOPY(File);
	/* close() must have run. */
	~File();

	/* An ioctl of the ABI; @arg spans the command's structure.  ENOTTY for others. */
	Result<void> ioctl(unsigned int cmd, UserBuf &arg);
	/*
	 * One header + MAD, or one RMPP message of up to
	 * mad::rmpp_max_message() bytes (EINVAL beyond, as in-tree refuses a
	 * write longer than the agent can send); returns the byte count.
	 */
	Result<size_t> write(UserBuf &buf);
	/* The oldest queued message; EAGAIN when there is none. */
	Result<size_t> read(UserBuf &buf);
	bool readable();
	bool dead();
	/* WEFT_UMAD_POLL_* bits. */
	unsigned int poll();

	/*
	 * The port goes away: reads fail with EIO from now on, every agent is
	 * unregistered (outstanding requests cancelled), readers are woken.
	 */
	void kill();
	/* The file is closed: as kill(), then what is queued is freed. */
	void close();

	size_t hdr_size() const { return use_pkey_ ? abi::hdr_size : abi::hdr_size_old; }
	/* Received MADs the queue bounds dropped. */
	uint64_t dropped() const { return dropped_.load(Order::Relaxed); }
	size_t queued();

	ListNode node; /* on the port's file list */

private:
	friend class FileAgent;
	Result<uint32_t> register_agent(const Registration &r);
	Result<void> unregister_agent(uint32_t id);
	void unregister_all_locked();
	void enqueue(Packet &p, bool received);

	Services &services_;
	Waker waker_;
	Mutex lock_;
	FileAgent *agents_[abi::max_agents] = {}; /* under lock_ */
	bool use_pkey_ = false;			  /* under lock_; fixed once an agent exists */
	bool already_used_ = false;		  /* under lock_: an agent was registered */
	SpinLock qlock_;
	List<Packet, &Packet::node> queue_; /* under qlock_ */
	uint32_t nqueued_ = 0;		    /* received MADs on queue_, under qlock_ */
	size_t queued_bytes_ = 0;	    /* and their bytes, under qlock_ */
	bool dead_ = false;		    /* under qlock_ (and lock_ when set) */
	Atomic<uint64_t> dropped_{0};
};

} // namespace weft::umad

#endif
