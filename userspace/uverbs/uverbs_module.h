/* SPDX-License-Identifier: GPL-2.0 */
/* weft_uverbs' module entry points into C++ (device.cpp), for module.c. */
#ifndef WEFT_UVERBS_MODULE_H
#define WEFT_UVERBS_MODULE_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

/* The device table netlink and the client share (before either starts). */
int weft_uverbs_core_init(void);
void weft_uverbs_core_exit(void);

/* Register the verbs client (a netlink index for every device, uverbsN per CA). */
int weft_uverbs_client_register(void);
void weft_uverbs_client_unregister(void);

WEFT_C_END

#endif
