// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: RC data path coverage beyond weft_hca_datapath.  RDMA WRITE and
 * READ at every path MTU for lengths on both sides of packet boundaries,
 * gathered from and scattered into one, three or the device's maximum
 * number of SGEs at unaligned addresses; SEND gathered from several SGEs
 * into receive SGEs cut elsewhere; 8 MiB messages at the smallest and the
 * largest MTU; atomics at every MTU; and the length and protection errors
 * as the completion statuses IBA 11.6.2 names for them.
 *
 * Every destination is poisoned first and every byte no transfer may touch
 * (gaps between SGEs, slack after the message, bytes around a remote
 * buffer) is checked to still hold the poison afterwards.
 */
#include <weft/log.h>
#include <weft/test.h>
#include <weft/verbs/test_pair.h>

using namespace weft;
using namespace weft::verbs;
using namespace weft::verbs::testing;
using weft::test::Test;

namespace {

constexpr uint8_t poison = 0xa5;

constexpr iba::Mtu all_mtus[] = {iba::Mtu::M256, iba::Mtu::M512, iba::Mtu::M1024, iba::Mtu::M2048,
				 iba::Mtu::M4096};

/* A position-dependent byte with no short period: a misplaced run shows. */
uint8_t pattern_byte(uint32_t seed, size_t i)
{
	uint32_t x = static_cast<uint32_t>(i) * 0x9e3779b1u + seed * 0x85ebca6bu;
	return static_cast<uint8_t>((x ^ (x >> 13)) >> 16);
}

void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pattern_byte(seed, i);
}

bool all_poison(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != poison)
			return false;
	return true;
}

enum class Shape : uint8_t { One, Three, Widest };
constexpr Shape all_shapes[] = {Shape::One, Shape::Three, Shape::Widest};

/* An SGE list as pieces of an arena: piece i is [off[i], off[i] + len[i]). */
struct Layout {
	static constexpr uint32_t max = RecvEntry::max_sge;
	size_t off[max];
	uint32_t len[max];
	uint32_t n = 0;
	size_t total = 0; /* sum of len[] */
	size_t arena = 0; /* bytes of arena the list needs, with a tail after the last piece */
};

/*
 * Cut @len bytes into an SGE list of @shape.  The first piece starts at an
 * odd offset and a gap follows every piece, so a transfer that ran past an
 * SGE's end, merged two or took them out of order would touch a gap.
 * Three: a short first piece, an odd middle, the rest.  Widest: @widest
 * pieces (the device's limit) of uneven, weighted lengths.  @salt moves
 * the boundaries, so two lists of one length disagree on where they cut.
 */
Layout cut(Shape shape, size_t len, uint32_t widest, uint32_t salt)
{
	Layout l;
	uint32_t lens[Layout::max];
	uint32_t n;
	if (len == 0) {
		n = 0; /* a zero-length message needs no SGE at all */
	} else if (shape == Shape::One || (shape == Shape::Three && len < 3)) {
		n = 1;
		lens[0] = static_cast<uint32_t>(len);
	} else if (shape == Shape::Three) {
		n = 3;
		lens[0] = static_cast<uint32_t>(min<size_t>(1 + salt, len - 2));
		size_t rest = len - lens[0];
		lens[1] = static_cast<uint32_t>(((rest - 1) / 2) | 1);
		lens[2] = static_cast<uint32_t>(rest - lens[1]);
	} else {
		n = static_cast<uint32_t>(min<size_t>(min<uint32_t>(widest, Layout::max), len));
		size_t spare = len - n, weight_sum = 0, used = 0;
		uint32_t w[Layout::max];
		for (uint32_t i = 0; i < n; i++) {
			w[i] = 1 + (i * 7 + salt) % 11;
			weight_sum += w[i];
		}
		for (uint32_t i = 0; i + 1 < n; i++) {
			lens[i] = static_cast<uint32_t>(1 + spare * w[i] / weight_sum);
			used += lens[i];
		}
		lens[n - 1] = static_cast<uint32_t>(len - used);
	}
	size_t at = 101 + salt;
	for (uint32_t i = 0; i < n; i++) {
		l.off[i] = at;
		l.len[i] = lens[i];
		at += lens[i] + 1 + (i * 13 + salt) % 29;
	}
	l.n = n;
	l.total = len;
	l.arena = at + 64;
	return l;
}

