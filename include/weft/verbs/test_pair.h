/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test and benchmark support: two connected QPs on two devices of the
 * default subnet, set up through the verbs API as any ULP would.  Used by
 * the KUnit data path suite and by the benchmark module.
 */
#ifndef WEFT_VERBS_TEST_PAIR_H
#define WEFT_VERBS_TEST_PAIR_H

#include <weft/verbs/verbs.h>

namespace weft::verbs::testing {

/* One side of a connection: its own context, PD, DMA MR, CQ and QP. */
struct Side {
	Ref<Device> dev;
	Context *ctx = nullptr;
	Pd *pd = nullptr;
	Mr *mr = nullptr; /* DMA MR: lkey for any kernel buffer */
	Cq *cq = nullptr;
	Qp *qp = nullptr;
	uint16_t lid = 0;

	bool owns_ctx = true;

	~Side()
	{
		if (ctx && owns_ctx)
			ctx->close(false);
	}

	/* Another QP in the same context, as a Side that does not own it. */
	void borrow(const Side &owner, Qp *q)
	{
		ctx = owner.ctx;
		pd = owner.pd;
		mr = owner.mr;
		cq = owner.cq;
		lid = owner.lid;
		qp = q;
		owns_ctx = false;
	}

	Result<void> open(const char *name, QpType type, uint32_t mr_access)
	{
		Ref<Device> d = find_device(name);
		if (!d)
			return Error(err::ENODEV);
		return open(*d, type, mr_access);
	}

	/* From a client's add(), where the registry is locked: no find_device(). */
	Result<void> open(Device &d, QpType type, uint32_t mr_access)
	{
		dev = Ref<Device>::share(&d);
		ctx = WEFT_TRY(Context::open(*dev, "kunit"));
		pd = WEFT_TRY(ctx->alloc_pd());
		mr = WEFT_TRY(ctx->get_dma_mr(pd, mr_access));
		cq = WEFT_TRY(ctx->create_cq(256, nullptr, nullptr));
		QpInitAttr init;
		init.type = type;
		init.send_cq = init.recv_cq = cq;
		init.cap.max_send_wr = init.cap.max_recv_wr = 64;
		init.cap.max_send_sge = init.cap.max_recv_sge = 4;
		init.sq_sig_all = true;
		qp = WEFT_TRY(ctx->create_qp(pd, init));
		PortAttr pa;
		WEFT_TRY(dev->query_port(1, pa));
		lid = pa.lid;
		return ok();
	}
};

/* RESET -> INIT -> RTR towards @b's QP. */
inline Result<void> to_rtr(Side &a, const Side &b, iba::Mtu mtu)
{
	QpAttr at;
	at.state = QpState::Init;
	at.port_num = 1;
	at.qp_access_flags = access::all & ~access::mw_bind;
	WEFT_TRY(a.ctx->modify_qp(a.qp, at,
				  qp_attr::state | qp_attr::pkey_index | qp_attr::port | qp_attr::access_flags));
	at.state = QpState::Rtr;
	at.path_mtu = mtu;
	at.dest_qp_num = b.qp->qpn;
	at.rq_psn = 0x123;
	at.max_dest_rd_atomic = 4;
	at.min_rnr_timer = 1;
	at.ah_attr.dlid = b.lid;
	at.ah_attr.port = 1;
	return a.ctx->modify_qp(a.qp, at,
				qp_attr::state | qp_attr::av | qp_attr::path_mtu | qp_attr::dest_qpn |
					qp_attr::rq_psn | qp_attr::max_dest_rd_atomic | qp_attr::min_rnr_timer);
}

inline Result<void> rtr_to_rts(Side &a, uint8_t rnr_retry, uint8_t timeout = 14, uint8_t retry_cnt = 7)
{
	QpAttr at;
	at.state = QpState::Rts;
	at.sq_psn = 0x123;
	at.timeout = timeout;
	at.retry_cnt = retry_cnt;
	at.rnr_retry = rnr_retry;
	at.max_rd_atomic = 4;
	return a.ctx->modify_qp(a.qp, at,
				qp_attr::state | qp_attr::sq_psn | qp_attr::timeout | qp_attr::retry_cnt |
					qp_attr::rnr_retry | qp_attr::max_qp_rd_atomic);
}

inline Result<void> to_rts(Side &a, const Side &b, iba::Mtu mtu, uint8_t rnr_retry,
			   uint8_t timeout = 14, uint8_t retry_cnt = 7)
{
	WEFT_TRY(to_rtr(a, b, mtu));
	return rtr_to_rts(a, rnr_retry, timeout, retry_cnt);
}

/* Wait up to 5 s for one completion. */
inline Result<Wc> wait_wc(Cq *cq)
{
	Wc wc;
	for (int i = 0; i < 5000; i++) {
		if (cq->poll(Span<Wc>(&wc, 1)) == 1)
			return wc;
		weft_msleep(1);
	}
	return Error(err::ETIMEDOUT);
}

/* One receive of @len bytes at @p, through the side's DMA MR. */
inline Result<void> post_recv_one(Side &s, void *p, uint32_t len, uint64_t wr_id)
{
	Sge sg{reinterpret_cast<uint64_t>(p), len, s.mr->lkey};
	RecvWr r;
	r.wr_id = wr_id;
	r.sg = Span<const Sge>(&sg, 1);
	return s.qp->post_recv(r);
}

/* One RDMA WRITE or READ and its status (GeneralErr: refused, or no completion within 5 s). */
inline WcStatus rdma_wait(Side &s, WrOpcode op, const Sge &local, uint64_t va, uint32_t rkey)
{
	SendWr wr;
	wr.opcode = op;
	wr.sg = Span<const Sge>(&local, 1);
	wr.rdma.remote_addr = va;
	wr.rdma.rkey = rkey;
	if (!s.qp->post_send(wr))
		return WcStatus::GeneralErr;
	auto wc = wait_wc(s.cq);
	return wc ? wc.value().status : WcStatus::GeneralErr;
}

struct Pair {
	Side a, b;
	/* @timeout and @retry_cnt: the local ACK timeout code and retries (IBA 9.7.6.1.3). */
	Result<void> connect(QpType t, iba::Mtu mtu, uint8_t rnr_retry = 7, uint8_t timeout = 14,
			     uint8_t retry_cnt = 7)
	{
		uint32_t acc = access::all & ~access::mw_bind;
		WEFT_TRY(a.open("weft0", t, acc));
		WEFT_TRY(b.open("weft1", t, acc));
		WEFT_TRY(to_rts(a, b, mtu, rnr_retry, timeout, retry_cnt));
		return to_rts(b, a, mtu, rnr_retry, timeout, retry_cnt);
	}

