/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The performance management agent (IBA Vol 1 16.1) of a soft node's
 * ports, as firmware: Get and Set of ClassPortInfo, PortCounters and
 * PortCountersExtended, answered from the counters the data path keeps
 * (Port::counters), so `perfquery` works and a PMA reset shows in the
 * verbs sysfs counters too (they read the same counters).
 */
#ifndef WEFT_HCA_PMA_H
#define WEFT_HCA_PMA_H

#include <weft/iba/pma.h>
#include <weft/verbs/types.h>

#include "fabric.h"

namespace weft::hca::pma {

/*
 * Answer @req, a request of class 0x04 that arrived at @node through
 * in.port, into @resp (256 bytes, may not alias @req).  Any context,
 * never sleeps, takes no lock: the counters are atomics.  NotMine: not
 * PerfMgt, or a response (for a performance manager on this node).
 * Consumed: a base version other than 1.  Otherwise Reply, with an IBA
 * 13.4.7 status.
 */
verbs::MadOutcome process(Node &node, const verbs::MadIn &in, const iba::PmaMad &req, iba::PmaMad &resp);

/* The ClassPortInfo.CapabilityMask Weft's PMA announces (what it really does). */
uint16_t capabilities();

} // namespace weft::hca::pma

#endif
