/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MAD datagrams for QPs that live in a node's firmware rather than in
 * the verbs layer: an HCA's redirected PMA QP (pma_redirect.cpp) and a
 * switch's QP1 (switch_gsi.cpp).  They check what any UD QP checks and
 * answer with one datagram back to the sender's QP.
 */
#ifndef WEFT_HCA_FW_MAD_H
#define WEFT_HCA_FW_MAD_H

#include <weft/verbs/types.h>

#include "fabric.h"

namespace weft::hca {

/* A datagram that passed its QP's checks: where it came from, its P_Key, its MAD. */
struct FwDatagram {
	verbs::MadIn from; /* port: the arrival port */
	uint16_t pkey = 0;
	const uint8_t *mad = nullptr; /* 256 bytes, inside the packet */
	const iba::Grh *grh = nullptr; /* the request's GRH, if it had one (inside the packet) */
};

/* What fw_accept found: the datagram is taken, or the check it failed. */
enum class FwCheck : uint8_t { Ok, NotMad, BadQKey, BadPKey };

/*
 * IBA 9.6, 10.2.5, 10.9.3: a UD SEND ONLY of exactly one MAD, carrying
 * @qkey and a P_Key of @keys' table, and with a GRH only if its DGID is
 * @keys' GID (IBA 8.3.1).  If not, counted at @keys (no_dest_qp,
 * bad_qkey, bad_pkey) and the failed check returned (a GSI reports key
 * violations: traps 257/258).  @in is the arrival port.
 */
FwCheck fw_accept(const Packet &p, const Port &in, Port &keys, uint32_t qkey, FwDatagram &out);

/*
 * The answer to @to: one MAD from QP @sqp, with the request's P_Key and
 * SL (IBA 13.5.1), LID-routed from @slid, and through a GRH back to the
 * requester's GID if the request had one.  Atomic context; unsealed, as
 * in-host packets travel.
 */
Result<Own<PacketBuf>> fw_answer(const FwDatagram &to, uint16_t slid, uint32_t sqp, uint32_t qkey, const uint8_t *mad);

} // namespace weft::hca

#endif
