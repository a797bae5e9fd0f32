// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit (issue 22): hostile packets through the whole receive path of an
 * HCA port.  A private one-port Hca beside the default subnet, with a UD
 * QP in RTS, is cabled to a Sink node that transmits mutated packets at
 * it: Port::transmit, Hca::receive (parse, VL15 rule, CRCs, LID, QP
 * lookup), the QP's engine (transport, Q_Key, P_Key) and the placement in
 * a receive WQE.  Every packet must end as exactly one of: a receive
 * completion, or a drop in one of the port's counters; never a crash, a
 * WARN, a hang, or silence.
 */
#include <weft/log.h>
#include <weft/test.h>
#include <weft/verbs/test_pair.h>

#include "../crc.h"
#include "../hca.h"
#include "sample_packet.h"
#include "sink.h"

using namespace weft;
using namespace weft::hca;
using weft::test::Test;
using weft::hca::fixture::Sink;
using verbs::QpType;

namespace {

constexpr uint16_t hca_lid = 0x12;
constexpr uint32_t qkey = 0x11110000;
constexpr uint32_t nrecv = 16;
constexpr uint32_t rbuf_len = 40 + 256;

/* Where a packet ended. */
enum class Fate : uint8_t { Delivered, RcvErrors, NoDestQp, BadPkey, BadQkey, OutOfBuffer, Silent };
constexpr const char *fate_names[] = {"delivered", "rcv_errors", "no_dest_qp", "bad_pkey",
				      "bad_qkey", "out_of_buffer", "nothing (silent drop)"};
constexpr size_t ncounters = 5;

/* The Hca, the Sink cabled to its port 1, the UD QP with receives posted. */
struct Rig {
	Hca *h = nullptr;
	Sink sink;
	verbs::testing::Side ud;
	Array<uint8_t> rbufs;
	bool on_fabric = false;

	Result<void> up(bool post = true)
	{
		h = WEFT_TRY(Hca::create(1));
		Fabric &f = Fabric::get();
		f.add(*h);
		f.add(sink);
		on_fabric = true;
		WEFT_TRY(f.connect(sink.port_, port()));
		port().lid.store(hca_lid, Order::Relaxed);
		port().state.store(verbs::PortState::Active, Order::Relaxed);
		WEFT_TRY(ud.open(*h, QpType::Ud, verbs::access::local_write));
		WEFT_TRY(verbs::testing::ud_ready(ud, qkey));
		rbufs = WEFT_TRY(Array<uint8_t>::make(Gfp::Sleep, nrecv * rbuf_len));
		for (uint32_t i = 0; i < nrecv && post; i++)
			WEFT_TRY(repost(i));
		return ok();
	}
	~Rig()
	{
		if (ud.ctx)
			ud.ctx->close(false);
		ud.ctx = nullptr;
		if (on_fabric) {
			Fabric::get().remove(sink);
			Fabric::get().remove(*h);
		}
		if (h)
			h->put();
	}
	Port &port() { return *h->port(1); }
	Result<void> repost(uint64_t i)
	{
		return verbs::testing::post_recv_one(ud, rbufs.data() + i * rbuf_len, rbuf_len, i);
	}

	void snap(uint64_t (&v)[ncounters])
	{
		PortCounters &c = port().counters;
		Atomic<uint64_t> *all[ncounters] = {&c.rcv_errors, &c.no_dest_qp, &c.bad_pkey, &c.bad_qkey,
						    &c.out_of_buffer};
		for (size_t i = 0; i < ncounters; i++)
			v[i] = all[i]->load(Order::Relaxed);
	}

