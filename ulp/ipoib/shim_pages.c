// SPDX-License-Identifier: GPL-2.0
/*
 * IPoIB's receive buffers (ipoib_kapi.h, shim_priv.h): the page caches
 * that datagram and connected mode carve their buffers from, the paged
 * skbs of connected mode's 64 KiB messages (RFC 4755) and their delivery,
 * and the debugfs count of cached pages the tests compare with ethtool.
 */
#include <linux/debugfs.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>

#include "ipoib_kapi.h"
#include "shim_priv.h"

#define WEFT_IPOIB_CM_FRAG_ORDER get_order(WEFT_IPOIB_CM_FRAG)

static_assert(WEFT_IPOIB_CM_HEAD + WEFT_IPOIB_CM_FRAGS * WEFT_IPOIB_CM_FRAG >= 65524);
static_assert(WEFT_IPOIB_CM_FRAGS <= MAX_SKB_FRAGS);

static struct net_device *to_dev(struct weft_ipoib_netdev *nd)
{
	return (struct net_device *)nd;
}

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
