// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: memory windows (IBA 10.6.7) on an RC connection weft0 -> weft1.
 * The window lives on weft1 (side b) over an MR registered with MW_BIND;
 * weft0 (side a) reaches it by the window's rkey.  Binding through a
 * BindMw work request (type 1 and type 2), remote access inside and
 * outside the window and without the right, a type 2 window reached
 * through another QP of its PD, invalidation (local and by SEND with
 * Invalidate) and deallocation followed by an access, the bind rules
 * (MR rights, bounds, PD, state), deregistering an MR with windows bound
 * (EBUSY), and closing a context with windows still bound.
 *
 * Every refused remote access is a NAK Remote Access Error completed as
 * RemAccessErr at the requester (IBA 9.7.5.2.x, 11.6.2) that leaves the
 * target bytes untouched.
 */
#include <weft/test.h>
#include <weft/verbs/test_pair.h>

using namespace weft;
using namespace weft::verbs;
using namespace weft::verbs::testing;
using weft::test::Test;

namespace {

constexpr uint8_t poison = 0x5a;
constexpr size_t arena = 8192, win_at = 1024, win_len = 2048;

bool untouched(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != poison)
			return false;
	return true;
}

bool wait_state(Qp *qp, QpState want)
{
	for (int i = 0; i < 5000 && qp->state() != want; i++)
		weft_msleep(1);
	return qp->state() == want;
}

/* The next rkey of a window: same table slot, the consumer's variant byte + 1 (IBA 10.6.3.3). */
uint32_t next_rkey(uint32_t rkey)
{
	return (rkey & ~0xffu) | ((rkey + 1) & 0xff);
}

/* A connected pair, an arena on b registered for windows, and @type window on b's PD. */
struct Fixture {
	Buf remote{arena}, local{arena}; /* outlive the contexts */
	Pair c;
	Mr *mr = nullptr;
	Mw *mw = nullptr;
	uint64_t base = 0; /* the arena's address: the MR's iova */

	Result<void> open(MwType type, uint32_t mr_access = access::local_write | access::mw_bind)
	{
		if (!remote.p || !local.p)
			return Error(err::ENOMEM);
		__builtin_memset(remote.p, poison, arena);
		for (size_t i = 0; i < arena; i++)
			local.p[i] = uint8_t(i * 13 + 1);
		WEFT_TRY(c.connect(QpType::Rc, iba::Mtu::M1024));
		mr = WEFT_TRY(c.b.ctx->reg_kernel_mr(c.b.pd, remote.p, arena, mr_access));
		mw = WEFT_TRY(c.b.ctx->alloc_mw(c.b.pd, type));
		base = reinterpret_cast<uint64_t>(remote.p);
		return ok();
	}

	/* A BindMw WR on @s's QP for [base+at, +len) with @acc; its completion status. */
	WcStatus bind(Side &s, uint64_t at, uint64_t len, uint32_t acc, Mr *to = nullptr)
	{
		SendWr wr;
		wr.wr_id = 0xb1;
		wr.opcode = WrOpcode::BindMw;
		wr.bind.mw_rkey = mw->rkey;
		wr.bind.mr_lkey = (to ? to : mr)->lkey;
		wr.bind.addr = base + at;
		wr.bind.length = len;
		wr.bind.new_rkey = next_rkey(mw->rkey);
		wr.bind.access = acc;
		if (!s.qp->post_send(wr))
			return WcStatus::GeneralErr;
		auto wc = wait_wc(s.cq);
		if (!wc)
			return WcStatus::GeneralErr;
		if (wc.value().status == WcStatus::Success && wc.value().opcode != WcOpcode::BindMw)
			return WcStatus::GeneralErr;
		return wc.value().status;
	}

	/* a's RDMA @op of @len bytes at base+at through the window. */
	WcStatus rdma(WrOpcode op, uint64_t at, uint32_t len)
	{
		return rdma_from(c.a, op, at, len);
	}
	WcStatus rdma_from(Side &s, WrOpcode op, uint64_t at, uint32_t len)
	{
		Sge sg{reinterpret_cast<uint64_t>(local.p), len, s.mr->lkey};
		return rdma_wait(s, op, sg, base + at, mw->rkey);
	}

