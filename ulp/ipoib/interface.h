/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One IPoIB interface: a (CA port, P_Key) pair with its netdev (RFC 4391,
 * 4392).  Today every port gets one interface in datagram mode for the
 * default partition; P_Key child interfaces are more Interfaces on the
 * same port, and connected mode (RFC 4755) a second transport beside the
 * UD one (the Dest table then also holds per-peer connections).
 *
 * Ownership: the Client (client.cpp) owns interfaces; an interface owns
 * its verbs context (PD, DMA MR, one CQ for sends and receives, the UD
 * QP), its netdev, the destination table (dest.h), the SA memberships and
 * address handles of its entries, and the socket buffers of its rings.
 *
 * Work: sync_work (carrier, broadcast join, multicast membership, flushes
 * on port events and on open/stop) and resolve_work (path queries and
 * joins for Resolving entries).  Both block on the SA; neither is ever
 * waited for with a lock held.  lock_ (BH) guards the table.
 *
 * Teardown (destroy()): no new work (dying_), the netdev unregistered
 * (no more xmit or poll), work cancelled, every entry released (detach,
 * AH, leave), the QP shut down (no more completions), ring buffers freed,
 * verbs objects destroyed, then the netdev freed.
 */
#ifndef WEFT_IPOIB_INTERFACE_H
#define WEFT_IPOIB_INTERFACE_H

#include <weft/atomic.h>
#include <weft/iba/sa.h>
#include <weft/verbs/verbs.h>
#include <weft/work.h>

#include "addr.h"
#include "dest.h"
#include "child_kapi.h"
#include "ipoib_kapi.h"

namespace weft::ipoib {

class Cm;

struct Params {
	uint32_t send_queue_size;
	uint32_t recv_queue_size;
};

class Interface {
public:
	/* @child: a P_Key child's netdev (child_kapi.h, rtnl held); none for a port's own interface. */
	static Result<Interface *> create(verbs::Device &dev, uint8_t port, uint16_t pkey, const Params &p,
					  weft_ipoib_child_spec *child = nullptr);
	/* Two-phase teardown, then delete. */
	void destroy();

	verbs::Device &device() const { return dev_; }
	uint8_t port() const { return port_; }
	/* The completion vector of this port's CQs (NAPI runs on its CPU). */
	int comp_vector() const;
	/* A port event (IBA 11.6.3.3) for this interface's port (process context). */
	void port_event(verbs::EventType t);

	/* Callbacks from the netdev (ipoib_kapi.h). */
	int open();
	void stop();
	int xmit(void *skb, const HwAddr &dst);
	int poll(int budget);
	void rx_mode_changed();
	void get_stats(weft_ipoib_stats &out) const;
	void link_info(weft_ipoib_link &out);
	int set_coalesce(uint32_t usecs, uint32_t frames);
	void get_coalesce(uint32_t &usecs, uint32_t &frames) const;

	/* Connected mode (cm.h), or nullptr when it is not offered. */
	Cm *cm() const { return cm_; }
	/* The datagram path of xmit() (transmit lock held). */
	int xmit_ud(void *skb, const HwAddr &dst);
	/* The UD MTU: the broadcast group's (RFC 4391 §5), before a join the default's. */
	uint32_t ud_mtu_now() const;

	ListNode node;

	/* P_Key children and partitions (partition.cpp; the list is client.cpp's). */
	uint16_t pkey() const { return pkey_; }
	bool is_child() const { return child_; }
	bool legacy() const { return legacy_; }
	weft_ipoib_netdev *netdev() const { return nd_; }
	void info(weft_ipoib_info &out) const;
	void set_umcast(bool on);
	/* Teardown by unregistration under rtnl: unlink() first, then release_unlinked() without it. */
	void unlink();
	void release_unlinked();
	void *owner = nullptr; /* client.cpp's Hca */
	bool listed = false;   /* on the Hca's list (under its mutex) */

private:
	friend class Cm;
	Interface(verbs::Device &dev, uint8_t port, uint16_t pkey, const Params &p);
	~Interface();
	Result<void> setup_verbs();
	void start_cm(HwAddr &addr);
	void teardown_verbs();
	void release_all();

	/* partition.cpp: the P_Key index (sync_work) and a carrier frozen once dying. */
	Result<uint16_t> lookup_pkey_index() const;
	bool pkey_ready();
	void carrier(bool on);

	/* control.cpp: the slow path. */
	static void sync_work(DelayedWork &w);
	static void resolve_work(Work &w);
	void sync();
	void flush();
	void refresh_gid();
	void age_dests();
	static uint64_t dest_idle_ms();
	Result<void> join_broadcast();
	Result<void> qp_ready(uint32_t qkey);
	void sync_members();
	size_t drop_joined_elsewhere(verbs::Gid *mgids, size_t n);
	Result<Resolved> resolve(const DestTable::Claim &c);
	Result<Resolved> join(const verbs::Gid &mgid, bool attach, iba::McMemberRecord *out);
	void release(Dest &d);
	void release(Resolved &r, const verbs::Gid &gid);
	void send_pending(Pending *p, uint32_t n, verbs::Ah *ah);
	void drop_pending(Pending *p, uint32_t n);

