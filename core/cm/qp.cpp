// SPDX-License-Identifier: GPL-2.0
/*
 * The ULP's QP moved through its states by the CM (IBA 12.9.4-12.9.5 and
 * the Modify QP attributes of IBA 11.2.5.2): Init with the port, P_Key
 * index and access rights; RTR with the peer's QPN, its starting PSN, the
 * address vector and the responder resources; RTS with our PSN and the
 * retry counts; Error when the connection ends.
 */
#include "cm_priv.h"

namespace weft::cm {

namespace {

Result<void> modify(verbs::Qp &qp, const verbs::QpAttr &a, uint32_t mask)
{
	return qp.pd.ctx.modify_qp(&qp, a, mask);
}

} // namespace

uint32_t setup_attr(verbs::QpState st, verbs::QpType type, const QpSetup &s, verbs::QpAttr &a)
{
	namespace qa = verbs::qp_attr;
	a.state = st;
	bool rc = type == verbs::QpType::Rc;
	switch (st) {
	case verbs::QpState::Init:
		a.pkey_index = s.pkey_index;
		a.port_num = s.port;
		a.qp_access_flags = s.access;
		return qa::state | qa::pkey_index | qa::port | qa::access_flags;
	case verbs::QpState::Rtr: {
		a.path_mtu = s.mtu;
		a.dest_qp_num = s.remote_qpn;
		a.rq_psn = s.remote_psn;
		a.ah_attr = s.av;
		uint32_t mask = qa::state | qa::path_mtu | qa::dest_qpn | qa::rq_psn | qa::av;
		if (rc) {
			a.max_dest_rd_atomic = s.responder_resources;
			a.min_rnr_timer = s.min_rnr_timer;
			mask |= qa::max_dest_rd_atomic | qa::min_rnr_timer;
		}
		return mask;
	}
	case verbs::QpState::Rts: {
		a.sq_psn = s.local_psn;
		uint32_t mask = qa::state | qa::sq_psn;
		if (rc) {
			a.timeout = s.ack_timeout;
			a.retry_cnt = s.retry_count;
			a.rnr_retry = s.rnr_retry;
			a.max_rd_atomic = s.initiator_depth;
			mask |= qa::timeout | qa::retry_cnt | qa::rnr_retry | qa::max_qp_rd_atomic;
		}
		return mask;
	}
	default:
		return 0;
	}
}

Result<void> qp_to_init(verbs::Qp &qp, const QpSetup &s)
{
	if (qp.state() == verbs::QpState::Init)
		return ok();
	if (qp.state() != verbs::QpState::Reset)
		return Error(err::EINVAL);
	verbs::QpAttr a;
	uint32_t mask = setup_attr(verbs::QpState::Init, qp.type, s, a);
	return modify(qp, a, mask);
}

Result<void> qp_to_rtr(verbs::Qp &qp, const QpSetup &s)
{
	verbs::QpAttr a;
	uint32_t mask = setup_attr(verbs::QpState::Rtr, qp.type, s, a);
	return modify(qp, a, mask);
}

Result<void> qp_to_rts(verbs::Qp &qp, const QpSetup &s)
{
	if (qp.state() == verbs::QpState::Rts)
		return ok();
	verbs::QpAttr a;
	uint32_t mask = setup_attr(verbs::QpState::Rts, qp.type, s, a);
	return modify(qp, a, mask);
}

void qp_to_error(verbs::Qp &qp)
{
	verbs::QpAttr a;
	a.state = verbs::QpState::Err;
	auto r = modify(qp, a, verbs::qp_attr::state);
	if (!r)
		log.dbg("QP %06x to error: errno %d", qp.qpn, r.error().code());
}

Result<uint16_t> find_pkey(verbs::Device &dev, uint8_t port, uint16_t pkey)
{
	verbs::PortAttr pa;
	WEFT_TRY(dev.query_port(port, pa));
	int limited = -1;
	for (uint16_t i = 0; i < pa.pkey_tbl_len; i++) {
		auto v = dev.query_pkey(port, i);
		if (!v || (v.value() & 0x7fff) != (pkey & 0x7fff) || !(v.value() & 0x7fff))
			continue;
		/* IBA 10.9.3: a full member (bit 15) can talk to everyone in the partition. */
		if (v.value() & 0x8000)
			return i;
		if (limited < 0)
			limited = i;
	}
	if (limited >= 0)
		return static_cast<uint16_t>(limited);
	return Error(err::ENOENT);
}

Result<void> qp_attr(Id &id, verbs::QpState state, verbs::QpAttr &attr, uint32_t &mask)
{
	MutexGuard g(cm->lock);
	if (id.ulp_gone || state < verbs::QpState::Init || state > verbs::QpState::Rts)
		return Error(err::EINVAL);
	/* RTR and RTS need the peer's QPN and PSN: the REQ (passive) or REP (active) brought them. */
	bool peer_known = id.setup.remote_qpn != 0;
	if (state != verbs::QpState::Init && !peer_known)
		return Error(err::EINVAL);
	if (state == verbs::QpState::Init && !id.setup.port)
		return Error(err::EINVAL);
	mask = setup_attr(state, id.qp_type, id.setup, attr);
	return ok();
}

} // namespace weft::cm