	/* A refused access: a's QP in Err, the arena outside the window untouched. */
	void expect_refused(Test &t, WcStatus st)
	{
		WEFT_EXPECT_EQ(t, int(st), int(WcStatus::RemAccessErr));
		WEFT_EXPECT_TRUE(t, wait_state(c.a.qp, QpState::Err));
		WEFT_EXPECT_TRUE(t, untouched(remote.p, win_at));
		WEFT_EXPECT_TRUE(t, untouched(remote.p + win_at + win_len, arena - win_at - win_len));
	}
};

constexpr uint32_t rw = access::remote_write | access::remote_read;

/* A fixture with @type's window bound on b's QP over the window range with @acc (0: left unbound). */
Result<Own<Fixture>> fixture(MwType type, uint32_t acc = rw,
			     uint32_t mr_access = access::local_write | access::mw_bind)
{
	auto f = WEFT_TRY(make_own<Fixture>(Gfp::Sleep));
	WEFT_TRY(f->open(type, mr_access));
	if (acc && f->bind(f->c.b, win_at, win_len, acc) != WcStatus::Success)
		return Error(err::EIO);
	return f;
}

/* A LOCAL_INV of the window's rkey on b's QP: its completion status. */
WcStatus local_inv(Fixture &x)
{
	SendWr inv;
	inv.opcode = WrOpcode::LocalInv;
	inv.invalidate_rkey = x.mw->rkey;
	if (!x.c.b.qp->post_send(inv))
		return WcStatus::GeneralErr;
	auto wc = wait_wc(x.c.b.cq);
	return wc ? wc.value().status : WcStatus::GeneralErr;
}

/* A SEND with Invalidate of @rkey from @from (8 bytes of the local arena). */
Result<void> send_inv(Fixture &x, Side &from, uint32_t rkey)
{
	SendWr s;
	Sge sg{reinterpret_cast<uint64_t>(x.local.p), 8, from.mr->lkey};
	s.opcode = WrOpcode::SendWithInv;
	s.sg = Span<const Sge>(&sg, 1);
	s.invalidate_rkey = rkey;
	return from.qp->post_send(s);
}

/* IBA 10.6.7.2: a bound type 1 window takes WRITE, READ and atomics inside it. */
void type1_bind_and_access(Test &t)
{
	auto f = fixture(MwType::Type1, 0);
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	const uint32_t before = x.mw->rkey;
	WEFT_ASSERT_EQ(t, int(x.bind(x.c.b, win_at, win_len, rw | access::remote_atomic)),
		       int(WcStatus::Success));
	WEFT_EXPECT_EQ(t, x.mw->rkey, next_rkey(before));
	WEFT_ASSERT_EQ(t, int(x.rdma(WrOpcode::RdmaWrite, win_at, win_len)), int(WcStatus::Success));
	WEFT_EXPECT_EQ(t, __builtin_memcmp(x.remote.p + win_at, x.local.p, win_len), 0);
	WEFT_EXPECT_TRUE(t, untouched(x.remote.p, win_at));
	__builtin_memset(x.local.p, 0, arena);
	WEFT_ASSERT_EQ(t, int(x.rdma(WrOpcode::RdmaRead, win_at + 100, 500)), int(WcStatus::Success));
	WEFT_EXPECT_EQ(t, __builtin_memcmp(x.remote.p + win_at + 100, x.local.p, 500), 0);
	/* Fetch-and-add on an aligned word of the window. */
	uint64_t *word = reinterpret_cast<uint64_t *>(x.remote.p + win_at + 8);
	*word = 40;
	SendWr wr;
	Sge sg{reinterpret_cast<uint64_t>(x.local.p), 8, x.c.a.mr->lkey};
	wr.opcode = WrOpcode::AtomicFetchAdd;
	wr.sg = Span<const Sge>(&sg, 1);
	wr.atomic.remote_addr = x.base + win_at + 8;
	wr.atomic.compare_add = 2;
	wr.atomic.rkey = x.mw->rkey;
	WEFT_ASSERT_OK(t, x.c.a.qp->post_send(wr));
	auto wc = wait_wc(x.c.a.cq);
	WEFT_ASSERT_OK(t, wc);
	WEFT_EXPECT_EQ(t, int(wc.value().status), int(WcStatus::Success));
	WEFT_EXPECT_EQ(t, *word, uint64_t(42));
	/* The MR's own keys give no remote access: the MR has no remote rights. */
	WEFT_EXPECT_EQ(t, x.mr->rkey, 0u);
}

