// SPDX-License-Identifier: GPL-2.0
/*
 * The net_device side of an IPoIB interface (ipoib_kapi.h): allocation and
 * registration, netdev_ops, header_ops, NAPI, ethtool and socket buffers.
 * Thin: what to send where, what a received datagram is and every counter
 * live in C++ (interface.cpp, datapath.cpp).  Values and behaviour the
 * stack relies on (ARPHRD_INFINIBAND, a 20-byte address, the 24 bytes of
 * hard header) follow RFC 4391 and what the kernel's own IB code expects.
 */
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/if_arp.h>
#include <linux/if_infiniband.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/stddef.h>
#include <linux/tcp.h>
#include <net/checksum.h>

#include "ipoib_kapi.h"
#include "shim_priv.h"

#define WEFT_IPOIB_HARD_LEN (WEFT_IPOIB_PSEUDO_LEN + WEFT_IPOIB_ENCAP_LEN)

static_assert(WEFT_IPOIB_ALEN == INFINIBAND_ALEN);

static struct weft_ipoib_priv *priv_of(const struct net_device *dev)
{
	return netdev_priv(dev);
}

static struct net_device *to_dev(struct weft_ipoib_netdev *nd)
{
	return (struct net_device *)nd;
}

/* --- header_ops -------------------------------------------------------------- */

/*
 * The encapsulation header (RFC 4391 §6), then the destination in front of
 * it for start_xmit to take off: the neighbour code hands over a header,
 * never an address.
 */
static int weft_ipoib_hard_header(struct sk_buff *skb, struct net_device *dev, unsigned short type,
				  const void *daddr, const void *saddr, unsigned int len)
{
	__be16 *hdr = skb_push(skb, WEFT_IPOIB_ENCAP_LEN);

	hdr[0] = htons(type);
	hdr[1] = 0;
	memcpy(skb_push(skb, WEFT_IPOIB_PSEUDO_LEN), daddr ? daddr : dev->broadcast,
	       WEFT_IPOIB_PSEUDO_LEN);
	return WEFT_IPOIB_HARD_LEN;
}

static const struct header_ops weft_ipoib_header_ops = {
	.create = weft_ipoib_hard_header,
};

/* --- netdev_ops -------------------------------------------------------------- */

static int weft_ipoib_ndo_open(struct net_device *dev)
{
	struct weft_ipoib_priv *p = priv_of(dev);
	int ret = weft_ipoib_open(p->ctx);

	if (ret)
		return ret;
	napi_enable(&p->napi);
	netif_start_queue(dev);
	/* Completions that came while it was down. */
	napi_schedule(&p->napi);
	return 0;
}

static int weft_ipoib_ndo_stop(struct net_device *dev)
{
	struct weft_ipoib_priv *p = priv_of(dev);

	netif_stop_queue(dev);
	napi_disable(&p->napi);
	weft_ipoib_stop(p->ctx);
	return 0;
}

