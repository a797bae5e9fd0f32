/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between weft_ipoib's kernel-side files (shim_netdev.c, shim_link.c,
 * shim_sysfs.c, shim_mode.c, shim_pages.c, shim_icmp.c): the netdev's private area and what they
 * share.  C only.
 */
#ifndef WEFT_IPOIB_SHIM_PRIV_H
#define WEFT_IPOIB_SHIM_PRIV_H

#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/checksum.h>
#include <net/rtnetlink.h>

#include "ipoib_kapi.h"

/*
 * Receive pages handed up the stack, oldest first, each with a reference
 * of ours: one the stack has let go of (ours is the only reference left)
 * is used again without the page allocator (and its zeroing of every
 * page, Debian's init_on_alloc).  Connected mode puts a page in each
 * receive fragment; datagram mode carves its buffers from one page at a
 * time (@carve), a reference per buffer, in a cache of its own.
 * A datagram cache holds the pages of every posted buffer as well, so it
 * is sized from the receive ring (weft_ipoib_ud_cache_size): a ring that
 * outgrew it would push out each page before it came round again.
 * shim_pages.c.
 */
#define WEFT_IPOIB_PAGE_CACHE 256

struct weft_ipoib_page_cache {
	spinlock_t lock;
	unsigned int head, tail;
	unsigned int cap;	/* entries of @page, a power of two */
	u64 reused; /* ethtool -S rx_pages_reused, cm_rx_pages_reused */
	u64 fresh;  /* ethtool -S rx_pages_fresh, cm_rx_pages_fresh: newly allocated */
	struct page *carve;	/* with the cache's reference; NULL: none yet */
	unsigned int carve_off; /* its next free byte */
	struct page **page;
};

struct weft_ipoib_priv {
	void *ctx;
	struct napi_struct napi;
	/*
	 * One cache per mode's buffers: a page is taken again only from the
	 * front, and connected mode's would wait behind datagram pages that
	 * an idle UD ring holds for as long as it is idle.
	 */
	struct weft_ipoib_page_cache pages, ud_pages;
};

static inline void *weft_ipoib_ctx_of(const struct net_device *dev)
{
	return ((struct weft_ipoib_priv *)netdev_priv(dev))->ctx;
}

static inline struct napi_struct *weft_ipoib_napi_of(struct net_device *dev)
{
	return &((struct weft_ipoib_priv *)netdev_priv(dev))->napi;
}

/*
 * A received packet's link header, with @s->data at its encapsulation
 * header: a zeroed pseudo header goes in front, so that the MAC header is
 * hard_header_len bytes long as on transmit.  GRO compares that many
 * bytes from the MAC header to tell flows apart; with the 4-byte header
 * alone it would compare the IP header too (its id and checksum differ in
 * every packet) and never merge anything.
 */
static inline void weft_ipoib_rx_link_header(struct sk_buff *s)
{
	memset(skb_push(s, WEFT_IPOIB_PSEUDO_LEN), 0, WEFT_IPOIB_PSEUDO_LEN);
	skb_reset_mac_header(s);
	skb_pull(s, WEFT_IPOIB_PSEUDO_LEN + WEFT_IPOIB_ENCAP_LEN);
	skb_reset_network_header(s);
}

/*
 * A received packet (link header set by weft_ipoib_rx_link_header, @s->dev
 * set) goes up CHECKSUM_COMPLETE: the HCA's sum of the message less the
 * encapsulation header's 4 bytes (an even count: no byte rotation).
 */
static inline void weft_ipoib_rx_csum_set(struct sk_buff *s, struct weft_ipoib_rx_csum csum)
{
	const u8 *encap = skb_mac_header(s) + WEFT_IPOIB_PSEUDO_LEN;

	if (!csum.valid || !(s->dev->features & NETIF_F_RXCSUM))
		return;
	s->csum = csum_sub((__force __wsum)csum.sum, csum_partial(encap, WEFT_IPOIB_ENCAP_LEN, 0));
	s->ip_summed = CHECKSUM_COMPLETE;
}

/* module.c: the recv_queue_size parameter (every interface's UD receive ring). */
extern unsigned int weft_ipoib_recv_queue_size;

/* shim_netdev.c */
void weft_ipoib_setup(struct net_device *dev);
/*
 * Everything weft_ipoib_netdev_create does between allocation and
 * registration; on success the page caches are the netdev's, for
 * weft_ipoib_priv_caches_destroy once it is unregistered.
 */
int weft_ipoib_netdev_prepare(struct net_device *dev, void *ctx, uint8_t port, const uint8_t *addr,
			       const uint8_t *bcast, unsigned int mtu, unsigned int tx_queue_len);
bool weft_ipoib_netdev_is_ours(const struct net_device *dev);

/*
 * shim_pages.c.  Both caches of a netdev, the datagram one sized for @ring
 * receive buffers (weft_ipoib_ud_cache_size); destroy puts back every
 * page they hold and frees them (the device's last step).
 */
int weft_ipoib_priv_caches_init(struct weft_ipoib_priv *p, unsigned int ring);
void weft_ipoib_priv_caches_destroy(struct weft_ipoib_priv *p);
/* Pages the cache holds a reference to (ethtool -S rx_pages_cached). */
unsigned int weft_ipoib_page_cache_held(struct weft_ipoib_page_cache *pc);
/* debugfs weft_ipoib/pages_cached: the pages every cache of the module holds. */
void weft_ipoib_debugfs_init(void);
void weft_ipoib_debugfs_exit(void);
/* A datagram receive buffer of @len bytes carved from a cached page; NULL if none fits or no memory. */
void *weft_ipoib_page_cache_carve(struct weft_ipoib_page_cache *pc, unsigned int len);

/* shim_link.c */
extern struct rtnl_link_ops weft_ipoib_link_ops;
int weft_ipoib_link_register(void);
void weft_ipoib_link_unregister(void);

/* shim_sysfs.c: a port interface's files, and a child's. */
extern const struct attribute_group weft_ipoib_port_attrs, weft_ipoib_child_attrs;

#endif
