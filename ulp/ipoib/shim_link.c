// SPDX-License-Identifier: GPL-2.0
/*
 * rtnl link ops of kind "ipoib" (include/uapi/linux/if_link.h IFLA_IPOIB_*)
 * and the netdev side of P_Key child interfaces (child_kapi.h):
 *   ip link add link ib0 name ib0.8001 type ipoib pkey 0x8001 [mode datagram|connected] [umcast 0|1]
 *   ip link set ib0.8001 type ipoib umcast 1;  ip -d link show;  ip link del ib0.8001
 * Semantics as Linux's ipoib: no P_Key means the parent's, a child of a
 * child is refused, a port's own interface is not deleted by dellink, and
 * devices go back to the initial namespace when theirs is dismantled.
 */
#include <linux/if_arp.h>
#include <linux/module.h>

#include "child_kapi.h"
#include "ipoib_kapi.h"
#include "shim_priv.h"

static const struct nla_policy weft_ipoib_policy[IFLA_IPOIB_MAX + 1] = {
	[IFLA_IPOIB_PKEY] = { .type = NLA_U16 },
	[IFLA_IPOIB_MODE] = { .type = NLA_U16 },
	[IFLA_IPOIB_UMCAST] = { .type = NLA_U16 },
};

static int weft_ipoib_changelink(struct net_device *dev, struct nlattr *tb[], struct nlattr *data[],
				 struct netlink_ext_ack *extack)
{
	void *ctx = weft_ipoib_ctx_of(dev);
	int ret;

	if (data && data[IFLA_IPOIB_MODE]) {
		u16 mode = nla_get_u16(data[IFLA_IPOIB_MODE]);

		if (mode != IPOIB_MODE_DATAGRAM && mode != IPOIB_MODE_CONNECTED)
			return -EINVAL;
		ret = weft_ipoib_set_mode(ctx, mode == IPOIB_MODE_CONNECTED);
		if (ret < 0)
			return ret;
	}
	if (data && data[IFLA_IPOIB_UMCAST])
		weft_ipoib_set_umcast(ctx, nla_get_u16(data[IFLA_IPOIB_UMCAST]) != 0);
	return 0;
}

static int weft_ipoib_newlink(struct net *src_net, struct net_device *dev, struct nlattr *tb[],
			      struct nlattr *data[], struct netlink_ext_ack *extack)
{
	struct weft_ipoib_child_spec spec = { .dev = (struct weft_ipoib_netdev *)dev };
	struct weft_ipoib_info pinfo;
	struct net_device *pdev;
	long pkey;
	int ret;

	if (!tb[IFLA_LINK])
		return -EINVAL;
	pdev = __dev_get_by_index(src_net, nla_get_u32(tb[IFLA_LINK]));
	if (!pdev || !weft_ipoib_netdev_is_ours(pdev))
		return -ENODEV;
	weft_ipoib_get_info(weft_ipoib_ctx_of(pdev), &pinfo);
	pkey = data && data[IFLA_IPOIB_PKEY] ? nla_get_u16(data[IFLA_IPOIB_PKEY]) : pinfo.pkey;
	if (data && data[IFLA_IPOIB_MODE] && nla_get_u16(data[IFLA_IPOIB_MODE]) > IPOIB_MODE_CONNECTED)
		return -EINVAL;
	ret = weft_ipoib_child_add(weft_ipoib_ctx_of(pdev), pkey, &spec);
	if (ret)
		return ret;
	/* As Linux: the child is made, then takes mode and umcast; if that fails it goes again. */
	ret = weft_ipoib_changelink(dev, tb, data, extack);
	if (ret)
		weft_ipoib_child_unlink(weft_ipoib_ctx_of(dev), NULL);
	return ret;
}

static void weft_ipoib_dellink(struct net_device *dev, struct list_head *head)
{
	weft_ipoib_child_unlink(weft_ipoib_ctx_of(dev), head);
}

static size_t weft_ipoib_get_size(const struct net_device *dev)
{
	return 3 * nla_total_size(sizeof(u16)); /* PKEY, MODE, UMCAST */
}