static netdev_tx_t weft_ipoib_ndo_xmit(struct sk_buff *skb, struct net_device *dev)
{
	u8 daddr[WEFT_IPOIB_PSEUDO_LEN];

	/* The pseudo-header and encapsulation header in the linear part; the rest may be paged (SG). */
	if (skb->len < WEFT_IPOIB_HARD_LEN || !pskb_may_pull(skb, WEFT_IPOIB_HARD_LEN)) {
		dev->stats.tx_dropped++;
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	memcpy(daddr, skb->data, WEFT_IPOIB_PSEUDO_LEN);
	skb_pull(skb, WEFT_IPOIB_PSEUDO_LEN);
	if (weft_ipoib_xmit(priv_of(dev)->ctx, skb, daddr)) {
		skb_push(skb, WEFT_IPOIB_PSEUDO_LEN);
		return NETDEV_TX_BUSY;
	}
	return NETDEV_TX_OK;
}

static void weft_ipoib_ndo_set_rx_mode(struct net_device *dev)
{
	weft_ipoib_rx_mode(priv_of(dev)->ctx);
}

static void weft_ipoib_ndo_get_stats64(struct net_device *dev, struct rtnl_link_stats64 *s)
{
	struct weft_ipoib_stats st = {};

	weft_ipoib_get_stats(priv_of(dev)->ctx, &st);
	s->rx_packets = st.rx_packets;
	s->rx_bytes = st.rx_bytes;
	s->tx_packets = st.tx_packets;
	s->tx_bytes = st.tx_bytes;
	s->multicast = st.rx_multicast;
	s->rx_dropped = st.rx_dropped + dev->stats.rx_dropped;
	s->tx_dropped = st.tx_dropped + dev->stats.tx_dropped;
	s->rx_errors = st.rx_errors;
	s->tx_errors = st.tx_errors;
}

/* Segmentation offload is for datagrams: in connected mode a packet is one RC message. */
static netdev_features_t weft_ipoib_ndo_fix_features(struct net_device *dev, netdev_features_t features)
{
	if (weft_ipoib_connected(priv_of(dev)->ctx))
		features &= ~NETIF_F_TSO;
	return features;
}

static const struct net_device_ops weft_ipoib_netdev_ops = {
	.ndo_open = weft_ipoib_ndo_open,
	.ndo_stop = weft_ipoib_ndo_stop,
	.ndo_start_xmit = weft_ipoib_ndo_xmit,
	.ndo_set_rx_mode = weft_ipoib_ndo_set_rx_mode,
	.ndo_get_stats64 = weft_ipoib_ndo_get_stats64,
	.ndo_fix_features = weft_ipoib_ndo_fix_features,
};

/* --- ethtool ----------------------------------------------------------------- */

static void weft_ipoib_get_drvinfo(struct net_device *dev, struct ethtool_drvinfo *info)
{
	struct weft_ipoib_link l = {};

	weft_ipoib_link_info(priv_of(dev)->ctx, &l);
	strscpy(info->driver, "weft_ipoib", sizeof(info->driver));
	snprintf(info->bus_info, sizeof(info->bus_info), "%s:%u", l.ibdev, l.port);
	snprintf(info->fw_version, sizeof(info->fw_version), "%llu.%llu.%llu",
		 (unsigned long long)(l.fw_ver >> 32), (unsigned long long)((l.fw_ver >> 16) & 0xffff),
		 (unsigned long long)(l.fw_ver & 0xffff));
}

static int weft_ipoib_get_link_ksettings(struct net_device *dev, struct ethtool_link_ksettings *cmd)
{
	struct weft_ipoib_link l = {};

	weft_ipoib_link_info(priv_of(dev)->ctx, &l);
	ethtool_link_ksettings_zero_link_mode(cmd, supported);
	ethtool_link_ksettings_zero_link_mode(cmd, advertising);
	cmd->base.speed = l.speed_mbps ? l.speed_mbps : SPEED_UNKNOWN;
	cmd->base.duplex = l.speed_mbps ? DUPLEX_FULL : DUPLEX_UNKNOWN;
	cmd->base.port = PORT_OTHER;
	cmd->base.autoneg = AUTONEG_DISABLE;
	return 0;
}

#define WEFT_IPOIB_STAT(f) { #f, offsetof(struct weft_ipoib_stats, f) }
static const struct {
	const char *name;
	size_t off;
} weft_ipoib_stat_names[] = {
	WEFT_IPOIB_STAT(rx_packets), WEFT_IPOIB_STAT(rx_bytes), WEFT_IPOIB_STAT(tx_packets),
	WEFT_IPOIB_STAT(tx_bytes), WEFT_IPOIB_STAT(rx_multicast), WEFT_IPOIB_STAT(tx_multicast),
	WEFT_IPOIB_STAT(rx_dropped), WEFT_IPOIB_STAT(tx_dropped), WEFT_IPOIB_STAT(rx_errors),
	WEFT_IPOIB_STAT(tx_errors), WEFT_IPOIB_STAT(rx_own_dropped), WEFT_IPOIB_STAT(rx_bad_header),
	WEFT_IPOIB_STAT(tx_no_dest), WEFT_IPOIB_STAT(tx_queue_full), WEFT_IPOIB_STAT(path_queries),
	WEFT_IPOIB_STAT(path_failures), WEFT_IPOIB_STAT(dests_aged), WEFT_IPOIB_STAT(mcast_joins), WEFT_IPOIB_STAT(mcast_failures),
	WEFT_IPOIB_STAT(mcast_send_only), WEFT_IPOIB_STAT(mcast_umcast_skipped),
	WEFT_IPOIB_STAT(cm_connections), WEFT_IPOIB_STAT(cm_connects), WEFT_IPOIB_STAT(cm_accepts),
	WEFT_IPOIB_STAT(cm_failures), WEFT_IPOIB_STAT(cm_aged),
	WEFT_IPOIB_STAT(cm_passive), WEFT_IPOIB_STAT(cm_passive_aged), WEFT_IPOIB_STAT(cm_tx_packets), WEFT_IPOIB_STAT(cm_rx_packets),
	WEFT_IPOIB_STAT(cm_too_big), WEFT_IPOIB_STAT(tx_gathered), WEFT_IPOIB_STAT(tx_csum_offload),
	WEFT_IPOIB_STAT(tx_lso), WEFT_IPOIB_STAT(rx_pages_reused), WEFT_IPOIB_STAT(cm_rx_pages_reused),
	WEFT_IPOIB_STAT(rx_pages_fresh), WEFT_IPOIB_STAT(cm_rx_pages_fresh),
	WEFT_IPOIB_STAT(rx_pages_cached),
};
static_assert(ARRAY_SIZE(weft_ipoib_stat_names) * sizeof(u64) == sizeof(struct weft_ipoib_stats));

static int weft_ipoib_get_sset_count(struct net_device *dev, int sset)
{
	return sset == ETH_SS_STATS ? ARRAY_SIZE(weft_ipoib_stat_names) : -EOPNOTSUPP;
}

static void weft_ipoib_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	size_t i;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < ARRAY_SIZE(weft_ipoib_stat_names); i++)
		ethtool_sprintf(&data, "%s", weft_ipoib_stat_names[i].name);
}