uint32_t to_sges(const Layout &l, uint8_t *arena, uint32_t lkey, Sge *out)
{
	for (uint32_t i = 0; i < l.n; i++)
		out[i] = Sge{reinterpret_cast<uint64_t>(arena + l.off[i]), l.len[i], lkey};
	return l.n;
}

/* The message an SGE list gathers from @arena, made contiguous. */
void gather(const Layout &l, const uint8_t *arena, uint8_t *out)
{
	size_t done = 0;
	for (uint32_t i = 0; i < l.n; i++) {
		__builtin_memcpy(out + done, arena + l.off[i], l.len[i]);
		done += l.len[i];
	}
}

/*
 * The first @len bytes the list covers hold @msg; every other byte of the
 * arena (gaps, the rest of the list, the tail) is still poison.
 */
bool scattered(const Layout &l, const uint8_t *arena, const uint8_t *msg, size_t len)
{
	size_t done = 0, at = 0;
	for (uint32_t i = 0; i < l.n; i++) {
		if (!all_poison(arena + at, l.off[i] - at))
			return false;
		at = l.off[i];
		size_t take = min<size_t>(len - done, l.len[i]);
		if (__builtin_memcmp(arena + at, msg + done, take) != 0)
			return false;
		if (!all_poison(arena + at + take, l.len[i] - take))
			return false;
		done += take;
		at += l.len[i];
	}
	return done == len && all_poison(arena + at, l.arena - at);
}

const char *op_name(WrOpcode op)
{
	return op == WrOpcode::RdmaWrite ? "WRITE" : op == WrOpcode::RdmaRead ? "READ" : "SEND";
}

/* Which combination failed: loops of EXPECTs otherwise only name a line. */
void where(Test &t, iba::Mtu mtu, size_t len, const Layout &l, const char *what)
{
	char msg[128];
	format(msg, sizeof(msg), "  ... %s at MTU %zu, %zu bytes in %u SGEs", what,
	       iba::mtu_bytes(mtu), len, l.n);
	t.note(msg);
}

/* Side::open's QP takes 4 SGEs; the widest lists need the device's limit, so replace it. */
Result<void> widen(Side &s)
{
	const DeviceAttr &da = s.dev->attr();
	WEFT_TRY(s.ctx->destroy_qp(s.qp));
	s.qp = nullptr;
	QpInitAttr init;
	init.type = QpType::Rc;
	init.send_cq = init.recv_cq = s.cq;
	init.cap.max_send_wr = init.cap.max_recv_wr = 16;
	init.cap.max_send_sge = min<uint32_t>(da.max_send_sge, Layout::max);
	init.cap.max_recv_sge = min<uint32_t>(da.max_recv_sge, Layout::max);
	init.sq_sig_all = true;
	s.qp = WEFT_TRY(s.ctx->create_qp(s.pd, init));
	return ok();
}

Result<void> connect_wide(Pair &c, iba::Mtu mtu)
{
	const uint32_t acc = access::all & ~access::mw_bind;
	WEFT_TRY(c.a.open("weft0", QpType::Rc, acc));
	WEFT_TRY(c.b.open("weft1", QpType::Rc, acc));
	WEFT_TRY(widen(c.a));
	WEFT_TRY(widen(c.b));
	WEFT_TRY(to_rts(c.a, c.b, mtu, 7));
	return to_rts(c.b, c.a, mtu, 7);
}

/* Stops a case's loops at the first failing combination (the QP is in Err after it). */
struct Check {
	bool ok = true;
	bool operator()(bool v)
	{
		ok = ok && v;
		return v;
	}
};

/* The remote side of an RDMA test: an MR over a buffer, the target inside at an odd offset. */
constexpr size_t remote_at = 5;

/*
 * One RDMA WRITE or READ of l.total bytes between the list @l over a local
 * arena and a remote MR; byte-exact, nothing outside the target touched.
 */
