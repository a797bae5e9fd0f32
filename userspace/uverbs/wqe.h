/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The process's work requests, read out of its rings (abi_rxe.h): a
 * receive WQE as a verbs RecvEntry, a send WQE as a verbs SendWr, and
 * the slot sizes that give a QP's caps their room.  Everything read is
 * copied once and checked against the kernel's own caps, never against
 * what the ring's header says.  No kernel call and no lock here (the
 * callers hold theirs): the host fuzz target tests/fuzz/uverbs_wqe.cpp
 * runs this file as it is.
 */
#ifndef WEFT_UVERBS_WQE_H
#define WEFT_UVERBS_WQE_H

#include "abi_verbs.h"
#include "objects.h"

namespace weft::uverbs {

/* CREATE_QP's caps within the device's (EINVAL beyond them). */
Result<UQp::Caps> qp_caps(const abi::CreateQp &req, const verbs::DeviceAttr &a);
/* Bytes of a send-ring slot: the WQE and room for @c's SGEs or inline data. */
size_t send_slot_size(const UQp::Caps &c);
/* Bytes of a receive-ring slot (RQ or SRQ): the WQE and @max_sge SGEs. */
size_t recv_slot_size(uint32_t max_sge);

/*
 * Pull the next receive WQE from a ring (RQ or SRQ): @cons is the
 * kernel's index.  One with more SGEs than @max_sge comes with none.
 */
bool take_recv_wqe(const Ring &ring, uint32_t &cons, uint32_t max_sge, verbs::RecvEntry &out);

/* What converting a send WQE needs of its QP (UQp). */
struct SendQueue {
	verbs::QpType type;
	const verbs::Pd &pd;
	uint32_t inline_lkey; /* the SQ ring's MR: inline data is gathered from the slot */
	const UQp::Caps &caps;
};

/*
 * One send WQE @w, copied out of ring slot @slot (send_slot_size(caps)
 * bytes), as a SendWr whose SGEs go to @sge (verbs::RecvEntry::max_sge
 * of them); false if it is malformed.  A UD WQE's ah_num is an AH's
 * handle + 1 in @objs.
 */
bool convert_send_wqe(const rxe::SendWqe &w, const uint8_t *slot, const SendQueue &q,
		      const Objects &objs, verbs::SendWr &wr, verbs::Sge *sge);

} // namespace weft::uverbs

#endif