static void weft_ipoib_get_ethtool_stats(struct net_device *dev, struct ethtool_stats *stats, u64 *data)
{
	struct weft_ipoib_stats st = {};
	size_t i;

	weft_ipoib_get_stats(priv_of(dev)->ctx, &st);
	st.rx_pages_reused = READ_ONCE(priv_of(dev)->ud_pages.reused);
	st.cm_rx_pages_reused = READ_ONCE(priv_of(dev)->pages.reused);
	st.rx_pages_fresh = READ_ONCE(priv_of(dev)->ud_pages.fresh);
	st.cm_rx_pages_fresh = READ_ONCE(priv_of(dev)->pages.fresh);
	st.rx_pages_cached = weft_ipoib_page_cache_held(&priv_of(dev)->pages) +
			     weft_ipoib_page_cache_held(&priv_of(dev)->ud_pages);
	for (i = 0; i < ARRAY_SIZE(weft_ipoib_stat_names); i++)
		data[i] = *(u64 *)((u8 *)&st + weft_ipoib_stat_names[i].off);
}

static int weft_ipoib_get_coalesce_op(struct net_device *dev, struct ethtool_coalesce *c,
				      struct kernel_ethtool_coalesce *kc, struct netlink_ext_ack *ack)
{
	weft_ipoib_get_coalesce(priv_of(dev)->ctx, &c->rx_coalesce_usecs, &c->rx_max_coalesced_frames);
	return 0;
}

static int weft_ipoib_set_coalesce_op(struct net_device *dev, struct ethtool_coalesce *c,
				      struct kernel_ethtool_coalesce *kc, struct netlink_ext_ack *ack)
{
	return weft_ipoib_set_coalesce(priv_of(dev)->ctx, c->rx_coalesce_usecs, c->rx_max_coalesced_frames);
}

static const struct ethtool_ops weft_ipoib_ethtool_ops = {
	.supported_coalesce_params = ETHTOOL_COALESCE_RX_USECS | ETHTOOL_COALESCE_RX_MAX_FRAMES,
	.get_drvinfo = weft_ipoib_get_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_link_ksettings = weft_ipoib_get_link_ksettings,
	.get_sset_count = weft_ipoib_get_sset_count,
	.get_strings = weft_ipoib_get_strings,
	.get_ethtool_stats = weft_ipoib_get_ethtool_stats,
	.get_coalesce = weft_ipoib_get_coalesce_op,
	.set_coalesce = weft_ipoib_set_coalesce_op,
};

/* --- NAPI -------------------------------------------------------------------- */

static int weft_ipoib_napi_poll(struct napi_struct *napi, int budget)
{
	struct weft_ipoib_priv *p = container_of(napi, struct weft_ipoib_priv, napi);

	return weft_ipoib_poll(p->ctx, budget);
}