bool rdma_once(Test &t, Pair &c, iba::Mtu mtu, WrOpcode op, const Layout &l)
{
	const size_t len = l.total;
	Buf arena(l.arena), remote(remote_at + len + 64);
	if (!WEFT_EXPECT_TRUE(t, arena.p && remote.p))
		return false;
	auto reg = c.b.ctx->reg_kernel_mr(c.b.pd, remote.p, remote.n,
					  access::local_write | access::remote_write | access::remote_read);
	if (!WEFT_EXPECT_OK(t, reg))
		return false;
	Mr *rmr = reg.value();
	uint8_t *target = remote.p + remote_at;
	const uint32_t seed = static_cast<uint32_t>(len) * 3 + static_cast<uint32_t>(op);
	if (op == WrOpcode::RdmaWrite) {
		fill(arena.p, arena.n, seed); /* gaps too: reading one would show */
		__builtin_memset(remote.p, poison, remote.n);
	} else {
		__builtin_memset(arena.p, poison, arena.n);
		fill(remote.p, remote.n, seed);
	}
	Sge sg[Layout::max];
	SendWr wr;
	wr.wr_id = len;
	wr.opcode = op;
	wr.sg = Span<const Sge>(sg, to_sges(l, arena.p, c.a.mr->lkey, sg));
	wr.rdma.remote_addr = reinterpret_cast<uint64_t>(target);
	wr.rdma.rkey = rmr->rkey;
	Check ok;
	if (ok(WEFT_EXPECT_OK(t, c.a.qp->post_send(wr)))) {
		auto wc = wait_wc(c.a.cq);
		if (ok(WEFT_EXPECT_OK(t, wc))) {
			const Wc &w = wc.value();
			ok(WEFT_EXPECT_EQ(t, int(w.status), int(WcStatus::Success)));
			ok(WEFT_EXPECT_EQ(t, w.wr_id, uint64_t(len)));
			if (op == WrOpcode::RdmaWrite) {
				ok(WEFT_EXPECT_EQ(t, int(w.opcode), int(WcOpcode::RdmaWrite)));
				Buf msg(len);
				if (ok(WEFT_EXPECT_TRUE(t, msg.p != nullptr))) {
					gather(l, arena.p, msg.p);
					ok(WEFT_EXPECT_EQ(t, __builtin_memcmp(target, msg.p, len), 0));
				}
				/* IBA 10.6.3.1: nothing lands outside [va, va + len). */
				ok(WEFT_EXPECT_TRUE(t, all_poison(remote.p, remote_at)));
				ok(WEFT_EXPECT_EQ(t, target[len], poison));
				ok(WEFT_EXPECT_TRUE(t, all_poison(target + len, 64)));
			} else {
				ok(WEFT_EXPECT_EQ(t, int(w.opcode), int(WcOpcode::RdmaRead)));
				ok(WEFT_EXPECT_EQ(t, w.byte_len, uint32_t(len)));
				ok(WEFT_EXPECT_TRUE(t, scattered(l, arena.p, target, len)));
			}
		}
	}
	if (!ok.ok)
		where(t, mtu, len, l, op_name(op));
	WEFT_EXPECT_OK(t, c.b.ctx->dereg_mr(rmr));
	return ok.ok;
}

/*
 * IBA 9.4 (RDMA WRITE, RDMA READ), 9.7.1 (one PSN per MTU-sized packet):
 * lengths 0, 1 and one either side of one and several MTUs, and larger
 * ones, through every SGE shape at every path MTU.
 */
void rdma_write_read_every_mtu_and_sge_layout(Test &t)
{
	static constexpr WrOpcode ops[] = {WrOpcode::RdmaWrite, WrOpcode::RdmaRead};
	for (iba::Mtu mtu : all_mtus) {
		auto pair = make_own<Pair>(Gfp::Sleep);
		WEFT_ASSERT_OK(t, pair);
		Pair &c = *pair.value();
		WEFT_ASSERT_OK(t, connect_wide(c, mtu));
		const uint32_t widest = c.a.qp->cap.max_send_sge;
		WEFT_EXPECT_EQ(t, widest, c.a.dev->attr().max_send_sge);
		const size_t m = iba::mtu_bytes(mtu);
		const size_t sizes[] = {0, 1, m - 1, m, m + 1, 3 * m + 7, 65536 + 3, 1 << 20};
		for (size_t len : sizes) {
			for (Shape sh : all_shapes) {
				Layout l = cut(sh, len, widest, static_cast<uint32_t>(len % 7));
				for (WrOpcode op : ops)
					if (!rdma_once(t, c, mtu, op, l))
						return;
			}
		}
	}
}

/*
 * A message's SGE lengths summed beyond the port's max_msg_sz (2^31) are
 * refused by Post Send, also when 32 bits would wrap them to a short or
 * empty message (two of 2^31 are 0 there); 2^31 itself is allowed.
 */
