/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between weft_rdma_cm's C++ and the kernel's IP stack (shim_net.c): network
 * namespaces, route and neighbour lookups, the ib interfaces that carry an
 * address, and the notifier that reports address changes.  The shim makes
 * no decision; it answers questions about the kernel's tables.
 */
#ifndef WEFT_RCM_KAPI_H
#define WEFT_RCM_KAPI_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

/* A socket address as the C++ keeps it (include/weft/rdma_cm/rdma_cm.h SockAddr). */
struct weft_rcm_addr {
	uint16_t family; /* AF_INET, AF_INET6 */
	uint16_t port;	 /* host order */
	uint8_t ip[16];	 /* network order; IPv4 in ip[0..3] */
	uint32_t scope_id;
};

/* An IPoIB interface (RFC 4391 §9.1.1: its 20-byte hardware address). */
struct weft_rcm_ibdev {
	int ifindex;
	uint8_t gid[16];  /* dev_addr[4..19] */
	uint32_t qpn;	  /* dev_addr[1..3] */
	uint16_t pkey;	  /* broadcast[8..9] */
	unsigned int mtu;
};

/* Namespaces: the caller's or the initial one, with a reference; drop it with put. */
void *weft_rcm_net_current(void);
void *weft_rcm_net_init(void);
void weft_rcm_net_put(void *net);
void weft_rcm_net_get(void *net); /* another reference */
/* The namespace's inode number, for logs. */
unsigned int weft_rcm_net_id(void *net);

/*
 * Whether @a is an address of this host in @net, and on which interface:
 * 0 with *out filled (an ib interface), -ENODEV (local, not on an ib
 * interface), -EADDRNOTAVAIL (not local).
 */
int weft_rcm_local_ib(void *net, const struct weft_rcm_addr *a, struct weft_rcm_ibdev *out);

/*
 * Route @dst in @net (from @src when it is not the wildcard): the egress
 * ib interface in *out, the source address in *src_out, and the peer's
 * 20-byte hardware address in @peer_hw when its neighbour entry is valid.
 * A destination on this host is reached through the interface that has
 * it (loopback), with that interface's own hardware address.
 * 0; -EAGAIN: neighbour resolution started (ARP/ND sent), ask again;
 * -ENETUNREACH, -EHOSTUNREACH; -ENODEV (the route leaves through a
 * non-ib interface); -EAFNOSUPPORT.
 */
int weft_rcm_route(void *net, const struct weft_rcm_addr *src, const struct weft_rcm_addr *dst,
		   struct weft_rcm_ibdev *out, struct weft_rcm_addr *src_out, uint8_t *peer_hw);

/*
 * The namespace of the ib interface whose GID is @gid and P_Key @pkey,
 * preferring one that has the address @dst (a reference; NULL: none).
 */
void *weft_rcm_net_of(const uint8_t *gid, uint16_t pkey, const struct weft_rcm_addr *dst);

/* Address-change notifications (netdevice, inetaddr, inet6addr chains). */
int weft_rcm_notifiers_register(void);
void weft_rcm_notifiers_unregister(void);
/*
 * Callback into the C++: an ib interface of @net lost or changed an
 * address (@a, or every address when NULL) or went down.  Process
 * context or atomic (inet6addr): must not sleep.
 */
void weft_rcm_addr_changed(void *net, int ifindex, const struct weft_rcm_addr *a);

WEFT_C_END

#endif
