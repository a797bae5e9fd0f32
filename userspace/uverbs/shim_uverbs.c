// SPDX-License-Identifier: GPL-2.0
/*
 * The `infiniband_verbs` class, the uverbsN character devices and the
 * async event files (uverbs_kapi.h).  Thin: contexts, commands and events
 * live in C++ (device.cpp, file.cpp, events.cpp); this file owns the
 * class, the device numbers, the struct device + cdev pairs, the event
 * files' wait queues, and the user copies.  Names, formats and modes
 * follow the in-tree 6.1 ABI (drivers/infiniband/core/uverbs_main.c) that
 * libibverbs reads.
 *
 * Lifetime: a weft_uverbs_cdev is one struct device with its cdev; the
 * cdev holds the device while any file is open, so the structure and the
 * C++ device reference it carries outlive every file.  .owner pins
 * weft_uverbs while a command file or an event file is open.
 */
#include <linux/anon_inodes.h>
#include <linux/cdev.h>
#include <linux/cred.h>
#include <linux/device.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <uapi/rdma/ib_user_verbs.h>
#include <uapi/rdma/rdma_user_rxe.h>

#include "uverbs_kapi.h"

/* The C++ layouts (abi.h) have the UAPI's sizes. */
static_assert(WEFT_UVERBS_ABI_VERSION == IB_USER_VERBS_ABI_VERSION);
static_assert(WEFT_UVERBS_SZ_CMD_HDR == sizeof(struct ib_uverbs_cmd_hdr));
static_assert(WEFT_UVERBS_SZ_EX_CMD_HDR == sizeof(struct ib_uverbs_ex_cmd_hdr));
static_assert(WEFT_UVERBS_SZ_GET_CONTEXT == sizeof(struct ib_uverbs_get_context));
static_assert(WEFT_UVERBS_SZ_GET_CONTEXT_RESP == sizeof(struct ib_uverbs_get_context_resp));
static_assert(WEFT_UVERBS_SZ_QUERY_DEVICE == sizeof(struct ib_uverbs_query_device));
static_assert(WEFT_UVERBS_SZ_QUERY_DEVICE_RESP == sizeof(struct ib_uverbs_query_device_resp));
static_assert(WEFT_UVERBS_SZ_QUERY_PORT == sizeof(struct ib_uverbs_query_port));
static_assert(WEFT_UVERBS_SZ_QUERY_PORT_RESP == sizeof(struct ib_uverbs_query_port_resp));
static_assert(WEFT_UVERBS_SZ_EX_QUERY_DEVICE == sizeof(struct ib_uverbs_ex_query_device));
static_assert(WEFT_UVERBS_SZ_EX_QUERY_DEVICE_RESP ==
	      sizeof(struct ib_uverbs_ex_query_device_resp));
