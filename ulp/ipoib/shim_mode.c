// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel side of IPoIB connected mode (RFC 4755; ipoib_kapi.h): the
 * "mode" sysfs file, MTU changes under rtnl, paged receive buffers for
 * 64 KiB messages, and the ICMP "too big" answers for packets that a
 * datagram-only path cannot carry.  Thin: which mode, which peer and
 * which MTU are decided in C++ (cm.cpp, cm_data.cpp).
 */
#include <linux/debugfs.h>
#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <linux/if_ether.h>
#include <linux/llist.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>
#include <net/dst.h>
#include <net/icmp.h>

#include "ipoib_kapi.h"
#include "shim_priv.h"

#define WEFT_IPOIB_CM_FRAG_ORDER get_order(WEFT_IPOIB_CM_FRAG)

static_assert(WEFT_IPOIB_CM_HEAD + WEFT_IPOIB_CM_FRAGS * WEFT_IPOIB_CM_FRAG >= 65524);
static_assert(WEFT_IPOIB_CM_FRAGS <= MAX_SKB_FRAGS);

static struct net_device *to_dev(struct weft_ipoib_netdev *nd)
{
	return (struct net_device *)nd;
}

/* --- the mode file ------------------------------------------------------------ */

static ssize_t mode_show(struct device *d, struct device_attribute *attr, char *buf)
{
	struct net_device *dev = to_net_dev(d);

	return sysfs_emit(buf, "%s\n", weft_ipoib_connected(weft_ipoib_ctx_of(dev)) ? "connected" : "datagram");
}

static ssize_t mode_store(struct device *d, struct device_attribute *attr, const char *buf, size_t count)
{
	struct net_device *dev = to_net_dev(d);
	bool connected;
	int ret;

	if (sysfs_streq(buf, "connected"))
		connected = true;
	else if (sysfs_streq(buf, "datagram"))
		connected = false;
	else
		return -EINVAL;
	/* The device's removal waits for this file's users while holding rtnl. */
	if (!rtnl_trylock())
		return restart_syscall();
	ret = dev->reg_state == NETREG_REGISTERED ? weft_ipoib_set_mode(weft_ipoib_ctx_of(dev), connected) :
						     -ENODEV;
	rtnl_unlock();
	return ret ? ret : count;
}

static DEVICE_ATTR_RW(mode);

int weft_ipoib_mode_attr_add(struct weft_ipoib_netdev *nd)
{
	return device_create_file(&to_dev(nd)->dev, &dev_attr_mode);
}

void weft_ipoib_set_mtu_rtnl(struct weft_ipoib_netdev *nd, unsigned int max_mtu, unsigned int mtu)
{
	struct net_device *dev = to_dev(nd);

	ASSERT_RTNL();
	dev->max_mtu = max_mtu;
	/* Not registered yet (rtnl_link_ops newlink): nobody to notify. */
	if (dev->reg_state != NETREG_REGISTERED)
		dev->mtu = mtu;
	else if (dev->mtu != mtu)
		dev_set_mtu(dev, mtu);
}

void weft_ipoib_update_features_rtnl(struct weft_ipoib_netdev *nd)
{
	struct net_device *dev = to_dev(nd);

	ASSERT_RTNL();
	if (dev->reg_state == NETREG_REGISTERED)
		netdev_update_features(dev);
}

void weft_ipoib_set_ud_mtu(struct weft_ipoib_netdev *nd, unsigned int ud_mtu, bool set)
{
	struct net_device *dev = to_dev(nd);

	rtnl_lock();
	if (dev->reg_state == NETREG_REGISTERED && !weft_ipoib_connected(weft_ipoib_ctx_of(dev))) {
		dev->max_mtu = ud_mtu;
		if (set || dev->mtu > ud_mtu)
			dev_set_mtu(dev, ud_mtu);
	}
	rtnl_unlock();
}

unsigned int weft_ipoib_mtu(struct weft_ipoib_netdev *nd)
{
	return READ_ONCE(to_dev(nd)->mtu);
}

/* --- receive buffers ---------------------------------------------------------- */

