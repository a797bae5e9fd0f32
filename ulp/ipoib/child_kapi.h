/* SPDX-License-Identifier: GPL-2.0 */
/*
 * P_Key child interfaces between the kernel side (shim_link.c: rtnl link
 * ops "ipoib"; shim_sysfs.c: create_child, delete_child, pkey, parent,
 * umcast) and the C++ side (client.cpp owns the interface lists,
 * partition.cpp the per-interface part).  As in Linux's ipoib every child
 * is created and unlinked with rtnl held; its teardown then finishes from
 * the netdev's destructor once the netdev has no user left.
 */
#ifndef WEFT_IPOIB_CHILD_KAPI_H
#define WEFT_IPOIB_CHILD_KAPI_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

struct weft_ipoib_netdev;

/* How a child's netdev is made. */
struct weft_ipoib_child_spec {
	struct weft_ipoib_netdev *dev;	  /* allocated by rtnl_newlink, or NULL: allocate one */
	const char *name;		  /* the name when allocated here */
	struct weft_ipoib_netdev *parent; /* the parent's netdev (set by client.cpp) */
	bool legacy;			  /* made by create_child: delete_child may remove it */
};

/* What sysfs and rtnl show of an interface. */
struct weft_ipoib_info {
	uint16_t pkey;
	bool umcast;
	bool child;
	struct weft_ipoib_netdev *parent; /* NULL for a port's own interface */
};

/*
 * Register a child's netdev (rtnl held), set up as weft_ipoib_netdev_create
 * does, in its parent's network namespace, with the "ipoib" link ops and a
 * child's sysfs files.  NULL and *err on failure (a netdev from rtnl_newlink
 * is then still the caller's).
 */
struct weft_ipoib_netdev *weft_ipoib_child_netdev_create(void *ctx, const struct weft_ipoib_child_spec *spec,
							 uint8_t port, const uint8_t *addr,
							 const uint8_t *bcast, unsigned int mtu,
							 unsigned int tx_queue_len, int *err);
/*
 * Queue the unregistration of a child's netdev (rtnl held; @head the
 * dellink list or NULL for at once).  weft_ipoib_child_released() runs when
 * the last reference is gone (process context, rtnl not held); the netdev is
 * freed after it.
 */
void weft_ipoib_child_netdev_unlink(struct weft_ipoib_netdev *nd, void *head);

/* --- implemented in C++ (client.cpp, partition.cpp) -------------------------- */

/*
 * A child of the interface @parent_ctx for the P_Key @value as the user gave
 * it (rtnl held).  0 or: EINVAL (no P_Key, or @parent_ctx is a child),
 * ENOTUNIQ (create_child: the P_Key is the parent's or another create_child
 * child's), ENODEV (the port is going), or what creation returned.
 */
int weft_ipoib_child_add(void *parent_ctx, long value, struct weft_ipoib_child_spec *spec);
/* delete_child (rtnl held): unlink @parent_ctx's create_child child of @value; ENODEV if none. */
int weft_ipoib_child_del(void *parent_ctx, long value);
/* dellink (rtnl held): unlink the child @ctx onto @head; false if it is no child or already going. */
bool weft_ipoib_child_unlink(void *ctx, void *head);
/* From the netdev's destructor: finish the child's teardown and free it. */
void weft_ipoib_child_released(void *ctx);
void weft_ipoib_get_info(void *ctx, struct weft_ipoib_info *out);
void weft_ipoib_set_umcast(void *ctx, bool on);

WEFT_C_END

#endif
