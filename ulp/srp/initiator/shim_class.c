// SPDX-License-Identifier: GPL-2.0
/*
 * The class "infiniband_srp" that srp_daemon and people's scripts write
 * to: one device srp-<hca>-<port> per CA port with add_target (the
 * in-tree option string, handed to the C++ side whole), ibdev and port.
 */
#include <linux/capability.h>
#include <linux/device.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "srp_kapi.h"

struct weft_srp_port_dev {
	struct device dev;
	void *ctx;
	char ibdev[20];
	u8 port;
};

static struct weft_srp_port_dev *to_pd(struct device *dev)
{
	return container_of(dev, struct weft_srp_port_dev, dev);
}

static ssize_t add_target_store(struct device *dev, struct device_attribute *attr,
				const char *buf, size_t count)
{
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = weft_srp_add_target(to_pd(dev)->ctx, buf, count);
	return ret ? ret : count;
}
static DEVICE_ATTR_WO(add_target);

static ssize_t ibdev_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", to_pd(dev)->ibdev);
}
static DEVICE_ATTR_RO(ibdev);

static ssize_t port_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_pd(dev)->port);
}
static DEVICE_ATTR_RO(port);

static struct attribute *srp_port_attrs[] = {
	&dev_attr_add_target.attr,
	&dev_attr_ibdev.attr,
	&dev_attr_port.attr,
	NULL,
};
ATTRIBUTE_GROUPS(srp_port);

static void srp_port_release(struct device *dev)
{
	kfree(to_pd(dev));
}

static struct class srp_class = {
	.name = "infiniband_srp",
	.owner = THIS_MODULE,
	.dev_groups = srp_port_groups,
	.dev_release = srp_port_release,
};

int weft_srp_class_register(void)
{
	return class_register(&srp_class);
}

void weft_srp_class_unregister(void)
{
	class_unregister(&srp_class);
}

struct weft_srp_port_dev *weft_srp_port_dev_create(void *ctx, const char *ibdev, uint8_t port,
						   int *err)
{
	struct weft_srp_port_dev *d = kzalloc(sizeof(*d), GFP_KERNEL);
	int ret;

	if (!d) {
		*err = -ENOMEM;
		return NULL;
	}
	d->ctx = ctx;
	d->port = port;
	strscpy(d->ibdev, ibdev, sizeof(d->ibdev));
	d->dev.class = &srp_class;
	dev_set_name(&d->dev, "srp-%s-%u", ibdev, port);
	ret = device_register(&d->dev);
	if (ret) {
		put_device(&d->dev);
		*err = ret;
		return NULL;
	}
	return d;
}

void weft_srp_port_dev_destroy(struct weft_srp_port_dev *d)
{
	/* Removing the attributes waits for an add_target in progress. */
	device_unregister(&d->dev);
}

struct device *weft_srp_port_dev_device(struct weft_srp_port_dev *d);
struct device *weft_srp_port_dev_device(struct weft_srp_port_dev *d)
{
	return &d->dev;
}
