// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel side of switching IPoIB's transport (RFC 4755; ipoib_kapi.h):
 * the "mode" sysfs file and the MTU changes it brings, under rtnl.  Thin:
 * which mode and which MTU are decided in C++ (cm.cpp, control.cpp).
 */
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>

#include "ipoib_kapi.h"
#include "shim_priv.h"

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
