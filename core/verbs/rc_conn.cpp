// SPDX-License-Identifier: GPL-2.0
/* A kernel ULP's RC connection resources (include/weft/verbs/rc_conn.h). */
#include <weft/verbs/rc_conn.h>

namespace weft::verbs {

Result<void> DmaDomain::open(Device &dev, const char *owner)
{
	ctx = WEFT_TRY(Context::open(dev, owner));
	auto r = [this]() -> Result<void> {
		pd = WEFT_TRY(ctx->alloc_pd());
		mr = WEFT_TRY(ctx->get_dma_mr(pd, access::local_write));
		return ok();
	}();
	if (!r)
		close();
	return r;
}

void DmaDomain::close()
{
	if (ctx)
		ctx->close(false);
	ctx = nullptr;
	pd = nullptr;
	mr = nullptr;
}

Result<Qp *> create_rc_qp(Context &ctx, Pd *pd, Cq *cq, const RcCaps &caps)
{
	QpInitAttr init;
	init.type = QpType::Rc;
	init.send_cq = cq;
	init.recv_cq = cq;
	init.cap.max_send_wr = caps.send_wr;
	init.cap.max_recv_wr = caps.recv_wr;
	init.cap.max_send_sge = caps.send_sge;
	init.cap.max_recv_sge = caps.recv_sge;
	init.sq_sig_all = caps.sq_sig_all;
	init.port = caps.port;
	init.events = caps.events;
	return ctx.create_qp(pd, init);
}

Result<void> RcQueues::create(Context &ctx, Pd *pd, const RcCaps &caps, Cq::CompHandler h, void *arg)
{
	Cq *c = WEFT_TRY(ctx.create_cq(caps.send_wr + caps.recv_wr + caps.cq_extra, h, arg));
	auto q = create_rc_qp(ctx, pd, c, caps);
	if (!q) {
		(void)ctx.destroy_cq(c);
		return q.error();
	}
	cq = c;
	qp = *q;
	(void)cq->req_notify(false);
	return ok();
}

void RcQueues::destroy(Context &ctx, Work &poll)
{
	if (qp)
		(void)ctx.destroy_qp(qp);
	qp = nullptr;
	poll.cancel_sync();
	if (cq)
		(void)ctx.destroy_cq(cq);
	cq = nullptr;
}

} // namespace weft::verbs
