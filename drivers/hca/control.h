/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The run-time topology interface: /sys/kernel/config/weft/ (layout in
 * Documentation/fabric.md).  The configfs shim (shim_configfs.c) owns every
 * configfs object and calls the C++ control plane (control.cpp) through
 * this C API: one opaque object per directory the user makes, one call per
 * attribute read or write.  The shim keeps no state of its own beyond the
 * directories; parsing, validation and the fabric changes are C++.
 */
#ifndef WEFT_HCA_CONTROL_H
#define WEFT_HCA_CONTROL_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

/* What a directory is: the root (weft/), or an entry of hcas/, switches/, cables/. */
enum weft_ctl_kind {
	WEFT_CTL_FABRIC,
	WEFT_CTL_HCA,
	WEFT_CTL_SWITCH,
	WEFT_CTL_CABLE,
	WEFT_CTL_NKINDS
};

/* Attributes (files); which kind has which is fixed by the shim's tables. */
enum weft_ctl_attr {
	WEFT_CTL_AUTOCONF,	/* fabric: write 1 */
	WEFT_CTL_TOPOLOGY,	/* fabric: read, one line per external port (weft_ctl_topology) */
	WEFT_CTL_PORTS,		/* hca, switch */
	WEFT_CTL_ENABLE,
	WEFT_CTL_DEVICE,
	WEFT_CTL_A,		/* cable */
	WEFT_CTL_B,
	WEFT_CTL_UP,
	WEFT_CTL_DROP,		/* cable fault knobs, same order as hca::FaultKind */
	WEFT_CTL_CORRUPT,
	WEFT_CTL_DUPLICATE,
	WEFT_CTL_REORDER,
	WEFT_CTL_DELAY,
	WEFT_CTL_NATTRS
};

/* C++ (control.cpp), called by the shim in process context. */
void weft_ctl_init(void);
void weft_ctl_exit(void);
/* mkdir: a new object, or NULL with -errno in *err. */
void *weft_ctl_make(enum weft_ctl_kind kind, int *err);
/* rmdir: take the object off the fabric (attributes are dead by now). */
void weft_ctl_drop(enum weft_ctl_kind kind, void *obj);
/* The directory's last reference went: free the object. */
void weft_ctl_free(enum weft_ctl_kind kind, void *obj);
/* Bytes written to @buf (at most @size), or -errno.  @obj is NULL for the root. */
long weft_ctl_show(enum weft_ctl_kind kind, void *obj, enum weft_ctl_attr attr, char *buf,
		   size_t size);
/*
 * The topology text: with @size 0 its length, else the whole lines of it
 * that fit in @buf; bytes, or -errno.  At most WEFT_CTL_TOPOLOGY_MAX.
 */
long weft_ctl_topology(char *buf, size_t size);
#define WEFT_CTL_TOPOLOGY_MAX (16u << 20)
/* @len on success, or -errno. */
long weft_ctl_store(enum weft_ctl_kind kind, void *obj, enum weft_ctl_attr attr, const char *buf,
		    size_t len);

/* The shim (shim_configfs.c). */
int weft_cfs_register(void);
void weft_cfs_unregister(void);

WEFT_C_END

#endif
