/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The soft fabric: nodes (HCAs, switches) with ports, and cables between
 * ports that carry real IBA packets (IBA Vol 1 ch. 5-7).
 *
 * Data path: Port::transmit() hands a packet to the peer port's node
 * (Node::receive), under RCU, so a cable can be cut while packets flow:
 * cutting unpublishes the peers and waits for a grace period.  receive()
 * never sleeps; HCAs queue the packet to the destination QP's engine.
 */
#ifndef WEFT_HCA_FABRIC_H
#define WEFT_HCA_FABRIC_H

#include <weft/alloc.h>
#include <weft/atomic.h>
#include <weft/list.h>
#include <weft/lock.h>
#include <weft/verbs/types.h>

#include "packet.h"

struct dentry;
namespace weft::verbs {
class Device;
}

namespace weft::hca {

struct RunCtx;

/*
 * One packet on the wire: LRH through VCRC in data[0, len).  Packets built
 * inside this host travel unsealed (CRC fields zero, IBA 7.8 not yet
 * applied); whatever observes or alters the wire (capture, fault
 * injection, a cable to another host) seals first, and a receiver checks
 * the CRCs of every sealed packet.
 *
 * By reference: a packet fresh from a QP may leave its payload bytes in
 * the sender's memory (@ref), for a receiving QP to copy straight into
 * its own: one copy from buffer to buffer.  Such a packet lives only
 * within the transmit() call that sent it; whatever keeps a packet longer
 * (a queue, a held fault, a capture, a clone) materializes it first.
 */
struct PacketBuf {
	ListNode node;
	uint32_t len = 0;
	uint32_t cap = 0;
	bool sealed = false;
	/* Fault injection: jiffies at which a held packet is released. */
	uint64_t hold_until = 0;
	/* Payload bytes data()[ref_at, ref_at + ref.len) not yet written (fill set). */
	Payload ref;
	uint32_t ref_at = 0;
	/* The engine run that sent it, while in its transmit() call (qp.h). */
	RunCtx *from = nullptr;
	/*
	 * A burst: these wire bytes are the first of @burst packets of one
	 * message, alike but for PSN and opcode (@mid_op after the first,
	 * @last_op last), whose payloads follow one another in @ref, @each
	 * bytes but the last's (Packet::burst).  Whatever needs real packets
	 * (a capture, a fault, a busy receiver) takes them apart with segment().
	 */
	uint32_t burst = 1;
	uint32_t each = 0;
	uint8_t mid_op = 0, last_op = 0;
	/* Its headers, parsed by the receiving HCA (pointers into data()); copies parse anew. */
	Packet view;
	bool parsed = false;

	bool by_ref() const { return ref.fill != nullptr; }
	/* Copy a by-reference payload into the packet (idempotent; EINVAL for a burst). */
	Result<void> materialize();
	/* Packet @i of a burst, on its own and still by reference. */
	Result<Own<PacketBuf>> segment(uint32_t i, Gfp gfp) const;
	/* Payload bytes of packet @i of a burst; 4-byte words on the wire of all of them. */
	uint32_t payload_of(uint32_t i) const;
	uint64_t wire_words() const;
	/* Compute ICRC and VCRC in place (idempotent; materializes first). */
	Result<void> seal();
	uint8_t *data() { return reinterpret_cast<uint8_t *>(this + 1); }
	const uint8_t *data() const { return reinterpret_cast<const uint8_t *>(this + 1); }
	ConstBytes bytes() { return ConstBytes(data(), len); }

	/* Room for @cap bytes after the header; Own<> frees it. */
	static Result<Own<PacketBuf>> alloc(Gfp gfp, uint32_t cap);
	/* A copy of the wire bytes (sealed or not, as this one is); materializes first. */
	Result<Own<PacketBuf>> clone(Gfp gfp);
};

using PacketQueue = List<PacketBuf, &PacketBuf::node>;

} // namespace weft::hca

#include "faults.h"    /* needs PacketBuf; Port embeds Faults */
#include "port_mgmt.h" /* Port embeds PortMgmt */

namespace weft::hca {

/* Per-port counters (IBA 16.1.3.5 PortCounters), updated lock-free. */
struct PortCounters {
	Atomic<uint64_t> xmit_packets, rcv_packets;
	Atomic<uint64_t> xmit_words, rcv_words; /* 32-bit words, as IBA counts data */
	Atomic<uint64_t> xmit_discards;		 /* no link, port not ACTIVE, no route */
	Atomic<uint64_t> rcv_errors;		 /* malformed or bad CRC */
	/* At a switch: arrived, and no LFT entry to forward it by (PortRcvSwitchRelayErrors) */
	Atomic<uint64_t> switch_relay_errors;
	Atomic<uint64_t> vl15_dropped;
	Atomic<uint64_t> bad_pkey, bad_qkey;
	Atomic<uint64_t> link_downed;
	/* Local physical errors past PortInfo.LocalPhyErrors (trap.cpp local_phy_error) */
	Atomic<uint64_t> local_link_integrity;
	Atomic<uint64_t> no_dest_qp; /* Weft: well-formed, but no such QP (or not of its transport) */
	/* Weft (mlx5's name): arrived with no receive WQE: UD dropped, RC RNR NAKed */
	Atomic<uint64_t> out_of_buffer;
	Atomic<uint64_t> unicast_xmit, unicast_rcv, multicast_xmit, multicast_rcv;