void sge_sum_beyond_max_msg(Test &t)
{
	auto pair = make_own<Pair>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, pair);
	Pair &c = *pair.value();
	WEFT_ASSERT_OK(t, connect_wide(c, iba::Mtu::M4096));
	static uint8_t buf[8];
	const uint64_t a = reinterpret_cast<uint64_t>(buf);
	const uint32_t half = 1u << 31;
	Sge sg[2] = {{a, half, c.a.mr->lkey}, {a, half, c.a.mr->lkey}};
	SendWr wr;
	wr.opcode = WrOpcode::RdmaWrite;
	wr.rdma.remote_addr = a;
	wr.rdma.rkey = c.b.mr->rkey;
	wr.sg = Span<const Sge>(sg, 2);
	WEFT_EXPECT_ERR(t, c.a.qp->post_send(wr), err::EINVAL);
	sg[1].length = 1;
	WEFT_EXPECT_ERR(t, c.a.qp->post_send(wr), err::EINVAL);
	wr.opcode = WrOpcode::Send;
	WEFT_EXPECT_ERR(t, c.a.qp->post_send(wr), err::EINVAL);
}

struct SendPlan {
	Shape tx;
	uint32_t tx_salt;
	Shape rx;
	uint32_t rx_salt;
};

/* One SEND from list @tl into receive list @rl (which has room to spare). */
bool send_once(Test &t, Pair &c, iba::Mtu mtu, const Layout &tl, const Layout &rl)
{
	const size_t len = tl.total;
	Buf tx(tl.arena), rx(rl.arena), msg(len);
	if (!WEFT_EXPECT_TRUE(t, tx.p && rx.p && msg.p))
		return false;
	fill(tx.p, tx.n, static_cast<uint32_t>(len) + 11);
	__builtin_memset(rx.p, poison, rx.n);
	gather(tl, tx.p, msg.p);
	Sge rsg[Layout::max], ssg[Layout::max];
	RecvWr r;
	r.wr_id = len + 1;
	r.sg = Span<const Sge>(rsg, to_sges(rl, rx.p, c.b.mr->lkey, rsg));
	SendWr wr;
	wr.wr_id = len;
	wr.opcode = WrOpcode::Send;
	wr.sg = Span<const Sge>(ssg, to_sges(tl, tx.p, c.a.mr->lkey, ssg));
	Check ok;
	if (ok(WEFT_EXPECT_OK(t, c.b.qp->post_recv(r))) && ok(WEFT_EXPECT_OK(t, c.a.qp->post_send(wr)))) {
		auto s = wait_wc(c.a.cq);
		if (ok(WEFT_EXPECT_OK(t, s))) {
			ok(WEFT_EXPECT_EQ(t, int(s.value().status), int(WcStatus::Success)));
			ok(WEFT_EXPECT_EQ(t, int(s.value().opcode), int(WcOpcode::Send)));
		}
		auto rc = wait_wc(c.b.cq);
		if (ok(WEFT_EXPECT_OK(t, rc))) {
			const Wc &w = rc.value();
			ok(WEFT_EXPECT_EQ(t, int(w.status), int(WcStatus::Success)));
			ok(WEFT_EXPECT_EQ(t, int(w.opcode), int(WcOpcode::Recv)));
			ok(WEFT_EXPECT_EQ(t, w.wr_id, uint64_t(len + 1)));
			ok(WEFT_EXPECT_EQ(t, w.byte_len, uint32_t(len)));
			ok(WEFT_EXPECT_TRUE(t, scattered(rl, rx.p, msg.p, len)));
		}
	}
	if (!ok.ok)
		where(t, mtu, len, rl, "SEND (receive list)");
	return ok.ok;
}

/*
 * IBA 9.4 SEND, 11.4.1.1-2 (gather and scatter lists): a message gathered from
 * uneven send SGEs lands in receive SGEs whose boundaries fall elsewhere,
 * at every MTU, single- and multi-packet.
 */
