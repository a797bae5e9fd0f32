// SPDX-License-Identifier: GPL-2.0
/* The GSI transport of the MAD service (IBA 13.5.1). */
#include "qp_transport.h"

namespace weft::mad {

using namespace weft::verbs;

GsiTransport::GsiTransport(Device &dev, uint8_t port)
	: dev_(dev), port_(port), poll_lock_(WEFT_LOCK_CLASS("weft_mad_gsi_poll_lock")),
	  poll_work_(poll, WEFT_LOCK_CLASS("weft_mad_gsi_poll"))
{
}

GsiTransport::~GsiTransport()
{
	stop();
}

Result<void> GsiTransport::start()
{
	bufs_ = WEFT_TRY(Array<RecvBuf>::make(Gfp::Sleep, ring));
	ctx_ = WEFT_TRY(Context::open(dev_, "weft_mad"));
	pd_ = WEFT_TRY(ctx_->alloc_pd());
	mr_ = WEFT_TRY(ctx_->get_dma_mr(pd_, access::local_write));
	cq_ = WEFT_TRY(ctx_->create_cq(2 * ring + 64, cq_event, this));
	QpInitAttr init;
	init.type = QpType::Gsi;
	init.port = port_;
	init.send_cq = init.recv_cq = cq_;
	init.cap.max_send_wr = 64;
	init.cap.max_recv_wr = ring;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	qp_ = WEFT_TRY(ctx_->create_qp(pd_, init));
	/* IBA 10.3.1, 11.2.5.2: QP1 (its port fixed at creation) through INIT with P_Key index and Q_Key, RTR, RTS. */
	QpAttr at;
	at.state = QpState::Init;
	at.qkey = gsi_qkey;
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

void GsiTransport::stop()
{
	if (!ctx_)
		return;
	/* Phase one: no more polling; QP1 goes (its engine drained by destroy). */
	{
		SpinGuardIrq g(poll_lock_);
		stopping_ = true;
	}
	poll_work_.cancel_sync();
	if (qp_)
		(void)ctx_->destroy_qp(qp_);
	qp_ = nullptr;
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

Result<void> GsiTransport::post_recv(uint32_t i)
{
	Sge sg{reinterpret_cast<uint64_t>(bufs_[i].bytes), sizeof(RecvBuf), mr_->lkey};
	RecvWr r;
	r.wr_id = i;
	r.sg = Span<const Sge>(&sg, 1);
	return qp_->post_recv(r);
}

Result<void> GsiTransport::transmit(const Mad &m, const MadAddr &to)
{
	auto *slot = new (Gfp::Sleep) SendSlot;
	if (!slot)
		return Error(err::ENOMEM);
	slot->mad = m;
	AhAttr ah;
	ah.dlid = to.lid;
	ah.sl = to.sl;
	ah.port = port_;
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
	wr.ud.remote_qkey = to.qkey ? to.qkey : gsi_qkey;
	wr.ud.pkey_index = to.pkey_index;
	auto posted = qp_->post_send(wr);
	if (!posted) {
		(void)ctx_->destroy_ah(slot->ah);
		delete slot;
	}
	return posted;
}

void GsiTransport::cq_event(Cq &, void *arg)
{
	auto *t = static_cast<GsiTransport *>(arg);
	SpinGuardIrq g(t->poll_lock_);
	if (!t->stopping_)
		t->poll_work_.queue();
}

void GsiTransport::handle(const Wc &wc)
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
		from.qkey = gsi_qkey;
		from.pkey_index = wc.pkey_index;
		from.sl = wc.sl;
		service.receive(m, from);
	}
	if (wc.status != WcStatus::WrFlushErr)
		(void)post_recv(i);
}

/* Process context: agents' handlers run from here. */
void GsiTransport::poll(Work &w)
{
	auto *t = container_of(&w, &GsiTransport::poll_work_);
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