/* IBA 10.6.7.2.6: an access running past the window's end is refused. */
void access_outside_window(Test &t)
{
	static constexpr struct {
		WrOpcode op;
		uint64_t at;
		uint32_t len;
	} tries[] = {
		{WrOpcode::RdmaWrite, win_at + win_len - 10, 20}, /* past the end */
		{WrOpcode::RdmaWrite, win_at - 1, 8},		   /* starts before */
		{WrOpcode::RdmaRead, win_at, win_len + 1},	   /* one byte too many */
	};
	for (const auto &y : tries) {
		auto f = fixture(MwType::Type1);
		WEFT_ASSERT_OK(t, f);
		Fixture &x = *f.value();
		x.expect_refused(t, x.rdma(y.op, y.at, y.len));
		WEFT_EXPECT_TRUE(t, untouched(x.remote.p + win_at, win_len));
	}
}

/* IBA 10.6.7.2.6: the window's rights, not the MR's or the QP's, decide. */
void access_without_right(Test &t)
{
	static constexpr WrOpcode ops[] = {WrOpcode::RdmaWrite, WrOpcode::RdmaRead};
	for (WrOpcode op : ops) {
		auto f = fixture(MwType::Type2, 0);
		WEFT_ASSERT_OK(t, f);
		Fixture &x = *f.value();
		const uint32_t acc = op == WrOpcode::RdmaWrite ? access::remote_read : access::remote_write;
		WEFT_ASSERT_EQ(t, int(x.bind(x.c.b, win_at, win_len, acc)), int(WcStatus::Success));
		x.expect_refused(t, x.rdma(op, win_at, 64));
		WEFT_EXPECT_TRUE(t, untouched(x.remote.p + win_at, win_len));
	}
}

/*
 * IBA 10.6.7.2.2-3 (C10-72..75): bind rules, each a MwBindErr completion
 * that takes the binding QP to Error and leaves the window unbound.
 */
