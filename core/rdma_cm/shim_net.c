// SPDX-License-Identifier: GPL-2.0
/*
 * weft_rdma_cm's window on the IP stack (rcm_kapi.h): which ib interface
 * has an address, how a destination is routed, what ARP/ND learnt about
 * the next hop (RFC 4391 §9.1.1: QPN and GID in the 20-byte hardware
 * address), and address changes.  Every kernel structure stays here.
 */
#include <linux/if_arp.h>
#include <linux/if_infiniband.h>
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/nsproxy.h>
#include <net/addrconf.h>
#include <net/ip6_route.h>
#include <net/ipv6_stubs.h>
#include <net/neighbour.h>
#include <net/net_namespace.h>
#include <net/netevent.h>
#include <net/route.h>

#include "rcm_kapi.h"

void *weft_rcm_net_current(void)
{
	return get_net(current->nsproxy->net_ns);
}

void *weft_rcm_net_init(void)
{
	return get_net(&init_net);
}

void weft_rcm_net_put(void *net)
{
	put_net(net);
}

void weft_rcm_net_get(void *net)
{
	get_net(net);
}

unsigned int weft_rcm_net_id(void *net)
{
	return ((struct net *)net)->ns.inum;
}

static bool is_ib(const struct net_device *dev)
{
	return dev->type == ARPHRD_INFINIBAND && dev->addr_len == INFINIBAND_ALEN;
}

static void fill_ibdev(const struct net_device *dev, struct weft_rcm_ibdev *out)
{
	const u8 *ha = dev->dev_addr;

	out->ifindex = dev->ifindex;
	memcpy(out->gid, ha + 4, 16);
	out->qpn = (ha[1] << 16) | (ha[2] << 8) | ha[3];
	out->pkey = (dev->broadcast[8] << 8) | dev->broadcast[9];
	out->mtu = dev->mtu;
}

static bool has_addr4(struct net_device *dev, __be32 addr)
{
	struct in_device *in = __in_dev_get_rcu(dev);
	const struct in_ifaddr *ifa;

	if (!in)
		return false;
	in_dev_for_each_ifa_rcu(ifa, in)
		if (ifa->ifa_local == addr)
			return true;
	return false;
}

/* Under rcu_read_lock: the interface of @net that has @a (no reference). */
static struct net_device *dev_with_addr(struct net *net, const struct weft_rcm_addr *a)
{
	struct net_device *dev;
	__be32 v4;

	if (a->family == AF_INET) {
		memcpy(&v4, a->ip, 4);
		for_each_netdev_rcu(net, dev)
			if (has_addr4(dev, v4))
				return dev;
		return NULL;
	}
#if IS_ENABLED(CONFIG_IPV6)
	for_each_netdev_rcu(net, dev) {
		if (a->scope_id && dev->ifindex != a->scope_id)
			continue;
		if (ipv6_chk_addr(net, (const struct in6_addr *)a->ip, dev, 1))
			return dev;
	}
#endif
	return NULL;
}

int weft_rcm_local_ib(void *net, const struct weft_rcm_addr *a, struct weft_rcm_ibdev *out)
{
	struct net_device *dev;
	int ret = -EADDRNOTAVAIL;

	if (a->family != AF_INET && a->family != AF_INET6)
		return -EAFNOSUPPORT;
	rcu_read_lock();
	dev = dev_with_addr(net, a);
	if (dev) {
		ret = is_ib(dev) ? 0 : -ENODEV;
		if (!ret)
			fill_ibdev(dev, out);
	}
	rcu_read_unlock();
	return ret;
}

/* The next hop's hardware address, or -EAGAIN after asking ARP/ND for it. */
static int neigh_hw(struct dst_entry *dst, const void *daddr, u8 *peer_hw)
{
	struct neighbour *n = dst_neigh_lookup(dst, daddr);
	int ret = 0;

	if (!n)
		return -ENOMEM;
	if (n->nud_state & NUD_VALID)
		neigh_ha_snapshot(peer_hw, n, dst->dev);
	else {
		neigh_event_send(n, NULL);
		ret = -EAGAIN;
	}
	neigh_release(n);
	return ret;
}