	/* Relaxed: a counter orders nothing; readers only want an untorn value. */
	static void bump(Atomic<uint64_t> &c, uint64_t n = 1) { c.fetch_add(n, Order::Relaxed); }
	/* Zero @c (a PMA Set, IBA 16.1.3.5); increments racing with it land before or after. */
	static void clear(Atomic<uint64_t> &c) { c.store(0, Order::Relaxed); }
	/* What readers see (verbs sysfs, the PMA): each counter read atomically. */
	verbs::PortCounterValues read() const;
};

/* IBA 10.9.3: P_Keys match on the low 15 bits if at least one is a full member. */
constexpr bool pkey_match(uint16_t a, uint16_t b)
{
	return (a & 0x7fff) == (b & 0x7fff) && (a & 0x7fff) != 0 && ((a | b) & 0x8000);
}

class Node;
class Capture;

/* Captures open on any port (capture.cpp): the tap's whole cost when zero. */
extern Atomic<int> capture_users;

class Port {
public:
	Port(Node &n, uint8_t num) : node(n), num(num), faults_(*this) {}
	WEFT_NOCOPY(Port);

	/* Send one packet out of this port; it is dropped (and counted) without a link. */
	void transmit(Own<PacketBuf> pkt);
	/* A burst as the real packets it stands for (capture and faults see those). */
	void transmit_segments(Own<PacketBuf> pkt);
	/* The far end of the wire: count the packet in at @to and hand it over. */
	static void deliver(Port &to, Own<PacketBuf> pkt);
	/* The faults injected on what this port transmits (faults.h). */
	Faults &faults() { return faults_; }

	/*
	 * Capture point: hand @pkt to a capture of this port (what it sends)
	 * or of its peer (what that receives), sealing it first.  With no
	 * capture open anywhere it is one predictable branch.
	 */
	void tap(PacketBuf &pkt)
	{
		if (__builtin_expect(capture_users.load(Order::Relaxed) != 0, 0))
			tap_slow(pkt);
	}

	Node &node;
	const uint8_t num;
	uint64_t guid = 0;
	/*
	 * PortInfo fields (IBA 14.2.5.6) this port holds.  LID and LMC are
	 * written by the SMA (under node.mgmt_lock) and autoconfiguration, and
	 * read by packet acceptance and the engines without a lock.
	 */
	Atomic<uint16_t> lid{0};
	Atomic<uint8_t> lmc{0};
	uint16_t sm_lid = 0;
	uint8_t sm_sl = 0;
	/* Written under node.mgmt_lock (set_link, the SMA); the data path reads them without it. */
	Atomic<verbs::PortState> state{verbs::PortState::Down};
	Atomic<verbs::PhysState> phys{verbs::PhysState::Polling};
	/* IBA 10.9.1 P_Key table; entry 0 is the default partition.  Set by the SMA, read by the data path. */
	static constexpr uint16_t pkey_table_len = 16;
	Atomic<uint16_t> pkeys[pkey_table_len] = {Atomic<uint16_t>{0xffff}};
	/* The rest of PortInfo and the tables the SMA keeps (port_mgmt.h), under node.mgmt_lock. */
	PortMgmt mgmt;
	/* IBA 4.1.1: GID 0, the GIDPrefix the SM set (mgmt) and the port's GUID. */
	verbs::Gid gid() const { return verbs::Gid::make(mgmt.gid_prefix, guid); }
	PortCounters counters{};
	/*
	 * Packets captured here and lost to a full capture ring, since load.
	 * Plain integers, not Atomic: debugfs_create_u64 reads them through a
	 * u64 pointer (shim_capture.c); capture.cpp bumps them atomically.
	 */
	uint64_t capture_packets = 0, capture_dropped = 0;

	Port *peer() const { return peer_.load(Order::Acquire); }
	/* Link and port state together, as one change under node.mgmt_lock (any context). */
	void set_link(verbs::PhysState ph, verbs::PortState st);

private:
	friend class Fabric;
	friend class Capture;
	void tap_slow(PacketBuf &pkt);

