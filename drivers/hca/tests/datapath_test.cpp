// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the data path of the default subnet (weft0 and weft1 behind
 * weftsw0, autoconfigured), driven through the verbs API exactly as a ULP
 * would: RC SEND/WRITE/READ byte-exact across sizes, MTUs and SGE layouts,
 * atomics, remote access errors, RNR exhaustion, UD with Q_Key checks,
 * and the count of messages that found no receive WQE.
 */
#include <weft/test.h>
#include <weft/verbs/test_pair.h>

#include "../hca.h"

using namespace weft;
using namespace weft::verbs;
using namespace weft::verbs::testing;
using weft::test::Test;

namespace {

void expect_wc(Test &t, Result<Wc> r, WcStatus st, WcOpcode op)
{
	if (!WEFT_EXPECT_OK(t, r))
		return;
	WEFT_EXPECT_EQ(t, static_cast<int>(r.value().status), static_cast<int>(st));
	if (st == WcStatus::Success)
		WEFT_EXPECT_EQ(t, static_cast<int>(r.value().opcode), static_cast<int>(op));
}

/* SEND: sizes around every MTU boundary, received into two SGEs. */
void rc_send_sizes_and_mtus(Test &t)
{
	static constexpr size_t sizes[] = {0, 1, 255, 256, 257, 1024, 4095, 4096, 4097, 65536, 1 << 20};
	static constexpr iba::Mtu mtus[] = {iba::Mtu::M256, iba::Mtu::M512, iba::Mtu::M1024,
					    iba::Mtu::M2048, iba::Mtu::M4096};
	for (iba::Mtu mtu : mtus) {
		Pair c;
		WEFT_ASSERT_OK(t, c.connect(QpType::Rc, mtu));
		for (size_t len : sizes) {
			Buf src(len), dst(len + 64);
			src.pattern(static_cast<uint8_t>(len));
			__builtin_memset(dst.p, 0xee, dst.n);
			size_t half = len / 3;
			Sge rsg[2] = {{reinterpret_cast<uint64_t>(dst.p), uint32_t(half), c.b.mr->lkey},
				      {reinterpret_cast<uint64_t>(dst.p + half), uint32_t(dst.n - half), c.b.mr->lkey}};
			RecvWr rwr;
			rwr.wr_id = len;
			rwr.sg = Span<const Sge>(rsg, 2);
			WEFT_ASSERT_OK(t, c.b.qp->post_recv(rwr));
			Sge ssg{reinterpret_cast<uint64_t>(src.p), uint32_t(len), c.a.mr->lkey};
			SendWr wr;
			wr.wr_id = len;
			wr.opcode = WrOpcode::SendWithImm;
			wr.imm_data = 0xabcd0000u | uint32_t(len & 0xffff);
			wr.sg = Span<const Sge>(&ssg, 1);
			WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
			expect_wc(t, wait_wc(c.a.cq), WcStatus::Success, WcOpcode::Send);
			auto rwc = wait_wc(c.b.cq);
			expect_wc(t, move(rwc), WcStatus::Success, WcOpcode::Recv);
			WEFT_EXPECT_EQ(t, __builtin_memcmp(src.p, dst.p, len), 0);
			WEFT_EXPECT_EQ(t, dst.p[len], 0xee); /* nothing beyond the message */
		}
	}
}

void rc_write_then_read(Test &t)
{
	Pair c;
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M2048));
	static constexpr size_t len = 8 << 20; /* 4096 packets each way */
	Buf local(len), remote(len), back(len);
	local.pattern(3);
	__builtin_memset(remote.p, 0, len);
	__builtin_memset(back.p, 0, len);
	Mr *rmr = nullptr;
	auto reg = c.b.ctx->reg_kernel_mr(c.b.pd, remote.p, len, access::local_write | access::remote_write | access::remote_read);
	WEFT_ASSERT_OK(t, reg);
	rmr = reg.value();
	Sge sg{reinterpret_cast<uint64_t>(local.p), uint32_t(len), c.a.mr->lkey};
	SendWr wr;
	wr.opcode = WrOpcode::RdmaWrite;
	wr.sg = Span<const Sge>(&sg, 1);
	wr.rdma.remote_addr = reinterpret_cast<uint64_t>(remote.p);
	wr.rdma.rkey = rmr->rkey;
	WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
	expect_wc(t, wait_wc(c.a.cq), WcStatus::Success, WcOpcode::RdmaWrite);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(local.p, remote.p, len), 0);
	Sge bsg{reinterpret_cast<uint64_t>(back.p), uint32_t(len), c.a.mr->lkey};
	wr.opcode = WrOpcode::RdmaRead;
	wr.sg = Span<const Sge>(&bsg, 1);
	WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
	expect_wc(t, wait_wc(c.a.cq), WcStatus::Success, WcOpcode::RdmaRead);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(local.p, back.p, len), 0);
	/* A key with the wrong variant byte is not the region's key (IBA 10.6.3.3). */
	wr.rdma.rkey = rmr->rkey ^ 1;
	WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
	expect_wc(t, wait_wc(c.a.cq), WcStatus::RemAccessErr, WcOpcode::RdmaRead);
	WEFT_EXPECT_EQ(t, static_cast<int>(c.a.qp->state()), static_cast<int>(QpState::Err));
}

