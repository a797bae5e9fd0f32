// SPDX-License-Identifier: GPL-2.0
/*
 * The QP state machine (IBA 10.3.1) and the Modify QP attribute rules (IBA
 * 11.2.5): one constexpr list of the diagram's arrows, each with its
 * required and optional attributes per QP type, and the value range checks.
 */
#include "qp_transition.h"

namespace weft::verbs {

namespace {

constexpr unsigned num_types = 5;

/* Masks indexed by QpType: Smi, Gsi, Rc, Uc, Ud. */
struct PerType {
	uint32_t m[num_types];
};

/* One arrow of the state diagram, for the QP types in @types. */
struct Arrow {
	QpState cur;
	QpState next;
	uint8_t types;
	PerType req;
	PerType opt;
};

constexpr uint8_t type_bit(QpType t)
{
	return uint8_t(1u << static_cast<uint8_t>(t));
}

constexpr uint8_t all_types = (1u << num_types) - 1;

namespace qa = qp_attr;

/* QP0/QP1 and UD address by Q_Key and P_Key per datagram (IBA 10.2.4). */
constexpr uint32_t dgram = qa::pkey_index | qa::qkey;
constexpr uint32_t dgram_init = dgram | qa::port;
/* Connected QPs carry remote access rights instead of a Q_Key (IBA 10.6.3). */
constexpr uint32_t conn_init = qa::pkey_index | qa::port | qa::access_flags;
/* The responder side of a connection needs its peer (IBA 9.7, 11.2.5.2). */
constexpr uint32_t uc_rtr = qa::av | qa::path_mtu | qa::dest_qpn | qa::rq_psn;
constexpr uint32_t rc_rtr = uc_rtr | qa::max_dest_rd_atomic | qa::min_rnr_timer;
constexpr uint32_t conn_rtr_opt = qa::alt_path | qa::access_flags | qa::pkey_index;
/* An RC requester also needs its retry and ACK timing (IBA 9.7.6). */
constexpr uint32_t rc_rts = qa::timeout | qa::retry_cnt | qa::rnr_retry | qa::sq_psn |
			    qa::max_qp_rd_atomic;
/* Entering RTS is where the consumer may assert the current state (11.2.5.1). */
constexpr uint32_t dgram_rts_opt = qa::cur_state | qa::qkey;
constexpr uint32_t uc_rts_opt = qa::cur_state | qa::alt_path | qa::access_flags |
				qa::path_mig_state;
constexpr uint32_t rc_rts_opt = uc_rts_opt | qa::min_rnr_timer;
constexpr PerType to_rts_opt = {{dgram_rts_opt, dgram_rts_opt, rc_rts_opt, uc_rts_opt,
				 dgram_rts_opt}};
/* A drained SQ is the one point where the path may be redone (IBA 10.3.1 SQD). */
constexpr uint32_t uc_sqd_opt = qa::av | qa::alt_path | qa::access_flags | qa::pkey_index |
				qa::path_mig_state;
constexpr uint32_t rc_sqd_opt = uc_sqd_opt | qa::port | qa::timeout | qa::retry_cnt |
				qa::rnr_retry | qa::max_qp_rd_atomic | qa::max_dest_rd_atomic |
				qa::min_rnr_timer;
constexpr uint32_t sqd_notify = qa::en_sqd_async_notify;

/*
 * The arrows of IBA 10.3.1 other than "any state -> Reset/Error" (handled in
 * transition_rule()), with the attribute table of IBA 11.2.5.2.  SQE exists
 * only for unreliable service: an RC send error goes to Error (IBA 10.3.1).
 */
constexpr Arrow arrows[] = {
	{QpState::Reset, QpState::Init, all_types,
	 {{dgram, dgram, conn_init, conn_init, dgram_init}}, {}},
	{QpState::Init, QpState::Init, all_types, {},
	 {{dgram, dgram, conn_init, conn_init, dgram_init}}},
	{QpState::Init, QpState::Rtr, all_types, {{0, 0, rc_rtr, uc_rtr, 0}},
	 {{dgram, dgram, conn_rtr_opt, conn_rtr_opt, dgram}}},
	{QpState::Rtr, QpState::Rts, all_types,
	 {{qa::sq_psn, qa::sq_psn, rc_rts, qa::sq_psn, qa::sq_psn}}, to_rts_opt},
	{QpState::Rts, QpState::Rts, all_types, {}, to_rts_opt},
	{QpState::Rts, QpState::Sqd, all_types, {},
	 {{sqd_notify, sqd_notify, sqd_notify, sqd_notify, sqd_notify}}},
	{QpState::Sqd, QpState::Rts, all_types, {}, to_rts_opt},
	{QpState::Sqd, QpState::Sqd, all_types, {}, {{dgram, dgram, rc_sqd_opt, uc_sqd_opt, dgram}}},
	{QpState::Sqe, QpState::Rts, uint8_t(all_types & ~type_bit(QpType::Rc)), {},
	 {{dgram_rts_opt, dgram_rts_opt, 0, qa::cur_state | qa::access_flags, dgram_rts_opt}}},
};

constexpr bool valid_type(QpType t)
{
	return static_cast<uint8_t>(t) < num_types;
}

constexpr bool valid_state(QpState s)
{
	return static_cast<uint8_t>(s) <= static_cast<uint8_t>(QpState::Err);
}

/*
 * The state the request starts from.  IBA 11.2.5.1 lets the consumer name
 * the current state because the CI moves a UD/UC QP from RTS to SQE on its
 * own (IBA 10.3.1), so our record may still say RTS.  Any other mismatch is
 * a consumer error.  Whether the transition allows naming it at all is the
 * table's business (cur_state is optional only on arrows into RTS).
 */
Result<QpState> start_state(QpType type, QpState cur, const QpAttr &attr, uint32_t mask)
{
	if (!(mask & qa::cur_state))
		return cur;
	QpState named = attr.cur_state;
	bool sq_error = cur == QpState::Rts && named == QpState::Sqe && type != QpType::Rc;
	if (named != cur && !sq_error)
		return Error(err::EINVAL);
	return named;
}

constexpr uint32_t psn_limit = 1u << 24;
constexpr uint8_t max_retry = 7;
constexpr uint8_t max_timer_code = 31;
constexpr uint8_t max_sl = 15;

bool has(uint32_t mask, uint32_t bit)
{
	return (mask & bit) != 0;
}

bool port_ok(uint8_t port, const ModifyLimits &lim)
{
	return port >= 1 && port <= lim.num_ports;
}

/* An address vector (IBA 11.2.2.1); only RC/UC carry one in Modify QP. */
bool av_ok(QpType type, const AhAttr &ah, const ModifyLimits &lim)
{
	/* IBA 7.6.5: the SL is a 4-bit field of the LRH. */
	if (ah.sl > max_sl)
		return false;
	/* IBA 4.1.3: LID 0 is reserved, so it cannot name the connected peer. */
	if ((type == QpType::Rc || type == QpType::Uc) && ah.dlid == 0)
		return false;
	/* IBA 8.3.1: a GRH's SGID comes from the port's GID table. */
	return !ah.global || ah.sgid_index < lim.gid_tbl_len;
}

/* The link-level part: where the QP sends and how big its packets are. */
bool path_values_ok(QpType type, const QpAttr &a, uint32_t mask, const ModifyLimits &lim)
{
	/* IBA 11.2.5.1: the port and P_Key index must exist on this HCA. */
	if (has(mask, qa::port) && !port_ok(a.port_num, lim))
		return false;
	if (has(mask, qa::pkey_index) && a.pkey_index >= lim.pkey_tbl_len)
		return false;
	/* IBA 9.7.5.1 / 14.2.5.6: PMTU is 256..4096, and no larger than NeighborMTU. */
	uint8_t mtu = static_cast<uint8_t>(a.path_mtu);
	if (has(mask, qa::path_mtu) &&
	    (mtu < 1 || mtu > 5 || mtu > static_cast<uint8_t>(lim.max_mtu)))
		return false;
	if (has(mask, qa::av) && !av_ok(type, a.ah_attr, lim))
		return false;
	/* IBA 17.2.8: the alternate path is a full second path, checked alike. */
	if (has(mask, qa::alt_path) &&
	    (!av_ok(type, a.alt_ah_attr, lim) || !port_ok(a.alt_port_num, lim) ||
	     a.alt_pkey_index >= lim.pkey_tbl_len || a.alt_timeout > max_timer_code))
		return false;
	return true;
}

/* The transport part: sequence numbers, retries, timers, RDMA resources. */
bool transport_values_ok(const QpAttr &a, uint32_t mask, const ModifyLimits &lim)
{
	/* IBA 9.2: PSNs and QPNs are 24-bit fields of the BTH. */
	if ((has(mask, qa::rq_psn) && a.rq_psn >= psn_limit) ||
	    (has(mask, qa::sq_psn) && a.sq_psn >= psn_limit) ||
	    (has(mask, qa::dest_qpn) && a.dest_qp_num >= psn_limit))
		return false;
	/* IBA 9.7.6.1: the retry counters are 3 bits wide. */
	if ((has(mask, qa::retry_cnt) && a.retry_cnt > max_retry) ||
	    (has(mask, qa::rnr_retry) && a.rnr_retry > max_retry))
		return false;
	/* IBA 9.7.5.2.8 / 9.7.6.1.3: the timer codes are 5 bits wide. */
	if ((has(mask, qa::timeout) && a.timeout > max_timer_code) ||
	    (has(mask, qa::min_rnr_timer) && a.min_rnr_timer > max_timer_code))
		return false;
	/* IBA 9.4.4 / 11.2.1.2: RDMA Read/atomic depth is bounded by the HCA. */
	if (has(mask, qa::max_qp_rd_atomic) &&
	    (!lim.dev || a.max_rd_atomic > lim.dev->max_qp_init_rd_atom))
		return false;
	if (has(mask, qa::max_dest_rd_atomic) &&
	    (!lim.dev || a.max_dest_rd_atomic > lim.dev->max_qp_rd_atom))
		return false;
	/* IBA 10.6.3.2: only the defined access rights exist. */
	if (has(mask, qa::access_flags) && (a.qp_access_flags & ~access::all))
		return false;
	/* IBA 10.2.7: the three migration states. */
	return !has(mask, qa::path_mig_state) ||
	       static_cast<uint8_t>(a.path_mig_state) <= static_cast<uint8_t>(MigState::Armed);
}

bool rule_allows(const TransitionRule &r, uint32_t mask)
{
	/* IBA 11.2.5.2: every required attribute, nothing beyond the optional ones. */
	return r.valid && (mask & r.required) == r.required &&
	       !(mask & ~(r.required | r.optional | qa::state));
}

} // namespace

TransitionRule transition_rule(QpType type, QpState cur, QpState next)
{
	if (!valid_type(type) || !valid_state(cur) || !valid_state(next))
		return {};
	/* IBA 10.3.1: Reset and Error are reachable from every state, unconditionally. */
	if (next == QpState::Reset || next == QpState::Err)
		return {true, 0, 0};
	unsigned i = static_cast<uint8_t>(type);
	for (const Arrow &a : arrows)
		if (a.cur == cur && a.next == next && (a.types & type_bit(type)))
			return {true, a.req.m[i], a.opt.m[i]};
	return {};
}

/* IBA 11.2.4.1 / 11.2.1.2: queue sizes stay within what the HCA reported. */
Result<void> check_qp_cap(const QpCap &cap, const DeviceAttr &dev)
{
	if (cap.max_send_wr > dev.max_qp_wr || cap.max_recv_wr > dev.max_qp_wr ||
	    cap.max_send_sge > dev.max_send_sge || cap.max_recv_sge > dev.max_recv_sge ||
	    cap.max_inline_data > dev.max_inline_data)
		return Error(err::EINVAL);
	return ok();
}

Result<void> check_modify(QpType type, QpState cur, const QpAttr &attr, uint32_t mask,
			  const ModifyLimits &lim)
{
	if (mask & ~qa::all)
		return Error(err::EINVAL);
	QpState from = WEFT_TRY(start_state(type, cur, attr, mask));
	QpState next = has(mask, qa::state) ? attr.state : from;
	if (!rule_allows(transition_rule(type, from, next), mask))
		return Error(err::EINVAL);
	if (!path_values_ok(type, attr, mask, lim) || !transport_values_ok(attr, mask, lim))
		return Error(err::EINVAL);
	if (has(mask, qa::cap))
		return lim.dev ? check_qp_cap(attr.cap, *lim.dev) : Error(err::EINVAL);
	return ok();
}

} // namespace weft::verbs
