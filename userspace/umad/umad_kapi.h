/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between weft_umad's C++ (port.cpp, file.cpp) and its kernel side
 * (shim_umad.c): the `infiniband_mad` class, one character device per
 * umadN and issmN, the file operations on them, a wait queue per open
 * umad file, and copies to and from user memory.
 *
 *   /sys/class/infiniband_mad/abi_version          "5"
 *   /sys/class/infiniband_mad/{umad,issm}N/{ibdev,port}
 *   /sys/class/infiniband_mad/{umad,issm}N/recv_dropped  (Weft's own: MADs
 *       dropped for readers that do not read, see weft_umad_port_recv_dropped)
 *   /dev/infiniband/umadN, /dev/infiniband/issmN   (devnode infiniband/%s)
 *
 * The shim owns every kernel object; C++ owns the protocol state and is
 * reached through the weft_umad_* callbacks below, always in process
 * context with no shim lock held.  Device numbers are dynamic (umadN is
 * minor N, issmN minor 64 + N of one region): only the paths are ABI.
 */
#ifndef WEFT_UMAD_KAPI_H
#define WEFT_UMAD_KAPI_H

#include <weft/rt/kapi.h>

#ifdef __cplusplus
#define WEFT_UMAD_USER
#else
#define WEFT_UMAD_USER __user
#endif

WEFT_C_BEGIN

/* IB_USER_MAD_ABI_VERSION of the in-tree ABI. */
#define WEFT_UMAD_ABI_VERSION 5
/*
 * umadN and issmN: N in 0..WEFT_UMAD_MAX_PORTS-1.  In-tree 6.1 ib_umad
 * allows RDMA_MAX_PORTS (8192) ports; so does Weft (one region of
 * 2 * 8192 minors: umad first, then issm).
 */
#define WEFT_UMAD_MAX_PORTS 8192

/* poll() result bits of weft_umad_file_poll(). */
#define WEFT_UMAD_POLL_IN 1u
#define WEFT_UMAD_POLL_ERR 2u

struct weft_umad_cdev;
struct weft_umad_waiter;

/* The class and the device-number region, for the life of the module. */
int weft_umad_class_init(void);
void weft_umad_class_exit(void);

/*
 * Create umad<num> (@issm false) or issm<num> for port @port of @ibdev
 * (copied, shown in sysfs).  @port_ctx is the C++ port handed to every
 * callback of the device's files.  On success the shim keeps the
 * reference the caller took on @port_ctx and drops it with
 * weft_umad_port_put() when the device is freed (after the last open file
 * of it is closed); on failure (NULL, *err a negative errno) the caller
 * still holds it.
 */
struct weft_umad_cdev *weft_umad_cdev_add(const char *ibdev, uint32_t port, uint32_t num,
					  bool issm, void *port_ctx, int *err);
/*
 * Remove the device node and sysfs entry: no new open reaches the
 * callbacks after this returns; files already open stay usable until
 * closed.  del(NULL) does nothing.
 */
void weft_umad_cdev_del(struct weft_umad_cdev *c);
/* Wake openers of issmN blocked in open (they re-check weft_umad_issm_busy()). */
void weft_umad_cdev_wake(struct weft_umad_cdev *c);

/* Wake readers and pollers of one open umad file. */
void weft_umad_file_wake(struct weft_umad_waiter *w);

/* 0, or -EFAULT if any byte could not be copied. */
int weft_umad_copy_from_user(void *dst, const void WEFT_UMAD_USER *src, size_t len);
int weft_umad_copy_to_user(void WEFT_UMAD_USER *dst, const void *src, size_t len);

/* --- implemented in C++ (port.cpp) ------------------------------------- */

/* Drop the device's reference on the C++ port (from the device's release). */
void weft_umad_port_put(void *port_ctx);
/* Received MADs the port's files dropped because their readers did not read; may sleep. */
uint64_t weft_umad_port_recv_dropped(void *port_ctx);

/*
 * umadN.  open: 0 and *file set, or -ENXIO (port gone), -ENOMEM; @w stays
 * valid until release returns.  read: bytes, -EAGAIN when nothing is
 * queued (the shim sleeps unless O_NONBLOCK), or another -errno.
 * readable: true when a read would not return -EAGAIN; must not sleep.
 */
int weft_umad_file_open(void *port_ctx, struct weft_umad_waiter *w, void **file);
void weft_umad_file_release(void *file);
long weft_umad_file_read(void *file, void WEFT_UMAD_USER *buf, size_t len);
bool weft_umad_file_readable(void *file);
unsigned int weft_umad_file_poll(void *file);
long weft_umad_file_write(void *file, const void WEFT_UMAD_USER *buf, size_t len);
/* -ENOTTY for a command it does not know. */
long weft_umad_file_ioctl(void *file, unsigned int cmd, void WEFT_UMAD_USER *arg);

/*
 * issmN.  open: 0 and *file set (IsSM now set on the port), -EBUSY while
 * another file holds it (the shim waits, or fails with -EAGAIN under
 * O_NONBLOCK), -ENXIO once the port is gone.  busy: must not sleep.
 * release clears IsSM; the shim then wakes waiting openers.
 */
int weft_umad_issm_open(void *port_ctx, void **file);
bool weft_umad_issm_busy(void *port_ctx);
void weft_umad_issm_release(void *file);

WEFT_C_END

#endif
