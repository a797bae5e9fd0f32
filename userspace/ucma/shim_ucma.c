// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/infiniband/rdma_cm (ucma_kapi.h): the misc device, its file
 * operations, the per-file wait queue, MIGRATE_ID's look-up of another
 * descriptor, and the user copies.  Thin: Ids, commands and events live
 * in C++ (file.cpp, commands.cpp).  Name, node, mode and the abi_version
 * attribute follow the in-tree 6.1 drivers/infiniband/core/ucma.c, which
 * librdmacm reads (class/misc/rdma_cm/abi_version when RDMA netlink has
 * no "rdma_cm" char device, then /dev/infiniband/rdma_cm by name).
 */
#include <linux/cred.h>
#include <linux/device.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <rdma/ib.h>
#include <uapi/rdma/rdma_user_cm.h>
#include <uapi/rdma/ib_user_sa.h>
#include <uapi/rdma/ib_user_verbs.h>

#include "ucma_kapi.h"

/* The C++ layouts (abi.h) have the UAPI's sizes and offsets. */
static_assert(WEFT_UCMA_ABI_VERSION == RDMA_USER_CM_ABI_VERSION);
static_assert(WEFT_UCMA_SZ_CMD_HDR == sizeof(struct rdma_ucm_cmd_hdr));
static_assert(WEFT_UCMA_SZ_CREATE_ID == sizeof(struct rdma_ucm_create_id));
static_assert(WEFT_UCMA_SZ_ID_RESP == sizeof(struct rdma_ucm_create_id_resp));
static_assert(WEFT_UCMA_SZ_DESTROY_ID == sizeof(struct rdma_ucm_destroy_id));
static_assert(WEFT_UCMA_SZ_ID_RESP == sizeof(struct rdma_ucm_destroy_id_resp));
static_assert(WEFT_UCMA_SZ_ID_RESP == sizeof(struct rdma_ucm_migrate_resp));
static_assert(WEFT_UCMA_SZ_BIND_IP == sizeof(struct rdma_ucm_bind_ip));
static_assert(WEFT_UCMA_SZ_BIND == sizeof(struct rdma_ucm_bind));
static_assert(WEFT_UCMA_SZ_RESOLVE_IP == sizeof(struct rdma_ucm_resolve_ip));
static_assert(WEFT_UCMA_SZ_RESOLVE_ADDR == sizeof(struct rdma_ucm_resolve_addr));
static_assert(WEFT_UCMA_SZ_RESOLVE_ROUTE == sizeof(struct rdma_ucm_resolve_route));
static_assert(WEFT_UCMA_SZ_QUERY == sizeof(struct rdma_ucm_query));
static_assert(WEFT_UCMA_SZ_QUERY_ROUTE_RESP == sizeof(struct rdma_ucm_query_route_resp));
static_assert(WEFT_UCMA_OFF_QUERY_ROUTE_IBDEV_INDEX ==
	      offsetof(struct rdma_ucm_query_route_resp, ibdev_index));
static_assert(WEFT_UCMA_SZ_QUERY_ADDR_RESP == sizeof(struct rdma_ucm_query_addr_resp));
static_assert(WEFT_UCMA_OFF_QUERY_ADDR_IBDEV_INDEX ==
	      offsetof(struct rdma_ucm_query_addr_resp, ibdev_index));
