// SPDX-License-Identifier: GPL-2.0
/*
 * The `infiniband_mad` class and the umadN/issmN character devices
 * (umad_kapi.h).  Thin: agents, queues and the IsSM hold live in C++
 * (file.cpp, port.cpp); this file owns the class, the device numbers, the
 * struct device + cdev pairs, a wait queue per device (issm openers) and
 * per open umad file (readers, pollers), and the user copies.  Names and
 * formats follow the in-tree 6.1 ABI that libibumad reads.
 *
 * Lifetime: a weft_umad_cdev is one struct device with its cdev; the cdev
 * holds the device while any file is open (chrdev_open takes the cdev's
 * kobject, which pins its parent), so the structure and the C++ port
 * reference it carries outlive every file.  The device's release drops
 * that reference.  .owner pins weft_umad while a file is open.
 */
#include <linux/cdev.h>
#include <linux/compat.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "umad_kapi.h"

#define WEFT_UMAD_IBDEV_MAX 64

struct weft_umad_cdev {
	struct device dev;
	struct cdev cdev;
	wait_queue_head_t wait;		/* issm openers waiting for the holder to close */
	void *port_ctx;			/* C++ port; its reference is dropped at release */
	char ibdev[WEFT_UMAD_IBDEV_MAX];
	u32 port;
};

struct weft_umad_waiter {
	wait_queue_head_t wait;
	void *file;			/* C++ file */
};

static dev_t weft_umad_base;

static struct weft_umad_cdev *to_cdev(struct device *dev)
{
	return container_of(dev, struct weft_umad_cdev, dev);
}

/* --- class ------------------------------------------------------------------ */

static ssize_t ibdev_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", to_cdev(dev)->ibdev);
}
static DEVICE_ATTR_RO(ibdev);

static ssize_t port_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_cdev(dev)->port);
}
static DEVICE_ATTR_RO(port);

static ssize_t recv_dropped_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  to_cdev(dev)->port_ctx ? (unsigned long long)weft_umad_port_recv_dropped(to_cdev(dev)->port_ctx) : 0ull);
}
static DEVICE_ATTR_RO(recv_dropped);

static struct attribute *weft_umad_dev_attrs[] = {
	&dev_attr_ibdev.attr,
	&dev_attr_port.attr,
	&dev_attr_recv_dropped.attr,
	NULL
};
ATTRIBUTE_GROUPS(weft_umad_dev);

static ssize_t abi_version_show(struct class *class, struct class_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", WEFT_UMAD_ABI_VERSION);
}
static CLASS_ATTR_RO(abi_version);

static struct attribute *weft_umad_class_attrs[] = {
	&class_attr_abi_version.attr,
	NULL
};
ATTRIBUTE_GROUPS(weft_umad_class);

static char *weft_umad_devnode(struct device *dev, umode_t *mode)
{
	return kasprintf(GFP_KERNEL, "infiniband/%s", dev_name(dev));
}

static struct class weft_umad_class = {
	.name = "infiniband_mad",
	.devnode = weft_umad_devnode,
	.class_groups = weft_umad_class_groups,
	.dev_groups = weft_umad_dev_groups,
};

int weft_umad_class_init(void)
{
	int ret = alloc_chrdev_region(&weft_umad_base, 0, 2 * WEFT_UMAD_MAX_PORTS,
				      "infiniband_mad");

	if (ret)
		return ret;
	ret = class_register(&weft_umad_class);
	if (ret)
		unregister_chrdev_region(weft_umad_base, 2 * WEFT_UMAD_MAX_PORTS);
	return ret;
}

void weft_umad_class_exit(void)
{
	class_unregister(&weft_umad_class);
	unregister_chrdev_region(weft_umad_base, 2 * WEFT_UMAD_MAX_PORTS);
}

/* --- umadN ------------------------------------------------------------------ */

static int weft_umad_open(struct inode *inode, struct file *filp)
{
	struct weft_umad_cdev *c = container_of(inode->i_cdev, struct weft_umad_cdev, cdev);
	struct weft_umad_waiter *w = kzalloc(sizeof(*w), GFP_KERNEL);
	int ret;

	if (!w)
		return -ENOMEM;
	init_waitqueue_head(&w->wait);
	ret = weft_umad_file_open(c->port_ctx, w, &w->file);
	if (ret) {
		kfree(w);
		return ret;
	}
	filp->private_data = w;
	return stream_open(inode, filp);
}

static int weft_umad_release(struct inode *inode, struct file *filp)
{
	struct weft_umad_waiter *w = filp->private_data;

	weft_umad_file_release(w->file);
	kfree(w);
	return 0;
}

static ssize_t weft_umad_read(struct file *filp, char __user *buf, size_t len, loff_t *pos)
{
	struct weft_umad_waiter *w = filp->private_data;
	long ret;

	for (;;) {
		ret = weft_umad_file_read(w->file, buf, len);
		if (ret != -EAGAIN || (filp->f_flags & O_NONBLOCK))
			return ret;
		if (wait_event_interruptible(w->wait, weft_umad_file_readable(w->file)))
			return -ERESTARTSYS;
	}
}

static ssize_t weft_umad_write(struct file *filp, const char __user *buf, size_t len,
			       loff_t *pos)
{
	struct weft_umad_waiter *w = filp->private_data;

	return weft_umad_file_write(w->file, buf, len);
}