void rc_atomics(Test &t)
{
	Pair c;
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M4096));
	alignas(8) static uint64_t target, result;
	target = 40;
	Sge sg{reinterpret_cast<uint64_t>(&result), 8, c.a.mr->lkey};
	SendWr wr;
	wr.opcode = WrOpcode::AtomicFetchAdd;
	wr.sg = Span<const Sge>(&sg, 1);
	wr.atomic.remote_addr = reinterpret_cast<uint64_t>(&target);
	wr.atomic.rkey = c.b.mr->rkey;
	wr.atomic.compare_add = 2;
	WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
	expect_wc(t, wait_wc(c.a.cq), WcStatus::Success, WcOpcode::FetchAdd);
	WEFT_EXPECT_EQ(t, result, 40ull);
	WEFT_EXPECT_EQ(t, target, 42ull);
	wr.opcode = WrOpcode::AtomicCmpSwap;
	wr.atomic.compare_add = 42;
	wr.atomic.swap = 7;
	WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
	expect_wc(t, wait_wc(c.a.cq), WcStatus::Success, WcOpcode::CompSwap);
	WEFT_EXPECT_EQ(t, result, 42ull);
	WEFT_EXPECT_EQ(t, target, 7ull);
	wr.atomic.compare_add = 1000; /* no match: unchanged, original returned */
	wr.atomic.swap = 9;
	WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
	expect_wc(t, wait_wc(c.a.cq), WcStatus::Success, WcOpcode::CompSwap);
	WEFT_EXPECT_EQ(t, result, 7ull);
	WEFT_EXPECT_EQ(t, target, 7ull);
}

/* The port's messages that found no receive WQE (hw_counters/out_of_buffer). */
uint64_t out_of_buffer(Side &s)
{
	PortCounterValues v;
	return s.dev->query_counters(1, v) ? v.out_of_buffer : ~0ull;
}

/* The count past @base once it reaches @want (a receiver may run after the send completes), or after 1 s. */
uint64_t out_of_buffer_since(Side &s, uint64_t base, uint64_t want)
{
	uint64_t n = out_of_buffer(s) - base;
	for (int i = 0; i < 1000 && n < want; i++) {
		weft_msleep(1);
		n = out_of_buffer(s) - base;
	}
	return n;
}

/* No receive posted and rnr_retry 0: the first RNR NAK ends it (IBA 9.7.5.2.8). */
void rc_rnr_retry_exhausted(Test &t)
{
	Pair c;
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M256, 0));
	const uint64_t oob = out_of_buffer(c.b);
	static uint8_t byte = 1;
	Sge sg{reinterpret_cast<uint64_t>(&byte), 1, c.a.mr->lkey};
	SendWr wr;
	wr.opcode = WrOpcode::Send;
	wr.sg = Span<const Sge>(&sg, 1);
	WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
	expect_wc(t, wait_wc(c.a.cq), WcStatus::RnrRetryExcErr, WcOpcode::Send);
	/* The responder counted the SEND it RNR NAKed. */
	WEFT_EXPECT_EQ(t, out_of_buffer_since(c.b, oob, 1), 1ull);
	/* Then everything still queued is flushed (IBA 10.3.1). */
	WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
	expect_wc(t, wait_wc(c.a.cq), WcStatus::WrFlushErr, WcOpcode::Send);
}

