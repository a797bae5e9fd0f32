/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between the fabric capture (capture.cpp) and its kernel side
 * (shim_capture.c): debugfs files, copy_to_user and the wall clock.
 *
 * Layout: /sys/kernel/debug/weft/<device>/port<N>/{capture,capture_packets,
 * capture_dropped}.  The shim creates and removes the files; the C++ side
 * implements open/read/release of "capture" (the weft_capture_file_*
 * callbacks below) and owns every capture state.
 */
#ifndef WEFT_HCA_CAPTURE_KAPI_H
#define WEFT_HCA_CAPTURE_KAPI_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

struct dentry;

/* The weft/ debugfs directory, for the life of weft_hca. */
void weft_capture_debugfs_init(void);
void weft_capture_debugfs_exit(void);

/*
 * weft/<device>/ (NULL when debugfs is unavailable: capture then simply has
 * no files).  Removing it removes every file below and waits for callbacks
 * in progress (debugfs's removal protection); callbacks that could block
 * must have been woken first.
 */
struct dentry *weft_capture_debugfs_dir(const char *device);
void weft_capture_debugfs_remove(struct dentry *dir);
/*
 * weft/<device>/port<N>/: "capture" (open/read/release call the callbacks
 * below with @port) and two read-only u64 counters.
 */
void weft_capture_debugfs_port(struct dentry *dir, uint8_t num, void *port,
			       uint64_t *packets, uint64_t *dropped);

/* Implemented by capture.cpp; called from the debugfs file operations. */
/* 0 and *file set, or -errno. */
int weft_capture_file_open(void *port, void **file);
/* Bytes read, 0 at end of capture, or -EAGAIN/-ERESTARTSYS/-EFAULT. */
long weft_capture_file_read(void *file, void *ubuf, size_t len, bool nonblock);
void weft_capture_file_release(void *file);

/* 0, or -EFAULT if any byte could not be copied. */
int weft_capture_copy_to_user(void *ubuf, const void *src, size_t len);
/* CLOCK_REALTIME in nanoseconds (pcap timestamps are wall clock). */
uint64_t weft_capture_clock_ns(void);

WEFT_C_END

#endif
