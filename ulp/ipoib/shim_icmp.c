// SPDX-License-Identifier: GPL-2.0
/*
 * ICMP "too big" answers (RFC 4755 section 4: a datagram-only path carries
 * at most the UD MTU) for packets IPoIB cannot send to a peer as they are.
 */
#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <linux/if_ether.h>
#include <linux/llist.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>
#include <net/dst.h>
#include <net/icmp.h>

#include "ipoib_kapi.h"
#include "shim_priv.h"

static struct net_device *to_dev(struct weft_ipoib_netdev *nd)
{
	return (struct net_device *)nd;
}

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

void weft_ipoib_shim_icmp_exit(void)
{
	flush_work(&too_big_work);
}
