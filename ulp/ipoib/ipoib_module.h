/* SPDX-License-Identifier: GPL-2.0 */
/* weft_ipoib's module entry points into C++ (client.cpp), for module.c. */
#ifndef WEFT_IPOIB_MODULE_H
#define WEFT_IPOIB_MODULE_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

/* Register the verbs client: an IPoIB interface for every CA port. */
int weft_ipoib_client_register(uint32_t send_queue_size, uint32_t recv_queue_size);
void weft_ipoib_client_unregister(void);

/* Connected mode (RFC 4755) parameters, read when an interface is created. */
extern bool weft_ipoib_cm_enable;
extern unsigned int weft_ipoib_cm_srq_size;
extern unsigned int weft_ipoib_cm_max_conns;
/* Destinations not sent to for this long are forgotten (0: never; writable at run time). */
extern unsigned int weft_ipoib_dest_idle_secs;

WEFT_C_END

#endif
