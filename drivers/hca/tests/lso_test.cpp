// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: large send offload on UD (WrOpcode::Lso).  A TCP/IPv4 message
 * behind a 4-byte IPoIB header, its payload in two SGEs, goes out as one
 * datagram per MSS; every datagram that arrives must be what TCP
 * segmentation would have sent (RFC 791 length, identification and a
 * valid header checksum; RFC 793 sequence number, flags and a valid
 * checksum over its own pseudo header), in-host and with the sender
 * filling real packets (a Delay fault).  Whole-MSS datagrams but the last
 * travel as one burst.  Bad requests are refused at post.
 */
#include <weft/test.h>
#include <weft/test_csum.h>
#include <weft/verbs/test_pair.h>

#include "../csum.h"
#include "../hca.h"

using namespace weft;
using namespace weft::verbs;
using namespace weft::verbs::testing;
using weft::test::Test;
using weft::testing::rfc1071;

namespace {

constexpr uint32_t ip_off = 4, tcp_off = ip_off + 20, hlen = tcp_off + 32; /* TCP with 12 option bytes */
constexpr uint32_t seq0 = 0xfffff000u; /* wraps inside the message */
constexpr uint8_t ack_flag = 0x10, cwr = 0x80, psh = 0x08, fin = 0x01;
constexpr uint32_t qkey = 0x1b;

uint32_t be(const uint8_t *p, int n)
{
	uint32_t v = 0;
	for (int i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

void put(uint8_t *p, uint32_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = static_cast<uint8_t>(v);
}

/* RFC 793 §3.1: the pseudo header's sum for a TCP segment of @tcp_len bytes. */
uint32_t pseudo(const uint8_t *ip, uint32_t tcp_len)
{
	return rfc1071(ip + 12, 8, 0) + 6 + tcp_len;
}

/* The header as Linux hands a GSO packet over: lengths and checksum seed for the whole of it. */
void make_header(uint8_t *h, uint32_t payload)
{
	__builtin_memset(h, 0, hlen);
	put(h, 0x0800, 2);
	uint8_t *ip = h + ip_off, *tcp = h + tcp_off;
	ip[0] = 0x45;
	put(ip + 2, hlen - ip_off + payload, 2);
	put(ip + 4, 0xfffe, 2); /* identification: wraps too */
	put(ip + 6, 0x4000, 2); /* DF */
	ip[8] = 64;
	ip[9] = 6;
	put(ip + 12, 0x0a4d0001, 4);
	put(ip + 16, 0x0a4d0002, 4);
	put(tcp, 40000, 2);
	put(tcp + 2, 5201, 2);
	put(tcp + 4, seq0, 4);
	put(tcp + 8, 0x01020304, 4);
	tcp[12] = 8 << 4;
	tcp[13] = cwr | ack_flag | psh | fin;
	put(tcp + 14, 512, 2);
	for (uint32_t i = 20; i < 32; i++)
		tcp[i] = static_cast<uint8_t>(0x40 + i);
	/* Not complemented: the seed checksum offload completes (CHECKSUM_PARTIAL). */
	put(tcp + 16, rfc1071(nullptr, 0, pseudo(ip, hlen - tcp_off + payload)), 2);
}

struct Lso {
	UdPair u;
	uint8_t hdr[hlen];
	Buf payload;
	uint32_t mss = 0;
	explicit Lso(uint32_t len) : payload(len) { payload.pattern(0x2b); }

	SendWr wr(Sge (&sg)[2], bool csum)
	{
		make_header(hdr, static_cast<uint32_t>(payload.n));
		const uint32_t split = static_cast<uint32_t>(payload.n / 3) | 1; /* odd: SGEs meet mid-word */
		sg[0] = Sge{reinterpret_cast<uint64_t>(payload.p), split, u.a.mr->lkey};
		sg[1] = Sge{reinterpret_cast<uint64_t>(payload.p + split), uint32_t(payload.n - split), u.a.mr->lkey};
		SendWr w;
		w.opcode = WrOpcode::Lso;
		w.send_flags = send_flag::signaled | (csum ? send_flag::csum : 0);
		w.sg = Span<const Sge>(sg, 2);
		w.csum_start = tcp_off;
		w.csum_offset = 16;
		w.lso.hdr = hdr;
		w.lso.hlen = hlen;
		w.lso.mss = static_cast<uint16_t>(mss);
		w.lso.ip_off = ip_off;
		u.address(w);
		return w;
	}
};

uint64_t burst_packets()
{
	return hca::Fabric::get().burst_packets.load(Order::Relaxed);
}

/* Datagram @i of @n as it must arrive (after the 40-byte GRH area). */
void expect_segment(Test &t, const Lso &l, const uint8_t *got, const Wc &wc, uint32_t i, uint32_t n, bool csum)
{
	const uint32_t off = i * l.mss;
	const uint32_t len = min<uint32_t>(l.mss, uint32_t(l.payload.n) - off);
	WEFT_ASSERT_EQ(t, wc.byte_len, 40 + hlen + len);
	const uint8_t *ip = got + ip_off, *tcp = got + tcp_off;
	WEFT_EXPECT_EQ(t, be(got, 2), 0x0800u);
	WEFT_EXPECT_EQ(t, be(ip + 2, 2), hlen - ip_off + len);
	WEFT_EXPECT_EQ(t, be(ip + 4, 2), (0xfffe + i) & 0xffff);
	WEFT_EXPECT_EQ(t, rfc1071(ip, 20, 0), 0xffff);
	WEFT_EXPECT_EQ(t, be(ip + 12, 4), 0x0a4d0001u);
	WEFT_EXPECT_EQ(t, be(tcp + 4, 4), seq0 + off);
	WEFT_EXPECT_EQ(t, be(tcp + 8, 4), 0x01020304u);
	uint8_t flags = ack_flag;
	if (i == 0)
		flags |= cwr;
	if (i + 1 == n)
		flags |= psh | fin;
	WEFT_EXPECT_EQ(t, tcp[13], flags);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(tcp + 20, l.hdr + tcp_off + 20, 12), 0);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(got + hlen, l.payload.p + off, len), 0);
	const uint32_t tcp_len = hlen - tcp_off + len;
	if (csum)
		WEFT_EXPECT_EQ(t, rfc1071(tcp, tcp_len, pseudo(ip, tcp_len)), 0xffff);
	else /* untouched: the seed as sent */
		WEFT_EXPECT_EQ(t, be(tcp + 16, 2), be(l.hdr + tcp_off + 16, 2));
	WEFT_EXPECT_TRUE(t, wc.wc_flags & wc_flag::csum);
}

/* One LSO send of @len bytes at @mss: every datagram checked, one send completion. */
void lso_case(Test &t, uint32_t len, uint32_t mss, bool csum)
{
	Lso l(len);
	l.mss = mss;
	WEFT_ASSERT_OK(t, l.u.open(qkey));
	const uint32_t n = (len + mss - 1) / mss, slot = 40 + hlen + mss;
	Buf rbuf(size_t(n) * slot);
	for (uint32_t i = 0; i < n; i++)
		WEFT_ASSERT_OK(t, post_recv_one(l.u.b, rbuf.p + i * slot, slot, i));
	Sge sg[2];
	hca::PortCounters &pc = static_cast<hca::Hca &>(*l.u.a.dev).port(1)->counters;
	const uint64_t xmit0 = pc.read().unicast_xmit, burst0 = burst_packets();
	WEFT_ASSERT_OK(t, l.u.a.qp->post_send(l.wr(sg, csum)));
	auto swc = wait_wc(l.u.a.cq);
	WEFT_ASSERT_OK(t, swc);
	WEFT_EXPECT_EQ(t, int(swc.value().status), int(WcStatus::Success));
	WEFT_EXPECT_EQ(t, int(swc.value().opcode), int(WcOpcode::Lso));
	for (uint32_t i = 0; i < n; i++) {
		auto rwc = wait_wc(l.u.b.cq);
		WEFT_ASSERT_OK(t, rwc);
		WEFT_ASSERT_EQ(t, int(rwc.value().status), int(WcStatus::Success));
		WEFT_ASSERT_EQ(t, rwc.value().wr_id, uint64_t(i));
		expect_segment(t, l, rbuf.p + i * slot + 40, rwc.value(), i, n, csum);
	}
	/* A packet each on the wire; all but the last of three or more in one packet step. */
	WEFT_EXPECT_EQ(t, pc.read().unicast_xmit - xmit0, uint64_t(n));
	WEFT_EXPECT_EQ(t, burst_packets() - burst0, uint64_t(n > 2 ? n - 1 : 0));
	Wc extra;
	WEFT_EXPECT_EQ(t, l.u.a.cq->poll(Span<Wc>(&extra, 1)), size_t(0));
	WEFT_EXPECT_EQ(t, l.u.b.cq->poll(Span<Wc>(&extra, 1)), size_t(0));
}

/* In-host: the receiving QP copies each datagram from the sender and inserts its checksum. */
void lso_in_host(Test &t)
{
	lso_case(t, 10000, 1000, true);	 /* 10 whole segments */
	lso_case(t, 10001, 1000, true);	 /* and a last one of 1 byte */
	lso_case(t, 63000, 1988, true);	 /* about IPoIB's largest: 32 segments */
	lso_case(t, 700, 1000, true);	 /* one segment */
	lso_case(t, 3001, 1500, false); /* the seed left alone */
}

/* Datagrams held on the sender's port are filled by the sender, which inserts each checksum. */
void lso_materialized(Test &t)
{
	Ref<Device> d = find_device("weft0");
	WEFT_ASSERT_TRUE(t, d);
	hca::Port *p = static_cast<hca::Hca &>(*d).port(1);
	WEFT_ASSERT_TRUE(t, p != nullptr);
	WEFT_ASSERT_OK(t, p->faults().set_hold_ms(hca::FaultKind::Delay, 1));
	p->faults().set_count(hca::FaultKind::Delay, 1000);
	const uint64_t before = p->faults().injected(hca::FaultKind::Delay);
	lso_case(t, 5001, 1000, true);
	WEFT_EXPECT_GE(t, p->faults().injected(hca::FaultKind::Delay), before + 6);
	p->faults().set_count(hca::FaultKind::Delay, 0);
}

void lso_rejects(Test &t)
{
	Lso l(9000);
	l.mss = 1000;
	WEFT_ASSERT_OK(t, l.u.open(qkey));
	WEFT_EXPECT_GE(t, l.u.a.dev->attr().max_lso, 64u * 1024);
	Sge sg[2];
	auto expect_refused = [&](auto &&spoil) {
		SendWr w = l.wr(sg, true);
		spoil(w);
		WEFT_EXPECT_ERR(t, l.u.a.qp->post_send(w), err::EINVAL);
	};
	expect_refused([](SendWr &w) { w.lso.hdr = nullptr; });
	expect_refused([](SendWr &w) { w.lso.mss = 0; });
	expect_refused([](SendWr &w) { w.lso.hlen = 200; });
	expect_refused([](SendWr &w) { w.lso.hlen = hlen - 4; }); /* not where TCP's header ends */
	expect_refused([](SendWr &w) { w.lso.ip_off = 2; });
	expect_refused([&](SendWr &w) { l.hdr[ip_off] = 0x65; (void)w; });	 /* IPv6's version */
	expect_refused([&](SendWr &w) { l.hdr[ip_off + 9] = 17; (void)w; }); /* UDP */
	expect_refused([](SendWr &w) { w.csum_start = ip_off; });
	expect_refused([](SendWr &w) { w.csum_offset = 6; });
	expect_refused([](SendWr &w) { w.sg = Span<const Sge>(); }); /* nothing to cut */
	/* More than an IPv4 datagram can carry (RFC 791: 16-bit total length). */
	Buf big(65536);
	expect_refused([&](SendWr &w) {
		sg[1].addr = reinterpret_cast<uint64_t>(big.p);
		sg[1].length = uint32_t(65536 - sg[0].length);
		(void)w;
	});
	/* RC has no LSO. */
	Pair c;
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M1024));
	SendWr w = l.wr(sg, true);
	sg[0].lkey = sg[1].lkey = c.a.mr->lkey;
	WEFT_EXPECT_ERR(t, c.a.qp->post_send(w), err::EINVAL);
	/* A segment larger than the path MTU is a local length error. */
	l.mss = 8000;
	WEFT_ASSERT_OK(t, l.u.a.qp->post_send(l.wr(sg, true)));
	auto wc = wait_wc(l.u.a.cq);
	WEFT_ASSERT_OK(t, wc);
	WEFT_EXPECT_EQ(t, int(wc.value().status), int(WcStatus::LocLenErr));
}

} // namespace

WEFT_TEST_SUITE(weft_hca_lso, WEFT_CASE(lso_in_host), WEFT_CASE(lso_materialized), WEFT_CASE(lso_rejects));