/* An RC post before RTS is refused; a bad lkey is a local protection error. */
void rc_local_errors(Test &t)
{
	Pair c;
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M1024));
	static uint8_t buf[16];
	Sge sg{reinterpret_cast<uint64_t>(buf), sizeof(buf), c.a.mr->lkey + 0x100};
	SendWr wr;
	wr.opcode = WrOpcode::RdmaWrite;
	wr.sg = Span<const Sge>(&sg, 1);
	wr.rdma.remote_addr = reinterpret_cast<uint64_t>(buf);
	wr.rdma.rkey = c.b.mr->rkey;
	WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
	expect_wc(t, wait_wc(c.a.cq), WcStatus::LocProtErr, WcOpcode::RdmaWrite);
	Side s;
	WEFT_ASSERT_OK(t, s.open("weft0", QpType::Rc, access::local_write));
	WEFT_EXPECT_ERR(t, s.qp->post_send(wr), err::EINVAL);
}

/* Query QP reports the PSNs the QPs are at, not those Modify QP set (IBA 11.4.1.2). */
void rc_query_live_psns(Test &t)
{
	Pair c;
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M1024));
	QpAttr a0, b0, a1, b1;
	c.a.qp->query(a0);
	c.b.qp->query(b0);
	/* Three SENDs of 5 packets each. */
	Buf src(5000), dst(5000);
	src.pattern(9);
	for (int i = 0; i < 3; i++) {
		Sge rsg{reinterpret_cast<uint64_t>(dst.p), uint32_t(dst.n), c.b.mr->lkey};
		RecvWr rwr;
		rwr.sg = Span<const Sge>(&rsg, 1);
		WEFT_ASSERT_OK(t, c.b.qp->post_recv(rwr));
		Sge ssg{reinterpret_cast<uint64_t>(src.p), uint32_t(src.n), c.a.mr->lkey};
		SendWr wr;
		wr.opcode = WrOpcode::Send;
		wr.sg = Span<const Sge>(&ssg, 1);
		WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
		expect_wc(t, wait_wc(c.a.cq), WcStatus::Success, WcOpcode::Send);
		expect_wc(t, wait_wc(c.b.cq), WcStatus::Success, WcOpcode::Recv);
	}
	c.a.qp->query(a1);
	c.b.qp->query(b1);
	WEFT_EXPECT_EQ(t, (a1.sq_psn - a0.sq_psn) & 0xffffff, 15u);
	WEFT_EXPECT_EQ(t, (b1.rq_psn - b0.rq_psn) & 0xffffff, 15u);
	/* The other direction carried nothing. */
	WEFT_EXPECT_EQ(t, b1.sq_psn, b0.sq_psn);
	WEFT_EXPECT_EQ(t, a1.rq_psn, a0.rq_psn);
}

