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

/*
 * Redirection (IBA 13.5.3.3, pma_redirect.cpp), when weft_hca's
 * pma_redirect parameter is set: the PMA's answer on QP1 to any request
 * is the redirect status with a ClassPortInfo naming the port's LID and
 * this QP, which the HCA serves in firmware (Hca::pma_qp_receive).  The
 * number is past every QP the HCA allocates.
 */
inline constexpr uint32_t redirect_qpn = 0x400;
inline constexpr uint32_t redirect_qkey = 0x80010000; /* IBA 13.5.3.3: the QP's Q_Key, named in ClassPortInfo */
bool redirected();
void set_redirected(bool on); /* what writing the module parameter does (tests) */
verbs::MadOutcome redirect(const Port &port, const iba::PmaMad &req, iba::PmaMad &resp);

} // namespace weft::hca::pma

#endif
