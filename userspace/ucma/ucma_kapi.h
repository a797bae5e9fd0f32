/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between weft_ucma's C++ (file.cpp, commands.cpp, ...) and its kernel side
 * (shim_ucma.c): the misc device /dev/infiniband/rdma_cm (name "rdma_cm",
 * mode 0666, /sys/class/misc/rdma_cm/abi_version "4", as in-tree ucma.c),
 * its file operations, the wait queue GET_EVENT and poll() sleep on, the
 * file behind another descriptor (MIGRATE_ID), and the user copies.
 *
 * The shim owns the struct file side; C++ owns the command ABI, the Ids
 * and the event queue, reached through the weft_ucma_* callbacks below,
 * always in process context with no shim lock held.
 */
#ifndef WEFT_UCMA_KAPI_H
#define WEFT_UCMA_KAPI_H

#include <weft/rt/kapi.h>

#ifdef __cplusplus
#define WEFT_UCMA_USER
#else
#define WEFT_UCMA_USER __user
#endif

WEFT_C_BEGIN

/* RDMA_USER_CM_ABI_VERSION: librdmacm 44 takes 3..4. */
#define WEFT_UCMA_ABI_VERSION 4

/*
 * Sizes (and a few offsets) of the <rdma/rdma_user_cm.h>, <rdma/ib_user_sa.h>,
 * <rdma/ib_user_verbs.h> and socket structures the C++ layouts (abi.h)
 * repeat; the shim checks them against the UAPI headers.
 */
#define WEFT_UCMA_SZ_CMD_HDR 8
#define WEFT_UCMA_SZ_CREATE_ID 24
#define WEFT_UCMA_SZ_ID_RESP 4
#define WEFT_UCMA_SZ_DESTROY_ID 16
#define WEFT_UCMA_SZ_BIND_IP 40
#define WEFT_UCMA_SZ_BIND 136
#define WEFT_UCMA_SZ_RESOLVE_IP 64
#define WEFT_UCMA_SZ_RESOLVE_ADDR 272
#define WEFT_UCMA_SZ_RESOLVE_ROUTE 8
#define WEFT_UCMA_SZ_QUERY 16
#define WEFT_UCMA_SZ_QUERY_ROUTE_RESP 208
#define WEFT_UCMA_OFF_QUERY_ROUTE_IBDEV_INDEX 200
#define WEFT_UCMA_SZ_QUERY_ADDR_RESP 280
#define WEFT_UCMA_OFF_QUERY_ADDR_IBDEV_INDEX 272
#define WEFT_UCMA_SZ_QUERY_PATH_RESP 8
#define WEFT_UCMA_SZ_PATH_REC_DATA 72
#define WEFT_UCMA_SZ_USER_PATH_REC 64
#define WEFT_UCMA_SZ_CONN_PARAM 272
#define WEFT_UCMA_SZ_UD_PARAM 304
#define WEFT_UCMA_SZ_CONNECT 288
#define WEFT_UCMA_OFF_CONNECT_ECE 280
#define WEFT_UCMA_SZ_LISTEN 8
#define WEFT_UCMA_SZ_ACCEPT 296
#define WEFT_UCMA_OFF_ACCEPT_ECE 288
#define WEFT_UCMA_SZ_REJECT 264
#define WEFT_UCMA_SZ_DISCONNECT 4
#define WEFT_UCMA_SZ_INIT_QP_ATTR 16
#define WEFT_UCMA_SZ_QP_ATTR 144
#define WEFT_UCMA_SZ_AH_ATTR 32
#define WEFT_UCMA_SZ_NOTIFY 8
#define WEFT_UCMA_SZ_JOIN_IP_MCAST 48
#define WEFT_UCMA_SZ_JOIN_MCAST 152
#define WEFT_UCMA_SZ_GET_EVENT 8
#define WEFT_UCMA_SZ_EVENT_RESP 336
#define WEFT_UCMA_OFF_EVENT_RESP_PARAM 20
#define WEFT_UCMA_OFF_EVENT_RESP_RESERVED 324
#define WEFT_UCMA_SZ_SET_OPTION 24
#define WEFT_UCMA_SZ_MIGRATE_ID 16
#define WEFT_UCMA_SZ_SOCKADDR_IN 16
#define WEFT_UCMA_SZ_SOCKADDR_IN6 28
#define WEFT_UCMA_SZ_SOCKADDR_IB 48
#define WEFT_UCMA_SZ_SOCKADDR_STORAGE 128
/* Address families as <linux/socket.h> numbers them. */
#define WEFT_UCMA_AF_INET 2
#define WEFT_UCMA_AF_INET6 10
#define WEFT_UCMA_AF_IB 27

/* poll() result bits of weft_ucma_file_poll(). */
#define WEFT_UCMA_POLL_IN 1u

/* The shim's side of an open file: its wait queue (GET_EVENT, poll). */
struct weft_ucma_waiter;

/* The misc device and its abi_version attribute, for the life of the module. */
int weft_ucma_misc_register(void);
void weft_ucma_misc_deregister(void);

/* Wake GET_EVENT sleepers and pollers of the file. */
void weft_ucma_wake(struct weft_ucma_waiter *w);
/*
 * Sleep until ready(arg) (which must not sleep) is true: 0, or
 * -ERESTARTSYS on a signal.
 */
int weft_ucma_wait(struct weft_ucma_waiter *w, bool (*ready)(void *arg), void *arg);

/*
 * The C++ file of another open rdma_cm descriptor @fd of the calling
 * process (MIGRATE_ID), held open until weft_ucma_fd_put(*hold): NULL
 * and *err -ENOENT (no such descriptor) or -EINVAL (not rdma_cm).
 */
void *weft_ucma_fd_get(int fd, void **hold, int *err);
void weft_ucma_fd_put(void *hold);

/* 0, or -EFAULT if any byte could not be copied. */
int weft_ucma_copy_from_user(void *dst, const void WEFT_UCMA_USER *src, size_t len);
int weft_ucma_copy_to_user(void WEFT_UCMA_USER *dst, const void *src, size_t len);

/* --- implemented in C++ (file.cpp) ------------------------------------------ */

/* open: 0 and *file set, or -ENOMEM.  @w lives until release returns. */
int weft_ucma_file_open(struct weft_ucma_waiter *w, void **file);
/* The last close (also at kill -9): every Id of the file destroyed, every event freed. */
void weft_ucma_file_release(void *file);
/* One command: the byte count or -errno; @nonblock: the file has O_NONBLOCK. */
long weft_ucma_file_write(void *file, const void WEFT_UCMA_USER *buf, size_t len, bool nonblock);
/* WEFT_UCMA_POLL_IN when an event is queued; never sleeps. */
unsigned int weft_ucma_file_poll(void *file);
/*
 * /sys/class/misc/rdma_cm/weft_stats: "files N\nids N\nevents N\n..."
 * (module-wide live objects, for leak checks); the bytes written to @buf.
 */
int weft_ucma_stats_show(char *buf, size_t len);

WEFT_C_END

#endif