/* UD: the payload lands after the 40-byte GRH area; a wrong Q_Key is dropped. */
void ud_send_and_qkey(Test &t)
{
	Side a, b;
	WEFT_ASSERT_OK(t, a.open("weft0", QpType::Ud, access::local_write));
	WEFT_ASSERT_OK(t, b.open("weft1", QpType::Ud, access::local_write));
	WEFT_ASSERT_OK(t, ud_ready(a, 0x1111));
	WEFT_ASSERT_OK(t, ud_ready(b, 0x2222));
	AhAttr aa;
	aa.dlid = b.lid;
	aa.port = 1;
	auto ah = a.ctx->create_ah(a.pd, aa);
	WEFT_ASSERT_OK(t, ah);
	static uint8_t msg[100], rbuf[200];
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = static_cast<uint8_t>(i * 3);
	Sge ssg{reinterpret_cast<uint64_t>(msg), sizeof(msg), a.mr->lkey};
	SendWr wr;
	wr.opcode = WrOpcode::Send;
	wr.sg = Span<const Sge>(&ssg, 1);
	wr.ud.ah = ah.value();
	wr.ud.remote_qpn = b.qp->qpn;
	/* IBA 9.8: with no receive posted the datagrams are dropped, and counted. */
	const uint64_t oob = out_of_buffer(b);
	wr.ud.remote_qkey = 0x2222;
	for (int i = 0; i < 3; i++) {
		WEFT_ASSERT_OK(t, a.qp->post_send(wr));
		expect_wc(t, wait_wc(a.cq), WcStatus::Success, WcOpcode::Send);
	}
	WEFT_EXPECT_EQ(t, out_of_buffer_since(b, oob, 3), 3ull);
	Sge rsg{reinterpret_cast<uint64_t>(rbuf), sizeof(rbuf), b.mr->lkey};
	RecvWr rwr;
	rwr.sg = Span<const Sge>(&rsg, 1);
	WEFT_ASSERT_OK(t, b.qp->post_recv(rwr));
	wr.ud.remote_qkey = 0x2223; /* wrong */
	WEFT_ASSERT_OK(t, a.qp->post_send(wr));
	expect_wc(t, wait_wc(a.cq), WcStatus::Success, WcOpcode::Send);
	wr.ud.remote_qkey = 0x2222;
	WEFT_ASSERT_OK(t, a.qp->post_send(wr));
	expect_wc(t, wait_wc(a.cq), WcStatus::Success, WcOpcode::Send);
	auto rwc = wait_wc(b.cq);
	WEFT_ASSERT_OK(t, rwc);
	WEFT_EXPECT_EQ(t, static_cast<int>(rwc.value().status), static_cast<int>(WcStatus::Success));
	WEFT_EXPECT_EQ(t, rwc.value().byte_len, 140u);
	WEFT_EXPECT_EQ(t, rwc.value().src_qp, a.qp->qpn);
	WEFT_EXPECT_EQ(t, rwc.value().slid, a.lid);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(rbuf + 40, msg, sizeof(msg)), 0);
	/* Only one receive completed: the wrong-Q_Key datagram never arrived. */
	Wc extra;
	WEFT_EXPECT_EQ(t, b.cq->poll(Span<Wc>(&extra, 1)), size_t(0));
	WEFT_EXPECT_EQ(t, out_of_buffer_since(b, oob, 3), 3ull);
	PortAttr pa;
	WEFT_ASSERT_OK(t, b.dev->query_port(1, pa));
	WEFT_EXPECT_GE(t, pa.qkey_viol_cntr, 1u);
}

/* Post one RDMA op from c.a to iova/rkey and return its completion status. */
WcStatus rdma(Pair &c, WrOpcode op, uint8_t *local, uint32_t len, uint64_t iova, uint32_t rkey)
{
	return rdma_wait(c.a, op, Sge{reinterpret_cast<uint64_t>(local), len, c.a.mr->lkey}, iova, rkey);
}

WcStatus local_op(Side &s, WrOpcode op, Mr *mr, uint32_t key, uint32_t acc)
{
	SendWr wr;
	wr.opcode = op;
	wr.reg.mr = mr;
	wr.reg.key = key;
	wr.reg.access = acc;
	wr.invalidate_rkey = key;
	if (!s.qp->post_send(wr))
		return WcStatus::GeneralErr;
	auto wc = wait_wc(s.cq);
	return wc ? wc.value().status : WcStatus::RespTimeoutErr;
}

/*
 * IBA 10.6.3.5-6: a fast-reg MR over scattered pages at an unaligned iova,
 * registered by REG_MR with a new key, used remotely, then invalidated by
 * LOCAL_INV and by SEND with Invalidate; stale keys are refused.
 */
