// SPDX-License-Identifier: GPL-2.0
/*
 * CREATE/QUERY/MODIFY/DESTROY_QP, the POST_SEND doorbell and
 * ATTACH/DETACH_MCAST, as the in-tree 6.1 uverbs_cmd.c and rxe answer
 * them (IBA 11.2.4.1 Create QP, 11.2.5 Modify/Query QP, 11.2.4.4 Destroy
 * QP, 11.4.1.1 Post Send, 11.3.1 multicast).  A user QP's queues are two
 * rings the process maps, laid out for the stock rxe provider: it writes
 * send WQEs and rings the doorbell with POST_SEND, and writes receive
 * WQEs that the QP takes when a message arrives, with no system call.
 */
#include "abi_rxe.h"
#include "abi_verbs.h"
#include "commands.h"
#include "wqe.h"

namespace weft::uverbs {

namespace {

void to_ah(const abi::QpDest &d, verbs::AhAttr &a)
{
	a.dlid = d.dlid;
	a.sl = d.sl;
	a.src_path_bits = d.src_path_bits;
	a.static_rate = d.static_rate;
	a.port = d.port_num;
	a.global = d.is_global;
	__builtin_memcpy(a.dgid.raw, d.dgid, 16);
	a.sgid_index = d.sgid_index;
	a.hop_limit = d.hop_limit;
	a.traffic_class = d.traffic_class;
	a.flow_label = d.flow_label;
}

void from_ah(const verbs::AhAttr &a, abi::QpDest &d)
{
	d.dlid = a.dlid;
	d.sl = a.sl;
	d.src_path_bits = a.src_path_bits;
	d.static_rate = a.static_rate;
	d.port_num = a.port;
	d.is_global = a.global;
	__builtin_memcpy(d.dgid, a.dgid.raw, 16);
	d.sgid_index = a.sgid_index;
	d.hop_limit = a.hop_limit;
	d.traffic_class = a.traffic_class;
	d.flow_label = a.flow_label;
}

struct QpParts {
	UPd *pd;
	UCq *scq, *rcq;
	USrq *srq;
};

Result<QpParts> find_parts(File &f, const abi::CreateQp &req)
{
	Objects &o = f.objects();
	QpParts p{o.find<UPd>(req.pd_handle, ObjType::Pd), o.find<UCq>(req.send_cq_handle, ObjType::Cq),
		  o.find<UCq>(req.recv_cq_handle, ObjType::Cq),
		  req.is_srq ? o.find<USrq>(req.srq_handle, ObjType::Srq) : nullptr};
	if (!p.pd || !p.scq || !p.rcq || (req.is_srq && !p.srq))
		return Error(err::EINVAL);
	return p;
}

Result<UQp *> make_uqp(File &f, const abi::CreateQp &req, UQp::Caps caps)
{
	Ref<Ring> sq = WEFT_TRY(Ring::make(max<uint32_t>(req.max_send_wr, 1),
					   send_slot_size(caps)));
	Ref<Ring> rq;
	if (!req.is_srq)
		rq = WEFT_TRY(Ring::make(max<uint32_t>(req.max_recv_wr, 1), recv_slot_size(caps.max_recv_sge)));
	caps.max_send_wr = sq->capacity();
	caps.max_recv_wr = rq ? rq->capacity() : 0;
	if (caps.max_send_wr > f.device().attr().max_qp_wr)
		return Error(err::EINVAL);
	auto slot_ah = WEFT_TRY(Array<verbs::Ah *>::make(Gfp::Sleep, size_t(sq->mask) + 1));
	auto *u = new (Gfp::Sleep) UQp(move(sq), move(rq), move(slot_ah), caps, f.events(), req.user_handle);
	if (!u)
		return Error(err::ENOMEM);
	return u;
}

void destroy(File &f, UQp &u)
{
	(void)f.context()->destroy_qp(u.qp);
	if (u.inline_mr)
		(void)f.context()->dereg_mr(u.inline_mr);
}

} // namespace

namespace {

/*
 * CREATE_QP, legacy or extended (@req's response field unused): the QP,
 * then @respond writes the core response; on failure nothing is left.
 */
template <typename Respond> Result<void> create_qp(Call &c, const abi::CreateQp &req, Respond respond)
{
	File &f = c.file;
	/* IBV_QPT_RC, _UC, _UD (the verbs numbering); the special QPs are the kernel's. */
	if (req.qp_type != uint8_t(verbs::QpType::Rc) && req.qp_type != uint8_t(verbs::QpType::Uc) &&
	    req.qp_type != uint8_t(verbs::QpType::Ud))
		return Error(err::EINVAL);
	if (c.drv_out.len < sizeof(rxe::CreateQpResp))
		return Error(err::EINVAL);
	QpParts p = WEFT_TRY(find_parts(f, req));
	UQp::Caps caps = WEFT_TRY(qp_caps(req, f.device().attr()));
	UQp *u = WEFT_TRY(make_uqp(f, req, caps));
	verbs::Context &ctx = *f.context();
	/* The SQ ring as a local-read MR: inline data is gathered from the WQE's slot. */
	const Ring &sq = *u->rings[0];
	auto imr = ctx.reg_kernel_mr(p.pd->pd, sq.kva(), sq.bytes, 0);
	if (!imr) {
		delete u;
		return imr.error();
	}
	u->inline_mr = imr.value();
	verbs::QpInitAttr init;
	init.type = verbs::QpType(req.qp_type);
	init.send_cq = p.scq->cq;
	init.recv_cq = p.rcq->cq;
	init.srq = p.srq ? p.srq->srq : nullptr;
	/* The QP's own RQ stays unused (the ring is the RQ); its SQ holds what the ring can. */
	init.cap = {u->caps.max_send_wr, 1, max<uint32_t>(u->caps.max_send_sge, 1),
		    u->caps.max_recv_sge, 0};
	init.sq_sig_all = req.sq_sig_all;
	init.events = u;
	init.user = u;
	auto qp = ctx.create_qp(p.pd->pd, init);
	if (!qp) {
		(void)ctx.dereg_mr(u->inline_mr);
		delete u;
		return qp.error();
	}
	u->qp = qp.value();
	if (!f.add_object(*u)) {
		destroy(f, *u);
		delete u;
		return Error(err::ENOMEM);
	}
	rxe::CreateQpResp drv{};
	if (u->rings[1])
		drv.rq_mi = u->rings[1]->mminfo();
	drv.sq_mi = u->rings[0]->mminfo();
	abi::CreateQpResp resp{u->id, u->qp->qpn, u->caps.max_send_wr, u->caps.max_recv_wr,
			       u->caps.max_send_sge, u->caps.max_recv_sge, u->caps.max_inline, 0};
	auto r = c.driver_response(&drv, sizeof(drv));
	if (r)
		r = respond(resp);
	if (!r) {
		destroy(f, *u);
		f.free_object(*u);
	}
	return r;
}

} // namespace

Result<void> cmd_create_qp(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::CreateQp req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	return create_qp(c, req, [&](const abi::CreateQpResp &resp) { return c.response(&resp, sizeof(resp)); });
}

/*
 * The extended CREATE_QP (ibv_create_qp_ex() with create flags or other
 * extended attributes): no create flags (EOPNOTSUPP, as rxe), no RSS
 * indirection tables (EOPNOTSUPP); unknown comp_mask bits EINVAL.
 */
Result<void> cmd_ex_create_qp(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::ExCreateQp x;
	WEFT_TRY(c.request(&x, sizeof(x)));
	constexpr uint32_t ind_table = 1; /* IB_UVERBS_CREATE_QP_MASK_IND_TABLE */
	if (x.comp_mask & ~ind_table)
		return Error(err::EINVAL);
	if ((x.comp_mask & ind_table) || x.create_flags)
		return Error(err::EOPNOTSUPP);
	abi::CreateQp req{0,	       x.user_handle,	 x.pd_handle,	    x.send_cq_handle,
			  x.recv_cq_handle, x.srq_handle,	 x.max_send_wr,	    x.max_recv_wr,
			  x.max_send_sge,   x.max_recv_sge,	 x.max_inline_data, x.sq_sig_all,
			  x.qp_type,	       x.is_srq,	 0};
	return create_qp(c, req, [&](const abi::CreateQpResp &base) {
		abi::ExCreateQpResp resp{base, 0, 0};
		resp.response_length = uint32_t(min(c.out.len, sizeof(resp)));
		return c.response(&resp, sizeof(resp));
	});
}

Result<void> cmd_query_qp(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::QueryQp req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	UQp *u = c.file.objects().find<UQp>(req.qp_handle, ObjType::Qp);
	if (!u)
		return Error(err::EINVAL);
	verbs::QpAttr a;
	u->qp->query(a);
	abi::QueryQpResp r{};
	from_ah(a.ah_attr, r.dest);
	from_ah(a.alt_ah_attr, r.alt_dest);
	r.max_send_wr = u->caps.max_send_wr;
	r.max_recv_wr = u->caps.max_recv_wr;
	r.max_send_sge = u->caps.max_send_sge;
	r.max_recv_sge = u->caps.max_recv_sge;
	r.max_inline_data = u->caps.max_inline;
	r.qkey = a.qkey;
	r.rq_psn = a.rq_psn;
	r.sq_psn = a.sq_psn;
	r.dest_qp_num = a.dest_qp_num;
	r.qp_access_flags = a.qp_access_flags;
	r.pkey_index = a.pkey_index;
	r.alt_pkey_index = a.alt_pkey_index;
	r.qp_state = uint8_t(a.state);
	r.cur_qp_state = uint8_t(a.state);
	r.path_mtu = uint8_t(a.path_mtu);
	r.path_mig_state = uint8_t(a.path_mig_state);
	r.sq_draining = a.sq_draining;
	r.max_rd_atomic = a.max_rd_atomic;
	r.max_dest_rd_atomic = a.max_dest_rd_atomic;
	r.min_rnr_timer = a.min_rnr_timer;
	r.port_num = a.port_num;
	r.timeout = a.timeout;
	r.retry_cnt = a.retry_cnt;
	r.rnr_retry = a.rnr_retry;
	r.alt_port_num = a.alt_port_num;
	r.alt_timeout = a.alt_timeout;
	r.sq_sig_all = u->qp->sq_sig_all;
	return c.response(&r, sizeof(r));
}

Result<void> cmd_modify_qp(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::ModifyQp req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	File &f = c.file;
	UQp *u = f.objects().find<UQp>(req.qp_handle, ObjType::Qp);
	if (!u)
		return Error(err::EINVAL);
	/* In-tree: bits beyond the legacy mask are not this command's. */
	if (req.attr_mask & ~verbs::qp_attr::all)
		return Error(err::EOPNOTSUPP);
	verbs::QpAttr a;
	a.state = verbs::QpState(req.qp_state);
	a.cur_state = verbs::QpState(req.cur_qp_state);
	a.path_mtu = iba::Mtu(req.path_mtu);
	a.path_mig_state = verbs::MigState(req.path_mig_state);
	a.qkey = req.qkey;
	a.rq_psn = req.rq_psn;
	a.sq_psn = req.sq_psn;
	a.dest_qp_num = req.dest_qp_num;
	a.qp_access_flags = req.qp_access_flags;
	to_ah(req.dest, a.ah_attr);
	to_ah(req.alt_dest, a.alt_ah_attr);
	a.pkey_index = req.pkey_index;
	a.alt_pkey_index = req.alt_pkey_index;
	a.en_sqd_async_notify = req.en_sqd_async_notify;
	a.max_rd_atomic = req.max_rd_atomic;
	a.max_dest_rd_atomic = req.max_dest_rd_atomic;
	a.min_rnr_timer = req.min_rnr_timer;
	a.port_num = req.port_num;
	a.timeout = req.timeout;
	a.retry_cnt = req.retry_cnt;
	a.rnr_retry = req.rnr_retry;
	a.alt_port_num = req.alt_port_num;
	a.alt_timeout = req.alt_timeout;
	if ((req.attr_mask & verbs::qp_attr::av) && !a.ah_attr.port)
		a.ah_attr.port = (req.attr_mask & verbs::qp_attr::port) ? a.port_num : u->qp->port();
	WEFT_TRY(f.context()->modify_qp(u->qp, a, req.attr_mask));
	/* WQEs the process posted before the QP could send go now (a QP that cannot send yet: later). */
	(void)u->doorbell(f.objects());
	return ok();
}

Result<void> cmd_destroy_qp(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::DestroyQp req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	File &f = c.file;
	UQp *u = f.objects().find<UQp>(req.qp_handle, ObjType::Qp);
	if (!u)
		return Error(err::EINVAL);
	destroy(f, *u);
	u->events->purge(&u->async_events);
	abi::DestroyQpResp resp{u->async_events.reported.load(Order::Relaxed)};
	f.free_object(*u);
	return c.response(&resp, sizeof(resp));
}

Result<void> cmd_post_send(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::PostSend req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	File &f = c.file;
	UQp *u = f.objects().find<UQp>(req.qp_handle, ObjType::Qp);
	if (!u)
		return Error(err::EINVAL);
	/* librxe's doorbell carries no WRs (wr_count 0); the WQEs are in the ring, as for rxe. */
	WEFT_TRY(u->doorbell(f.objects()));
	abi::PostSendResp resp{0};
	return c.response(&resp, sizeof(resp));
}

namespace {

Result<void> mcast(Call &c, bool attach)
{
	WEFT_TRY(c.need_context());
	abi::Mcast req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	File &f = c.file;
	UQp *u = f.objects().find<UQp>(req.qp_handle, ObjType::Qp);
	if (!u)
		return Error(err::EINVAL);
	verbs::Gid gid;
	__builtin_memcpy(gid.raw, req.gid, 16);
	return attach ? f.context()->attach_mcast(u->qp, gid, req.mlid)
		      : f.context()->detach_mcast(u->qp, gid, req.mlid);
}

} // namespace

Result<void> cmd_attach_mcast(Call &c)
{
	return mcast(c, true);
}

Result<void> cmd_detach_mcast(Call &c)
{
	return mcast(c, false);
}

} // namespace weft::uverbs