static_assert(WEFT_UVERBS_SZ_ASYNC_EVENT_DESC == sizeof(struct ib_uverbs_async_event_desc));
static_assert(WEFT_UVERBS_SZ_ALLOC_PD == sizeof(struct ib_uverbs_alloc_pd));
static_assert(WEFT_UVERBS_SZ_ALLOC_PD_RESP == sizeof(struct ib_uverbs_alloc_pd_resp));
static_assert(WEFT_UVERBS_SZ_REG_MR == sizeof(struct ib_uverbs_reg_mr));
static_assert(WEFT_UVERBS_SZ_REG_MR_RESP == sizeof(struct ib_uverbs_reg_mr_resp));
static_assert(WEFT_UVERBS_SZ_ALLOC_MW == sizeof(struct ib_uverbs_alloc_mw));
static_assert(WEFT_UVERBS_SZ_ALLOC_MW_RESP == sizeof(struct ib_uverbs_alloc_mw_resp));
static_assert(WEFT_UVERBS_SZ_CREATE_CQ == sizeof(struct ib_uverbs_create_cq));
static_assert(WEFT_UVERBS_SZ_CREATE_CQ_RESP == sizeof(struct ib_uverbs_create_cq_resp));
static_assert(WEFT_UVERBS_SZ_DESTROY_CQ == sizeof(struct ib_uverbs_destroy_cq));
static_assert(WEFT_UVERBS_SZ_RESIZE_CQ == sizeof(struct ib_uverbs_resize_cq));
static_assert(WEFT_UVERBS_SZ_RESIZE_CQ_RESP == sizeof(struct ib_uverbs_resize_cq_resp));
static_assert(WEFT_UVERBS_SZ_CREATE_QP == sizeof(struct ib_uverbs_create_qp));
static_assert(WEFT_UVERBS_SZ_CREATE_QP_RESP == sizeof(struct ib_uverbs_create_qp_resp));
static_assert(WEFT_UVERBS_SZ_QP_DEST == sizeof(struct ib_uverbs_qp_dest));
static_assert(WEFT_UVERBS_SZ_QUERY_QP_RESP == sizeof(struct ib_uverbs_query_qp_resp));
static_assert(WEFT_UVERBS_SZ_MODIFY_QP == sizeof(struct ib_uverbs_modify_qp));
static_assert(WEFT_UVERBS_SZ_POST_SEND == sizeof(struct ib_uverbs_post_send));
static_assert(WEFT_UVERBS_SZ_AH_ATTR == sizeof(struct ib_uverbs_ah_attr));
static_assert(WEFT_UVERBS_SZ_CREATE_AH == sizeof(struct ib_uverbs_create_ah));
static_assert(WEFT_UVERBS_SZ_MCAST == sizeof(struct ib_uverbs_attach_mcast));
static_assert(WEFT_UVERBS_SZ_MCAST == sizeof(struct ib_uverbs_detach_mcast));
static_assert(WEFT_UVERBS_SZ_CREATE_SRQ == sizeof(struct ib_uverbs_create_srq));
static_assert(WEFT_UVERBS_SZ_CREATE_SRQ_RESP == sizeof(struct ib_uverbs_create_srq_resp));
static_assert(WEFT_UVERBS_SZ_MODIFY_SRQ == sizeof(struct ib_uverbs_modify_srq));
static_assert(WEFT_UVERBS_SZ_WC == sizeof(struct ib_uverbs_wc));
static_assert(WEFT_UVERBS_SZ_EX_CREATE_CQ == sizeof(struct ib_uverbs_ex_create_cq));
static_assert(WEFT_UVERBS_SZ_EX_CREATE_CQ_RESP == sizeof(struct ib_uverbs_ex_create_cq_resp));
static_assert(WEFT_UVERBS_SZ_EX_CREATE_QP == sizeof(struct ib_uverbs_ex_create_qp));
static_assert(WEFT_UVERBS_SZ_EX_CREATE_QP_RESP == sizeof(struct ib_uverbs_ex_create_qp_resp));
static_assert(WEFT_UVERBS_SZ_RXE_SEND_WR == sizeof(struct rxe_send_wr));
static_assert(WEFT_UVERBS_SZ_RXE_SEND_WQE == sizeof(struct rxe_send_wqe));
static_assert(WEFT_UVERBS_SZ_RXE_RECV_WQE == sizeof(struct rxe_recv_wqe));
static_assert(WEFT_UVERBS_SZ_RXE_QUEUE_HDR == sizeof(struct rxe_queue_buf));

#define WEFT_UVERBS_IBDEV_MAX 64	/* IB_DEVICE_NAME_MAX */

struct weft_uverbs_cdev {
	struct device dev;
	struct cdev cdev;
	void *dev_ctx;			/* C++ device; its reference is dropped at release */
	char ibdev[WEFT_UVERBS_IBDEV_MAX];
};

struct weft_uverbs_evwaiter {
	wait_queue_head_t wait;
	void *queue;			/* C++ event queue */
};

struct weft_uverbs_evfd {
	struct file *file;
	int fd;
};