void fast_reg_and_invalidate(Test &t)
{
	Pair c;
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M1024));
	uint8_t *pages[4];
	uint64_t kvas[4];
	for (int i = 0; i < 4; i++) {
		pages[i] = static_cast<uint8_t *>(weft_kmalloc(4096, 0));
		WEFT_ASSERT_TRUE(t, pages[i] != nullptr);
		__builtin_memset(pages[i], 0, 4096);
	}
	for (int i = 0; i < 4; i++)
		kvas[i] = reinterpret_cast<uint64_t>(pages[3 - i]); /* deliberately out of order */
	auto fr = c.b.ctx->alloc_fast_reg_mr(c.b.pd, 4);
	WEFT_ASSERT_OK(t, fr);
	Mr *mr = fr.value();
	const uint64_t iova = 0x100000 + 100;
	const uint32_t len = 3 * 4096;
	WEFT_ASSERT_OK(t, mr->set_pages(Span<const uint64_t>(kvas, 4), 4096, iova, len));
	const uint32_t acc = access::local_write | access::remote_write | access::remote_read;
	uint32_t key1 = (mr->lkey & ~0xffu) | 0x42;
	WEFT_EXPECT_EQ(t, int(local_op(c.b, WrOpcode::RegMr, mr, key1, acc)), int(WcStatus::Success));
	Buf src(len), back(len);
	src.pattern(9);
	WEFT_EXPECT_EQ(t, int(rdma(c, WrOpcode::RdmaWrite, src.p, len, iova, key1)), int(WcStatus::Success));
	/* Byte 0 of the region is byte 100 of the first listed page. */
	WEFT_EXPECT_EQ(t, __builtin_memcmp(pages[3] + 100, src.p, 4096 - 100), 0);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(pages[2], src.p + 4096 - 100, 4096), 0);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(pages[0], src.p + 3 * 4096 - 100, 100), 0);
	WEFT_EXPECT_EQ(t, int(rdma(c, WrOpcode::RdmaRead, back.p, len, iova, key1)), int(WcStatus::Success));
	WEFT_EXPECT_EQ(t, __builtin_memcmp(back.p, src.p, len), 0);
	/*
	 * The next page list staged while key1 is still valid (as ULPs do with
	 * LOCAL_INV queued ahead of the REG_MR): key1 keeps its pages until the
	 * REG_MR that takes the new list executes.
	 */
	uint64_t in_order[4];
	for (int i = 0; i < 4; i++)
		in_order[i] = reinterpret_cast<uint64_t>(pages[i]);
	WEFT_ASSERT_OK(t, mr->set_pages(Span<const uint64_t>(in_order, 4), 4096, iova, len));
	back.pattern(0);
	WEFT_EXPECT_EQ(t, int(rdma(c, WrOpcode::RdmaRead, back.p, len, iova, key1)), int(WcStatus::Success));
	WEFT_EXPECT_EQ(t, __builtin_memcmp(back.p, src.p, len), 0);
	/* LOCAL_INV, then register again with a new variant: the staged list now. */
	WEFT_EXPECT_EQ(t, int(local_op(c.b, WrOpcode::LocalInv, mr, key1, 0)), int(WcStatus::Success));
	uint32_t key2 = (mr->lkey & ~0xffu) | 0x43;
	WEFT_EXPECT_EQ(t, int(local_op(c.b, WrOpcode::RegMr, mr, key2, acc)), int(WcStatus::Success));
	src.pattern(5);
	WEFT_EXPECT_EQ(t, int(rdma(c, WrOpcode::RdmaWrite, src.p, 64, iova, key2)), int(WcStatus::Success));
	WEFT_EXPECT_EQ(t, __builtin_memcmp(pages[0] + 100, src.p, 64), 0);
	/* SEND with Invalidate of key2 (IBA 9.3.9: IETH). */
	static uint8_t rb[16], msg[4] = {1, 2, 3, 4};
	Sge rs{reinterpret_cast<uint64_t>(rb), 16, c.b.mr->lkey};
	RecvWr r;
	r.sg = Span<const Sge>(&rs, 1);
	WEFT_ASSERT_OK(t, c.b.qp->post_recv(r));
	Sge ss{reinterpret_cast<uint64_t>(msg), 4, c.a.mr->lkey};
	SendWr wr;
	wr.opcode = WrOpcode::SendWithInv;
	wr.invalidate_rkey = key2;
	wr.sg = Span<const Sge>(&ss, 1);
	WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
	expect_wc(t, wait_wc(c.a.cq), WcStatus::Success, WcOpcode::Send);
	auto rwc = wait_wc(c.b.cq);
	WEFT_ASSERT_OK(t, rwc);
	WEFT_EXPECT_TRUE(t, rwc.value().wc_flags & wc_flag::with_inv);
	WEFT_EXPECT_EQ(t, rwc.value().invalidate_rkey, key2);
	WEFT_EXPECT_FALSE(t, mr->valid());
	/* Invalidated: the key no longer opens the region (and the QP goes to error). */
	WEFT_EXPECT_EQ(t, int(rdma(c, WrOpcode::RdmaWrite, src.p, 8, iova, key2)), int(WcStatus::RemAccessErr));
	WEFT_ASSERT_OK(t, c.b.ctx->dereg_mr(mr));
	for (uint8_t *p : pages)
		weft_kfree(p);
}