void send_sge_lists_every_mtu(Test &t)
{
	static constexpr SendPlan plans[] = {
		{Shape::Three, 0, Shape::Widest, 3},
		{Shape::Widest, 0, Shape::Three, 6},
		{Shape::Widest, 1, Shape::Widest, 5},
	};
	for (iba::Mtu mtu : all_mtus) {
		auto pair = make_own<Pair>(Gfp::Sleep);
		WEFT_ASSERT_OK(t, pair);
		Pair &c = *pair.value();
		WEFT_ASSERT_OK(t, connect_wide(c, mtu));
		const uint32_t wide_tx = c.a.qp->cap.max_send_sge, wide_rx = c.b.qp->cap.max_recv_sge;
		WEFT_EXPECT_EQ(t, wide_rx, c.b.dev->attr().max_recv_sge);
		const size_t m = iba::mtu_bytes(mtu);
		const size_t sizes[] = {m - 1, m + 1, 3 * m + 7, 65536 + 3};
		for (size_t len : sizes) {
			for (const SendPlan &p : plans) {
				Layout tl = cut(p.tx, len, wide_tx, p.tx_salt);
				Layout rl = cut(p.rx, len + 64, wide_rx, p.rx_salt);
				if (!send_once(t, c, mtu, tl, rl))
					return;
			}
		}
	}
}

struct Big {
	Buf src, dst, back;
	explicit Big(size_t len) : src(len), dst(len + 64), back(len + 64) {}
};

/*
 * 8 MiB (the largest size the issue asks for) as SEND into one receive
 * buffer, WRITE and READ back, at MTU 256 (32768 packets a message) and
 * 4096.
 */
void eight_mib_at_extreme_mtus(Test &t)
{
	static constexpr size_t len = 8 << 20;
	static constexpr iba::Mtu mtus[] = {iba::Mtu::M256, iba::Mtu::M4096};
	auto big = make_own<Big>(Gfp::Sleep, len);
	WEFT_ASSERT_OK(t, big);
	Big &b = *big.value();
	WEFT_ASSERT_TRUE(t, b.src.p && b.dst.p && b.back.p);
	fill(b.src.p, len, 77);
	for (iba::Mtu mtu : mtus) {
		auto pair = make_own<Pair>(Gfp::Sleep);
		WEFT_ASSERT_OK(t, pair);
		Pair &c = *pair.value();
		WEFT_ASSERT_OK(t, c.connect(QpType::Rc, mtu));
		/* SEND */
		__builtin_memset(b.dst.p, poison, b.dst.n);
		WEFT_ASSERT_OK(t, post_recv_one(c.b, b.dst.p, uint32_t(b.dst.n), 0));
		Sge ssg{reinterpret_cast<uint64_t>(b.src.p), uint32_t(len), c.a.mr->lkey};
		SendWr wr;
		wr.sg = Span<const Sge>(&ssg, 1);
		WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
		auto s = wait_wc(c.a.cq);
		WEFT_ASSERT_OK(t, s);
		WEFT_EXPECT_EQ(t, int(s.value().status), int(WcStatus::Success));
		WEFT_EXPECT_EQ(t, int(s.value().opcode), int(WcOpcode::Send));
		auto rc = wait_wc(c.b.cq);
		WEFT_ASSERT_OK(t, rc);
		WEFT_EXPECT_EQ(t, int(rc.value().status), int(WcStatus::Success));
		WEFT_EXPECT_EQ(t, int(rc.value().opcode), int(WcOpcode::Recv));
		WEFT_EXPECT_EQ(t, rc.value().byte_len, uint32_t(len));
		WEFT_EXPECT_EQ(t, __builtin_memcmp(b.src.p, b.dst.p, len), 0);
		WEFT_EXPECT_TRUE(t, all_poison(b.dst.p + len, 64));
		/* WRITE into a registered region */
		__builtin_memset(b.dst.p, poison, b.dst.n);
		auto reg = c.b.ctx->reg_kernel_mr(c.b.pd, b.dst.p, b.dst.n,
						  access::local_write | access::remote_write | access::remote_read);
		WEFT_ASSERT_OK(t, reg);
		wr.opcode = WrOpcode::RdmaWrite;
		wr.rdma.remote_addr = reinterpret_cast<uint64_t>(b.dst.p);
		wr.rdma.rkey = reg.value()->rkey;
		WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
		auto w = wait_wc(c.a.cq);
		WEFT_ASSERT_OK(t, w);
		WEFT_EXPECT_EQ(t, int(w.value().status), int(WcStatus::Success));
		WEFT_EXPECT_EQ(t, int(w.value().opcode), int(WcOpcode::RdmaWrite));
		WEFT_EXPECT_EQ(t, __builtin_memcmp(b.src.p, b.dst.p, len), 0);
		WEFT_EXPECT_TRUE(t, all_poison(b.dst.p + len, 64));
		/* READ it back */
		__builtin_memset(b.back.p, poison, b.back.n);
		Sge bsg{reinterpret_cast<uint64_t>(b.back.p), uint32_t(len), c.a.mr->lkey};
		wr.opcode = WrOpcode::RdmaRead;
		wr.sg = Span<const Sge>(&bsg, 1);
		WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
		auto rd = wait_wc(c.a.cq);
		WEFT_ASSERT_OK(t, rd);
		WEFT_EXPECT_EQ(t, int(rd.value().status), int(WcStatus::Success));
		WEFT_EXPECT_EQ(t, int(rd.value().opcode), int(WcOpcode::RdmaRead));
		WEFT_EXPECT_EQ(t, rd.value().byte_len, uint32_t(len));
		WEFT_EXPECT_EQ(t, __builtin_memcmp(b.src.p, b.back.p, len), 0);
		WEFT_EXPECT_TRUE(t, all_poison(b.back.p + len, 64));
	}
}

