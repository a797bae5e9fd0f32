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

Result<void> qp_to_init(verbs::Qp &qp, const QpSetup &s)
{
	if (qp.state() == verbs::QpState::Init)
		return ok();
	if (qp.state() != verbs::QpState::Reset)
		return Error(err::EINVAL);
	verbs::QpAttr a;
	a.state = verbs::QpState::Init;
	a.pkey_index = s.pkey_index;
	a.port_num = s.port;
	a.qp_access_flags = s.access;
	namespace qa = verbs::qp_attr;
	return modify(qp, a, qa::state | qa::pkey_index | qa::port | qa::access_flags);
}

Result<void> qp_to_rtr(verbs::Qp &qp, const QpSetup &s)
{
	verbs::QpAttr a;
	a.state = verbs::QpState::Rtr;
	a.path_mtu = s.mtu;
	a.dest_qp_num = s.remote_qpn;
	a.rq_psn = s.remote_psn;
	a.ah_attr = s.av;
	namespace qa = verbs::qp_attr;
	uint32_t mask = qa::state | qa::path_mtu | qa::dest_qpn | qa::rq_psn | qa::av;
	if (qp.type == verbs::QpType::Rc) {
		a.max_dest_rd_atomic = s.responder_resources;
		a.min_rnr_timer = s.min_rnr_timer;
		mask |= qa::max_dest_rd_atomic | qa::min_rnr_timer;
	}
	return modify(qp, a, mask);
}

Result<void> qp_to_rts(verbs::Qp &qp, const QpSetup &s)
{
	if (qp.state() == verbs::QpState::Rts)
		return ok();
	verbs::QpAttr a;
	a.state = verbs::QpState::Rts;
	a.sq_psn = s.local_psn;
	namespace qa = verbs::qp_attr;
	uint32_t mask = qa::state | qa::sq_psn;
	if (qp.type == verbs::QpType::Rc) {
		a.timeout = s.ack_timeout;
		a.retry_cnt = s.retry_count;
		a.rnr_retry = s.rnr_retry;
		a.max_rd_atomic = s.initiator_depth;
		mask |= qa::timeout | qa::retry_cnt | qa::rnr_retry | qa::max_qp_rd_atomic;
	}
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

} // namespace weft::cm