void weft_ipoib_napi_schedule(struct weft_ipoib_netdev *nd)
{
	struct napi_struct *napi = &priv_of(to_dev(nd))->napi;

	/*
	 * From a work item (a deferred CQ event) the raised NET_RX softirq
	 * would wait for the next interrupt: with BH disabled around the
	 * schedule it runs when BH is enabled again.
	 */
	if (!in_hardirq() && !irqs_disabled()) {
		local_bh_disable();
		napi_schedule(napi);
		local_bh_enable();
	} else {
		napi_schedule(napi);
	}
}

bool weft_ipoib_napi_complete(struct weft_ipoib_netdev *nd, int done)
{
	return napi_complete_done(&priv_of(to_dev(nd))->napi, done);
}

/* --- life cycle -------------------------------------------------------------- */

bool weft_ipoib_netdev_is_ours(const struct net_device *dev)
{
	return dev->netdev_ops == &weft_ipoib_netdev_ops;
}

void weft_ipoib_setup(struct net_device *dev)
{
	dev->netdev_ops = &weft_ipoib_netdev_ops;
	dev->header_ops = &weft_ipoib_header_ops;
	dev->ethtool_ops = &weft_ipoib_ethtool_ops;
	dev->type = ARPHRD_INFINIBAND;
	dev->addr_len = INFINIBAND_ALEN;
	dev->hard_header_len = WEFT_IPOIB_HARD_LEN;
	dev->flags |= IFF_BROADCAST | IFF_MULTICAST;
	dev->flags &= ~IFF_NOARP;
	/*
	 * Scatter/gather only: the HCA gathers a packet's pieces itself, so
	 * TCP's paged skbs that fit the MTU (connected mode) are not copied
	 * flat first.  Checksums stay the stack's, so GSO segments (datagram
	 * mode) are still built flat by skb_segment while it checksums them.
	 */
	dev->features = NETIF_F_VLAN_CHALLENGED | NETIF_F_SG;
	dev->hw_features = NETIF_F_SG;
	dev->watchdog_timeo = HZ;
	dev->min_mtu = 68;
	netif_keep_dst(dev);
}

int weft_ipoib_netdev_prepare(struct net_device *dev, void *ctx, uint8_t port, const uint8_t *addr,
			      const uint8_t *bcast, unsigned int mtu, unsigned int tx_queue_len)
{
	struct weft_ipoib_priv *p = priv_of(dev);
	int ret = weft_ipoib_priv_caches_init(p, weft_ipoib_recv_queue_size);

	if (ret)
		return ret;
	p->ctx = ctx;
	/* The soft HCA inserts and sums checksums as it copies (verbs csum_offload). */
	if (weft_ipoib_csum_offload(ctx)) {
		dev->hw_features |= NETIF_F_HW_CSUM | NETIF_F_RXCSUM;
		dev->features |= NETIF_F_HW_CSUM | NETIF_F_RXCSUM;
		/* It also cuts TCP/IPv4 sends into segments (verbs max_lso); datagram mode only. */
		if (weft_ipoib_lso_offload(ctx)) {
			dev->hw_features |= NETIF_F_TSO;
			dev->features |= NETIF_F_TSO;
		}
	}
	netif_napi_add(dev, &p->napi, weft_ipoib_napi_poll);
	dev->dev_port = port - 1;
	dev->dev_id = port - 1;
	dev->max_mtu = mtu;
	dev->mtu = mtu;
	dev->tx_queue_len = tx_queue_len;
	/* alloc_netdev made it queueless, seeing no queue length in setup: it has one. */
	dev->priv_flags &= ~IFF_NO_QUEUE;
	dev_addr_set(dev, addr);
	memcpy(dev->broadcast, bcast, INFINIBAND_ALEN);
	netif_carrier_off(dev);
	return 0;
}