/* The remote word between guard words, and a local result buffer. */
struct AtomicArea {
	uint64_t below, target, above;
	uint8_t local[32];
};

constexpr uint64_t guard_word = 0x5a5a5a5a5a5a5a5aull;

/* One atomic; the original value lands at an odd local address (no alignment needed there). */
bool atomic_once(Test &t, Pair &c, AtomicArea &a, uint32_t rkey, WrOpcode op, uint64_t compare_add,
		 uint64_t swap, uint64_t &orig)
{
	__builtin_memset(a.local, poison, sizeof(a.local));
	Sge sg{reinterpret_cast<uint64_t>(a.local + 3), 8, c.a.mr->lkey};
	SendWr wr;
	wr.opcode = op;
	wr.sg = Span<const Sge>(&sg, 1);
	wr.atomic.remote_addr = reinterpret_cast<uint64_t>(&a.target);
	wr.atomic.rkey = rkey;
	wr.atomic.compare_add = compare_add;
	wr.atomic.swap = swap;
	if (!WEFT_EXPECT_OK(t, c.a.qp->post_send(wr)))
		return false;
	auto wc = wait_wc(c.a.cq);
	if (!WEFT_EXPECT_OK(t, wc))
		return false;
	Check ok;
	ok(WEFT_EXPECT_EQ(t, int(wc.value().status), int(WcStatus::Success)));
	ok(WEFT_EXPECT_EQ(t, int(wc.value().opcode),
			  int(op == WrOpcode::AtomicFetchAdd ? WcOpcode::FetchAdd : WcOpcode::CompSwap)));
	__builtin_memcpy(&orig, a.local + 3, 8);
	ok(WEFT_EXPECT_TRUE(t, all_poison(a.local, 3)));
	ok(WEFT_EXPECT_TRUE(t, all_poison(a.local + 11, sizeof(a.local) - 11)));
	return ok.ok;
}

uint64_t target_now(AtomicArea &a)
{
	return __atomic_load_n(&a.target, __ATOMIC_ACQUIRE);
}

/*
 * IBA 9.4.5 (atomics): Fetch&Add returns the original and adds modulo
 * 2^64; Compare&Swap returns the original and swaps only on a match.
 * The path MTU does not matter to an 8-byte operation, but every MTU is a
 * differently configured QP.
 */
