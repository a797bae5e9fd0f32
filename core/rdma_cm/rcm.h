/* SPDX-License-Identifier: GPL-2.0 */
/*
 * weft_rdma_cm internals.  One mutex (Rcm::lock) guards the bindings, the
 * devices, the shared IB CM listeners and every Id's connection state: the
 * RDMA CM does a few steps per connection and one lock keeps them easy to
 * follow.  Handler calls are made under the Id's handler_lock only (one at
 * a time; destroy() takes it to wait for a running call), never under
 * Rcm::lock, and IB CM calls that wait (cm::destroy) are made under neither.
 * An owner's call makes its IB CM call outside the lock too, holding a use
 * of the connection's IB CM Id (CmUse) that teardown waits for.
 */
#ifndef WEFT_RCM_H
#define WEFT_RCM_H

#include <weft/atomic.h>
#include <weft/cm/cm.h>
#include <weft/list.h>
#include <weft/log.h>
#include <weft/mad/sa.h>
#include <weft/rdma_cm/rdma_cm.h>
#include <weft/ref.h>
#include <weft/work.h>

#include "rcm_kapi.h"

namespace weft::rdma_cm {

extern const Logger log;

/* IBA A11.2.1: the service ID of an IP port space's port. */
inline uint64_t service_id(PortSpace ps, uint16_t port)
{
	return (uint64_t(ps) << 16) | port;
}

enum class IdState : uint8_t {
	Idle,
	AddrQuery,
	AddrResolved,
	RouteQuery,
	RouteResolved,
	Connect,     /* REQ or SIDR_REQ sent (active), or ConnectRequest delivered (passive) */
	Established,
	Disconnected,
	Listen,
	DeviceGone, /* its device was removed: only destroy() is left */
};

class RcmDevice;
class CmListener;
class Id;

/* A multicast group an Id joined or is joining (mcast.cpp). */
struct Mc {
	Mc(Id &i, const SockAddr &g, uint8_t js, void *c) :
		id(i), group(g), join_state(js), ctx(c), work(run, WEFT_LOCK_CLASS("weft_rdma_cm_mc"))
	{
	}
	WEFT_NOCOPY(Mc);
	static void run(Work &w);

	ListNode node; /* Id::mcs, under Rcm::lock */
	Id &id;
	const SockAddr group;
	const uint8_t join_state;
	void *const ctx;
	mad::sa::Membership *m = nullptr; /* set by run(), freed by leave */
	Work work;
};


class Id final : public RefCounted<Id>, public cm::Handler {
public:
	Id(Net *n, PortSpace p, verbs::QpType t, rdma_cm::Handler &h, void *ctx);
	WEFT_NOCOPY(Id);
	~Id();

	/* The IB CM's events for this Id's connection (conn.cpp). */
	int event(const cm::Event &e) override;

	Net *const net; /* a reference of our own */
	const PortSpace ps;
	const verbs::QpType qp_type;

	/* Under handler_lock. */
	Mutex handler_lock;
	rdma_cm::Handler *handler;
	void *context;
	bool destroying = false;
	Atomic<bool> torn_down{false}; /* teardown() finished (device removal waits for it) */

	/* Under Rcm::lock. */
	IdState state = IdState::Idle;
	SockAddr src, dst;
	bool bound = false;    /* on Rcm::binds with src's port */
	bool reuseaddr = false, afonly = false;
	int backlog = 0;
	Ref<RcmDevice> dev;    /* once bound to a device */
	uint8_t port = 0;
	uint16_t pkey = 0;
	int ifindex = 0;       /* the ib interface the address resolved to */
	uint64_t change_told = 0; /* the last address change delivered (addr.cpp) */
	verbs::Gid sgid{}, dgid{};
	uint32_t peer_qpn = 0; /* the peer interface's QPN (UD) */
	bool has_route = false;
	iba::PathRecord route{};
	verbs::Qp *qp = nullptr;
	uint32_t qp_num = 0;
	cm::Id *cm_id = nullptr; /* taken by CmUse, cleared by retire_cm_id() */
	uint8_t tos = 0, ack_timeout = 0;
	bool active = false;   /* connect() was called (not a passive Id) */
	bool responded = false; /* active, no QP: ConnectResponse delivered, establish() pending */
	uint8_t rep_pdata[iba::cm::pdata::rep]; /* active: the REP's, for Established */
	uint8_t rep_len = 0;
	ListNode bind_node; /* Rcm::binds */
	ListNode dev_node;  /* RcmDevice::ids */
	ListNode all_node;  /* Rcm::all */

	/* Address and route resolution (addr.cpp); owned by its work. */
	DelayedWork resolve;
	uint64_t deadline_ms = 0;
	SockAddr want_src;
	bool has_want_src = false;
	uint32_t route_timeout_ms = 0;

	List<Mc, &Mc::node> mcs; /* joined groups, under Rcm::lock */
	ListNode reap_node; /* Rcm::reap */

	/* Owner calls using cm_id outside Rcm::lock (cm_use.cpp); taken under it. */
	Atomic<uint32_t> cm_uses{0};
};

/* A device known to the RDMA CM (a verbs client's view), and its Ids. */
class RcmDevice final : public RefCounted<RcmDevice> {
public:
	explicit RcmDevice(verbs::Device &d) : dev(Ref<verbs::Device>::share(&d)) {}
	WEFT_NOCOPY(RcmDevice);
	Ref<verbs::Device> dev;
	bool gone = false;	      /* under Rcm::lock */
	List<Id, &Id::dev_node> ids; /* under Rcm::lock */
	ListNode node;		      /* Rcm::devices */
};

/* One IB CM listener per device and service ID, shared by the Ids listening on the port. */
class CmListener final : public cm::Handler {
public:
	CmListener(RcmDevice &d, uint64_t sid) : dev(Ref<RcmDevice>::share(&d)), service_id(sid) {}
	WEFT_NOCOPY(CmListener);
	int event(const cm::Event &e) override; /* conn.cpp: REQ and SIDR_REQ */