struct weft_ipoib_netdev *weft_ipoib_netdev_create(void *ctx, uint8_t port, const uint8_t *addr,
						   const uint8_t *bcast, unsigned int mtu,
						   unsigned int tx_queue_len, int *err)
{
	struct net_device *dev;
	struct weft_ipoib_priv *p;
	int ret;

	dev = alloc_netdev(sizeof(*p), "ib%d", NET_NAME_ENUM, weft_ipoib_setup);
	if (!dev) {
		*err = -ENOMEM;
		return NULL;
	}
	p = priv_of(dev);
	ret = weft_ipoib_netdev_prepare(dev, ctx, port, addr, bcast, mtu, tx_queue_len);
	if (ret) {
		free_netdev(dev);
		*err = ret;
		return NULL;
	}
	/* Children hang off it (shim_link.c, shim_sysfs.c). */
	dev->rtnl_link_ops = &weft_ipoib_link_ops;
	dev->sysfs_groups[0] = &weft_ipoib_port_attrs;
	ret = register_netdev(dev);
	if (ret) {
		netif_napi_del(&p->napi);
		weft_ipoib_priv_caches_destroy(p);
		free_netdev(dev);
		*err = ret;
		return NULL;
	}
	return (struct weft_ipoib_netdev *)dev;
}

void weft_ipoib_netdev_unregister(struct weft_ipoib_netdev *nd)
{
	unregister_netdev(to_dev(nd));
}

void weft_ipoib_netdev_free(struct weft_ipoib_netdev *nd)
{
	struct net_device *dev = to_dev(nd);

	netif_napi_del(&priv_of(dev)->napi);
	weft_ipoib_priv_caches_destroy(priv_of(dev));
	free_netdev(dev);
}

void weft_ipoib_set_dev_gid(struct weft_ipoib_netdev *nd, const uint8_t gid[16])
{
	struct net_device *dev = to_dev(nd);

	netif_addr_lock_bh(dev);
	dev_addr_mod(dev, 4, gid, 16);
	netif_addr_unlock_bh(dev);
}

const char *weft_ipoib_name(struct weft_ipoib_netdev *nd)
{
	return to_dev(nd)->name;
}

void weft_ipoib_set_mtu(struct weft_ipoib_netdev *nd, unsigned int max_mtu, bool set)
{
	struct net_device *dev = to_dev(nd);

	rtnl_lock();
	if (dev->reg_state == NETREG_REGISTERED) {
		dev->max_mtu = max_mtu;
		if (set || dev->mtu > max_mtu)
			dev_set_mtu(dev, max_mtu);
	}
	rtnl_unlock();
}

void weft_ipoib_carrier(struct weft_ipoib_netdev *nd, bool on)
{
	if (on)
		netif_carrier_on(to_dev(nd));
	else
		netif_carrier_off(to_dev(nd));
}

bool weft_ipoib_has_carrier(struct weft_ipoib_netdev *nd)
{
	return netif_carrier_ok(to_dev(nd));
}

/* --- transmit queue ---------------------------------------------------------- */

void weft_ipoib_tx_lock(struct weft_ipoib_netdev *nd)
{
	netif_tx_lock_bh(to_dev(nd));
}

void weft_ipoib_tx_unlock(struct weft_ipoib_netdev *nd)
{
	netif_tx_unlock_bh(to_dev(nd));
}

void weft_ipoib_stop_queue(struct weft_ipoib_netdev *nd)
{
	netif_stop_queue(to_dev(nd));
}

void weft_ipoib_wake_queue(struct weft_ipoib_netdev *nd)
{
	netif_wake_queue(to_dev(nd));
}

bool weft_ipoib_queue_stopped(struct weft_ipoib_netdev *nd)
{
	return netif_queue_stopped(to_dev(nd));
}

/* --- socket buffers ---------------------------------------------------------- */

uint8_t *weft_ipoib_skb_data(void *skb, uint32_t *len)
{
	struct sk_buff *s = skb;

	*len = s->len;
	return s->data;
}

int weft_ipoib_skb_gather(void *skb, struct weft_ipoib_sg *segs, int max)
{
	struct sk_buff *s = skb;
	int i, n = 0;

	if (skb_shinfo(s)->nr_frags + 1 > max && skb_linearize(s))
		return -ENOMEM;
	if (skb_headlen(s))
		segs[n++] = (struct weft_ipoib_sg){ s->data, skb_headlen(s) };
	for (i = 0; i < skb_shinfo(s)->nr_frags; i++) {
		const skb_frag_t *f = &skb_shinfo(s)->frags[i];

		segs[n++] = (struct weft_ipoib_sg){ skb_frag_address(f), skb_frag_size(f) };
	}
	return n;
}

