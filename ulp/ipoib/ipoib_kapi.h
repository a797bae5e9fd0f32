/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between weft_ipoib's C++ (interface.cpp, datapath.cpp) and its kernel side
 * (shim_netdev.c): one net_device per IPoIB interface, its NAPI context,
 * header_ops, ethtool, statistics and socket buffers.
 *
 * The shim owns every kernel object and makes no protocol decision; the
 * C++ interface is reached through the weft_ipoib_* callbacks declared at
 * the end, with @ctx the pointer given at creation.  Context of each call
 * is stated; none is made with a shim lock held except where said.
 */
#ifndef WEFT_IPOIB_KAPI_H
#define WEFT_IPOIB_KAPI_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

#define WEFT_IPOIB_ALEN 20	  /* RFC 4391 §9.1.1 link-layer address */
#define WEFT_IPOIB_PSEUDO_LEN 20 /* destination pushed by header_ops->create */
#define WEFT_IPOIB_ENCAP_LEN 4	  /* RFC 4391 §6 */

/* Kinds of received packets (skb->pkt_type). */
#define WEFT_IPOIB_RX_HOST 0
#define WEFT_IPOIB_RX_BROADCAST 1
#define WEFT_IPOIB_RX_MULTICAST 2

struct weft_ipoib_netdev;

/* Counters, in the order ethtool -S shows them (names in shim_netdev.c). */
struct weft_ipoib_stats {
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
	uint64_t rx_multicast, tx_multicast;
	uint64_t rx_dropped, tx_dropped, rx_errors, tx_errors;
	uint64_t rx_own_dropped;     /* our own multicast coming back */
	uint64_t rx_bad_header;	     /* too short or reserved bits set */
	uint64_t tx_no_dest;	     /* dropped: destination could not be resolved */
	uint64_t tx_queue_full;	     /* dropped: too many waiting for resolution */
	uint64_t path_queries, path_failures;
	uint64_t dests_aged; /* forgotten after dest_idle_secs without a send */
	uint64_t mcast_joins, mcast_failures;
	uint64_t mcast_send_only; /* of mcast_joins, those asked as SendOnlyFullMember */
	uint64_t mcast_umcast_skipped; /* groups listened to but left to another consumer (umcast) */
	/* Connected mode (RFC 4755). */
	uint64_t cm_connections;	     /* sending connections up now */
	uint64_t cm_connects, cm_accepts; /* established: ours, the peers' */
	uint64_t cm_failures;		     /* ours refused, unanswered or broken */
	uint64_t cm_aged;		     /* ours released after dest_idle_secs unused */
	uint64_t cm_passive;		     /* the peers' connections up now */
	uint64_t cm_passive_aged;	     /* theirs released: nothing received for 2 x dest_idle_secs */
	uint64_t cm_tx_packets, cm_rx_packets;
	uint64_t cm_too_big; /* dropped with ICMP: too big for a datagram-only path */
	uint64_t tx_gathered; /* sent as more than one piece (NETIF_F_SG) */
	uint64_t tx_csum_offload;    /* sent with the HCA inserting the checksum */
	uint64_t tx_lso;	     /* sent with the HCA segmenting (NETIF_F_TSO) */
	uint64_t rx_pages_reused;    /* datagram receive pages used again (shim_pages.c) */
	uint64_t cm_rx_pages_reused; /* connected-mode receive pages used again */
	uint64_t rx_pages_fresh;     /* datagram receive pages newly allocated (and zeroed) */
	uint64_t cm_rx_pages_fresh;  /* connected-mode ones */
	uint64_t rx_pages_cached;    /* pages both caches hold now */
};

struct weft_ipoib_link {
	uint32_t speed_mbps; /* 0: unknown (port not active) */
	char ibdev[20];
	uint8_t port;
	uint64_t fw_ver;
};

/*
 * Allocate and register the netdev of an interface: named "ib%d" by the
 * kernel, ARPHRD_INFINIBAND, @addr and @bcast as its link-layer and
 * broadcast addresses, dev_id and dev_port from @port, NAPI with weight 64,
 * carrier off.  Process context, rtnl not held.  NULL and *err on failure.
 */
struct weft_ipoib_netdev *weft_ipoib_netdev_create(void *ctx, uint8_t port, const uint8_t *addr,
						   const uint8_t *bcast, unsigned int mtu,
						   unsigned int tx_queue_len, int *err);
/*
 * Unregister (closing it: weft_ipoib_stop runs if it was up): no callback
 * runs after it returns, but the NAPI schedule and queue calls stay valid
 * until free.  Process context, rtnl not held.
 */
void weft_ipoib_netdev_unregister(struct weft_ipoib_netdev *nd);
void weft_ipoib_netdev_free(struct weft_ipoib_netdev *nd);
const char *weft_ipoib_name(struct weft_ipoib_netdev *nd);

/*
 * The largest MTU the interface may take, and the MTU itself when it is
 * above it or @set (under rtnl, which this takes; a no-op once the
 * device is being unregistered).  Process context.
 */
