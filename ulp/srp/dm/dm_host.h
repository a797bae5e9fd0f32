/* SPDX-License-Identifier: GPL-2.0 */
/*
 * weft_srpt's C entry points into the DM agent (ulp/srp/dm/host.cpp), for
 * the module skeleton (ulp/srp/target/module.c): a verbs client that
 * attaches a DM agent with Ioc::defaults() (dm.h) to every port of every
 * CA as it appears and detaches it when the CA goes or the client stops.
 * Slot 1 starts absent; the target shows it while LIO has an enabled
 * target port for the CA port (weft_srpt_dm_set_present).
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
/*
 * Show or hide slot 1 on port @port of the verbs::Device @dev (IOUnitInfo
 * and its ChangeID, IBA 16.3.3.3); nothing if the host has no agent there.
 */
void weft_srpt_dm_set_present(void *dev, uint8_t port, bool present);
/*
 * The target's side (ulp/srp/target/hca.cpp): work out again, for every
 * port, whether an enabled LIO target port names it, and set slot 1 so.
 */
void weft_srpt_tports_changed(void);
/* Unregister it (if started): every agent detached and freed when it returns. */
void weft_srpt_dm_host_stop(void);

WEFT_C_END

#endif