void bind_rules(Test &t)
{
	enum class Bad { NoBindRight, OutsideMr, WriteWithoutLocalWrite, OtherPdQp, Type2Twice, ZeroLenType2 };
	static constexpr Bad bads[] = {Bad::NoBindRight, Bad::OutsideMr, Bad::WriteWithoutLocalWrite,
				       Bad::OtherPdQp, Bad::Type2Twice, Bad::ZeroLenType2};
	for (Bad bad : bads) {
		const bool type2 = bad == Bad::OtherPdQp || bad == Bad::Type2Twice || bad == Bad::ZeroLenType2;
		uint32_t mr_acc = access::local_write | access::mw_bind;
		if (bad == Bad::NoBindRight)
			mr_acc = access::local_write | access::remote_write;
		else if (bad == Bad::WriteWithoutLocalWrite)
			mr_acc = access::mw_bind;
		auto f = fixture(type2 ? MwType::Type2 : MwType::Type1, 0, mr_acc);
		WEFT_ASSERT_OK(t, f);
		Fixture &x = *f.value();
		Side *on = &x.c.b;
		uint64_t at = win_at, len = win_len;
		if (bad == Bad::OutsideMr)
			len = arena; /* win_at + arena runs past the MR */
		else if (bad == Bad::ZeroLenType2)
			len = 0;
		else if (bad == Bad::OtherPdQp)
			on = &x.c.a; /* a's QP: another device, another PD */
		else if (bad == Bad::Type2Twice)
			WEFT_ASSERT_EQ(t, int(x.bind(x.c.b, win_at, win_len, rw)), int(WcStatus::Success));
		const uint32_t rkey = x.mw->rkey;
		WEFT_EXPECT_EQ(t, int(x.bind(*on, at, len, rw)), int(WcStatus::MwBindErr));
		WEFT_EXPECT_TRUE(t, wait_state(on->qp, QpState::Err));
		WEFT_EXPECT_EQ(t, x.mw->rkey, rkey); /* a failed bind changes nothing */
		if (bad != Bad::Type2Twice)
			WEFT_EXPECT_FALSE(t, x.mw->valid());
	}
	/* Type 2 through a QP of another PD on the same device. */
	auto f = fixture(MwType::Type2, 0);
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	auto pd2 = x.c.b.ctx->alloc_pd();
	WEFT_ASSERT_OK(t, pd2);
	QpInitAttr init;
	init.type = QpType::Rc;
	init.send_cq = init.recv_cq = x.c.b.cq;
	init.cap.max_send_wr = init.cap.max_recv_wr = 4;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	init.sq_sig_all = true;
	auto qp2 = x.c.b.ctx->create_qp(pd2.value(), init);
	WEFT_ASSERT_OK(t, qp2);
	Side other;
	other.borrow(x.c.b, qp2.value());
	other.pd = pd2.value();
	WEFT_ASSERT_OK(t, to_rts(other, x.c.a, iba::Mtu::M1024, 7));
	WEFT_EXPECT_EQ(t, int(x.bind(other, win_at, win_len, rw)), int(WcStatus::MwBindErr));
	WEFT_EXPECT_FALSE(t, x.mw->valid());
	/* The same bind through a QP of the window's PD succeeds. */
	WEFT_EXPECT_EQ(t, int(x.bind(x.c.b, win_at, win_len, rw)), int(WcStatus::Success));
}

/* Two QPs of one PD on each side, connected pairwise: x.c (a<->b) and (a2<->b2). */
struct TwoQps {
	Side a2, b2;
	Result<void> open(Fixture &x)
	{
		QpInitAttr init;
		init.type = QpType::Rc;
		init.cap.max_send_wr = init.cap.max_recv_wr = 8;
		init.cap.max_send_sge = init.cap.max_recv_sge = 1;
		init.sq_sig_all = true;
		init.send_cq = init.recv_cq = x.c.a.cq;
		a2.borrow(x.c.a, WEFT_TRY(x.c.a.ctx->create_qp(x.c.a.pd, init)));
		init.send_cq = init.recv_cq = x.c.b.cq;
		b2.borrow(x.c.b, WEFT_TRY(x.c.b.ctx->create_qp(x.c.b.pd, init)));
		WEFT_TRY(to_rts(a2, b2, iba::Mtu::M1024, 7));
		return to_rts(b2, a2, iba::Mtu::M1024, 7);
	}
};

/* IBA 10.6.7.2.6: a type 2 window answers the QP it was bound through only. */
void type2_other_qp(Test &t)
{
	auto f = fixture(MwType::Type2);
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	TwoQps q;
	WEFT_ASSERT_OK(t, q.open(x));
	WEFT_ASSERT_EQ(t, int(x.rdma(WrOpcode::RdmaWrite, win_at, 256)), int(WcStatus::Success));
	__builtin_memset(x.remote.p + win_at, poison, win_len);
	/* Same PD, same window, the other QP: refused. */
	WcStatus st = x.rdma_from(q.a2, WrOpcode::RdmaWrite, win_at, 256);
	WEFT_EXPECT_EQ(t, int(st), int(WcStatus::RemAccessErr));
	WEFT_EXPECT_TRUE(t, untouched(x.remote.p, arena));
	/* A type 1 window of the same PD is reached through either QP. */
	auto mw1 = x.c.b.ctx->alloc_mw(x.c.b.pd, MwType::Type1);
	WEFT_ASSERT_OK(t, mw1);
	Mw *keep = exchange(x.mw, mw1.value());
	WEFT_ASSERT_EQ(t, int(x.bind(x.c.b, win_at, win_len, rw)), int(WcStatus::Success));
	WEFT_EXPECT_EQ(t, int(x.rdma(WrOpcode::RdmaWrite, win_at, 256)), int(WcStatus::Success));
	x.mw = keep;
}