/* @dst is this host's: its own interface, its own hardware address. */
static int route_local(struct net *net, const struct weft_rcm_addr *dst, struct weft_rcm_ibdev *out,
		       u8 *peer_hw)
{
	struct net_device *dev;
	int ret = -EHOSTUNREACH;

	rcu_read_lock();
	dev = dev_with_addr(net, dst);
	if (dev) {
		ret = is_ib(dev) ? 0 : -ENODEV;
		if (!ret) {
			fill_ibdev(dev, out);
			memcpy(peer_hw, dev->dev_addr, INFINIBAND_ALEN);
		}
	}
	rcu_read_unlock();
	return ret;
}

static int route4(struct net *net, const struct weft_rcm_addr *src, const struct weft_rcm_addr *dst,
		  struct weft_rcm_ibdev *out, struct weft_rcm_addr *src_out, u8 *peer_hw)
{
	struct flowi4 fl4 = {};
	struct rtable *rt;
	int ret;

	memcpy(&fl4.daddr, dst->ip, 4);
	if (src)
		memcpy(&fl4.saddr, src->ip, 4);
	rt = ip_route_output_key(net, &fl4);
	if (IS_ERR(rt))
		return PTR_ERR(rt);
	memset(src_out, 0, sizeof(*src_out));
	src_out->family = AF_INET;
	if (rt->rt_type == RTN_LOCAL) {
		ip_rt_put(rt);
		memcpy(src_out->ip, src && fl4.saddr ? src->ip : dst->ip, 4);
		return route_local(net, dst, out, peer_hw);
	}
	memcpy(src_out->ip, &fl4.saddr, 4);
	ret = -ENODEV;
	if (is_ib(rt->dst.dev)) {
		fill_ibdev(rt->dst.dev, out);
		ret = neigh_hw(&rt->dst, &fl4.daddr, peer_hw);
	}
	ip_rt_put(rt);
	return ret;
}

#if IS_ENABLED(CONFIG_IPV6)
static int route6(struct net *net, const struct weft_rcm_addr *src, const struct weft_rcm_addr *dst,
		  struct weft_rcm_ibdev *out, struct weft_rcm_addr *src_out, u8 *peer_hw)
{
	struct flowi6 fl6 = {};
	struct dst_entry *d;
	int ret;

	memcpy(&fl6.daddr, dst->ip, 16);
	if (src)
		memcpy(&fl6.saddr, src->ip, 16);
	fl6.flowi6_oif = dst->scope_id;
	d = ipv6_stub->ipv6_dst_lookup_flow(net, NULL, &fl6, NULL);
	if (IS_ERR(d))
		return PTR_ERR(d);
	memset(src_out, 0, sizeof(*src_out));
	src_out->family = AF_INET6;
	memcpy(src_out->ip, &fl6.saddr, 16);
	if (d->dev->flags & IFF_LOOPBACK) {
		dst_release(d);
		if (!src || ipv6_addr_any((const struct in6_addr *)src->ip))
			memcpy(src_out->ip, dst->ip, 16);
		return route_local(net, dst, out, peer_hw);
	}
	ret = -ENODEV;
	if (is_ib(d->dev)) {
		fill_ibdev(d->dev, out);
		src_out->scope_id = ipv6_addr_type(&fl6.saddr) & IPV6_ADDR_LINKLOCAL ? d->dev->ifindex : 0;
		ret = neigh_hw(d, &fl6.daddr, peer_hw);
	}
	dst_release(d);
	return ret;
}
#endif

int weft_rcm_route(void *net, const struct weft_rcm_addr *src, const struct weft_rcm_addr *dst,
		   struct weft_rcm_ibdev *out, struct weft_rcm_addr *src_out, u8 *peer_hw)
{
	if (dst->family == AF_INET)
		return route4(net, src, dst, out, src_out, peer_hw);
#if IS_ENABLED(CONFIG_IPV6)
	if (dst->family == AF_INET6)
		return route6(net, src, dst, out, src_out, peer_hw);
#endif
	return -EAFNOSUPPORT;
}