void weft_ipoib_set_mtu(struct weft_ipoib_netdev *nd, unsigned int max_mtu, bool set);
void weft_ipoib_carrier(struct weft_ipoib_netdev *nd, bool on);
/* The port GID in dev_addr (its bytes 4-19), under the address lock, as in-tree: no notifier. */
void weft_ipoib_set_dev_gid(struct weft_ipoib_netdev *nd, const uint8_t gid[16]);
bool weft_ipoib_has_carrier(struct weft_ipoib_netdev *nd);

/* NAPI: schedule from any context; complete from the poll callback. */
void weft_ipoib_napi_schedule(struct weft_ipoib_netdev *nd);
/* napi_complete_done: false if the poll must go on (busy polling). */
bool weft_ipoib_napi_complete(struct weft_ipoib_netdev *nd, int done);

/* The transmit lock (netif_tx_lock_bh), for sends outside start_xmit. */
void weft_ipoib_tx_lock(struct weft_ipoib_netdev *nd);
void weft_ipoib_tx_unlock(struct weft_ipoib_netdev *nd);
void weft_ipoib_stop_queue(struct weft_ipoib_netdev *nd);
void weft_ipoib_wake_queue(struct weft_ipoib_netdev *nd);
bool weft_ipoib_queue_stopped(struct weft_ipoib_netdev *nd);

/* Socket buffers: the linear part and the whole length. */
uint8_t *weft_ipoib_skb_data(void *skb, uint32_t *len);

/* A piece of a packet in kernel memory: a send's gather list, a receive buffer's pages. */
struct weft_ipoib_sg {
	uint8_t *addr;
	uint32_t len;
};
/*
 * A packet to send as at most @max pieces (the linear part, then the page
 * fragments: NETIF_F_SG); one with more is made linear first (GFP_ATOMIC).
 * The number of pieces, or -ENOMEM.  Any context.
 */
int weft_ipoib_skb_gather(void *skb, struct weft_ipoib_sg *segs, int max);
/*
 * Checksum offload (NETIF_F_HW_CSUM) for a packet about to be sent: 1 with
 * the checksum's start and field offsets from the packet's first byte
 * (the HCA inserts it), 0 if none is needed or it was just computed here
 * (odd offsets, which the HCA does not take), -ENOMEM if that failed.
 */
int weft_ipoib_skb_csum(void *skb, uint16_t *start, uint16_t *offset);
/*
 * Segmentation offload (NETIF_F_TSO) for a packet about to be sent: 1
 * with the length of its headers (encapsulation, IPv4, TCP, made linear
 * here), the segment size and the IPv4 header's offset, for the HCA to
 * cut it up (verbs WrOpcode::Lso); 0 for a packet to send whole; -ENOMEM
 * (headers not made linear) or -EINVAL (a GSO kind not offered): drop it.
 */
int weft_ipoib_skb_lso(void *skb, uint16_t *hlen, uint16_t *mss, uint16_t *ip_off);
/*
 * Every datagram the packet goes out as (itself, or each segment of a
 * GSO packet) carries at most @mtu bytes after the encapsulation header.
 */
bool weft_ipoib_skb_fits(void *skb, uint32_t mtu);
/* Free: @consumed for sent packets, else counted by the kernel as a drop. */
void weft_ipoib_skb_free(void *skb, bool consumed);
/*
 * A receive buffer of @size bytes (atomic: carved from a reused page, or
 * from the page-fragment cache); NULL if none.
 */
void *weft_ipoib_rx_alloc(struct weft_ipoib_netdev *nd, uint32_t size, uint8_t **data);
/*
 * What the HCA summed of a received message (verbs wc_flag::csum): the
 * RFC 1071 sum (__wsum) of its bytes from the encapsulation header on.
 * With NETIF_F_RXCSUM on, the packet goes up CHECKSUM_COMPLETE.
 */
struct weft_ipoib_rx_csum {
	bool valid;
	uint32_t sum;
};
/*
 * Hand a received datagram to the stack (from the poll callback): @len
 * bytes were written, the first @skip (GRH and encapsulation header) are
 * not the packet; @proto the EtherType (host order), @kind WEFT_IPOIB_RX_*.
 */
void weft_ipoib_rx_deliver(struct weft_ipoib_netdev *nd, void *skb, uint32_t len, uint32_t skip,
			   uint16_t proto, int kind, struct weft_ipoib_rx_csum csum);

/*
 * Call @fn for every multicast address of the device (netif_addr_lock_bh
 * held: @fn must not sleep).  Process context.
 */
void weft_ipoib_mc_list(struct weft_ipoib_netdev *nd, void (*fn)(void *arg, const uint8_t *addr),
			void *arg);

/* --- implemented in C++ (interface.cpp, datapath.cpp) ------------------------ */

/* ndo_open/ndo_stop (rtnl held, process context). */
int weft_ipoib_open(void *ctx);
void weft_ipoib_stop(void *ctx);
/*
 * ndo_start_xmit (BH, transmit lock held), with the pseudo-header taken
 * off: @daddr the destination, the skb starting with the encapsulation
 * header.  0: the skb was taken (sent, queued or dropped); 1: busy.
 */
