/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The QP state machine of IBA 10.3 and the attribute rules of IBA 11.2.5
 * (Modify QP), as pure functions: which transitions exist per QP type, which
 * attributes each transition requires and which it allows, and whether the
 * values given are in range for the device and port.  core/verbs calls
 * these before asking a driver to change a QP; the driver only ever sees
 * validated requests.
 */
#ifndef WEFT_CORE_VERBS_QP_TRANSITION_H
#define WEFT_CORE_VERBS_QP_TRANSITION_H

#include <weft/result.h>
#include <weft/verbs/types.h>

namespace weft::verbs {

/* Required and optional attribute masks (qp_attr::*) of one transition. */
struct TransitionRule {
	bool valid = false;
	uint32_t required = 0;
	uint32_t optional = 0;
};

/*
 * The rule for @type moving from @cur to @next.  Any state -> Reset and any
 * state -> Err are valid with no attributes (IBA 10.3.1), Reset -> Err
 * included.  Sqe -> Rts does not exist for Rc: an RC QP never enters SQE.
 * Invalid pairs (and out-of-range enum values) return valid = false.
 */
TransitionRule transition_rule(QpType type, QpState cur, QpState next);

/* What check_modify() needs to know about the device and the QP's port. */
struct ModifyLimits {
	const DeviceAttr *dev = nullptr;
	uint8_t num_ports = 0;		/* ports are 1..num_ports */
	uint16_t pkey_tbl_len = 0;	/* of the port the QP is (or will be) on */
	uint32_t gid_tbl_len = 0;
	iba::Mtu max_mtu = iba::Mtu::M4096;
};

/*
 * Validate a Modify QP request.  @cur is the QP's current state; @mask says
 * which fields of @attr are given.  If mask has qp_attr::cur_state, it must
 * equal @cur, except that a UD/UC/QP0/QP1 QP recorded as Rts may be named
 * Sqe (the CI enters SQE on its own, IBA 10.3.1); the named state then
 * replaces @cur.  cur_state itself is allowed only where the transition's
 * optional mask has it (the arrows into Rts, IBA 11.2.5.2).  The target
 * state is attr.state if mask has qp_attr::state, else the current state.
 * Errors: EINVAL for an invalid transition, a missing required attribute, an
 * attribute the transition does not allow, a mask bit beyond qp_attr::all,
 * or a value out of range (port, pkey index, MTU beyond the port's max, PSN
 * or QPN >= 2^24, retry_cnt/rnr_retry > 7, timeout/min_rnr_timer > 31,
 * rd_atomic beyond the device (or no device given), access flags outside
 * access::all, SL > 15, DLID 0 for a connected QP's address vector, GID
 * index beyond the table, caps beyond the device).
 */
Result<void> check_modify(QpType type, QpState cur, const QpAttr &attr, uint32_t mask,
			  const ModifyLimits &lim);

/*
 * Queue sizes within what @dev reported (IBA 11.2.4.1 Create QP).  No Modify
 * QP transition of IBA 11.2.5.2 allows qp_attr::cap, so this is also the
 * entry point for Create QP.
 */
Result<void> check_qp_cap(const QpCap &cap, const DeviceAttr &dev);

} // namespace weft::verbs

#endif