void atomics_every_mtu(Test &t)
{
	static constexpr uint64_t adds[] = {1, 0x10, 0x100000000ull, ~0ull, 0x8000000000000000ull};
	for (iba::Mtu mtu : all_mtus) {
		auto pair = make_own<Pair>(Gfp::Sleep);
		WEFT_ASSERT_OK(t, pair);
		Pair &c = *pair.value();
		WEFT_ASSERT_OK(t, c.connect(QpType::Rc, mtu));
		auto area = make_own<AtomicArea>(Gfp::Sleep);
		WEFT_ASSERT_OK(t, area);
		AtomicArea &a = *area.value();
		a.below = a.above = guard_word;
		const uint64_t start = 0xfffffffffffffff0ull; /* the first adds wrap */
		a.target = start;
		auto reg = c.b.ctx->reg_kernel_mr(c.b.pd, &a.below, 3 * sizeof(uint64_t),
						  access::local_write | access::remote_atomic);
		WEFT_ASSERT_OK(t, reg);
		const uint32_t rkey = reg.value()->rkey;
		uint64_t expect = start, orig = 0;
		for (uint64_t add : adds) {
			WEFT_ASSERT_TRUE(t, atomic_once(t, c, a, rkey, WrOpcode::AtomicFetchAdd, add, 0, orig));
			WEFT_EXPECT_EQ(t, orig, expect);
			expect += add;
			WEFT_EXPECT_EQ(t, target_now(a), expect);
		}
		const uint64_t fresh = 0x0123456789abcdefull ^ static_cast<uint64_t>(mtu);
		/* Hit: swapped, the original returned. */
		WEFT_ASSERT_TRUE(t, atomic_once(t, c, a, rkey, WrOpcode::AtomicCmpSwap, expect, fresh, orig));
		WEFT_EXPECT_EQ(t, orig, expect);
		WEFT_EXPECT_EQ(t, target_now(a), fresh);
		/* Miss by one bit: unchanged, the current value returned. */
		WEFT_ASSERT_TRUE(t, atomic_once(t, c, a, rkey, WrOpcode::AtomicCmpSwap, fresh ^ 1, 7, orig));
		WEFT_EXPECT_EQ(t, orig, fresh);
		WEFT_EXPECT_EQ(t, target_now(a), fresh);
		WEFT_EXPECT_EQ(t, a.below, guard_word);
		WEFT_EXPECT_EQ(t, a.above, guard_word);
		WEFT_EXPECT_OK(t, c.b.ctx->dereg_mr(reg.value()));
	}
}

bool wait_state(Qp *qp, QpState st)
{
	for (int i = 0; i < 5000 && qp->state() != st; i++)
		weft_msleep(1);
	return qp->state() == st;
}

/*
 * A SEND longer than the receive WQE's buffers: the responder completes
 * the receive with LocLenErr and answers NAK Invalid Request, which the
 * requester completes as RemInvReqErr; both QPs end in Err (IBA 9.7.5.2,
 * 11.6.2).  Multi-packet (detected at a later packet) and single-packet.
 * Nothing lands beyond the receive buffer.
 */
void send_longer_than_receive(Test &t)
{
	struct Lens {
		uint32_t send, recv;
	};
	static constexpr Lens cases[] = {{3000, 2000}, {100, 50}};
	for (const Lens &l : cases) {
		auto pair = make_own<Pair>(Gfp::Sleep);
		WEFT_ASSERT_OK(t, pair);
		Pair &c = *pair.value();
		WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M1024));
		Buf src(l.send), dst(l.recv + 64);
		WEFT_ASSERT_TRUE(t, src.p && dst.p);
		fill(src.p, src.n, 5);
		__builtin_memset(dst.p, poison, dst.n);
		WEFT_ASSERT_OK(t, post_recv_one(c.b, dst.p, l.recv, 0));
		Sge ssg{reinterpret_cast<uint64_t>(src.p), l.send, c.a.mr->lkey};
		SendWr wr;
		wr.sg = Span<const Sge>(&ssg, 1);
		WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
		auto s = wait_wc(c.a.cq);
		WEFT_ASSERT_OK(t, s);
		WEFT_EXPECT_EQ(t, int(s.value().status), int(WcStatus::RemInvReqErr));
		auto rc = wait_wc(c.b.cq);
		WEFT_ASSERT_OK(t, rc);
		WEFT_EXPECT_EQ(t, int(rc.value().status), int(WcStatus::LocLenErr));
		WEFT_EXPECT_TRUE(t, all_poison(dst.p + l.recv, 64));
		WEFT_EXPECT_TRUE(t, wait_state(c.a.qp, QpState::Err));
		WEFT_EXPECT_TRUE(t, wait_state(c.b.qp, QpState::Err));
	}
}

/*
 * IBA 10.6.3.1, 9.7.5.2: an RDMA access not wholly inside the remote
 * region is refused with NAK Remote Access Error, completed as
 * RemAccessErr, and touches nothing outside the region.
 */