	Result<void> connect(Device &da, Device &db, QpType t, iba::Mtu mtu)
	{
		uint32_t acc = access::all & ~access::mw_bind;
		WEFT_TRY(a.open(da, t, acc));
		WEFT_TRY(b.open(db, t, acc));
		WEFT_TRY(to_rts(a, b, mtu, 7));
		return to_rts(b, a, mtu, 7);
	}
};

struct Buf {
	uint8_t *p;
	size_t n;
	explicit Buf(size_t len) : p(static_cast<uint8_t *>(weft_kvmalloc(len ? len : 1, 0))), n(len) {}
	~Buf() { weft_kvfree(p); }
	void pattern(uint8_t seed)
	{
		for (size_t i = 0; i < n; i++)
			p[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
	}
};

/* Counts async events by type; handlers run in process context. */
struct Events final : EventHandler {
	Atomic<int> count[32] = {};
	void handle(const Event &e) override { count[int(e.type) & 31].fetch_add(1, Order::Relaxed); }
	int seen(EventType t) const { return count[int(t)].load(Order::Relaxed); }
	/* Events are asynchronous (IBA 11.6.3): wait up to 5 s for @want of them. */
	bool wait(EventType t, int want) const
	{
		for (int i = 0; i < 5000 && seen(t) < want; i++)
			weft_msleep(1);
		return seen(t) >= want;
	}
};

/* Replace @s's QP by a fresh RC QP on the same send CQ, @recv_cq and @events, 8 WRs deep. */
inline Result<void> reopen_qp(Side &s, Cq *recv_cq, EventHandler *events)
{
	WEFT_TRY(s.ctx->destroy_qp(s.qp));
	s.qp = nullptr;
	QpInitAttr init;
	init.type = QpType::Rc;
	init.send_cq = s.cq;
	init.recv_cq = recv_cq;
	init.cap.max_send_wr = init.cap.max_recv_wr = 8;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	init.events = events;
	s.qp = WEFT_TRY(s.ctx->create_qp(s.pd, init));
	return ok();
}

/* A UD QP through INIT, RTR and RTS with @qkey. */
inline Result<void> ud_ready(Side &s, uint32_t qkey)
{
	QpAttr at;
	at.state = QpState::Init;
	at.port_num = 1;
	at.qkey = qkey;
	WEFT_TRY(s.ctx->modify_qp(s.qp, at, qp_attr::state | qp_attr::pkey_index | qp_attr::port | qp_attr::qkey));
	at.state = QpState::Rtr;
	WEFT_TRY(s.ctx->modify_qp(s.qp, at, qp_attr::state));
	at.state = QpState::Rts;
	at.sq_psn = 1;
	return s.ctx->modify_qp(s.qp, at, qp_attr::state | qp_attr::sq_psn);
}

/* weft0's UD QP and weft1's, both ready with @qkey, and an AH from a to b. */
struct UdPair {
	Side a, b;
	Ah *ah = nullptr;
	uint32_t qkey = 0;

	Result<void> open(uint32_t q)
	{
		qkey = q;
		WEFT_TRY(a.open("weft0", QpType::Ud, access::local_write));
		WEFT_TRY(b.open("weft1", QpType::Ud, access::local_write));
		WEFT_TRY(ud_ready(a, q));
		WEFT_TRY(ud_ready(b, q));
		AhAttr aa;
		aa.dlid = b.lid;
		aa.port = 1;
		ah = WEFT_TRY(a.ctx->create_ah(a.pd, aa));
		return ok();
	}
	/* @wr sent from a to b's QP. */
	void address(SendWr &wr) const
	{
		wr.ud.ah = ah;
		wr.ud.remote_qpn = b.qp->qpn;
		wr.ud.remote_qkey = qkey;
	}
};

} // namespace weft::verbs::testing

#endif
