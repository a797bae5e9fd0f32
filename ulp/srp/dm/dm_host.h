/* SPDX-License-Identifier: GPL-2.0 */
/*
 * weft_srpt's C entry points into the DM agent (ulp/srp/dm/host.cpp), for
 * the module skeleton (ulp/srp/target/module.c): a verbs client that
 * attaches a DM agent with Ioc::defaults() (dm.h) to every port of every
 * CA as it appears and detaches it when the CA goes or the client stops.
 * Until the LIO target lands, this is what makes a port an I/O unit; the
 * target will attach its own agents (dm.h) instead.
 */
#ifndef WEFT_SRP_DM_HOST_H
#define WEFT_SRP_DM_HOST_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

/*
 * Register the client (agents on the CA ports present now and later); an
 * errno (EBUSY: started already).  Start and stop are not concurrent: the
 * module's init/exit call them, and the KUnit suite between the two (it
 * stops the host to attach agents of its own, then starts it again).
 */
int weft_srpt_dm_host_start(void);
/* Unregister it (if started): every agent detached and freed when it returns. */
void weft_srpt_dm_host_stop(void);

WEFT_C_END

#endif