static dev_t weft_uverbs_base;

static struct weft_uverbs_cdev *to_cdev(struct device *dev)
{
	return container_of(dev, struct weft_uverbs_cdev, dev);
}

/* --- class ------------------------------------------------------------------ */

static ssize_t ibdev_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", to_cdev(dev)->ibdev);
}
static DEVICE_ATTR_RO(ibdev);

static ssize_t abi_version_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", WEFT_UVERBS_DEVICE_ABI);
}
static DEVICE_ATTR_RO(abi_version);

static struct attribute *weft_uverbs_dev_attrs[] = {
	&dev_attr_abi_version.attr,
	&dev_attr_ibdev.attr,
	NULL
};
ATTRIBUTE_GROUPS(weft_uverbs_dev);

static ssize_t class_abi_version_show(struct class *class, struct class_attribute *attr,
				      char *buf)
{
	return sysfs_emit(buf, "%d\n", WEFT_UVERBS_ABI_VERSION);
}
static struct class_attribute class_attr_abi_version =
	__ATTR(abi_version, 0444, class_abi_version_show, NULL);

static struct attribute *weft_uverbs_class_attrs[] = {
	&class_attr_abi_version.attr,
	NULL
};
ATTRIBUTE_GROUPS(weft_uverbs_class);

/* In-tree uverbs_devnode: /dev/infiniband/uverbsN, usable by every user. */
static char *weft_uverbs_devnode(struct device *dev, umode_t *mode)
{
	if (mode)
		*mode = 0666;
	return kasprintf(GFP_KERNEL, "infiniband/%s", dev_name(dev));
}

static struct class weft_uverbs_class = {
	.name = "infiniband_verbs",
	.devnode = weft_uverbs_devnode,
	.class_groups = weft_uverbs_class_groups,
	.dev_groups = weft_uverbs_dev_groups,
};

int weft_uverbs_class_init(void)
{
	int ret = alloc_chrdev_region(&weft_uverbs_base, 0, WEFT_UVERBS_MAX_DEVICES,
				      "infiniband_verbs");

	if (ret)
		return ret;
	ret = class_register(&weft_uverbs_class);
	if (ret)
		unregister_chrdev_region(weft_uverbs_base, WEFT_UVERBS_MAX_DEVICES);
	return ret;
}

void weft_uverbs_class_exit(void)
{
	class_unregister(&weft_uverbs_class);
	unregister_chrdev_region(weft_uverbs_base, WEFT_UVERBS_MAX_DEVICES);
}

/* --- uverbsN ------------------------------------------------------------------- */

static int weft_uverbs_open(struct inode *inode, struct file *filp)
{
	struct weft_uverbs_cdev *c = container_of(inode->i_cdev, struct weft_uverbs_cdev, cdev);
	void *file;
	int ret = weft_uverbs_file_open(c->dev_ctx, &file);

	if (ret)
		return ret;
	filp->private_data = file;
	return stream_open(inode, filp);
}

static int weft_uverbs_release(struct inode *inode, struct file *filp)
{
	weft_uverbs_file_release(filp->private_data);
	return 0;
}

static ssize_t weft_uverbs_write(struct file *filp, const char __user *buf, size_t len,
				 loff_t *pos)
{
	/* In-tree ib_safe_file_access(): commands only with the opener's credentials. */
	if (filp->f_cred != current_cred())
		return -EACCES;
	return weft_uverbs_file_write(filp->private_data, buf, len);
}

/*
 * The ioctl() verbs ABI (RDMA_VERBS_IOCTL) is not offered: ENOTTY tells
 * libibverbs the ioctl framework is absent, and it uses write() for every
 * command (rdma-core's execute_ioctl_fallback()).
 */
static long weft_uverbs_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	return -ENOTTY;
}

/* The rings of the rxe provider, at the offsets create responses named. */
static int weft_uverbs_mmap(struct file *filp, struct vm_area_struct *vma)
{
	return weft_uverbs_file_mmap(filp->private_data, (u64)vma->vm_pgoff << PAGE_SHIFT,
				     vma->vm_end - vma->vm_start, vma);
}