/*
 * IBA 10.9.3: a datagram whose P_Key does not match the receiving QP's
 * partition is dropped and counted (PortInfo P_KeyViolations); with the
 * partition on both sides it passes.
 */
void ud_pkey_violation(Test &t)
{
	auto f = make_own<Pair>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, f);
	Side &a = f.value()->a, &b = f.value()->b;
	WEFT_ASSERT_OK(t, a.open("weft0", QpType::Ud, access::local_write));
	WEFT_ASSERT_OK(t, b.open("weft1", QpType::Ud, access::local_write));
	hca::Port *pa = static_cast<hca::Hca &>(*a.dev).port(1);
	hca::Port *pb = static_cast<hca::Hca &>(*b.dev).port(1);
	/* What an SM would program from partitions.conf: 0x8001 at index 1 of b. */
	pb->pkeys[1].store(0x8001, Order::Relaxed);
	QpAttr at;
	at.state = QpState::Init;
	at.port_num = 1;
	at.pkey_index = 1;
	at.qkey = 0x77;
	WEFT_ASSERT_OK(t, b.ctx->modify_qp(b.qp, at, qp_attr::state | qp_attr::pkey_index | qp_attr::port | qp_attr::qkey));
	at.state = QpState::Rtr;
	WEFT_ASSERT_OK(t, b.ctx->modify_qp(b.qp, at, qp_attr::state));
	WEFT_ASSERT_OK(t, ud_ready(a, 0x77));
	static uint8_t rbuf[128], msg[16];
	Sge rsg{reinterpret_cast<uint64_t>(rbuf), sizeof(rbuf), b.mr->lkey};
	RecvWr rwr;
	rwr.sg = Span<const Sge>(&rsg, 1);
	WEFT_ASSERT_OK(t, b.qp->post_recv(rwr));
	AhAttr aa;
	aa.dlid = b.lid;
	aa.port = 1;
	auto ah = a.ctx->create_ah(a.pd, aa);
	WEFT_ASSERT_OK(t, ah);
	Sge ssg{reinterpret_cast<uint64_t>(msg), sizeof(msg), a.mr->lkey};
	SendWr wr;
	wr.opcode = WrOpcode::Send;
	wr.sg = Span<const Sge>(&ssg, 1);
	wr.ud.ah = ah.value();
	wr.ud.remote_qpn = b.qp->qpn;
	wr.ud.remote_qkey = 0x77;
	PortAttr before;
	WEFT_ASSERT_OK(t, b.dev->query_port(1, before));
	WEFT_ASSERT_OK(t, a.qp->post_send(wr)); /* a sends with the default P_Key 0xffff */
	expect_wc(t, wait_wc(a.cq), WcStatus::Success, WcOpcode::Send);
	weft_msleep(50);
	Wc none;
	WEFT_EXPECT_EQ(t, b.cq->poll(Span<Wc>(&none, 1)), size_t(0));
	PortAttr after;
	WEFT_ASSERT_OK(t, b.dev->query_port(1, after));
	WEFT_EXPECT_EQ(t, after.bad_pkey_cntr, before.bad_pkey_cntr + 1);
	/* a joins the partition as a full member and uses it: delivered. */
	pa->pkeys[1].store(0x8001, Order::Relaxed);
	at.state = QpState::Rts;
	at.pkey_index = 1;
	WEFT_ASSERT_OK(t, a.ctx->destroy_qp(a.qp));
	QpInitAttr init;
	init.type = QpType::Ud;
	init.send_cq = init.recv_cq = a.cq;
	init.sq_sig_all = true;
	init.cap.max_send_wr = init.cap.max_recv_wr = 4;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	auto q = a.ctx->create_qp(a.pd, init);
	WEFT_ASSERT_OK(t, q);
	a.qp = q.value();
	at.state = QpState::Init;
	WEFT_ASSERT_OK(t, a.ctx->modify_qp(a.qp, at, qp_attr::state | qp_attr::pkey_index | qp_attr::port | qp_attr::qkey));
	at.state = QpState::Rtr;
	WEFT_ASSERT_OK(t, a.ctx->modify_qp(a.qp, at, qp_attr::state));
	at.state = QpState::Rts;
	WEFT_ASSERT_OK(t, a.ctx->modify_qp(a.qp, at, qp_attr::state | qp_attr::sq_psn));
	WEFT_ASSERT_OK(t, a.qp->post_send(wr));
	expect_wc(t, wait_wc(a.cq), WcStatus::Success, WcOpcode::Send);
	auto rwc = wait_wc(b.cq);
	WEFT_ASSERT_OK(t, rwc);
	WEFT_EXPECT_EQ(t, rwc.value().pkey_index, uint16_t(1));
	pa->pkeys[1].store(0, Order::Relaxed);
	pb->pkeys[1].store(0, Order::Relaxed);
}