	/*
	 * Send @wire (its CRCs as given: a sealed packet is checked) and wait
	 * for its fate: a completion (its receive reposted), or the counter
	 * that grew.  At most 5 s: the QP's engine runs from a workqueue.
	 */
	Fate send(ConstBytes wire)
	{
		uint64_t before[ncounters], now[ncounters];
		snap(before);
		auto pkt = PacketBuf::alloc(Gfp::Sleep, static_cast<uint32_t>(wire.size()));
		if (!pkt)
			return Fate::Silent;
		__builtin_memcpy(pkt.value()->data(), wire.data(), wire.size());
		pkt.value()->len = static_cast<uint32_t>(wire.size());
		pkt.value()->sealed = true;
		sink.port_.transmit(pkt.take());
		/* By the clock: under TCG a 1 ms sleep takes a jiffy or more. */
		const uint64_t end = weft_jiffies() + weft_msecs_to_jiffies(5000);
		while (weft_jiffies() < end) {
			verbs::Wc wc;
			if (ud.cq->poll(Span<verbs::Wc>(&wc, 1)) == 1) {
				(void)repost(wc.wr_id);
				return Fate::Delivered;
			}
			snap(now);
			for (size_t i = 0; i < ncounters; i++)
				if (now[i] != before[i])
					return static_cast<Fate>(i + 1);
			weft_msleep(1);
		}
		return Fate::Silent;
	}
};

/* A UD SEND Only of 64 bytes to the rig's QP, sealed; its length. */
size_t ud_packet(Rig &r, uint8_t *buf, size_t cap, bool grh, uint8_t opcode = 0)
{
	static const uint8_t payload[64] = {1, 2, 3, 4, 5, 6, 7, 8};
	PacketSpec s = fixture::sample(opcode ? opcode : iba::opcode(iba::Transport::Ud, iba::op::SendOnly),
				       ConstBytes(payload, sizeof(payload)), grh);
	s.vl = 0;
	s.dlid = hca_lid;
	s.pkey = 0xffff;
	s.dqp = r.ud.qp->qpn;
	s.qkey = qkey;
	auto n = build(Bytes(buf, cap), s, true);
	return n ? n.value() : 0;
}

/* Reseal after a header mutation, as a broken sender would: the CRCs then say nothing. */
void reseal(uint8_t *buf, size_t len)
{
	(void)seal(Bytes(buf, len));
}

struct Row {
	const char *name;
	bool grh;
	/* Change the sealed packet of @len bytes; returns its new length. */
	size_t (*mutate)(Rig &r, uint8_t *p, size_t len);
	Fate want;
};

/* Byte offsets of the headers (IBA 7.7, 8.3, 9.2, 9.3.3): LRH 8, GRH 40, BTH 12, DETH 8. */
constexpr size_t lrh = 0, bth_local = 8, bth_global = 48;

size_t bth_at(const uint8_t *p) { return (p[lrh + 1] & 3) == 3 ? bth_global : bth_local; }
size_t deth_at(const uint8_t *p) { return bth_at(p) + 12; }

const Row rows[] = {
	{"intact", false, [](Rig &, uint8_t *, size_t n) { return n; }, Fate::Delivered},
	{"intact with GRH", true, [](Rig &, uint8_t *, size_t n) { return n; }, Fate::Delivered},
	{"payload bit (ICRC)", false, [](Rig &, uint8_t *p, size_t n) { p[n - 10] ^= 4; return n; },
	 Fate::RcvErrors},
	{"VCRC bit", false, [](Rig &, uint8_t *p, size_t n) { p[n - 1] ^= 1; return n; }, Fate::RcvErrors},
	{"one word short", false, [](Rig &, uint8_t *p, size_t n) { reseal(p, n - 4); return n - 4; },
	 Fate::RcvErrors},
	{"one word long", false, [](Rig &, uint8_t *p, size_t n) { p[n] = p[n + 1] = p[n + 2] = p[n + 3] = 0; return n + 4; },
	 Fate::RcvErrors},
	{"LRH LVer 1", false, [](Rig &, uint8_t *p, size_t n) { p[lrh] |= 1; reseal(p, n); return n; },
	 Fate::RcvErrors},
	{"LRH LNH raw", false, [](Rig &, uint8_t *p, size_t n) { p[lrh + 1] &= uint8_t(~3u); reseal(p, n); return n; },
	 Fate::RcvErrors},
	{"LRH LNH says GRH, none there", false,
	 [](Rig &, uint8_t *p, size_t n) { p[lrh + 1] |= 3; reseal(p, n); return n; }, Fate::RcvErrors},
	{"LRH DLID of another port", false, [](Rig &, uint8_t *p, size_t n) { p[lrh + 3] ^= 0x40; reseal(p, n); return n; },
	 Fate::RcvErrors},
	{"LRH DLID multicast, no group", false,
	 [](Rig &, uint8_t *p, size_t n) { p[lrh + 2] = 0xc0; reseal(p, n); return n; }, Fate::NoDestQp},
	{"LRH VL15 to a UD QP", false, [](Rig &, uint8_t *p, size_t n) { p[lrh] |= 0xf0; reseal(p, n); return n; },
	 Fate::RcvErrors},
	{"GRH IPVer 4", true, [](Rig &, uint8_t *p, size_t n) { p[8] = (p[8] & 0x0f) | 0x40; reseal(p, n); return n; },
	 Fate::RcvErrors},
	{"GRH PayLen", true, [](Rig &, uint8_t *p, size_t n) { p[8 + 5] ^= 4; reseal(p, n); return n; },
	 Fate::RcvErrors},
	{"GRH NxtHdr", true, [](Rig &, uint8_t *p, size_t n) { p[8 + 6] ^= 1; reseal(p, n); return n; },
	 Fate::RcvErrors},
	{"BTH reserved opcode", false,
	 [](Rig &, uint8_t *p, size_t n) { p[bth_at(p)] = 0x7f; reseal(p, n); return n; }, Fate::RcvErrors},
	{"BTH TVer 1", false, [](Rig &, uint8_t *p, size_t n) { p[bth_at(p) + 1] |= 1; reseal(p, n); return n; },
	 Fate::RcvErrors},
	{"BTH PadCnt 3 (the payload 3 bytes shorter)", true,
	 [](Rig &, uint8_t *p, size_t n) { p[bth_at(p) + 1] |= 0x30; reseal(p, n); return n; }, Fate::Delivered},
	{"BTH opcode of UC to a UD QP", false,
	 [](Rig &, uint8_t *p, size_t n) { p[bth_at(p)] = 0x24; reseal(p, n); return n; }, Fate::NoDestQp},
	{"BTH DestQP nobody has", false,
	 [](Rig &, uint8_t *p, size_t n) { p[bth_at(p) + 5] ^= 0x80; reseal(p, n); return n; }, Fate::NoDestQp},
	{"BTH DestQP 0 on VL0", false,
	 [](Rig &, uint8_t *p, size_t n) {
		 p[bth_at(p) + 5] = p[bth_at(p) + 6] = p[bth_at(p) + 7] = 0;
		 reseal(p, n);
		 return n;
	 },
	 Fate::RcvErrors},
	{"BTH P_Key not in the table", false,
	 [](Rig &, uint8_t *p, size_t n) { p[bth_at(p) + 2] = 0x80; p[bth_at(p) + 3] = 0x05; reseal(p, n); return n; },
	 Fate::BadPkey},
	{"DETH Q_Key", false, [](Rig &, uint8_t *p, size_t n) { p[deth_at(p) + 3] ^= 1; reseal(p, n); return n; },
	 Fate::BadQkey},
};

/* One sealed packet per row, each to its fate; the table covers every header. */
void mutated_headers_counted(Test &t)
{
	auto own = make_own<Rig>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	WEFT_ASSERT_OK(t, r.up());
	uint8_t buf[256];
	for (const Row &row : rows) {
		__builtin_memset(buf, 0, sizeof(buf));
		const size_t n = ud_packet(r, buf, sizeof(buf) - 8, row.grh);
		WEFT_ASSERT_TRUE(t, n > 0);
		const Fate got = r.send(ConstBytes(buf, row.mutate(r, buf, n)));
		if (got != row.want) {
			char msg[160];
			format(msg, sizeof(msg), "%s: %s, expected %s", row.name, fate_names[int(got)],
			       fate_names[int(row.want)]);
			t.fail(__FILE__, __LINE__, msg);
		}
	}
}

/* With no receive posted, a datagram is counted as out_of_buffer (IBA 9.8: UD drops it). */
void no_receive_counted(Test &t)
{
	auto own = make_own<Rig>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	WEFT_ASSERT_OK(t, r.up(false));
	uint8_t buf[256];
	const size_t n = ud_packet(r, buf, sizeof(buf), false);
	WEFT_ASSERT_TRUE(t, n > 0);
	WEFT_EXPECT_EQ(t, int(r.send(ConstBytes(buf, n))), int(Fate::OutOfBuffer));
}

/*
 * Every bit of every header flipped, the CRCs made right again: each
 * packet is delivered or counted, none vanishes.  LRH, BTH and DETH whole;
 * of the GRH its first 8 bytes and the DGID's first (multicast or not):
 * the rest of the GIDs a CA takes as they come.
 */
void every_header_bit_accounted(Test &t)
{
	auto own = make_own<Rig>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	WEFT_ASSERT_OK(t, r.up());
	uint8_t good[256], bad[256];
	uint32_t fates[7] = {};
	for (int grh = 0; grh < 2; grh++) {
		const size_t n = ud_packet(r, good, sizeof(good), grh);
		WEFT_ASSERT_TRUE(t, n > 0);
		const size_t end = deth_at(good) + 8;
		for (size_t byte = 0; byte < end; byte++) {
			if (grh && byte >= 16 && byte < 48 && byte != 32)
				continue;
			for (int bit = 0; bit < 8; bit++) {
				__builtin_memcpy(bad, good, n);
				bad[byte] ^= uint8_t(1u << bit);
				reseal(bad, n);
				const Fate f = r.send(ConstBytes(bad, n));
				fates[int(f)]++;
				if (f != Fate::Silent)
					continue;
				char msg[96];
				format(msg, sizeof(msg), "%s byte %zu bit %d: no completion and no counter",
				       grh ? "with GRH" : "no GRH", byte, bit);
				t.fail(__FILE__, __LINE__, msg);
			}
		}
	}
	WEFT_EXPECT_GT(t, fates[int(Fate::Delivered)], 0u);
	WEFT_EXPECT_GT(t, fates[int(Fate::RcvErrors)], 0u);
	WEFT_EXPECT_EQ(t, fates[int(Fate::Silent)], 0u);
}

} // namespace

WEFT_TEST_SUITE(weft_hca_hostile, WEFT_CASE(mutated_headers_counted), WEFT_CASE(no_receive_counted),
		WEFT_CASE(every_header_bit_accounted));