static const struct file_operations weft_uverbs_fops = {
	.owner = THIS_MODULE,
	.open = weft_uverbs_open,
	.release = weft_uverbs_release,
	.write = weft_uverbs_write,
	.mmap = weft_uverbs_mmap,
	.unlocked_ioctl = weft_uverbs_ioctl,
	.compat_ioctl = weft_uverbs_ioctl,
	.llseek = no_llseek,
};

static void weft_uverbs_dev_release(struct device *dev)
{
	struct weft_uverbs_cdev *c = to_cdev(dev);

	if (c->dev_ctx)
		weft_uverbs_device_put(c->dev_ctx);
	kfree(c);
}

struct weft_uverbs_cdev *weft_uverbs_cdev_add(const char *ibdev, uint32_t num, void *dev_ctx,
					      int *err)
{
	struct weft_uverbs_cdev *c;
	int ret;

	if (num >= WEFT_UVERBS_MAX_DEVICES) {
		*err = -EINVAL;
		return NULL;
	}
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c) {
		*err = -ENOMEM;
		return NULL;
	}
	strscpy(c->ibdev, ibdev, sizeof(c->ibdev));
	device_initialize(&c->dev);
	c->dev.class = &weft_uverbs_class;
	c->dev.release = weft_uverbs_dev_release;
	c->dev.devt = weft_uverbs_base + num;
	ret = dev_set_name(&c->dev, "uverbs%u", num);
	if (ret)
		goto err;
	cdev_init(&c->cdev, &weft_uverbs_fops);
	c->cdev.owner = THIS_MODULE;
	c->dev_ctx = dev_ctx;	/* before the node appears: an open may follow at once */
	ret = cdev_device_add(&c->cdev, &c->dev);
	if (ret)
		goto err;
	return c;		/* from here the device owns the caller's reference */

err:
	c->dev_ctx = NULL;	/* the caller keeps its reference */
	put_device(&c->dev);
	*err = ret;
	return NULL;
}

void weft_uverbs_cdev_del(struct weft_uverbs_cdev *c)
{
	if (!c)
		return;
	cdev_device_del(&c->cdev, &c->dev);
	put_device(&c->dev);
}

uint64_t weft_uverbs_cdev_number(struct weft_uverbs_cdev *c)
{
	return huge_encode_dev(c->dev.devt);
}

/* --- event files ---------------------------------------------------------------- */

static ssize_t weft_uverbs_event_file_read(struct file *filp, char __user *buf, size_t len,
					   loff_t *pos)
{
	struct weft_uverbs_evwaiter *w = filp->private_data;
	long ret;

	for (;;) {
		ret = weft_uverbs_event_read(w->queue, buf, len);
		if (ret != -EAGAIN || (filp->f_flags & O_NONBLOCK))
			return ret;
		if (wait_event_interruptible(w->wait, weft_uverbs_event_readable(w->queue)))
			return -ERESTARTSYS;
	}
}

static __poll_t weft_uverbs_event_file_poll(struct file *filp, struct poll_table_struct *pt)
{
	struct weft_uverbs_evwaiter *w = filp->private_data;
	__poll_t mask = 0;
	unsigned int st;

	poll_wait(filp, &w->wait, pt);
	st = weft_uverbs_event_poll(w->queue);
	if (st & WEFT_UVERBS_POLL_IN)
		mask |= EPOLLIN | EPOLLRDNORM;
	if (st & WEFT_UVERBS_POLL_ERR)
		mask |= EPOLLERR;
	return mask;
}

static int weft_uverbs_event_file_release(struct inode *inode, struct file *filp)
{
	struct weft_uverbs_evwaiter *w = filp->private_data;

	weft_uverbs_event_release(w->queue);	/* detaches @w, drops the file's reference */
	kfree(w);
	return 0;
}