	Ref<RcmDevice> dev;
	const uint64_t service_id;
	cm::Id *cm_id = nullptr;
	uint32_t users = 0; /* under Rcm::lock */
	ListNode node;	    /* Rcm::listeners */
};

struct Rcm {
	Rcm();
	WEFT_NOCOPY(Rcm);

	Mutex lock;
	List<Id, &Id::bind_node> binds;
	List<Id, &Id::all_node> all;
	List<RcmDevice, &RcmDevice::node> devices;
	List<CmListener, &CmListener::node> listeners;
	uint16_t next_port;
	Stats stats{};
	Atomic<uint32_t> live{0};

	SpinLock reap_lock;
	List<Id, &Id::reap_node> reap; /* under reap_lock: handlers that asked for destruction */
	Work reaper;
	WaitQueue freed;
	WaitQueue cm_idle; /* an Id's cm_uses went to 0 */
};

extern Rcm *rcm;

uint64_t now_ms();
weft_rcm_addr to_kapi(const SockAddr &a);
SockAddr from_kapi(const weft_rcm_addr &a);

/* id.cpp: delivery and teardown. */
/* Call the Id's handler with @e (e.id set); a non-zero answer queues its destruction. */
void deliver(Id &id, Event &e);
/* Destruction asked by a handler's answer: done by the reaper. */
void destroy_later(Id &id);

/* bind.cpp: the port spaces. */
Result<void> bind_locked(Id &id, const SockAddr &addr);
void unbind_locked(Id &id);
/* The listening Id for a request to @dst in @net (null: any) on @dev, with a reference. */
Ref<Id> find_listener_locked(Net *net, PortSpace ps, const SockAddr &dst, RcmDevice &dev);

/* device.cpp: devices and the ports by GID. */
/* How long device removal waits for an Id's owner to destroy it (a testing seam shortens it). */
extern Atomic<uint32_t> owner_wait_ms;
Result<void> devices_init();
void devices_exit();
/* The device and port whose port GID is @gid (Rcm::lock held); null if none. */
RcmDevice *find_by_gid_locked(const verbs::Gid &gid, uint8_t &port);
void attach_dev_locked(Id &id, RcmDevice &d, uint8_t port);

/* mcast.cpp: leave every group (teardown, device removal). */
void leave_all(Id &id);
/* The MGID an IP group maps to in @ps and partition @pkey. */
verbs::Gid mcast_mgid(const SockAddr &g, PortSpace ps, uint16_t pkey);

/* addr.cpp: address and route resolution. */
void resolve_work(DelayedWork &w);
Result<void> addr_changes_init();
void addr_changes_exit();

/*
 * conn.cpp: the IB CM listeners.  For every listening Id and every live
 * device it may take requests on (its bound device, or all), a
 * CmListener of (device, service ID) exists, counting such Ids.
 */
Result<void> listen_on_locked(RcmDevice &d, uint64_t sid);
/* Drop the Id's uses; the listeners left unused are returned, for cm::destroy() outside the lock. */
void unlisten_locked(Id &id, List<CmListener, &CmListener::node> &unused);
void free_listeners(List<CmListener, &CmListener::node> &unused);
/*
 * cm_use.cpp: the connection's IB CM Id, used by the owner's calls
 * outside Rcm::lock.  A use is taken under the lock with the pointer;
 * retiring the IB CM Id is two-phase: the pointer is cleared under the
 * lock (no new use), then the uses taken before are waited for.
 */
class CmUse {
public:
	CmUse() = default;
	WEFT_NOCOPY(CmUse);
	~CmUse() { reset(); }
	/* Rcm::lock held: use the Id's IB CM Id, if it has one. */
	void take_locked(Id &id);
	void reset();
	explicit operator bool() const { return c_ != nullptr; }
	cm::Id &operator*() const { return *c_; }
	cm::Id *get() const { return c_; }

private:
	Id *id_ = nullptr;
	cm::Id *c_ = nullptr;
};
/*
 * Clear the Id's IB CM Id (only if it is @only, when given) and wait for
 * its uses; it is returned for the caller to destroy, or null.  No lock held.
 */
cm::Id *retire_cm_id(Id &id, cm::Id *only = nullptr);
/* The IB CM's Id for the connection is done with: retire and destroy it (no lock held). */
void drop_cm_id(Id &id, cm::Id *only = nullptr);
/*
 * Testing seam: called (when set) by an owner call holding a use, just
 * before its IB CM call, so that a KUnit case can run teardown exactly
 * there.  Never set outside tests.
 */
using CmCallHook = void (*)(Id &id);
extern Atomic<CmCallHook> cm_call_hook;
inline void at_cm_call(Id &id)
{
	if (CmCallHook h = cm_call_hook.load(Order::Acquire); WEFT_UNLIKELY(h))
		h(id);
}
/* The CMA header (IBA A11.6, in-tree struct cma_hdr) in REQ and SIDR_REQ private data. */
inline constexpr size_t cma_hdr_size = 36;

} // namespace weft::rdma_cm

#endif