static struct weft_ipoib_page_cache *pages_of(struct weft_ipoib_netdev *nd)
{
	return &((struct weft_ipoib_priv *)netdev_priv(to_dev(nd)))->pages;
}

/* Every cache's pages: a page left in a freed cache shows as a difference. */
static atomic_long_t weft_ipoib_cached;

static long weft_ipoib_pages_cached(void)
{
	return atomic_long_read(&weft_ipoib_cached);
}

static int pages_cached_get(void *data, u64 *val)
{
	*val = weft_ipoib_pages_cached();
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(pages_cached_fops, pages_cached_get, NULL, "%lld\n");

static struct dentry *weft_ipoib_debugfs;

/* /sys/kernel/debug/weft_ipoib/pages_cached: tests compare it with ethtool's rx_pages_cached. */
void weft_ipoib_debugfs_init(void)
{
	weft_ipoib_debugfs = debugfs_create_dir("weft_ipoib", NULL);
	debugfs_create_file_unsafe("pages_cached", 0444, weft_ipoib_debugfs, NULL, &pages_cached_fops);
}

void weft_ipoib_debugfs_exit(void)
{
	debugfs_remove_recursive(weft_ipoib_debugfs);
}

static int weft_ipoib_page_cache_init(struct weft_ipoib_page_cache *pc, unsigned int cap)
{
	spin_lock_init(&pc->lock);
	pc->head = pc->tail = 0;
	pc->reused = 0;
	pc->carve = NULL;
	pc->carve_off = 0;
	pc->cap = roundup_pow_of_two(cap);
	pc->page = kvcalloc(pc->cap, sizeof(*pc->page), GFP_KERNEL);
	return pc->page ? 0 : -ENOMEM;
}

unsigned int weft_ipoib_page_cache_held(struct weft_ipoib_page_cache *pc)
{
	unsigned int n;

	spin_lock_bh(&pc->lock);
	n = pc->tail - pc->head + (pc->carve ? 1 : 0);
	spin_unlock_bh(&pc->lock);
	return n;
}

/*
 * Posted datagram buffers keep their pages in the cache: room for the
 * ring's pages (three or more buffers to a page) and twice as many again
 * that the stack still holds.  ring / 2 was measured too few at 512.
 */
static unsigned int weft_ipoib_ud_cache_size(unsigned int ring)
{
	return max_t(unsigned int, WEFT_IPOIB_PAGE_CACHE, roundup_pow_of_two(ring));
}

/* The oldest page if the stack is done with it, else a new one. */
static struct page *page_cache_get(struct weft_ipoib_page_cache *pc, gfp_t gfp)
{
	struct page *page = NULL, *drop = NULL;

	spin_lock_bh(&pc->lock);
	if (pc->head != pc->tail) {
		struct page *old = pc->page[pc->head & (pc->cap - 1)];

		if (page_ref_count(old) == 1) {
			pc->head++;
			atomic_long_dec(&weft_ipoib_cached);
			if (page_is_pfmemalloc(old))
				drop = old; /* emergency reserves go back */
			else
				page = old;
			if (page)
				WRITE_ONCE(pc->reused, pc->reused + 1);
		}
	}
	spin_unlock_bh(&pc->lock);
	if (drop)
		put_page(drop);
	if (page)
		return page;
	page = alloc_pages(gfp | __GFP_COMP | __GFP_NOWARN, WEFT_IPOIB_CM_FRAG_ORDER);
	if (page) {
		spin_lock_bh(&pc->lock);
		WRITE_ONCE(pc->fresh, pc->fresh + 1);
		spin_unlock_bh(&pc->lock);
	}
	return page;
}

/* Keep @page (with a reference of ours) for page_cache_get; the oldest makes room. */
static void page_cache_put(struct weft_ipoib_page_cache *pc, struct page *page)
{
	struct page *drop = NULL;

	spin_lock_bh(&pc->lock);
	if (pc->tail - pc->head == pc->cap)
		drop = pc->page[pc->head++ & (pc->cap - 1)];
	else
		atomic_long_inc(&weft_ipoib_cached);
	pc->page[pc->tail++ & (pc->cap - 1)] = page;
	spin_unlock_bh(&pc->lock);
	if (drop)
		put_page(drop);
}

/*
 * The buffer after the last one carved from the current page, or the
 * start of a page from the cache (the current one goes to the back of
 * the cache, to come round again once the stack has freed each of its
 * buffers).  Each buffer holds a page reference, which the stack drops
 * when it frees the skb built on it (skb_free_frag).
 */
void *weft_ipoib_page_cache_carve(struct weft_ipoib_page_cache *pc, unsigned int len)
{
	const unsigned int size = PAGE_SIZE << WEFT_IPOIB_CM_FRAG_ORDER;
	struct page *page, *full;
	void *buf = NULL;

	if (len > size)
		return NULL;
	spin_lock_bh(&pc->lock);
	page = pc->carve;
	if (page && pc->carve_off + len <= size) {
		buf = page_address(page) + pc->carve_off;
		pc->carve_off += len;
		get_page(page);
	}
	spin_unlock_bh(&pc->lock);
	if (buf)
		return buf;
	page = page_cache_get(pc, GFP_ATOMIC);
	if (!page)
		return NULL;
	get_page(page); /* the buffer's; the cache keeps the one it had */
	spin_lock_bh(&pc->lock);
	full = pc->carve;
	pc->carve = page;
	pc->carve_off = len;
	atomic_long_inc(&weft_ipoib_cached);
	spin_unlock_bh(&pc->lock);
	/* From the carve to the queue: still one of the cache's pages. */
	if (full) {
		atomic_long_dec(&weft_ipoib_cached);
		page_cache_put(pc, full);
	}
	return page_address(page);
}

static void weft_ipoib_page_cache_drain(struct weft_ipoib_page_cache *pc)
{
	struct page *page;

	spin_lock_bh(&pc->lock);
	for (;;) {
		if (pc->carve) {
			page = pc->carve;
			pc->carve = NULL;
		} else if (pc->head != pc->tail) {
			page = pc->page[pc->head++ & (pc->cap - 1)];
		} else {
			break;
		}
		atomic_long_dec(&weft_ipoib_cached);
		spin_unlock_bh(&pc->lock);
		put_page(page);
		spin_lock_bh(&pc->lock);
	}
	spin_unlock_bh(&pc->lock);
}

static void weft_ipoib_page_cache_destroy(struct weft_ipoib_page_cache *pc)
{
	if (!pc->page)
		return;
	weft_ipoib_page_cache_drain(pc);
	kvfree(pc->page);
	pc->page = NULL;
}

int weft_ipoib_priv_caches_init(struct weft_ipoib_priv *p, unsigned int ring)
{
	int ret = weft_ipoib_page_cache_init(&p->pages, WEFT_IPOIB_PAGE_CACHE);

	if (ret)
		return ret;
	ret = weft_ipoib_page_cache_init(&p->ud_pages, weft_ipoib_ud_cache_size(ring));
	if (ret)
		weft_ipoib_page_cache_destroy(&p->pages);
	return ret;
}

void weft_ipoib_priv_caches_destroy(struct weft_ipoib_priv *p)
{
	weft_ipoib_page_cache_destroy(&p->pages);
	weft_ipoib_page_cache_destroy(&p->ud_pages);
}

void weft_ipoib_cm_pages_drain(struct weft_ipoib_netdev *nd)
{
	weft_ipoib_page_cache_drain(pages_of(nd));
}

void *weft_ipoib_cm_rx_alloc(struct weft_ipoib_netdev *nd, bool can_sleep,
			     struct weft_ipoib_sg sg[WEFT_IPOIB_CM_SG])
{
	gfp_t gfp = can_sleep ? GFP_KERNEL : GFP_ATOMIC;
	struct sk_buff *skb = __netdev_alloc_skb(to_dev(nd), WEFT_IPOIB_CM_HEAD, gfp);
	int i;

	if (!skb)
		return NULL;
	sg[0].addr = skb->data;
	sg[0].len = WEFT_IPOIB_CM_HEAD;
	for (i = 0; i < WEFT_IPOIB_CM_FRAGS; i++) {
		struct page *page = page_cache_get(pages_of(nd), gfp);

		if (!page) {
			kfree_skb(skb);
			return NULL;
		}
		/* Empty until a message fills it: skb_release_data puts the page. */
		skb_fill_page_desc(skb, i, page, 0, 0);
		sg[i + 1].addr = page_address(page);
		sg[i + 1].len = WEFT_IPOIB_CM_FRAG;
	}
	return skb;
}

void weft_ipoib_cm_rx_deliver(struct weft_ipoib_netdev *nd, void *skb, uint32_t len, uint16_t proto,
			      struct weft_ipoib_rx_csum csum)
{
	struct net_device *dev = to_dev(nd);
	struct sk_buff *s = skb;
	struct skb_shared_info *sh = skb_shinfo(s);
	uint32_t rest = len - WEFT_IPOIB_CM_HEAD;
	int i, used = 0;

	skb_put(s, WEFT_IPOIB_CM_HEAD);
	for (i = 0; i < WEFT_IPOIB_CM_FRAGS; i++) {
		skb_frag_t *f = &sh->frags[i];
		uint32_t n = min_t(uint32_t, rest, WEFT_IPOIB_CM_FRAG);

		if (!n) {
			/* Unused: ours alone, at once reusable. */
			page_cache_put(pages_of(nd), skb_frag_page(f));
			continue;
		}
		get_page(skb_frag_page(f));
		page_cache_put(pages_of(nd), skb_frag_page(f));
		skb_frag_size_set(f, n);
		s->len += n;
		s->data_len += n;
		s->truesize += PAGE_SIZE << WEFT_IPOIB_CM_FRAG_ORDER;
		rest -= n;
		used = i + 1;
	}
	sh->nr_frags = used;
	weft_ipoib_rx_link_header(s);
	s->protocol = htons(proto);
	s->dev = dev;
	s->pkt_type = PACKET_HOST;
	weft_ipoib_rx_csum_set(s, csum);
	napi_gro_receive(weft_ipoib_napi_of(dev), s);
}

/* --- too big for the path ----------------------------------------------------- */

/*
 * The answer is built from a work item, not from start_xmit: the ICMP
 * error is itself sent through the stack, which must not happen with
 * this device's transmit lock held.
 */
static LLIST_HEAD(too_big_list);

static void too_big_work_fn(struct work_struct *w)
{
	struct llist_node *n = llist_del_all(&too_big_list);
	struct sk_buff *skb, *next;

	llist_for_each_entry_safe(skb, next, n, ll_node) {
		struct net_device *dev = skb->dev;
		unsigned int mtu = *(unsigned int *)skb->cb;

		skb->ll_node.next = NULL;
		skb_pull(skb, WEFT_IPOIB_ENCAP_LEN);
		skb_reset_network_header(skb);
		if (skb_dst(skb))
			skb_dst_update_pmtu_no_confirm(skb, mtu);
		rcu_read_lock();
		if (skb->protocol == htons(ETH_P_IP))
			icmp_ndo_send(skb, ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED, htonl(mtu));
		else if (skb->protocol == htons(ETH_P_IPV6))
			icmpv6_ndo_send(skb, ICMPV6_PKT_TOOBIG, 0, mtu);
		rcu_read_unlock();
		kfree_skb(skb);
		dev_put(dev);
	}
}

static DECLARE_WORK(too_big_work, too_big_work_fn);

void weft_ipoib_too_big(struct weft_ipoib_netdev *nd, void *skb, unsigned int mtu)
{
	struct sk_buff *s = skb;

	s->dev = to_dev(nd);
	/* Held until the work ran: unregistering waits for it. */
	dev_hold(s->dev);
	*(unsigned int *)s->cb = mtu;
	if (llist_add(&s->ll_node, &too_big_list))
		schedule_work(&too_big_work);
}

void weft_ipoib_shim_mode_exit(void)
{
	flush_work(&too_big_work);
}