static bool dev_has(struct net *net, struct net_device *dev, const struct weft_rcm_addr *a)
{
	__be32 v4;

	if (a->family == AF_INET) {
		memcpy(&v4, a->ip, 4);
		return has_addr4(dev, v4);
	}
#if IS_ENABLED(CONFIG_IPV6)
	if (a->family == AF_INET6)
		return ipv6_chk_addr(net, (const struct in6_addr *)a->ip, dev, 1);
#endif
	return false;
}

void *weft_rcm_net_of(const uint8_t *gid, uint16_t pkey, const struct weft_rcm_addr *dst)
{
	struct net *net, *found = NULL;
	struct net_device *dev;

	rcu_read_lock();
	for_each_net_rcu(net) {
		for_each_netdev_rcu(net, dev) {
			struct weft_rcm_ibdev d;

			if (!is_ib(dev))
				continue;
			fill_ibdev(dev, &d);
			if (memcmp(d.gid, gid, 16) || (d.pkey & 0x7fff) != (pkey & 0x7fff))
				continue;
			if (dst && dev_has(net, dev, dst)) {
				found = net;
				goto out;
			}
			if (!found)
				found = net;
		}
	}
out:
	if (found)
		found = maybe_get_net(found);
	rcu_read_unlock();
	return found;
}

static void fill_addr4(struct weft_rcm_addr *a, __be32 v4)
{
	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	memcpy(a->ip, &v4, 4);
}

static int netdev_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);

	if (!is_ib(dev))
		return NOTIFY_DONE;
	if (event == NETDEV_DOWN || event == NETDEV_CHANGEADDR || event == NETDEV_UNREGISTER ||
	    event == NETDEV_CHANGENAME)
		weft_rcm_addr_changed(dev_net(dev), dev->ifindex, NULL);
	return NOTIFY_DONE;
}

static int inetaddr_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct in_ifaddr *ifa = ptr;
	struct net_device *dev = ifa->ifa_dev->dev;
	struct weft_rcm_addr a;

	if (event != NETDEV_DOWN || !is_ib(dev))
		return NOTIFY_DONE;
	fill_addr4(&a, ifa->ifa_local);
	weft_rcm_addr_changed(dev_net(dev), dev->ifindex, &a);
	return NOTIFY_DONE;
}

#if IS_ENABLED(CONFIG_IPV6)
static int inet6addr_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct inet6_ifaddr *ifa = ptr;
	struct net_device *dev = ifa->idev->dev;
	struct weft_rcm_addr a = { .family = AF_INET6 };

	if (event != NETDEV_DOWN || !is_ib(dev))
		return NOTIFY_DONE;
	memcpy(a.ip, &ifa->addr, 16);
	weft_rcm_addr_changed(dev_net(dev), dev->ifindex, &a);
	return NOTIFY_DONE;
}

static struct notifier_block inet6addr_nb = { .notifier_call = inet6addr_event };
#endif

static struct notifier_block netdev_nb = { .notifier_call = netdev_event };
static struct notifier_block inetaddr_nb = { .notifier_call = inetaddr_event };

int weft_rcm_notifiers_register(void)
{
	int ret = register_netdevice_notifier(&netdev_nb);

	if (ret)
		return ret;
	ret = register_inetaddr_notifier(&inetaddr_nb);
	if (ret)
		goto err_netdev;
#if IS_ENABLED(CONFIG_IPV6)
	ret = register_inet6addr_notifier(&inet6addr_nb);
	if (ret)
		goto err_inet;
#endif
	return 0;
#if IS_ENABLED(CONFIG_IPV6)
err_inet:
	unregister_inetaddr_notifier(&inetaddr_nb);
#endif
err_netdev:
	unregister_netdevice_notifier(&netdev_nb);
	return ret;
}

void weft_rcm_notifiers_unregister(void)
{
#if IS_ENABLED(CONFIG_IPV6)
	unregister_inet6addr_notifier(&inet6addr_nb);
#endif
	unregister_inetaddr_notifier(&inetaddr_nb);
	unregister_netdevice_notifier(&netdev_nb);
}