/* IBA 10.6.7.2.5: LOCAL_INV of a type 2 window, then an access: RemAccessErr. */
void type2_local_invalidate(Test &t)
{
	auto f = fixture(MwType::Type2);
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	WEFT_ASSERT_EQ(t, int(x.rdma(WrOpcode::RdmaWrite, win_at, 64)), int(WcStatus::Success));
	__builtin_memset(x.remote.p + win_at, poison, win_len);
	WEFT_EXPECT_EQ(t, int(local_inv(x)), int(WcStatus::Success));
	WEFT_EXPECT_FALSE(t, x.mw->valid());
	x.expect_refused(t, x.rdma(WrOpcode::RdmaWrite, win_at, 64));
	WEFT_EXPECT_TRUE(t, untouched(x.remote.p + win_at, win_len));
	WEFT_EXPECT_OK(t, x.c.b.ctx->dereg_mr(x.mr));
}

/* IBA 10.6.7.2.5, 9.4.1.1: SEND with Invalidate of the window's rkey, through its QP. */
void type2_remote_invalidate(Test &t)
{
	auto f = fixture(MwType::Type2);
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	uint8_t rbuf[16];
	WEFT_ASSERT_OK(t, post_recv_one(x.c.b, rbuf, sizeof(rbuf), 9));
	WEFT_ASSERT_OK(t, send_inv(x, x.c.a, x.mw->rkey));
	auto sent = wait_wc(x.c.a.cq);
	WEFT_ASSERT_OK(t, sent);
	WEFT_EXPECT_EQ(t, int(sent.value().status), int(WcStatus::Success));
	auto got = wait_wc(x.c.b.cq);
	WEFT_ASSERT_OK(t, got);
	WEFT_EXPECT_EQ(t, int(got.value().status), int(WcStatus::Success));
	WEFT_EXPECT_TRUE(t, got.value().wc_flags & wc_flag::with_inv);
	WEFT_EXPECT_EQ(t, got.value().invalidate_rkey, x.mw->rkey);
	WEFT_EXPECT_FALSE(t, x.mw->valid());
	x.expect_refused(t, x.rdma(WrOpcode::RdmaWrite, win_at, 64));
}

/*
 * o10-37.2.26: a type 1 window is not invalidated by LOCAL_INV (the WR
 * fails, the window stays bound); a type 2 one is not by a SEND with
 * Invalidate arriving on another QP (RemInvReqErr).
 */
void invalidate_refused(Test &t)
{
	{
		auto f = fixture(MwType::Type1);
		WEFT_ASSERT_OK(t, f);
		Fixture &x = *f.value();
		WEFT_EXPECT_EQ(t, int(local_inv(x)), int(WcStatus::LocProtErr));
		WEFT_EXPECT_TRUE(t, x.mw->valid());
	}
	auto f = fixture(MwType::Type2);
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	TwoQps q;
	WEFT_ASSERT_OK(t, q.open(x));
	uint8_t rbuf[16];
	WEFT_ASSERT_OK(t, post_recv_one(q.b2, rbuf, sizeof(rbuf), 9));
	WEFT_ASSERT_OK(t, send_inv(x, q.a2, x.mw->rkey));
	bool saw_inv_err = false;
	for (int i = 0; i < 2; i++) { /* the receive's and the send's, on the two CQs */
		auto wc = wait_wc(i ? x.c.a.cq : x.c.b.cq);
		WEFT_ASSERT_OK(t, wc);
		saw_inv_err |= wc.value().status == WcStatus::RemInvReqErr;
	}
	WEFT_EXPECT_TRUE(t, saw_inv_err);
	WEFT_EXPECT_TRUE(t, x.mw->valid());
}

