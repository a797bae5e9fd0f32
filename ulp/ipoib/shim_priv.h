/* SPDX-License-Identifier: GPL-2.0 */
/* Between weft_ipoib's C shims (shim_netdev.c, shim_mode.c): kernel types allowed. */
#ifndef WEFT_IPOIB_SHIM_PRIV_H
#define WEFT_IPOIB_SHIM_PRIV_H

#include <linux/netdevice.h>

/* The C++ context and the NAPI context of one of our netdevs. */
void *weft_ipoib_dev_ctx(struct net_device *dev);
struct napi_struct *weft_ipoib_dev_napi(struct net_device *dev);

#endif
