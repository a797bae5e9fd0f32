/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where an IPoIB datagram goes: one entry per destination GID, a unicast
 * port GID (its PathRecord, IBA 15.2.5.16, made into an address handle) or
 * a multicast GID (its MCMemberRecord, IBA 15.2.5.17, joined through the SA
 * and, when the stack listens to it, attached to the QP).  The QPN comes
 * with every packet (the neighbour's link-layer address), so entries are
 * per GID, as in RFC 4391 §9.1.1 one port GID answers for many IP
 * addresses.
 *
 * The table is a state machine with no verbs or SA calls in it, so that
 * KUnit can drive it (weft_ipoib_dest):
 *
 *   (none) --send--> Resolving --resolved--> Valid
 *                        |  ^                   |
 *                 failed v  | retry time passed  | flush (SM changed routes,
 *                      Failed                    v  port down): entry gone
 *
 * Valid and Failed entries nobody has sent to for a while are aged out
 * (take_idle), as in-tree reaps neighbours: the table's bound then limits
 * the destinations in use, not every one ever seen.  Multicast groups the
 * stack listens to and the broadcast group stay.
 *
 * While Resolving, packets wait on the entry, at most queue_max of them;
 * beyond that, and while Failed, they are dropped and counted by the
 * caller.  Every claim carries the table's generation: a flush bumps it,
 * so an answer to a query asked before the flush is never installed.
 *
 * Locking: the owner's (a BH spinlock: start_xmit uses it).  Entries are
 * allocated atomically; at most max_entries exist.
 */
#ifndef WEFT_IPOIB_DEST_H
#define WEFT_IPOIB_DEST_H

#include <weft/list.h>
#include <weft/verbs/verbs.h>

namespace weft::ipoib {

struct Pending {
	void *pkt;
	uint32_t qpn;
};

/* What resolving an entry produced (owned by the entry once installed). */
struct Resolved {
	verbs::Ah *ah = nullptr;
	void *membership = nullptr; /* multicast: the SA membership */
	uint16_t mlid = 0;
	bool attached = false;	    /* multicast: the QP is attached */
};

struct Dest {
	enum class State : uint8_t { Resolving, Valid, Failed };

	static constexpr size_t queue_max = 8;

	ListNode node;
	verbs::Gid gid;
	State state = State::Resolving;
	bool busy = false;	 /* a worker is resolving it now */
	bool member = false;	 /* multicast the stack listens to (ndo_set_rx_mode) */
	bool broadcast = false;	 /* the partition's broadcast group: never left by rx_mode */
	Resolved res;
	uint64_t retry_at = 0;	 /* Failed: ms when a send may try again */
	uint64_t used_at = 0;	 /* ms of the last send to it */
	uint32_t nqueued = 0;
	Pending queue[queue_max];

	bool multicast() const { return gid.raw[0] == 0xff; }
};

using DestList = List<Dest, &Dest::node>;

class DestTable {
public:
	static constexpr size_t max_entries = 1024;
	static constexpr uint64_t retry_ms = 1000;

	DestTable() = default;
	WEFT_NOCOPY(DestTable);
	/* The owner must have taken everything out (take_all) first. */
	~DestTable() = default;

	enum class Verdict : uint8_t {
		Send,	     /* Valid: send with ah now */
		Queued,	     /* waits for resolution */
		Unreachable, /* Failed and not yet due for a retry, or no entry to be had */
		QueueFull,   /* already queue_max packets waiting */
	};
	struct Decision {
		Verdict verdict;
		verbs::Ah *ah = nullptr;
		bool kick = false;
	};
	/* A packet for @gid (QPN @qpn) at time @now_ms; kick: a worker must be started. */
	Decision send(const verbs::Gid &gid, void *pkt, uint32_t qpn, uint64_t now_ms);

	/*
	 * The next entry to resolve (Resolving, not busy); marks it busy.
	 * false when there is none.
	 */
	struct Claim {
		verbs::Gid gid;
		uint64_t gen;
		bool member;
	};
	bool claim(Claim &out);

	/*
	 * The answer for a claim.  @res null: the resolution failed (the entry
	 * goes Failed, its packets into @out).  Otherwise it is installed and
	 * the waiting packets are moved to @out to be sent with it.  Returns
	 * false if the claim is stale (flushed meanwhile, entry gone): the
	 * caller then still owns @res and has nothing in @out.
	 */
	bool complete(const Claim &c, const Resolved *res, uint64_t now_ms, Pending *out, uint32_t &nout);

	/*
	 * Multicast groups the stack listens to (from the netdev's list): they
	 * become members, new ones are added to be joined.  Members no longer
	 * listed move to @gone to be detached and left (by the caller, out of
	 * the lock).  Returns how many entries need a worker.
	 */
	size_t set_members(const verbs::Gid *mgids, size_t n, DestList &gone);

	/* Install an entry resolved by the caller (the broadcast group). */
	Result<void> install(const verbs::Gid &gid, const Resolved &res, bool broadcast);

	/* Everything out (flush, teardown); the generation moves on. */
	void take_all(DestList &out);

	/*
	 * Entries not sent to for @idle_ms by @now_ms, settled (Valid or
	 * Failed, no worker, nothing waiting) and not listened to, moved to
	 * @out to be released by the caller; how many.
	 */
	size_t take_idle(uint64_t now_ms, uint64_t idle_ms, DestList &out);

	Dest *find(const verbs::Gid &gid);
	size_t size() const { return count_; }
	uint64_t generation() const { return gen_; }

private:
	Dest *add(const verbs::Gid &gid);

	DestList list_;
	size_t count_ = 0;
	uint64_t gen_ = 1;
};

} // namespace weft::ipoib

#endif