static int weft_ipoib_fill_info(struct sk_buff *skb, const struct net_device *dev)
{
	void *ctx = weft_ipoib_ctx_of(dev);
	struct weft_ipoib_info info;

	weft_ipoib_get_info(ctx, &info);
	if (nla_put_u16(skb, IFLA_IPOIB_PKEY, info.pkey) ||
	    nla_put_u16(skb, IFLA_IPOIB_MODE,
			weft_ipoib_connected(ctx) ? IPOIB_MODE_CONNECTED : IPOIB_MODE_DATAGRAM) ||
	    nla_put_u16(skb, IFLA_IPOIB_UMCAST, info.umcast))
		return -EMSGSIZE;
	return 0;
}

struct rtnl_link_ops weft_ipoib_link_ops __read_mostly = {
	.kind = "ipoib",
	.netns_refund = true,
	.maxtype = IFLA_IPOIB_MAX,
	.policy = weft_ipoib_policy,
	.priv_size = sizeof(struct weft_ipoib_priv),
	.setup = weft_ipoib_setup,
	.newlink = weft_ipoib_newlink,
	.dellink = weft_ipoib_dellink,
	.changelink = weft_ipoib_changelink,
	.get_size = weft_ipoib_get_size,
	.fill_info = weft_ipoib_fill_info,
};

int weft_ipoib_link_register(void)
{
	return rtnl_link_register(&weft_ipoib_link_ops);
}

/* Every child goes (dellink); a port's own interface stays for the verbs client to remove. */
void weft_ipoib_link_unregister(void)
{
	rtnl_link_unregister(&weft_ipoib_link_ops);
}

/* --- a child's netdev -------------------------------------------------------- */

static void weft_ipoib_child_destructor(struct net_device *dev)
{
	weft_ipoib_child_released(weft_ipoib_ctx_of(dev));
	/* Nothing receives any more: the pages go back (a port's own do in netdev_free). */
	weft_ipoib_priv_caches_destroy(netdev_priv(dev));
}

struct weft_ipoib_netdev *weft_ipoib_child_netdev_create(void *ctx, const struct weft_ipoib_child_spec *spec,
							 uint8_t port, const uint8_t *addr,
							 const uint8_t *bcast, unsigned int mtu,
							 unsigned int tx_queue_len, int *err)
{
	struct net_device *parent = (struct net_device *)spec->parent;
	struct net_device *dev = (struct net_device *)spec->dev;
	int ret;

	ASSERT_RTNL();
	if (!dev) {
		dev = alloc_netdev(sizeof(struct weft_ipoib_priv), spec->name, NET_NAME_UNKNOWN,
				   weft_ipoib_setup);
		if (!dev) {
			*err = -ENOMEM;
			return NULL;
		}
		dev_net_set(dev, dev_net(parent));
	}
	ret = weft_ipoib_netdev_prepare(dev, ctx, port, addr, bcast, mtu, tx_queue_len);
	if (!ret) {
		dev->rtnl_link_ops = &weft_ipoib_link_ops;
		dev->sysfs_groups[0] = &weft_ipoib_child_attrs;
		ret = register_netdevice(dev);
		if (ret)
			weft_ipoib_priv_caches_destroy(netdev_priv(dev));
	}
	if (ret) {
		/* Not registered: unused, and a netdev from rtnl_newlink is still rtnl's to free. */
		if (!spec->dev)
			free_netdev(dev);
		*err = ret;
		return NULL;
	}
	return (struct weft_ipoib_netdev *)dev;
}

void weft_ipoib_child_netdev_unlink(struct weft_ipoib_netdev *nd, void *head)
{
	struct net_device *dev = (struct net_device *)nd;

	ASSERT_RTNL();
	/* Freed by netdev_run_todo after the destructor, once every reference is gone. */
	dev->priv_destructor = weft_ipoib_child_destructor;
	dev->needs_free_netdev = true;
	unregister_netdevice_queue(dev, head);
}