int weft_ipoib_skb_csum(void *skb, uint16_t *start, uint16_t *offset)
{
	struct sk_buff *s = skb;
	int at;

	if (s->ip_summed != CHECKSUM_PARTIAL)
		return 0;
	at = skb_checksum_start_offset(s);
	if (at < 0 || at > 0xfff0 || (at & 1) || (s->csum_offset & 1))
		return skb_checksum_help(s) ? -ENOMEM : 0;
	*start = at;
	*offset = s->csum_offset;
	return 1;
}

int weft_ipoib_skb_lso(void *skb, uint16_t *hlen, uint16_t *mss, uint16_t *ip_off)
{
	struct sk_buff *s = skb;
	unsigned int h;

	if (!skb_is_gso(s))
		return 0;
	/* Only NETIF_F_TSO is claimed: anything else was segmented by the stack. */
	if (!(skb_shinfo(s)->gso_type & SKB_GSO_TCPV4) || s->protocol != htons(ETH_P_IP))
		return -EINVAL;
	h = skb_tcp_all_headers(s);
	if (!pskb_may_pull(s, h))
		return -ENOMEM;
	*hlen = h;
	*mss = skb_shinfo(s)->gso_size;
	*ip_off = skb_network_offset(s);
	return 1;
}

bool weft_ipoib_skb_fits(void *skb, uint32_t mtu)
{
	struct sk_buff *s = skb;

	if (skb_is_gso(s))
		return skb_gso_validate_network_len(s, mtu);
	return s->len - WEFT_IPOIB_ENCAP_LEN <= mtu;
}

/* In NAPI (BH off, not hardirq) a sent skb's head goes to the per-CPU cache napi_build_skb takes from. */
static bool weft_ipoib_in_bh(void)
{
	return in_softirq() && !in_hardirq();
}

void weft_ipoib_skb_free(void *skb, bool consumed)
{
	if (consumed && weft_ipoib_in_bh())
		napi_consume_skb(skb, 1);
	else if (consumed)
		dev_consume_skb_any(skb);
	else
		dev_kfree_skb_any(skb);
}

/*
 * Carved from the interface's reused pages (or, larger than one, from the
 * page-fragment cache) with build_skb: a 4 KiB MTU's buffer would
 * otherwise be a kmalloc of 8 KiB that Debian's init_on_alloc zeroes
 * every time.
 */
void *weft_ipoib_rx_alloc(struct weft_ipoib_netdev *nd, uint32_t size, uint8_t **data)
{
	unsigned int len = SKB_DATA_ALIGN(NET_SKB_PAD + size) + SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb;
	void *buf;

	buf = weft_ipoib_page_cache_carve(&priv_of(to_dev(nd))->ud_pages, len);
	if (!buf)
		buf = netdev_alloc_frag(len);
	if (!buf)
		return NULL;
	skb = weft_ipoib_in_bh() ? napi_build_skb(buf, len) : build_skb(buf, len);
	if (!skb) {
		skb_free_frag(buf);
		return NULL;
	}
	skb_reserve(skb, NET_SKB_PAD);
	skb->dev = to_dev(nd);
	*data = skb->data;
	return skb;
}

void weft_ipoib_rx_deliver(struct weft_ipoib_netdev *nd, void *skb, uint32_t len, uint32_t skip,
			   uint16_t proto, int kind, struct weft_ipoib_rx_csum csum)
{
	struct net_device *dev = to_dev(nd);
	struct sk_buff *s = skb;

	skb_put(s, len);
	skb_pull(s, skip - WEFT_IPOIB_ENCAP_LEN);
	weft_ipoib_rx_link_header(s);
	s->protocol = htons(proto);
	s->dev = dev;
	s->pkt_type = kind == WEFT_IPOIB_RX_BROADCAST ? PACKET_BROADCAST :
		      kind == WEFT_IPOIB_RX_MULTICAST ? PACKET_MULTICAST : PACKET_HOST;
	weft_ipoib_rx_csum_set(s, csum);
	napi_gro_receive(&priv_of(dev)->napi, s);
}

void weft_ipoib_mc_list(struct weft_ipoib_netdev *nd, void (*fn)(void *arg, const uint8_t *addr),
			void *arg)
{
	struct net_device *dev = to_dev(nd);
	struct netdev_hw_addr *ha;

	netif_addr_lock_bh(dev);
	netdev_for_each_mc_addr(ha, dev)
		fn(arg, ha->addr);
	netif_addr_unlock_bh(dev);
}