static const struct file_operations weft_uverbs_event_fops = {
	.owner = THIS_MODULE,
	.read = weft_uverbs_event_file_read,
	.poll = weft_uverbs_event_file_poll,
	.release = weft_uverbs_event_file_release,
	.llseek = no_llseek,
};

struct weft_uverbs_evfd *weft_uverbs_evfd_reserve(void *queue_ctx, int *fd, int *err)
{
	struct weft_uverbs_evfd *e = kzalloc(sizeof(*e), GFP_KERNEL);
	struct weft_uverbs_evwaiter *w = kzalloc(sizeof(*w), GFP_KERNEL);

	*err = -ENOMEM;
	if (!e || !w)
		goto err_free;
	init_waitqueue_head(&w->wait);
	w->queue = queue_ctx;
	e->fd = get_unused_fd_flags(O_CLOEXEC);
	if (e->fd < 0) {
		*err = e->fd;
		goto err_free;
	}
	e->file = anon_inode_getfile("[infinibandevent]", &weft_uverbs_event_fops, w, O_RDONLY);
	if (IS_ERR(e->file)) {
		*err = PTR_ERR(e->file);
		put_unused_fd(e->fd);
		goto err_free;
	}
	/* The file now holds the caller's reference on the queue. */
	weft_uverbs_event_attach(queue_ctx, w);
	*fd = e->fd;
	return e;

err_free:
	kfree(w);
	kfree(e);
	return NULL;
}

void weft_uverbs_evfd_commit(struct weft_uverbs_evfd *e)
{
	fd_install(e->fd, e->file);
	kfree(e);
}

void weft_uverbs_evfd_abort(struct weft_uverbs_evfd *e)
{
	put_unused_fd(e->fd);
	fput(e->file);	/* its release drops the queue reference */
	kfree(e);
}

void *weft_uverbs_evfd_lookup(int fd)
{
	struct file *f = fget(fd);
	void *src = NULL;

	if (!f)
		return NULL;
	if (f->f_op == &weft_uverbs_event_fops) {
		struct weft_uverbs_evwaiter *w = f->private_data;

		src = w->queue;
		weft_uverbs_event_get(src);
	}
	fput(f);
	return src;
}

void weft_uverbs_event_wake(struct weft_uverbs_evwaiter *w)
{
	wake_up_interruptible(&w->wait);
}

/* --- user memory ------------------------------------------------------------------ */

int weft_uverbs_copy_from_user(void *dst, const void __user *src, size_t len)
{
	return copy_from_user(dst, src, len) ? -EFAULT : 0;
}

int weft_uverbs_copy_to_user(void __user *dst, const void *src, size_t len)
{
	return copy_to_user(dst, src, len) ? -EFAULT : 0;
}

int weft_uverbs_clear_user(void __user *dst, size_t len)
{
	return clear_user(dst, len) ? -EFAULT : 0;
}

/* --- rings ------------------------------------------------------------------------ */

/*
 * Ring memory is charged to the caller's memory cgroup (GFP_KERNEL_ACCOUNT),
 * which vmalloc_user() would not do: many large CQs or SRQs count against
 * the process's cgroup limit rather than the host.  The pages are mapped
 * for the kernel with vmap(), as VM_USERMAP (zeroed: remap_vmalloc_range()
 * may give them to the process) and VM_MAP_PUT_PAGES (vfree() frees them
 * and the array).
 */
void *weft_uverbs_ring_alloc(size_t size)
{
	unsigned int n = DIV_ROUND_UP(size, PAGE_SIZE), i;
	struct page **pages = kvmalloc_array(n, sizeof(*pages), GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL);
	void *kva = NULL;

	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		/* A process asked: ENOMEM at its cgroup's limit, never an OOM kill. */
		pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
		if (!pages[i])
			break;
	}
	if (i == n)
		kva = vmap(pages, n, VM_MAP | VM_MAP_PUT_PAGES | VM_USERMAP, PAGE_KERNEL);
	if (!kva) {
		while (i--)
			__free_page(pages[i]);
		kvfree(pages);
	}
	return kva;
}