	/* datapath.cpp: the fast path. */
	static void cq_event(verbs::Cq &cq, void *arg);
	void post(void *skb, verbs::Ah *ah, uint32_t qpn);
	/*
	 * The send SGEs of @skb (NETIF_F_SG) from byte @skip on: how many, 0
	 * if it could not be made linear.
	 */
	static constexpr uint32_t tx_sge = 8;
	uint32_t gather(void *skb, verbs::Sge (&out)[tx_sge], uint32_t skip = 0);
	int tx_lso(void *skb, verbs::SendWr &wr);
	/* Checksum offload: @wr asks the HCA for the skb's checksum; false to drop it. */
	bool tx_csum(void *skb, verbs::SendWr &wr);
	static weft_ipoib_rx_csum rx_csum(const verbs::Wc &wc);
	Result<void> post_recv(uint32_t idx);
	void handle_rx(const verbs::Wc &wc);
	void handle_tx(const verbs::Wc &wc);
	void free_rings();
	uint64_t now_ms() const;
	/* A counter of weft_ipoib_stats (ipoib_kapi.h), named by member: count(&weft_ipoib_stats::tx_dropped). */
	void count(uint64_t weft_ipoib_stats::*c, uint64_t n = 1) { stats_.at(c).fetch_add(n, Order::Relaxed); }
	/* The gauges (cm_connections, cm_passive) go down too. */
	void uncount(uint64_t weft_ipoib_stats::*c) { stats_.at(c).fetch_sub(1, Order::Relaxed); }

	verbs::Device &dev_;
	const uint8_t port_;
	const uint16_t pkey_;
	/* sync_work stores it (partition.cpp), the fast path reads it in every send. */
	Atomic<uint16_t> pkey_index_{0};
	const Params params_;
	bool child_ = false;
	bool legacy_ = false;	    /* made by create_child */
	Atomic<bool> umcast_{false}; /* IFLA_IPOIB_UMCAST: leave groups another consumer joined (sync_members) */
	bool pkey_missing_ = false; /* sync_work only */
	weft_ipoib_netdev *parent_nd_ = nullptr;

	verbs::Context *ctx_ = nullptr;
	verbs::Pd *pd_ = nullptr;
	verbs::Mr *mr_ = nullptr;
	verbs::Cq *cq_ = nullptr;
	verbs::Qp *qp_ = nullptr;
	uint16_t coal_usecs_ = 0, coal_frames_ = 0; /* ethtool -C (rtnl) */
	weft_ipoib_netdev *nd_ = nullptr;

	struct TxSlot {
		void *skb;
		verbs::Ah *ah;
		uint32_t len;
	};
	struct RxSlot {
		void *skb;
		uint8_t *data;
	};
	Array<TxSlot> tx_;
	Array<RxSlot> rx_;
	/* Each written by one side, read by the other to see how full the ring is. */
	Atomic<uint32_t> tx_head_{0}; /* written under the transmit lock */
	Atomic<uint32_t> tx_tail_{0}; /* written by NAPI */
	uint32_t rx_buf_size_ = 0;

	SpinLock lock_;
	DestTable dests_; /* under lock_ */

	/* Written by the slow path, read by the fast path. */
	Atomic<bool> qp_rts_{false};
	Atomic<uint32_t> qkey_{0};
	Atomic<uint16_t> lid_{0};
	Atomic<bool> admin_up_{false};
	Atomic<bool> dying_{false};
	Atomic<bool> flush_pending_{false};

	/* sync_work only (and create). */
	bool bcast_joined_ = false;
	verbs::Gid gid_{}; /* the port GID in dev_addr */
	bool mtu_set_ = false;
	/* The broadcast group's record, for creating other groups like it (under lock_). */
	iba::McMemberRecord bcast_rec_{};

	/*
	 * weft_ipoib_stats as Atomic counters: bumped from NAPI, xmit and
	 * work at once, copied out by get_stats() without a lock.  The C
	 * struct stays plain (the shim reads its copy); this mirrors it.
	 */
	class Stats {
	public:
		Atomic<uint64_t> &at(uint64_t weft_ipoib_stats::*c)
		{
			/* The member's index: its offset in the C struct, in counters (all are uint64_t). */
			const auto *layout = reinterpret_cast<const weft_ipoib_stats *>(v_);
			return v_[&(layout->*c) - reinterpret_cast<const uint64_t *>(layout)];
		}
		void read(weft_ipoib_stats &out) const;

	private:
		static constexpr size_t n = sizeof(weft_ipoib_stats) / sizeof(uint64_t);
		static_assert(sizeof(weft_ipoib_stats) == n * sizeof(uint64_t) && sizeof(Atomic<uint64_t>) == sizeof(uint64_t),
			      "weft_ipoib_stats holds uint64_t counters only");
		Atomic<uint64_t> v_[n];
	};
	Stats stats_;
	Cm *cm_ = nullptr;
	Atomic<uint32_t> mcast_mtu_{0}; /* the broadcast group's UD MTU */
	/* The SA takes SendOnlyFullMember joins (asked at each broadcast join). */
	Atomic<bool> sa_send_only_full_{false};
	DelayedWork sync_work_;
	Work resolve_work_;
};

} // namespace weft::ipoib

#endif
