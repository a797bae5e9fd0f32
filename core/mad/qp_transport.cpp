// SPDX-License-Identifier: GPL-2.0
/* QP0 and QP1 as MAD datagram pipes (IBA 13.5.1). */
#include "grh_route.h"
#include "qp_transport.h"

namespace weft::mad {

using namespace weft::verbs;

QpTransport::QpTransport(Device &dev, uint8_t port, QpType type, MadSink &sink)
	: dev_(dev), port_(port), type_(type), sink_(sink),
	  poll_lock_(WEFT_LOCK_CLASS("weft_mad_qp_poll_lock")),
	  send_lock_(WEFT_LOCK_CLASS("weft_mad_qp_send")),
	  poll_work_(poll, WEFT_LOCK_CLASS("weft_mad_qp_poll"))
{
}

QpTransport::~QpTransport()
{
	stop();
}

Result<void> QpTransport::start()
{
	bufs_ = WEFT_TRY(Array<RecvBuf>::make(Gfp::Sleep, ring));
	ctx_ = WEFT_TRY(Context::open(dev_, "weft_mad"));
	pd_ = WEFT_TRY(ctx_->alloc_pd());
	mr_ = WEFT_TRY(ctx_->get_dma_mr(pd_, access::local_write));
	cq_ = WEFT_TRY(ctx_->create_cq(2 * ring + 64, cq_event, this));
	QpInitAttr init;
	init.type = type_;
	init.port = port_;
	init.send_cq = init.recv_cq = cq_;
	init.cap.max_send_wr = 64;
	init.cap.max_recv_wr = ring;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	qp_ = WEFT_TRY(ctx_->create_qp(pd_, init));
	/*
	 * IBA 10.3.1, 11.2.5.2: the special QP (its port fixed at creation)
	 * through INIT with P_Key index and Q_Key, RTR, RTS.  QP0 has no
	 * Q_Key check (IBA 10.2.5), but INIT takes one all the same.
	 */
	QpAttr at;
	at.state = QpState::Init;
	at.qkey = type_ == QpType::Gsi ? gsi_qkey : 0;
	WEFT_TRY(ctx_->modify_qp(qp_, at, qp_attr::state | qp_attr::pkey_index | qp_attr::qkey));
	for (uint32_t i = 0; i < ring; i++)
		WEFT_TRY(post_recv(i));
	at.state = QpState::Rtr;
	WEFT_TRY(ctx_->modify_qp(qp_, at, qp_attr::state));
	at.state = QpState::Rts;
	at.sq_psn = 0;
	WEFT_TRY(ctx_->modify_qp(qp_, at, qp_attr::state | qp_attr::sq_psn));
	(void)cq_->req_notify(false);
	return ok();
}

void QpTransport::stop()
{
	if (!ctx_)
		return;
	/* Phase one: no more polling; QP1 goes (its engine drained by destroy). */
	{
		SpinGuardIrq g(poll_lock_);
		stopping_ = true;
	}
	poll_work_.cancel_sync();
	{
		/* No sender is inside post_send once this holds; later ones see no QP. */
		MutexGuard g(send_lock_);
		if (qp_)
			(void)ctx_->destroy_qp(qp_);
		qp_ = nullptr;
	}
	/* Phase two: what completed but was never polled still owns AHs and slots. */
	Wc wc;
	while (cq_ && cq_->poll(Span<Wc>(&wc, 1)))
		if (wc.opcode == WcOpcode::Send && wc.wr_id)
			delete reinterpret_cast<SendSlot *>(wc.wr_id); /* its AH goes with the context */
	ctx_->close(false);
	ctx_ = nullptr;
	pd_ = nullptr;
	mr_ = nullptr;
	cq_ = nullptr;
}

Result<void> QpTransport::post_recv(uint32_t i)
{
	Sge sg{reinterpret_cast<uint64_t>(bufs_[i].bytes), sizeof(RecvBuf), mr_->lkey};
	RecvWr r;
	r.wr_id = i;
	r.sg = Span<const Sge>(&sg, 1);
	return qp_->post_recv(r);
}

Result<void> QpTransport::send(const Mad &m, const MadAddr &to)
{
	MutexGuard g(send_lock_);
	if (!qp_)
		return Error(err::ENODEV);
	auto *slot = new (Gfp::Sleep) SendSlot;
	if (!slot)
		return Error(err::ENOMEM);
	slot->mad = m;
	AhAttr ah;
	ah.dlid = to.lid;
	ah.sl = to.sl;
	ah.port = port_;
	if (to.global)
		global_route(to, ah);
	auto made = ctx_->create_ah(pd_, ah);
	if (!made) {
		delete slot;
		return made.error();
	}
	slot->ah = made.value();
	Sge sg{reinterpret_cast<uint64_t>(slot->mad.bytes), iba::mad_size, mr_->lkey};
	SendWr wr;
	wr.wr_id = reinterpret_cast<uint64_t>(slot);
	wr.opcode = WrOpcode::Send;
	wr.sg = Span<const Sge>(&sg, 1);
	wr.send_flags = send_flag::signaled;
	wr.ud.ah = slot->ah;
	wr.ud.remote_qpn = to.qpn;
	wr.ud.remote_qkey = type_ == QpType::Smi ? 0 : to.qkey ? to.qkey : gsi_qkey;
	wr.ud.pkey_index = to.pkey_index;
	auto posted = qp_->post_send(wr);
	if (!posted) {
		(void)ctx_->destroy_ah(slot->ah);
		delete slot;
	}
	return posted;
}

void QpTransport::cq_event(Cq &, void *arg)
{
	auto *t = static_cast<QpTransport *>(arg);
	SpinGuardIrq g(t->poll_lock_);
	if (!t->stopping_)
		t->poll_work_.queue();
}

void QpTransport::handle(const Wc &wc)
{
	if (wc.opcode == WcOpcode::Send) {
		auto *slot = reinterpret_cast<SendSlot *>(wc.wr_id);
		(void)ctx_->destroy_ah(slot->ah);
		delete slot;
		return;
	}
	uint32_t i = static_cast<uint32_t>(wc.wr_id);
	if (i >= ring)
		return;
	/* IBA 13.4.2: a MAD is exactly 256 bytes after the GRH area; anything else is dropped. */
	if (wc.status == WcStatus::Success && wc.byte_len == sizeof(RecvBuf)) {
		Mad m;
		__builtin_memcpy(m.bytes, bufs_[i].bytes + grh_area, iba::mad_size);
		MadAddr from;
		from.lid = wc.slid;
		from.qpn = wc.src_qp;
		from.qkey = type_ == QpType::Gsi ? gsi_qkey : 0;
		from.pkey_index = wc.pkey_index;
		from.sl = wc.sl;
		if (!(wc.wc_flags & wc_flag::grh) || route_back_of(bufs_[i], from))
			sink_.arrived(m, from);
	}
	if (wc.status != WcStatus::WrFlushErr)
		(void)post_recv(i);
}

/*
 * IBA 8.3, 11.4.1.2: a GMP that came with a GRH (in the receive's first 40
 * bytes) is answered through one, from the GID it was sent to.  Sent to
 * none of ours: dropped and counted, as in-tree umad and agents drop it
 * when ib_init_ah_attr_from_wc() finds no GID.  On QP0 the GRH is ignored
 * (SMPs are routed by LID, IBA 14.2.2).
 */
bool QpTransport::route_back_of(const RecvBuf &b, MadAddr &from)
{
	if (type_ == QpType::Smi)
		return true;
	const auto &grh = *reinterpret_cast<const iba::Grh *>(b.bytes);
	auto index = local_gid_index(dev_, port_, grh.dgid);
	if (!index) {
		foreign_dgid_.fetch_add(1, Order::Relaxed);
		return false;
	}
	route_back(grh, index.value(), from);
	return true;
}

/* Process context: agents' handlers run from here. */
void QpTransport::poll(Work &w)
{
	auto *t = container_of(&w, &QpTransport::poll_work_);
	Wc wc[8];
	for (;;) {
		size_t n = t->cq_->poll(Span<Wc>(wc, 8));
		for (size_t i = 0; i < n; i++)
			t->handle(wc[i]);
		if (n)
			continue;
		/* IBA 11.4.2.2: re-arm, and poll again what slipped in meanwhile. */
		if (!t->cq_->req_notify(false))
			return;
	}
}

} // namespace weft::mad
