// SPDX-License-Identifier: GPL-2.0
/*
 * IPoIB's own files in /sys/class/net/<if>/, as Linux's ipoib has them
 * (Documentation/ABI/testing/sysfs-class-net-...):
 *   a port's interface: pkey, umcast, create_child, delete_child
 *   a P_Key child:      pkey, umcast, parent
 * (`mode` joins both with connected mode.)  create_child and delete_child
 * take the P_Key as sscanf's %i reads it; like every child operation they
 * run under rtnl, taken with trylock because unregistering a netdev waits
 * for its sysfs writers while holding rtnl.
 */
#include <linux/capability.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/sysfs.h>

#include "child_kapi.h"
#include "shim_priv.h"

static void *ctx_of(struct device *d)
{
	return weft_ipoib_ctx_of(to_net_dev(d));
}

static ssize_t pkey_show(struct device *d, struct device_attribute *attr, char *buf)
{
	struct weft_ipoib_info info;

	weft_ipoib_get_info(ctx_of(d), &info);
	return sysfs_emit(buf, "0x%04x\n", info.pkey);
}
static DEVICE_ATTR_RO(pkey);

static ssize_t umcast_show(struct device *d, struct device_attribute *attr, char *buf)
{
	struct weft_ipoib_info info;

	weft_ipoib_get_info(ctx_of(d), &info);
	return sysfs_emit(buf, "%d\n", info.umcast);
}

static ssize_t umcast_store(struct device *d, struct device_attribute *attr, const char *buf,
			    size_t count)
{
	unsigned long v;

	if (kstrtoul(buf, 0, &v))
		return -EINVAL;
	weft_ipoib_set_umcast(ctx_of(d), v > 0);
	return count;
}
static DEVICE_ATTR_RW(umcast);

static ssize_t parent_show(struct device *d, struct device_attribute *attr, char *buf)
{
	struct weft_ipoib_info info;

	weft_ipoib_get_info(ctx_of(d), &info);
	if (!info.parent)
		return -ENODEV;
	return sysfs_emit(buf, "%s\n", ((struct net_device *)info.parent)->name);
}
static DEVICE_ATTR_RO(parent);

/* The P_Key written, checked and applied under rtnl by @fn (client.cpp). */
static ssize_t child_op(struct device *d, const char *buf, size_t count, bool add)
{
	struct net_device *dev = to_net_dev(d);
	struct weft_ipoib_child_spec spec = { .legacy = true };
	int pkey, ret;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	if (sscanf(buf, "%i", &pkey) != 1)
		return -EINVAL;
	if (!rtnl_trylock())
		return restart_syscall();
	if (dev->reg_state != NETREG_REGISTERED)
		ret = -EPERM;
	else if (add)
		ret = weft_ipoib_child_add(ctx_of(d), pkey, &spec);
	else
		ret = weft_ipoib_child_del(ctx_of(d), pkey);
	/* A deleted child's netdev is unregistered here, its teardown finished when rtnl is dropped. */
	rtnl_unlock();
	return ret ? ret : count;
}

static ssize_t create_child_store(struct device *d, struct device_attribute *attr, const char *buf,
				  size_t count)
{
	return child_op(d, buf, count, true);
}
static DEVICE_ATTR_WO(create_child);

static ssize_t delete_child_store(struct device *d, struct device_attribute *attr, const char *buf,
				  size_t count)
{
	return child_op(d, buf, count, false);
}
static DEVICE_ATTR_WO(delete_child);

static struct attribute *weft_ipoib_port_attr_list[] = {
	&dev_attr_pkey.attr,
	&dev_attr_umcast.attr,
	&dev_attr_create_child.attr,
	&dev_attr_delete_child.attr,
	NULL,
};

static struct attribute *weft_ipoib_child_attr_list[] = {
	&dev_attr_pkey.attr,
	&dev_attr_umcast.attr,
	&dev_attr_parent.attr,
	NULL,
};

const struct attribute_group weft_ipoib_port_attrs = { .attrs = weft_ipoib_port_attr_list };
const struct attribute_group weft_ipoib_child_attrs = { .attrs = weft_ipoib_child_attr_list };
