/* SPDX-License-Identifier: GPL-2.0 */
/* Between weft_rdma_cm's module init/exit (module.c) and its C++ parts (start.cpp). */
#ifndef WEFT_RCM_MODULE_H
#define WEFT_RCM_MODULE_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN
/* Start the RDMA CM (a verbs client, address notifiers); 0 or -errno. */
int weft_rcm_init(void);
void weft_rcm_exit(void);
/* Live Ids and shared IB CM listeners (module parameters, for leak checks). */
unsigned int weft_rcm_live_ids(void);
unsigned int weft_rcm_live_listeners(void);
WEFT_C_END

#endif