static_assert(WEFT_UCMA_SZ_QUERY_PATH_RESP == sizeof(struct rdma_ucm_query_path_resp));
static_assert(WEFT_UCMA_SZ_PATH_REC_DATA == sizeof(struct ib_path_rec_data));
static_assert(WEFT_UCMA_SZ_USER_PATH_REC == sizeof(struct ib_user_path_rec));
static_assert(WEFT_UCMA_SZ_CONN_PARAM == sizeof(struct rdma_ucm_conn_param));
static_assert(WEFT_UCMA_SZ_UD_PARAM == sizeof(struct rdma_ucm_ud_param));
static_assert(WEFT_UCMA_SZ_CONNECT == sizeof(struct rdma_ucm_connect));
static_assert(WEFT_UCMA_OFF_CONNECT_ECE == offsetof(struct rdma_ucm_connect, ece));
static_assert(WEFT_UCMA_SZ_LISTEN == sizeof(struct rdma_ucm_listen));
static_assert(WEFT_UCMA_SZ_ACCEPT == sizeof(struct rdma_ucm_accept));
static_assert(WEFT_UCMA_OFF_ACCEPT_ECE == offsetof(struct rdma_ucm_accept, ece));
static_assert(WEFT_UCMA_SZ_REJECT == sizeof(struct rdma_ucm_reject));
static_assert(WEFT_UCMA_SZ_DISCONNECT == sizeof(struct rdma_ucm_disconnect));
static_assert(WEFT_UCMA_SZ_INIT_QP_ATTR == sizeof(struct rdma_ucm_init_qp_attr));
static_assert(WEFT_UCMA_SZ_QP_ATTR == sizeof(struct ib_uverbs_qp_attr));
static_assert(WEFT_UCMA_SZ_AH_ATTR == sizeof(struct ib_uverbs_ah_attr));
static_assert(WEFT_UCMA_SZ_NOTIFY == sizeof(struct rdma_ucm_notify));
static_assert(WEFT_UCMA_SZ_JOIN_IP_MCAST == sizeof(struct rdma_ucm_join_ip_mcast));
static_assert(WEFT_UCMA_SZ_JOIN_MCAST == sizeof(struct rdma_ucm_join_mcast));
static_assert(WEFT_UCMA_SZ_GET_EVENT == sizeof(struct rdma_ucm_get_event));
static_assert(WEFT_UCMA_SZ_EVENT_RESP == sizeof(struct rdma_ucm_event_resp));
static_assert(WEFT_UCMA_OFF_EVENT_RESP_PARAM == offsetof(struct rdma_ucm_event_resp, param));
static_assert(WEFT_UCMA_OFF_EVENT_RESP_RESERVED ==
	      offsetof(struct rdma_ucm_event_resp, reserved));
static_assert(WEFT_UCMA_SZ_SET_OPTION == sizeof(struct rdma_ucm_set_option));
static_assert(WEFT_UCMA_SZ_MIGRATE_ID == sizeof(struct rdma_ucm_migrate_id));
static_assert(WEFT_UCMA_SZ_SOCKADDR_IN == sizeof(struct sockaddr_in));
static_assert(WEFT_UCMA_SZ_SOCKADDR_IN6 == sizeof(struct sockaddr_in6));
static_assert(WEFT_UCMA_SZ_SOCKADDR_IB == sizeof(struct sockaddr_ib));
static_assert(WEFT_UCMA_SZ_SOCKADDR_STORAGE == sizeof(struct __kernel_sockaddr_storage));
static_assert(offsetof(struct sockaddr_in, sin_port) == 2 &&
	      offsetof(struct sockaddr_in, sin_addr) == 4);
static_assert(offsetof(struct sockaddr_in6, sin6_port) == 2 &&
	      offsetof(struct sockaddr_in6, sin6_addr) == 8 &&
	      offsetof(struct sockaddr_in6, sin6_scope_id) == 24);
static_assert(offsetof(struct sockaddr_ib, sib_pkey) == 2 &&
	      offsetof(struct sockaddr_ib, sib_addr) == 8 &&
	      offsetof(struct sockaddr_ib, sib_sid) == 24);
static_assert(WEFT_UCMA_AF_INET == AF_INET && WEFT_UCMA_AF_INET6 == AF_INET6 &&
	      WEFT_UCMA_AF_IB == AF_IB);

struct weft_ucma_waiter {
	wait_queue_head_t wait;
	void *file;		/* C++ File */
};

static const struct file_operations weft_ucma_fops;

void weft_ucma_wake(struct weft_ucma_waiter *w)
{
	wake_up_interruptible(&w->wait);
}

int weft_ucma_wait(struct weft_ucma_waiter *w, bool (*ready)(void *arg), void *arg)
{
	return wait_event_interruptible(w->wait, ready(arg));
}