struct McastFixture {
	Side tx, r1, r2, other;
};

/*
 * IBA 10.5: a datagram to a multicast LID with the group's MGID in the GRH
 * reaches every attached QP, and only those.
 */
void ud_multicast(Test &t)
{
	auto f = make_own<McastFixture>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, f);
	Side &tx = f.value()->tx, &r1 = f.value()->r1, &r2 = f.value()->r2, &other = f.value()->other;
	WEFT_ASSERT_OK(t, tx.open("weft0", QpType::Ud, access::local_write));
	WEFT_ASSERT_OK(t, r1.open("weft1", QpType::Ud, access::local_write));
	WEFT_ASSERT_OK(t, r2.open("weft1", QpType::Ud, access::local_write));
	WEFT_ASSERT_OK(t, other.open("weft1", QpType::Ud, access::local_write));
	Side *all[] = {&tx, &r1, &r2, &other};
	for (Side *s : all)
		WEFT_ASSERT_OK(t, ud_ready(*s, 0x5555));
	const uint16_t mlid = 0xc00a;
	Gid mgid = Gid::make(0xff12401bffff0000ull, 0x00000000ffffffffull);
	WEFT_ASSERT_OK(t, r1.ctx->attach_mcast(r1.qp, mgid, mlid));
	WEFT_ASSERT_OK(t, r2.ctx->attach_mcast(r2.qp, mgid, mlid));
	WEFT_EXPECT_ERR(t, r2.ctx->attach_mcast(r2.qp, mgid, mlid), err::EEXIST);
	WEFT_EXPECT_ERR(t, r2.ctx->attach_mcast(r2.qp, mgid, 0x12), err::EINVAL);
	hca::Fabric::get().flood_multicast(mlid);
	/* The SGID is the sender's GID 0 under the prefix its SM set, not the default one. */
	struct PrefixFor {
		hca::Port &p;
		uint64_t was;
		~PrefixFor() { p.mgmt.gid_prefix = was; }
	} set_prefix{*static_cast<hca::Hca &>(*tx.dev).port(1), 0};
	set_prefix.was = exchange(set_prefix.p.mgmt.gid_prefix, 0xfe80000000000077ull);
	const Gid sgid = tx.dev->query_gid(1, 0).value();
	static uint8_t bufs[3][128];
	Side *rx[] = {&r1, &r2, &other};
	for (int i = 0; i < 3; i++) {
		Sge sg{reinterpret_cast<uint64_t>(bufs[i]), 128, rx[i]->mr->lkey};
		RecvWr r;
		r.sg = Span<const Sge>(&sg, 1);
		WEFT_ASSERT_OK(t, rx[i]->qp->post_recv(r));
	}
	AhAttr aa;
	aa.dlid = mlid;
	aa.port = 1;
	aa.global = true;
	aa.dgid = mgid;
	aa.hop_limit = 1;
	auto ah = tx.ctx->create_ah(tx.pd, aa);
	WEFT_ASSERT_OK(t, ah);
	static const char msg[] = "to the group";
	Sge sg{reinterpret_cast<uint64_t>(msg), sizeof(msg), tx.mr->lkey};
	SendWr wr;
	wr.opcode = WrOpcode::Send;
	wr.sg = Span<const Sge>(&sg, 1);
	wr.ud.ah = ah.value();
	wr.ud.remote_qpn = 0xffffff; /* IBA 10.5: multicast DestQP */
	wr.ud.remote_qkey = 0x5555;
	WEFT_ASSERT_OK(t, tx.qp->post_send(wr));
	expect_wc(t, wait_wc(tx.cq), WcStatus::Success, WcOpcode::Send);
	for (int i = 0; i < 2; i++) {
		auto wc = wait_wc(rx[i]->cq);
		WEFT_ASSERT_OK(t, wc);
		WEFT_EXPECT_TRUE(t, wc.value().wc_flags & wc_flag::grh);
		WEFT_EXPECT_EQ(t, wc.value().src_qp, tx.qp->qpn);
		WEFT_EXPECT_STREQ(t, reinterpret_cast<const char *>(bufs[i] + 40), msg);
		/* The GRH in the first 40 bytes names the group (IBA 11.4.1.2). */
		WEFT_EXPECT_EQ(t, __builtin_memcmp(bufs[i] + 24, mgid.raw, 16), 0);
		WEFT_EXPECT_EQ(t, __builtin_memcmp(bufs[i] + 8, sgid.raw, 16), 0);
	}
	Wc extra;
	WEFT_EXPECT_EQ(t, other.cq->poll(Span<Wc>(&extra, 1)), size_t(0));
	WEFT_EXPECT_OK(t, r1.ctx->detach_mcast(r1.qp, mgid, mlid));
	WEFT_EXPECT_ERR(t, r1.ctx->detach_mcast(r1.qp, mgid, mlid), err::EINVAL);
}

