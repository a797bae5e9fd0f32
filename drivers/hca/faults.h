/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault injection on the soft fabric's cables (a test interface; IBA has
 * nothing to say about it).  Each Port owns one Faults: the faults applied
 * to the packets that port transmits, i.e. one direction of its cable.
 *
 * Kinds, each armed by a count ("the next N packets", used up first) and
 * by a probability in parts per million (1000000: every packet):
 *
 *   Drop       the packet is lost on the wire;
 *   Corrupt    the packet is sealed (ICRC/VCRC computed), then one random
 *              bit of it is flipped: the next receiver always detects it,
 *              drops it and counts PortRcvErrors;
 *   Duplicate  a copy follows the packet;
 *   Reorder    the packet is held back until the next packet in this
 *              direction has overtaken it (at most reorder_ms);
 *   Delay      the packet is held for delay_ms.
 *
 * Held packets live in a queue per direction, released by a DelayedWork;
 * purge() frees them when the cable is cut (Fabric does it after the RCU
 * grace period that ends every transmitter), and the destructor when the
 * port goes.  The data path takes only this direction's spinlock, and only
 * to hold or release packets.
 */
#ifndef WEFT_HCA_FAULTS_H
#define WEFT_HCA_FAULTS_H

#ifndef WEFT_HCA_FABRIC_H
#error "include fabric.h: Port embeds Faults, Faults queues PacketBufs"
#endif

#include <weft/work.h>

namespace weft::hca {

class Port;

enum class FaultKind : uint8_t { Drop, Corrupt, Duplicate, Reorder, Delay };
inline constexpr size_t fault_kinds = 5;
inline constexpr uint32_t ppm_all = 1000000;
/* Longest hold for Delay and Reorder: a test knob, not a buffer. */
inline constexpr uint32_t max_hold_ms = 10000;

/* A name for messages and the configfs attributes: "drop", "corrupt"... */
const char *fault_name(FaultKind k);

class Faults {
public:
	explicit Faults(Port &port);
	~Faults();
	WEFT_NOCOPY(Faults);

	/*
	 * Knobs (process context, any time, also during traffic).  EINVAL:
	 * ppm above 1000000, hold time 0 or above max_hold_ms, or a kind
	 * without a hold time.
	 */
	Result<void> set_probability(FaultKind k, uint32_t ppm);
	void set_count(FaultKind k, uint32_t n);
	/* Delay: how long a packet is held; Reorder: the longest it waits to be overtaken. */
	Result<void> set_hold_ms(FaultKind k, uint32_t ms);
	/* Every count and probability to 0 (counters and hold times stay). */
	void clear();

	uint32_t probability(FaultKind k) const { return knob(k).ppm.load(Order::Relaxed); }
	uint32_t count(FaultKind k) const { return knob(k).count.load(Order::Relaxed); }
	uint32_t hold_ms(FaultKind k) const;
	/* Faults injected so far, by kind. */
	uint64_t injected(FaultKind k) const { return injected_[idx(k)].load(Order::Relaxed); }
	/* Packets held right now (Delay and Reorder). */
	uint32_t held() const { return held_.load(Order::Relaxed); }

	/* Data path, from Port::transmit (under RCU, @to is the live peer). */
	bool armed() const { return armed_.load(Order::Relaxed); }
	void transmit(Port &to, Own<PacketBuf> pkt);

	/*
	 * Free every held packet.  Only once no transmitter can reach this
	 * Faults any more (peer unpublished and an RCU grace period passed):
	 * it may sleep (waits for the release work).
	 */
	void purge();

	/*
	 * Hand @pkt to @to from the release work instead of inline (Port::
	 * transmit, deep in the stack); held like a delayed packet, due now.
	 */
	void defer(Port &to, Own<PacketBuf> pkt);
	uint64_t deferred() const { return deferred_.load(Order::Relaxed); }

	/* One decision for one packet: uses up a count first (for tests). */
	bool decide(FaultKind k);

private:
	/* Knobs, counters and hold times are set from configfs while packets flow: all Relaxed. */
	struct Knob {
		Atomic<uint32_t> count;
		Atomic<uint32_t> ppm;
	};
	using Queue = PacketQueue;

	static size_t idx(FaultKind k) { return static_cast<size_t>(k); }
	Knob &knob(FaultKind k) { return knobs_[idx(k)]; }
	const Knob &knob(FaultKind k) const { return knobs_[idx(k)]; }
	void bump(FaultKind k) { injected_[idx(k)].fetch_add(1, Order::Relaxed); }
	void arm() { armed_.store(true, Order::Relaxed); }

	void hold(Queue &q, uint32_t ms, Own<PacketBuf> pkt, Own<PacketBuf> copy);
	void release_overtaken(Port &to);
	static void release_due(DelayedWork &w);
	static void deliver_all(Port *to, Queue &q);

	Port &port_;
	Knob knobs_[fault_kinds] = {};
	Atomic<uint64_t> injected_[fault_kinds] = {};
	Atomic<uint32_t> delay_ms_{10}, reorder_ms_{10};
	Atomic<uint32_t> held_{0};
	Atomic<uint64_t> deferred_{0}; /* packets defer() took, since the port was made */
	Atomic<bool> armed_{false}; /* some knob was set since the last clear() */

	SpinLock lock_; /* the two queues */
	Queue delayed_, reordered_;
	DelayedWork release_;
};

} // namespace weft::hca

#endif