static int weft_ucma_open(struct inode *inode, struct file *filp)
{
	struct weft_ucma_waiter *w = kzalloc(sizeof(*w), GFP_KERNEL);
	int ret;

	if (!w)
		return -ENOMEM;
	init_waitqueue_head(&w->wait);
	ret = weft_ucma_file_open(w, &w->file);
	if (ret) {
		kfree(w);
		return ret;
	}
	filp->private_data = w;
	return stream_open(inode, filp);
}

/* The last reference: close(), exit, kill -9 all come here. */
static int weft_ucma_release(struct inode *inode, struct file *filp)
{
	struct weft_ucma_waiter *w = filp->private_data;

	weft_ucma_file_release(w->file);
	kfree(w);
	return 0;
}

static ssize_t weft_ucma_write(struct file *filp, const char __user *buf, size_t len,
			       loff_t *pos)
{
	struct weft_ucma_waiter *w = filp->private_data;

	/* In-tree ib_safe_file_access(): commands only with the opener's credentials. */
	if (filp->f_cred != current_cred())
		return -EACCES;
	return weft_ucma_file_write(w->file, buf, len, filp->f_flags & O_NONBLOCK);
}

static __poll_t weft_ucma_poll(struct file *filp, struct poll_table_struct *pt)
{
	struct weft_ucma_waiter *w = filp->private_data;

	poll_wait(filp, &w->wait, pt);
	return (weft_ucma_file_poll(w->file) & WEFT_UCMA_POLL_IN) ? EPOLLIN | EPOLLRDNORM : 0;
}

static const struct file_operations weft_ucma_fops = {
	.owner = THIS_MODULE,
	.open = weft_ucma_open,
	.release = weft_ucma_release,
	.write = weft_ucma_write,
	.poll = weft_ucma_poll,
	.llseek = no_llseek,
};

void *weft_ucma_fd_get(int fd, void **hold, int *err)
{
	struct file *f = fget(fd);
	struct weft_ucma_waiter *w;

	if (!f) {
		*err = -ENOENT;
		return NULL;
	}
	if (f->f_op != &weft_ucma_fops) {
		fput(f);
		*err = -EINVAL;
		return NULL;
	}
	w = f->private_data;
	*hold = f;
	return w->file;
}

void weft_ucma_fd_put(void *hold)
{
	fput(hold);
}

int weft_ucma_copy_from_user(void *dst, const void __user *src, size_t len)
{
	return copy_from_user(dst, src, len) ? -EFAULT : 0;
}

int weft_ucma_copy_to_user(void __user *dst, const void *src, size_t len)
{
	return copy_to_user(dst, src, len) ? -EFAULT : 0;
}

/* --- the misc device ------------------------------------------------------------ */

static struct miscdevice weft_ucma_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "rdma_cm",
	.nodename = "infiniband/rdma_cm",
	.mode = 0666,
	.fops = &weft_ucma_fops,
};

static ssize_t abi_version_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", WEFT_UCMA_ABI_VERSION);
}
static DEVICE_ATTR_RO(abi_version);

static ssize_t weft_stats_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return weft_ucma_stats_show(buf, PAGE_SIZE);
}
static DEVICE_ATTR_RO(weft_stats);

int weft_ucma_misc_register(void)
{
	int ret = misc_register(&weft_ucma_misc);

	if (ret)
		return ret;
	ret = device_create_file(weft_ucma_misc.this_device, &dev_attr_abi_version);
	if (!ret)
		ret = device_create_file(weft_ucma_misc.this_device, &dev_attr_weft_stats);
	if (ret) {
		device_remove_file(weft_ucma_misc.this_device, &dev_attr_abi_version);
		misc_deregister(&weft_ucma_misc);
	}
	return ret;
}

void weft_ucma_misc_deregister(void)
{
	device_remove_file(weft_ucma_misc.this_device, &dev_attr_weft_stats);
	device_remove_file(weft_ucma_misc.this_device, &dev_attr_abi_version);
	misc_deregister(&weft_ucma_misc);
}