	Atomic<Port *> peer_{nullptr}; /* RCU-published; written under the fabric mutex */
	/* The open capture; RCU-published, written under Fabric::capture_lock. */
	Atomic<Capture *> capture_{nullptr};
	bool capture_open_ok_ = false; /* its debugfs file exists; under capture_lock */
	Faults faults_;
};

/* What the SMA changed on a port (Node::port_changed). */
namespace port_change {
inline constexpr uint8_t lid = 1u << 0, sm = 1u << 1, pkey = 1u << 2, state = 1u << 3,
			 client_rereg = 1u << 4, gid = 1u << 5;
}

/* Anything with ports on the fabric. */
class Node {
public:
	Node() : mgmt_lock(WEFT_LOCK_CLASS("weft_hca_mgmt")) {}
	virtual ~Node() = default;
	/* A packet arrived on @in (never sleeps; called under RCU). */
	virtual void receive(Port &in, Own<PacketBuf> pkt) = 0;
	/* Called when a port's link state changes (fabric mutex held). */
	virtual void link_changed(Port &p) { (void)p; }
	/*
	 * The SMA changed @p (port_change bits; @was: its PortState before).
	 * Any context, never under mgmt_lock: an HCA defers its verbs events.
	 */
	virtual void port_changed(Port &p, uint8_t what, verbs::PortState was)
	{
		(void)p;
		(void)what;
		(void)was;
	}
	/* A TrapRepress with @tid reached the SMA through @p (under mgmt_lock): stop that trap. */
	virtual void trap_repressed_locked(Port &p, uint64_t tid)
	{
		(void)p;
		(void)tid;
	}
	/* The traps its SMA sends beside the switch's 128 (trap.h); none for a node without. */
	virtual class TrapSender *trap_sender() { return nullptr; }
	/*
	 * Send a notice from @from toward the SM (process context): out of a
	 * CA port; a switch's port 0 has no link and routes it (switch_smi.cpp).
	 */
	virtual void send_notice(Port &from, Own<PacketBuf> pkt) { from.transmit(move(pkt)); }
	virtual Port *port(uint8_t num) = 0;
	virtual uint8_t port_count() const = 0; /* external ports */
	virtual bool is_switch() const = 0;
	/* The verbs device this node is (its name is the node's name); tests' nodes have none. */
	virtual verbs::Device *device() { return nullptr; }
	uint64_t node_guid = 0;
	/* Serialises the SMA and link state changes of this node's ports (sma.cpp). */
	SpinLock mgmt_lock;
	ListNode fabric_node;
	/* weft/<device>/ in debugfs and the device's name (capture.cpp). */
	::dentry *capture_dir = nullptr;
	const char *capture_name = nullptr;

	/* Between Fabric::add and Fabric::remove (fabric mutex). */
	bool on_fabric() const { return on_fabric_; }

private:
	friend class Fabric;
	bool on_fabric_ = false;
};

/*
 * The fabric: every node and the cables between their ports.  Topology
 * changes are serialised by one mutex; the data path takes no fabric lock.
 */
class Fabric {
public:
	static Fabric &get();

	void add(Node &n);
	void remove(Node &n); /* cuts its cables first */

	/*
	 * Join two ports; both go to LinkUp/Init (IBA 5.4 link training done).
	 * EBUSY: a port already cabled (or port 0, or a == b); ENODEV: a node
	 * not (or no longer) on the fabric.
	 */
	Result<void> connect(Port &a, Port &b);
	/*
	 * Cut the cable at @p (both ends go Down/Polling), only if its peer
	 * is @only_peer when that is given.  Held packets are freed.
	 */
	void disconnect(Port &p, Port *only_peer = nullptr);

	/* The node whose device is named @name (fabric mutex held). */
	Node *find(const char *name);

	/*
	 * Test-only stand-in for a subnet manager until the MAD layer lands:
	 * give every port a LID, program every switch's forwarding table by
	 * breadth-first search, and move linked ports to ACTIVE.
	 */
	void autoconfigure();
	/*
	 * Test-only, like autoconfigure(): make every switch forward @mlid out
	 * of every linked port (what an SM would program per group).
	 */
	void flood_multicast(uint16_t mlid);

	uint64_t next_guid();

	/*
	 * Where QP engines run: a high-priority per-CPU workqueue, so that a
	 * busy-polling consumer's work item on the same CPU cannot starve
	 * them (nullptr: the system workqueue, if it could not be made).
	 */
	void *engine_wq = nullptr;

	/* By-reference payloads copied into their packets (the second copy the fast path avoids). */
	Atomic<uint64_t> materialized{0};
	/* Packets that travelled inside a burst (one packet step for several). */
	Atomic<uint64_t> burst_packets{0};

	Mutex lock;
	List<Node, &Node::fabric_node> nodes;
	/* Attaches and detaches captures to ports (capture.cpp). */
	Mutex capture_lock;

	/* Constructed once, at module init (weft_hca_fabric_init). */
	Fabric();

private:
	Atomic<uint64_t> guid_seq_{0};
};

} // namespace weft::hca

#endif