/* Objects in use cannot be destroyed; close() of a busy context frees all. */
void verbs_object_rules(Test &t)
{
	Side s;
	WEFT_ASSERT_OK(t, s.open("weft0", QpType::Rc, access::local_write));
	WEFT_EXPECT_ERR(t, s.ctx->dealloc_pd(s.pd), err::EBUSY);
	WEFT_EXPECT_ERR(t, s.ctx->destroy_cq(s.cq), err::EBUSY);
	WEFT_EXPECT_ERR(t, s.ctx->reg_kernel_mr(s.pd, nullptr, 0, access::remote_write), err::EINVAL);
	QpAttr at;
	at.state = QpState::Rts;
	WEFT_EXPECT_ERR(t, s.ctx->modify_qp(s.qp, at, qp_attr::state), err::EINVAL);
	WEFT_ASSERT_OK(t, s.ctx->destroy_qp(s.qp));
	s.qp = nullptr;
	WEFT_EXPECT_OK(t, s.ctx->destroy_cq(s.cq));
	WEFT_EXPECT_OK(t, s.ctx->dereg_mr(s.mr));
	WEFT_EXPECT_OK(t, s.ctx->dealloc_pd(s.pd));
}

} // namespace

WEFT_TEST_SUITE(weft_hca_datapath, WEFT_CASE(rc_send_sizes_and_mtus), WEFT_CASE(rc_write_then_read),
		WEFT_CASE(rc_atomics), WEFT_CASE(rc_rnr_retry_exhausted), WEFT_CASE(rc_local_errors),
		WEFT_CASE(rc_query_live_psns), WEFT_CASE(ud_send_and_qkey), WEFT_CASE(ud_pkey_violation),
		WEFT_CASE(ud_multicast), WEFT_CASE(fast_reg_and_invalidate), WEFT_CASE(verbs_object_rules));