void rdma_outside_remote_region(Test &t)
{
	struct Try {
		WrOpcode op;
		int64_t from_end; /* start of the access relative to the region's end */
		uint32_t len;
	};
	static constexpr size_t region_at = 1024, region_len = 4096;
	static constexpr Try tries[] = {
		{WrOpcode::RdmaWrite, -50, 100},			/* runs 50 bytes past the end */
		{WrOpcode::RdmaWrite, -int64_t(region_len) - 1, 8}, /* starts 1 byte before */
		{WrOpcode::RdmaWrite, -int64_t(region_len), uint32_t(region_len + 1)}, /* one byte too many */
		{WrOpcode::RdmaRead, -50, 100},
	};
	for (const Try &x : tries) {
		auto pair = make_own<Pair>(Gfp::Sleep);
		WEFT_ASSERT_OK(t, pair);
		Pair &c = *pair.value();
		WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M1024));
		Buf remote(region_at + region_len + region_at), local(x.len);
		WEFT_ASSERT_TRUE(t, remote.p && local.p);
		__builtin_memset(remote.p, poison, remote.n);
		fill(local.p, local.n, 9);
		auto reg = c.b.ctx->reg_kernel_mr(c.b.pd, remote.p + region_at, region_len,
						  access::local_write | access::remote_write | access::remote_read);
		WEFT_ASSERT_OK(t, reg);
		uint64_t end = reinterpret_cast<uint64_t>(remote.p + region_at + region_len);
		Sge sg{reinterpret_cast<uint64_t>(local.p), x.len, c.a.mr->lkey};
		WcStatus st = rdma_wait(c.a, x.op, sg, end + x.from_end, reg.value()->rkey);
		WEFT_EXPECT_EQ(t, int(st), int(WcStatus::RemAccessErr));
		WEFT_EXPECT_TRUE(t, all_poison(remote.p, region_at));
		WEFT_EXPECT_TRUE(t, all_poison(remote.p + region_at + region_len, region_at));
		WEFT_EXPECT_TRUE(t, wait_state(c.a.qp, QpState::Err));
	}
}

/*
 * IBA 10.6.3.1, 11.6.2: a READ whose local SGE names no region, a region
 * of another PD, or a region without Local Write completes with
 * LocProtErr, and the local buffer is not written.
 */
void read_into_bad_local_key(Test &t)
{
	enum class Bad { NoSuchKey, OtherPd, NoLocalWrite };
	static constexpr Bad bads[] = {Bad::NoSuchKey, Bad::OtherPd, Bad::NoLocalWrite};
	for (Bad bad : bads) {
		auto pair = make_own<Pair>(Gfp::Sleep);
		WEFT_ASSERT_OK(t, pair);
		Pair &c = *pair.value();
		WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M512));
		Buf src(1500), dst(1500);
		WEFT_ASSERT_TRUE(t, src.p && dst.p);
		fill(src.p, src.n, 13);
		__builtin_memset(dst.p, poison, dst.n);
		uint32_t lkey = c.a.mr->lkey + 0x100;
		if (bad == Bad::OtherPd) {
			auto pd = c.a.ctx->alloc_pd();
			WEFT_ASSERT_OK(t, pd);
			auto mr = c.a.ctx->reg_kernel_mr(pd.value(), dst.p, dst.n, access::local_write);
			WEFT_ASSERT_OK(t, mr);
			lkey = mr.value()->lkey;
		} else if (bad == Bad::NoLocalWrite) {
			auto mr = c.a.ctx->reg_kernel_mr(c.a.pd, dst.p, dst.n, 0);
			WEFT_ASSERT_OK(t, mr);
			lkey = mr.value()->lkey;
		}
		Sge sg{reinterpret_cast<uint64_t>(dst.p), uint32_t(dst.n), lkey};
		WcStatus st = rdma_wait(c.a, WrOpcode::RdmaRead, sg, reinterpret_cast<uint64_t>(src.p), c.b.mr->rkey);
		WEFT_EXPECT_EQ(t, int(st), int(WcStatus::LocProtErr));
		WEFT_EXPECT_TRUE(t, all_poison(dst.p, dst.n));
		WEFT_EXPECT_TRUE(t, wait_state(c.a.qp, QpState::Err));
	}
}

} // namespace

WEFT_TEST_SUITE(weft_hca_coverage, WEFT_CASE(rdma_write_read_every_mtu_and_sge_layout),
		WEFT_CASE(send_sge_lists_every_mtu), WEFT_CASE(eight_mib_at_extreme_mtus),
		WEFT_CASE(atomics_every_mtu), WEFT_CASE(send_longer_than_receive),
		WEFT_CASE(rdma_outside_remote_region), WEFT_CASE(read_into_bad_local_key),
		WEFT_CASE(sge_sum_beyond_max_msg));