static __poll_t weft_umad_poll(struct file *filp, struct poll_table_struct *pt)
{
	struct weft_umad_waiter *w = filp->private_data;
	__poll_t mask = EPOLLOUT | EPOLLWRNORM;	/* a send never has to wait */
	unsigned int st;

	poll_wait(filp, &w->wait, pt);
	st = weft_umad_file_poll(w->file);
	if (st & WEFT_UMAD_POLL_IN)
		mask |= EPOLLIN | EPOLLRDNORM;
	if (st & WEFT_UMAD_POLL_ERR)
		mask = EPOLLERR;
	return mask;
}

static long weft_umad_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct weft_umad_waiter *w = filp->private_data;

	return weft_umad_file_ioctl(w->file, cmd, (void __user *)arg);
}

#ifdef CONFIG_COMPAT
/* The structures have the same layout for 32-bit callers (4-byte aligned longs). */
static long weft_umad_compat_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct weft_umad_waiter *w = filp->private_data;

	return weft_umad_file_ioctl(w->file, cmd, compat_ptr(arg));
}
#endif

static const struct file_operations weft_umad_fops = {
	.owner = THIS_MODULE,
	.open = weft_umad_open,
	.release = weft_umad_release,
	.read = weft_umad_read,
	.write = weft_umad_write,
	.poll = weft_umad_poll,
	.unlocked_ioctl = weft_umad_ioctl,
#ifdef CONFIG_COMPAT
	.compat_ioctl = weft_umad_compat_ioctl,
#endif
	.llseek = no_llseek,
};

void weft_umad_file_wake(struct weft_umad_waiter *w)
{
	wake_up_interruptible(&w->wait);
}

/* --- issmN ------------------------------------------------------------------ */

static int weft_issm_open(struct inode *inode, struct file *filp)
{
	struct weft_umad_cdev *c = container_of(inode->i_cdev, struct weft_umad_cdev, cdev);
	void *file;
	int ret;

	/* One holder at a time: others wait (or fail with O_NONBLOCK), as in-tree. */
	for (;;) {
		ret = weft_umad_issm_open(c->port_ctx, &file);
		if (ret != -EBUSY)
			break;
		if (filp->f_flags & O_NONBLOCK)
			return -EAGAIN;
		if (wait_event_interruptible(c->wait, !weft_umad_issm_busy(c->port_ctx)))
			return -ERESTARTSYS;
	}
	if (ret)
		return ret;
	filp->private_data = file;
	return nonseekable_open(inode, filp);
}

static int weft_issm_release(struct inode *inode, struct file *filp)
{
	struct weft_umad_cdev *c = container_of(inode->i_cdev, struct weft_umad_cdev, cdev);

	weft_umad_issm_release(filp->private_data);
	wake_up_interruptible(&c->wait);
	return 0;
}

static const struct file_operations weft_issm_fops = {
	.owner = THIS_MODULE,
	.open = weft_issm_open,
	.release = weft_issm_release,
	.llseek = no_llseek,
};

/* --- devices ----------------------------------------------------------------- */

static void weft_umad_dev_release(struct device *dev)
{
	struct weft_umad_cdev *c = to_cdev(dev);

	if (c->port_ctx)
		weft_umad_port_put(c->port_ctx);
	kfree(c);
}

struct weft_umad_cdev *weft_umad_cdev_add(const char *ibdev, uint32_t port, uint32_t num,
					  bool issm, void *port_ctx, int *err)
{
	struct weft_umad_cdev *c;
	int ret;

	if (num >= WEFT_UMAD_MAX_PORTS) {
		*err = -EINVAL;
		return NULL;
	}
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c) {
		*err = -ENOMEM;
		return NULL;
	}
	strscpy(c->ibdev, ibdev, sizeof(c->ibdev));
	c->port = port;
	init_waitqueue_head(&c->wait);
	device_initialize(&c->dev);
	c->dev.class = &weft_umad_class;
	c->dev.release = weft_umad_dev_release;
	c->dev.devt = weft_umad_base + num + (issm ? WEFT_UMAD_MAX_PORTS : 0);
	ret = dev_set_name(&c->dev, "%s%u", issm ? "issm" : "umad", num);
	if (ret)
		goto err;
	cdev_init(&c->cdev, issm ? &weft_issm_fops : &weft_umad_fops);
	c->cdev.owner = THIS_MODULE;
	/* Set before the node appears: an open may follow at once. */
	c->port_ctx = port_ctx;
	ret = cdev_device_add(&c->cdev, &c->dev);
	if (ret)
		goto err;
	return c;	/* from here the device owns the caller's reference */

err:
	c->port_ctx = NULL;	/* the caller keeps its reference */
	put_device(&c->dev);
	*err = ret;
	return NULL;
}

void weft_umad_cdev_del(struct weft_umad_cdev *c)
{
	if (!c)
		return;
	cdev_device_del(&c->cdev, &c->dev);
	wake_up_interruptible(&c->wait);
	put_device(&c->dev);
}

void weft_umad_cdev_wake(struct weft_umad_cdev *c)
{
	if (c)
		wake_up_interruptible(&c->wait);
}

/* --- user memory ------------------------------------------------------------- */

int weft_umad_copy_from_user(void *dst, const void __user *src, size_t len)
{
	return copy_from_user(dst, src, len) ? -EFAULT : 0;
}

int weft_umad_copy_to_user(void __user *dst, const void *src, size_t len)
{
	return copy_to_user(dst, src, len) ? -EFAULT : 0;
}
