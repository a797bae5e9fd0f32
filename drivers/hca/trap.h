/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Traps a node's SMA sends to the SM (IBA 13.4.9, 14.2.5.1): a notice is
 * sent as a LID-routed SubnTrap(Notice) from the port it concerns (a CA
 * port; a switch's port 0) to that port's SM LID, and sent again every
 * second with the same TID until a TrapRepress with that TID reaches the
 * SMA, or trap_repeats times.  The switch's trap 128 keeps its own state
 * (switch_smi.cpp); it shares the packet building here.
 */
#ifndef WEFT_HCA_TRAP_H
#define WEFT_HCA_TRAP_H

#include <weft/iba/mad.h>
#include <weft/iba/smp_attrs.h>
#include <weft/work.h>

#include "fabric.h"

namespace weft::hca {

/* IBA 14.2.5.1, tables 148-150: the traps Weft's SMAs raise beside 128. */
namespace trap {
inline constexpr uint16_t link_integrity = 129, capability_mask = 144, bad_m_key = 256,
			  bad_p_key = 257, bad_q_key = 258;
inline constexpr uint8_t repeats = 8;
inline constexpr unsigned long interval_ms = 1000;
} // namespace trap

/*
 * A packet that failed its link's VCRC check arrived at @in: a local
 * physical error (any context but hard IRQ; not under in.node.mgmt_lock).
 */
void local_phy_error(Port &in);

/*
 * Trap 257 (@key a P_Key) or 258 (a Q_Key), IBA 14.2.5.1: packet @p, for
 * the GSI (QP1) of @to's node, failed that key's check.  Raised from @to,
 * the CA port it arrived at or a switch's port 0; any context but hard
 * IRQ, not under the node's mgmt_lock.
 */
void gsi_key_violation(Port &to, uint16_t number, const Packet &p, uint32_t key);

/* A fresh VL15 packet carrying @smp (unsealed: it travels in-host); atomic context. */
Result<Own<PacketBuf>> smp_packet(const uint8_t *smp, uint16_t dlid, uint16_t slid);

/*
 * A generic SubnTrap(Notice): TID, the port's M_Key (IBA 14.2.4: a trap
 * carries it), type, producer, number, issuer LID and @len bytes of
 * DataDetails.
 */
void fill_trap(iba::Smp &smp, uint32_t tid, uint64_t m_key, uint8_t type, uint32_t producer,
	       uint16_t number, uint16_t issuer_lid, const uint8_t *details, size_t len);

/* The traps one node has outstanding (a few at a time), and their repeats. */
class TrapSender {
public:
	explicit TrapSender(Node &node);
	WEFT_NOCOPY(TrapSender);

	/*
	 * Raise trap @number of @type from @port with its DataDetails (at most
	 * 54 bytes).  Under node.mgmt_lock (the _locked form) or not; any
	 * context but hard IRQ.  A trap equal to one still outstanding (same
	 * port, number, details) is not raised twice; with every slot taken
	 * the trap is dropped and counted.
	 */
	void raise(Port &port, uint8_t type, uint16_t number, const uint8_t *details, size_t len);
	void raise_locked(Port &port, uint8_t type, uint16_t number, const uint8_t *details, size_t len);
	/* A TrapRepress reached the SMA through @port (under node.mgmt_lock). */
	void repressed_locked(Port &port, uint64_t tid);
	/*
	 * Trap 144: @port's CapabilityMask changed (under node.mgmt_lock).
	 * IBA 14.2.5.1 table 150: LIDADDR, OtherLocalChanges 0, the new mask.
	 */
	void capability_changed_locked(Port &port);
	/*
	 * A TID for a notice of this node (under node.mgmt_lock): the switch's
	 * trap 128 takes its TIDs here too, so that a TrapRepress names one
	 * notice only.
	 */
	uint32_t new_tid_locked() { return ++next_tid_; }
	/* No more sends: the node is off the fabric, its ports about to go. */
	void stop() { work_.cancel_sync(); }
	/* Traps sent (each repeat counted), repressed, and dropped for want of a slot. */
	uint32_t sent() const { return sent_.load(Order::Relaxed); }
	uint32_t repressed() const { return repressed_.load(Order::Relaxed); }
	uint32_t dropped() const { return dropped_.load(Order::Relaxed); }

private:
	struct Slot {
		Port *port = nullptr; /* null: free */
		uint8_t type = 0, tries = 0;
		uint16_t number = 0;
		uint32_t tid = 0;
		uint64_t due_ms = 0; /* its next send: each notice repeats on its own clock */
		uint8_t details[54] = {};
	};
	static constexpr uint8_t nslots = 4;
	static void tick(DelayedWork &w);
	/*
	 * Send what is due from the slots; the ms until the next one is due,
	 * or -1 with none outstanding.
	 */
	long send_due();

	Node &node_;
	Slot slots_[nslots]; /* under node_.mgmt_lock */
	uint32_t next_tid_ = 0;
	Atomic<uint32_t> sent_{0}, repressed_{0}, dropped_{0};
	DelayedWork work_; /* last: cancelled before the slots go */
};

} // namespace weft::hca

#endif