/* IBA 10.6.7.2.1, 11.2.8.4: an MR with windows bound is not deregistered (EBUSY). */
void dereg_mr_with_bound_window(Test &t)
{
	auto f = fixture(MwType::Type1);
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	WEFT_EXPECT_ERR(t, x.c.b.ctx->dereg_mr(x.mr), err::EBUSY);
	/* The refused deregistration left the window working. */
	WEFT_EXPECT_EQ(t, int(x.rdma(WrOpcode::RdmaWrite, win_at, 64)), int(WcStatus::Success));
	/* A zero-length bind unbinds a type 1 window; then the MR goes. */
	WEFT_ASSERT_EQ(t, int(x.bind(x.c.b, 0, 0, 0)), int(WcStatus::Success));
	WEFT_EXPECT_FALSE(t, x.mw->valid());
	WEFT_EXPECT_OK(t, x.c.b.ctx->dereg_mr(x.mr));
	WEFT_EXPECT_ERR(t, x.c.b.ctx->dealloc_mw(nullptr), err::EINVAL);
	WEFT_EXPECT_OK(t, x.c.b.ctx->dealloc_mw(x.mw));
}

/* IBA 11.2.9.3: deallocating a bound window takes its rkey away at once. */
void dealloc_bound_then_access(Test &t)
{
	auto f = fixture(MwType::Type2);
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	const uint32_t rkey = x.mw->rkey;
	WEFT_ASSERT_OK(t, x.c.b.ctx->dealloc_mw(x.mw));
	WEFT_EXPECT_OK(t, x.c.b.ctx->dereg_mr(x.mr)); /* no window bound any more */
	Sge sg{reinterpret_cast<uint64_t>(x.local.p), 64, x.c.a.mr->lkey};
	x.expect_refused(t, rdma_wait(x.c.a, WrOpcode::RdmaWrite, sg, x.base + win_at, rkey));
	WEFT_EXPECT_TRUE(t, untouched(x.remote.p + win_at, win_len));
}

/*
 * Teardown with windows bound: closing the context deallocates the
 * windows before the MRs (no EBUSY, no leak: the debug kernel's kmemleak
 * and KASAN watch), in one round with the type 2 window's QP destroyed
 * first.  The windows hold their PD (EBUSY); a type other than 1 and 2
 * is EINVAL.
 */
void close_with_windows_bound(Test &t)
{
	for (int round = 0; round < 3; round++) {
		auto f = fixture(MwType::Type2);
		WEFT_ASSERT_OK(t, f);
		Fixture &x = *f.value();
		auto mw1 = x.c.b.ctx->alloc_mw(x.c.b.pd, MwType::Type1);
		WEFT_ASSERT_OK(t, mw1);
		x.mw = mw1.value();
		WEFT_ASSERT_EQ(t, int(x.bind(x.c.b, 0, arena, rw)), int(WcStatus::Success));
		WEFT_EXPECT_ERR(t, x.c.b.ctx->alloc_mw(x.c.b.pd, MwType(3)), err::EINVAL);
		WEFT_EXPECT_ERR(t, x.c.b.ctx->dealloc_pd(x.c.b.pd), err::EBUSY);
		if (round == 1)
			WEFT_EXPECT_OK(t, x.c.b.ctx->destroy_qp(exchange(x.c.b.qp, nullptr)));
		/* ~Fixture closes both contexts with everything in place. */
	}
}

} // namespace

WEFT_TEST_SUITE(weft_hca_mw, WEFT_CASE(type1_bind_and_access), WEFT_CASE(access_outside_window),
		WEFT_CASE(access_without_right), WEFT_CASE(bind_rules), WEFT_CASE(type2_other_qp),
		WEFT_CASE(type2_local_invalidate), WEFT_CASE(type2_remote_invalidate),
		WEFT_CASE(invalidate_refused), WEFT_CASE(dereg_mr_with_bound_window),
		WEFT_CASE(dealloc_bound_then_access), WEFT_CASE(close_with_windows_bound));