void weft_uverbs_ring_free(void *p)
{
	vfree(p);
}

int weft_uverbs_ring_map(void *vma, void *kva)
{
	return remap_vmalloc_range(vma, kva, 0);
}

/* --- pinned user memory (in-tree ib_umem_get/ib_umem_release) ---------------------- */

struct weft_uverbs_umem {
	struct mm_struct *mm;	/* grabbed: uncharged even after the process exits */
	struct page **pages;
	size_t npages;
	bool writable;
};

static void weft_uverbs_umem_unpin(struct weft_uverbs_umem *u, size_t n)
{
	unpin_user_pages_dirty_lock(u->pages, n, u->writable);
	atomic64_sub(u->npages, &u->mm->pinned_vm);
	mmdrop(u->mm);
	kvfree(u->pages);
	kfree(u);
}

/*
 * Charged before anything is allocated for the pin, so that a length far
 * beyond RLIMIT_MEMLOCK costs the kernel nothing (in-tree ib_umem_get()
 * charges after a page of its own).  The charge is what bounds concurrent
 * registrations of one process too.
 */
static bool weft_uverbs_memlock_charge(struct mm_struct *mm, size_t npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (atomic64_add_return(npages, &mm->pinned_vm) <= limit || capable(CAP_IPC_LOCK))
		return true;
	atomic64_sub(npages, &mm->pinned_vm);
	return false;
}

struct weft_uverbs_umem *weft_uverbs_umem_pin(uint64_t start, uint64_t len, bool writable,
					      size_t npages, int *err)
{
	/*
	 * As in-tree 6.1 ib_umem_get(): always FOLL_WRITE (a read-only pin of
	 * untouched or private file memory would pin the zero page or the
	 * page cache, which later writes by the process do not reach), with
	 * FOLL_FORCE for a region the HCA only reads.
	 */
	unsigned int gup = FOLL_LONGTERM | FOLL_WRITE | (writable ? 0 : FOLL_FORCE);
	struct weft_uverbs_umem *u;
	size_t done = 0;

	if (!can_do_mlock()) {
		*err = -EPERM;
		return NULL;
	}
	if (!current->mm || !len || start + len < start ||
	    npages != (PAGE_ALIGN(start + len) - (start & PAGE_MASK)) >> PAGE_SHIFT) {
		*err = -EINVAL;
		return NULL;
	}
	if (!weft_uverbs_memlock_charge(current->mm, npages))
		goto nomem;
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u)
		goto uncharge;
	u->pages = kvmalloc_array(npages, sizeof(*u->pages), GFP_KERNEL);
	if (!u->pages) {
		kfree(u);
		goto uncharge;
	}
	u->npages = npages;
	u->writable = writable;
	u->mm = current->mm;
	mmgrab(u->mm);
	while (done < npages) {
		long got = pin_user_pages_fast((start & PAGE_MASK) + (done << PAGE_SHIFT),
					       min_t(size_t, npages - done, 512), gup,
					       u->pages + done);
		if (got <= 0) {
			weft_uverbs_umem_unpin(u, done);
			*err = got ? (int)got : -EFAULT;
			return NULL;
		}
		done += got;
		cond_resched();
	}
	return u;

uncharge:
	atomic64_sub(npages, &current->mm->pinned_vm);
nomem:
	*err = -ENOMEM;
	return NULL;
}

void weft_uverbs_umem_kvas(const struct weft_uverbs_umem *u, uint64_t *kvas, size_t n)
{
	size_t i;

	for (i = 0; i < n && i < u->npages; i++)
		kvas[i] = (uint64_t)(uintptr_t)page_address(u->pages[i]);
}

void weft_uverbs_umem_release(struct weft_uverbs_umem *u)
{
	weft_uverbs_umem_unpin(u, u->npages);
}
