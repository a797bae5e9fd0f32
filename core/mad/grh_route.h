/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A GMP's global route (IBA 8.3, 13.5.1) between a MadAddr and what the
 * verbs carry: the address handle of a send, and the route back to the
 * sender of a MAD that arrived with a GRH, as in-tree
 * ib_init_ah_attr_from_wc() builds it for ib_umad and the MAD agents.
 */
#ifndef WEFT_MAD_GRH_ROUTE_H
#define WEFT_MAD_GRH_ROUTE_H

#include <weft/iba/headers.h>
#include <weft/mad/service.h>
#include <weft/verbs/verbs.h>

namespace weft::mad {

/* IBA 8.3.1: the GRH fields of @ah for a send to @to (which has one). */
void global_route(const MadAddr &to, verbs::AhAttr &ah);

/*
 * IBA 8.3.1, 13.5.1: the route back through @g, the GRH a MAD came with:
 * to its SGID, from our GID at @local_index (the one it was sent to),
 * its traffic class and flow label, hop limit 0xff.
 */
void route_back(const iba::Grh &g, uint8_t local_index, MadAddr &from);

/*
 * Which of @port's GIDs is @gid (IBA 4.1.1), the one a MAD was sent to.
 * A GID whose interface ID is the SA's well-known GUID (0x0200000000000002,
 * in-tree IB_SA_WELL_KNOWN_GUID) is index 0, as in-tree.  ENOENT: none.
 */
Result<uint8_t> local_gid_index(verbs::Device &dev, uint8_t port, const uint8_t gid[16]);

} // namespace weft::mad

#endif
