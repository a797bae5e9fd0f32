/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between weft_uverbs' C++ (device.cpp, file.cpp, events.cpp) and its
 * kernel side (shim_uverbs.c): the `infiniband_verbs` class, one character
 * device per uverbsN, the file operations on it, the async event file
 * (an anonymous inode, as in-tree's "[infinibandevent]"), and copies to
 * and from user memory.
 *
 *   /sys/class/infiniband_verbs/abi_version          "6"
 *   /sys/class/infiniband_verbs/uverbsN/{ibdev,abi_version,dev}
 *   /dev/infiniband/uverbsN                           (mode 0666)
 *
 * The shim owns every kernel object; C++ owns the command ABI and the
 * objects, reached through the weft_uverbs_* callbacks below, always in
 * process context with no shim lock held.  Device numbers are dynamic
 * (uverbsN is minor N of one region): libibverbs takes the number from
 * netlink (RDMA_NLDEV_ATTR_CHARDEV) or sysfs `dev`, and checks st_rdev.
 */
#ifndef WEFT_UVERBS_KAPI_H
#define WEFT_UVERBS_KAPI_H

#include <weft/rt/kapi.h>

#ifdef __cplusplus
#define WEFT_UVERBS_USER
#else
#define WEFT_UVERBS_USER __user
#endif

WEFT_C_BEGIN

/* IB_USER_VERBS_ABI_VERSION of the in-tree ABI (the class file). */
#define WEFT_UVERBS_ABI_VERSION 6
/*
 * The per-device ABI (uverbsN/abi_version, RDMA_NLDEV_ATTR_CHARDEV_ABI):
 * the stock rxe provider's, as in-tree rxe reports it (RXE_UVERBS_ABI_VERSION
 * in drivers/infiniband/sw/rxe/rxe.h); librxe takes 1..2 on 64-bit hosts
 * and only 2 on 32-bit ones.
 */
#define WEFT_UVERBS_DEVICE_ABI 2
/* uverbsN: N in 0..WEFT_UVERBS_MAX_DEVICES-1 (in-tree: 32 fixed minors). */
#define WEFT_UVERBS_MAX_DEVICES 32

/*
 * Sizes of the in-tree <rdma/ib_user_verbs.h> structures that the C++
 * layouts (abi.h) repeat; the shim checks them against the UAPI header,
 * so the two cannot drift apart.
 */
#define WEFT_UVERBS_SZ_CMD_HDR 8
#define WEFT_UVERBS_SZ_EX_CMD_HDR 16
#define WEFT_UVERBS_SZ_GET_CONTEXT 8
#define WEFT_UVERBS_SZ_GET_CONTEXT_RESP 8
#define WEFT_UVERBS_SZ_QUERY_DEVICE 8
#define WEFT_UVERBS_SZ_QUERY_DEVICE_RESP 176
#define WEFT_UVERBS_SZ_QUERY_PORT 16
#define WEFT_UVERBS_SZ_QUERY_PORT_RESP 40
#define WEFT_UVERBS_SZ_EX_QUERY_DEVICE 8
#define WEFT_UVERBS_SZ_EX_QUERY_DEVICE_RESP 304
#define WEFT_UVERBS_SZ_ASYNC_EVENT_DESC 16
#define WEFT_UVERBS_SZ_ALLOC_PD 8
#define WEFT_UVERBS_SZ_ALLOC_PD_RESP 4
#define WEFT_UVERBS_SZ_REG_MR 40
#define WEFT_UVERBS_SZ_REG_MR_RESP 12
#define WEFT_UVERBS_SZ_ALLOC_MW 16
#define WEFT_UVERBS_SZ_ALLOC_MW_RESP 8
#define WEFT_UVERBS_SZ_CREATE_CQ 32
#define WEFT_UVERBS_SZ_CREATE_CQ_RESP 8
#define WEFT_UVERBS_SZ_DESTROY_CQ 16
#define WEFT_UVERBS_SZ_RESIZE_CQ 16
#define WEFT_UVERBS_SZ_RESIZE_CQ_RESP 8
#define WEFT_UVERBS_SZ_CREATE_QP 56
#define WEFT_UVERBS_SZ_CREATE_QP_RESP 32
#define WEFT_UVERBS_SZ_QP_DEST 32
#define WEFT_UVERBS_SZ_QUERY_QP_RESP 128
#define WEFT_UVERBS_SZ_MODIFY_QP 112
#define WEFT_UVERBS_SZ_POST_SEND 24
#define WEFT_UVERBS_SZ_AH_ATTR 32
#define WEFT_UVERBS_SZ_CREATE_AH 56
#define WEFT_UVERBS_SZ_MCAST 24
#define WEFT_UVERBS_SZ_CREATE_SRQ 32
#define WEFT_UVERBS_SZ_CREATE_SRQ_RESP 16
#define WEFT_UVERBS_SZ_MODIFY_SRQ 16
#define WEFT_UVERBS_SZ_WC 48
#define WEFT_UVERBS_SZ_EX_CREATE_CQ 32
#define WEFT_UVERBS_SZ_EX_CREATE_CQ_RESP 16
#define WEFT_UVERBS_SZ_EX_CREATE_QP 64
#define WEFT_UVERBS_SZ_EX_CREATE_QP_RESP 40
/* <rdma/rdma_user_rxe.h>: the stock rxe provider's ring elements. */
#define WEFT_UVERBS_SZ_RXE_SEND_WR 144
#define WEFT_UVERBS_SZ_RXE_SEND_WQE 208
#define WEFT_UVERBS_SZ_RXE_RECV_WQE 40
#define WEFT_UVERBS_SZ_RXE_QUEUE_HDR 384

/* poll() result bits of weft_uverbs_event_poll(). */
#define WEFT_UVERBS_POLL_IN 1u
#define WEFT_UVERBS_POLL_ERR 2u

struct weft_uverbs_cdev;
struct weft_uverbs_evwaiter;

/* The class and the device-number region, for the life of the module. */
int weft_uverbs_class_init(void);
void weft_uverbs_class_exit(void);

/*
 * Create uverbs<num> for @ibdev (copied, shown in sysfs).  @dev_ctx is the
 * C++ device handed to the open callback.  On success the shim keeps the
 * reference the caller took on @dev_ctx and drops it with
 * weft_uverbs_device_put() when the device is freed (after the last open
 * file of it is closed); on failure (NULL, *err a negative errno) the
 * caller still holds it.
 */
struct weft_uverbs_cdev *weft_uverbs_cdev_add(const char *ibdev, uint32_t num, void *dev_ctx,
					      int *err);
/*
 * Remove the device node and sysfs entry: no new open reaches the
 * callbacks after this returns; files already open stay until closed.
 * del(NULL) does nothing.
 */
void weft_uverbs_cdev_del(struct weft_uverbs_cdev *c);
/* The device number as netlink reports it (huge_encode_dev). */
uint64_t weft_uverbs_cdev_number(struct weft_uverbs_cdev *c);

/*
 * The async event file of a context: an fd reserved in the calling
 * process (*fd, O_CLOEXEC) over a new anonymous file whose read/poll go
 * to the C++ queue @queue_ctx.  On success the file holds the reference on
 * the queue the caller took (also when aborted: the file's release drops
 * it); on failure (NULL, *err a negative errno) the caller still holds it.
 * commit() makes the fd visible to the process (after the response
 * carrying its number was copied out); abort() takes it back.
 */
struct weft_uverbs_evfd;
struct weft_uverbs_evfd *weft_uverbs_evfd_reserve(void *queue_ctx, int *fd, int *err);
void weft_uverbs_evfd_commit(struct weft_uverbs_evfd *e);
void weft_uverbs_evfd_abort(struct weft_uverbs_evfd *e);
/* Wake readers and pollers of an event file. */
void weft_uverbs_event_wake(struct weft_uverbs_evwaiter *w);

/* 0, or -EFAULT if any byte could not be copied / cleared. */
int weft_uverbs_copy_from_user(void *dst, const void WEFT_UVERBS_USER *src, size_t len);
int weft_uverbs_copy_to_user(void WEFT_UVERBS_USER *dst, const void *src, size_t len);
int weft_uverbs_clear_user(void WEFT_UVERBS_USER *dst, size_t len);

/*
 * Ring memory shared with a process (zeroed, page-aligned, mappable,
 * charged to the caller's memory cgroup).  Pages mapped into a process hold their own references, so
 * freeing a ring that is still mapped is safe: the memory goes with the
 * last mapping.
 */
void *weft_uverbs_ring_alloc(size_t size);
void weft_uverbs_ring_free(void *p);
/* Map the ring at @kva into the vma of an mmap() call (@vma as passed to the callback). */
int weft_uverbs_ring_map(void *vma, void *kva);

/*
 * Pinned user memory for an MR (in-tree ib_umem_get()): the @npages pages
 * of [start, start + len) pinned long-term (FOLL_LONGTERM, FOLL_WRITE when
 * @writable), charged to the process's pinned_vm against RLIMIT_MEMLOCK
 * (ENOMEM beyond it, unless CAP_IPC_LOCK) before anything is allocated.
 * kvas() writes the kernel addresses of the first @n pages.  release()
 * unpins (dirtying written pages) and uncharges, from any process
 * context, also after the process is gone.
 */
struct weft_uverbs_umem;
struct weft_uverbs_umem *weft_uverbs_umem_pin(uint64_t start, uint64_t len, bool writable,
					      size_t npages, int *err);
void weft_uverbs_umem_kvas(const struct weft_uverbs_umem *u, uint64_t *kvas, size_t n);
void weft_uverbs_umem_release(struct weft_uverbs_umem *u);

/*
 * The C++ event source behind an event-file descriptor of the calling
 * process (a completion channel's, for CREATE_CQ), with a reference taken
 * by weft_uverbs_event_get(); NULL if @fd is not a Weft event file.
 */
void *weft_uverbs_evfd_lookup(int fd);

/* --- implemented in C++ ---------------------------------------------------- */

/* Drop the char device's reference on the C++ device (from its release). */
void weft_uverbs_device_put(void *dev_ctx);

/*
 * uverbsN.  open: 0 and *file set, or -ENXIO (device gone), -ENOMEM.
 * write: one command of the write() ABI: the byte count or -errno.
 */
int weft_uverbs_file_open(void *dev_ctx, void **file);
void weft_uverbs_file_release(void *file);
long weft_uverbs_file_write(void *file, const void WEFT_UVERBS_USER *buf, size_t len);
/*
 * mmap() of the ring at byte offset @offset, @len bytes: maps it through
 * weft_uverbs_ring_map(@vma) or returns -EINVAL (no such ring, or longer
 * than it).  Takes no lock that a command holds while it touches user
 * memory (mmap runs under the process's mmap lock).
 */
int weft_uverbs_file_mmap(void *file, uint64_t offset, size_t len, void *vma);

/*
 * The event file.  read: one event (bytes), -EAGAIN when none is queued
 * (the shim sleeps unless O_NONBLOCK), -EIO once the context is gone and
 * the queue drained, -EINVAL for a buffer smaller than one event.
 * readable: a read would not return -EAGAIN; must not sleep.  @w stays
 * valid until release returns.
 */
void weft_uverbs_event_attach(void *queue_ctx, struct weft_uverbs_evwaiter *w);
long weft_uverbs_event_read(void *queue_ctx, void WEFT_UVERBS_USER *buf, size_t len);
bool weft_uverbs_event_readable(void *queue_ctx);
unsigned int weft_uverbs_event_poll(void *queue_ctx);
void weft_uverbs_event_release(void *queue_ctx);
/* A reference on the source, for weft_uverbs_evfd_lookup(). */
void weft_uverbs_event_get(void *queue_ctx);

WEFT_C_END

#endif