int weft_ipoib_xmit(void *ctx, void *skb, const uint8_t *daddr);
/* NAPI poll (softirq): work done, at most @budget. */
int weft_ipoib_poll(void *ctx, int budget);
/* The HCA inserts and sums checksums (verbs DeviceAttr::csum_offload). */
bool weft_ipoib_csum_offload(void *ctx);
/* The HCA cuts TCP/IPv4 sends into segments (verbs DeviceAttr::max_lso). */
bool weft_ipoib_lso_offload(void *ctx);
/* ndo_set_rx_mode (netif_addr_lock_bh held: must not sleep). */
void weft_ipoib_rx_mode(void *ctx);
void weft_ipoib_get_stats(void *ctx, struct weft_ipoib_stats *out);
/* ethtool (rtnl held, process context). */
void weft_ipoib_link_info(void *ctx, struct weft_ipoib_link *out);
/*
 * ethtool -c / -C: receive event moderation of the interface's CQs
 * (rx-usecs, rx-frames; 0 or -EINVAL past 0xffff).
 */
void weft_ipoib_get_coalesce(void *ctx, uint32_t *usecs, uint32_t *frames);
int weft_ipoib_set_coalesce(void *ctx, uint32_t usecs, uint32_t frames);
/*
 * The transport (rtnl held, process context): connected mode (RFC 4755)
 * or datagram; 0 or a negative errno.
 */
int weft_ipoib_set_mode(void *ctx, bool connected);
bool weft_ipoib_connected(void *ctx);

/* --- connected mode (RFC 4755; shim_mode.c, shim_pages.c, shim_icmp.c) ---------------------------------- */

/*
 * A connected-mode receive buffer: a linear head of WEFT_IPOIB_CM_HEAD
 * bytes, then WEFT_IPOIB_CM_FRAGS page fragments of WEFT_IPOIB_CM_FRAG
 * bytes, together more than the 65524 bytes of the largest message.
 */
#define WEFT_IPOIB_CM_HEAD 2048
#define WEFT_IPOIB_CM_FRAG 16384
#define WEFT_IPOIB_CM_FRAGS 4
#define WEFT_IPOIB_CM_SG (1 + WEFT_IPOIB_CM_FRAGS)

/* The "mode" sysfs file (after register; removed with the device). */
int weft_ipoib_mode_attr_add(struct weft_ipoib_netdev *nd);
/* Module exit: wait for the deferred ICMP work (shim_icmp.c). */
void weft_ipoib_shim_icmp_exit(void);
/* The MTU and its upper limit, with rtnl held by the caller (also before register). */
void weft_ipoib_set_mtu_rtnl(struct weft_ipoib_netdev *nd, unsigned int max_mtu, unsigned int mtu);
/* The mode changed (rtnl held): offloads that depend on it are looked at again. */
void weft_ipoib_update_features_rtnl(struct weft_ipoib_netdev *nd);
unsigned int weft_ipoib_mtu(struct weft_ipoib_netdev *nd);
/*
 * weft_ipoib_set_mtu() for a new UD MTU, unless the interface is in
 * connected mode (then its MTU is not the UD one).  Takes rtnl.
 */
void weft_ipoib_set_ud_mtu(struct weft_ipoib_netdev *nd, unsigned int ud_mtu, bool set);
/* A receive buffer as above, its pieces in @sg; NULL if no memory. */
void *weft_ipoib_cm_rx_alloc(struct weft_ipoib_netdev *nd, bool can_sleep,
			     struct weft_ipoib_sg sg[WEFT_IPOIB_CM_SG]);
/*
 * Hand up a received message of @len bytes (encapsulation header
 * included, @len > WEFT_IPOIB_CM_HEAD) from the poll callback; the
 * fragments it did not use are freed.
 */
void weft_ipoib_cm_rx_deliver(struct weft_ipoib_netdev *nd, void *skb, uint32_t len, uint16_t proto,
			      struct weft_ipoib_rx_csum csum);
/*
 * Delivered pages are kept (with a reference) to be reused once the
 * stack has let go of them; this puts them back (after the last delivery).
 */
void weft_ipoib_cm_pages_drain(struct weft_ipoib_netdev *nd);
/*
 * @skb (starting with the encapsulation header) is larger than @mtu allows
 * on its way: it is dropped and its sender told, ICMP "fragmentation
 * needed" (IPv4) or "packet too big" (IPv6), from a work item.  Any context.
 */
void weft_ipoib_too_big(struct weft_ipoib_netdev *nd, void *skb, unsigned int mtu);

/*
 * Implemented in C++ (cm.cpp).  Both with rtnl held (sysfs takes it,
 * rtnl_link_ops already hold it), process context.  set_mode: 0, or
 * -EINVAL when the interface cannot do connected mode.  Connected mode
 * sets the MTU to 65520; datagram mode clamps it to the UD MTU.
 */
int weft_ipoib_set_mode(void *ctx, bool connected);
bool weft_ipoib_connected(void *ctx);

WEFT_C_END

#endif
