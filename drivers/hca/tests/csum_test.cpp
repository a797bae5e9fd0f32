// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: checksum offload (send_flag::csum, wc_flag::csum).  Messages laid
 * out like IPoIB's (a 4-byte header, then "IP" with a checksum field
 * holding a seed) go over RC in several packets and over UD: the field
 * that arrives makes [csum_start, end) sum to 0xffff (RFC 1071), the
 * receive completion's sum is that of the bytes placed, and both hold
 * whether the receiver copied from the sender (in-host) or the sender
 * filled real packets (held by a Delay fault on its port).  Bad requests
 * are refused at post time.
 */
#include <weft/test.h>
#include <weft/test_csum.h>
#include <weft/verbs/test_pair.h>

#include "../csum.h"
#include "../fabric.h"
#include "../hca.h"

using namespace weft;
using namespace weft::verbs;
using namespace weft::verbs::testing;
using weft::test::Test;
using weft::testing::native_fold;
using weft::testing::rfc1071;

namespace {

constexpr uint16_t start = 24, offset = 16, seed = 0x5a3c;

/* A SEND of @sg asking for the checksum at the layout above. */
SendWr csum_send(const Sge &sg)
{
	SendWr wr;
	wr.opcode = WrOpcode::Send;
	wr.send_flags = send_flag::signaled | send_flag::csum;
	wr.csum_start = start;
	wr.csum_offset = offset;
	wr.sg = Span<const Sge>(&sg, 1);
	return wr;
}

void fill_message(Buf &m)
{
	m.pattern(0x31);
	m.p[start + offset] = seed >> 8;
	m.p[start + offset + 1] = seed & 0xff;
}

/*
 * What a receiver must see for @m: the field complements the sum of
 * [start, end) with the seed in it (so the seed, a pseudo-header's sum in
 * IP, and the region now sum to 0xffff), and the rest is unchanged.
 */
void expect_arrived(Test &t, const Buf &sent, const uint8_t *got, const Wc &wc)
{
	WEFT_EXPECT_EQ(t, __builtin_memcmp(sent.p, got, start + offset), 0);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(sent.p + start + offset + 2, got + start + offset + 2,
					   sent.n - start - offset - 2),
		       0);
	WEFT_EXPECT_EQ(t, rfc1071(got + start, sent.n - start, seed), 0xffff);
	WEFT_EXPECT_TRUE(t, wc.wc_flags & wc_flag::csum);
	WEFT_EXPECT_EQ(t, hca::csum::fold(wc.csum), native_fold(got, sent.n));
}

/* One RC SEND of @len bytes with the checksum asked for; received into two SGEs split in the field. */
void rc_case(Test &t, Pair &c, size_t len)
{
	Buf src(len), dst(len + 16);
	fill_message(src);
	__builtin_memset(dst.p, 0xee, dst.n);
	const size_t split = start + offset + 1;
	Sge rsg[2] = {{reinterpret_cast<uint64_t>(dst.p), uint32_t(split), c.b.mr->lkey},
		      {reinterpret_cast<uint64_t>(dst.p + split), uint32_t(dst.n - split), c.b.mr->lkey}};
	RecvWr rwr;
	rwr.sg = Span<const Sge>(rsg, 2);
	WEFT_ASSERT_OK(t, c.b.qp->post_recv(rwr));
	Sge ssg{reinterpret_cast<uint64_t>(src.p), uint32_t(len), c.a.mr->lkey};
	WEFT_ASSERT_OK(t, c.a.qp->post_send(csum_send(ssg)));
	auto swc = wait_wc(c.a.cq);
	WEFT_ASSERT_OK(t, swc);
	WEFT_EXPECT_EQ(t, int(swc.value().status), int(WcStatus::Success));
	auto rwc = wait_wc(c.b.cq);
	WEFT_ASSERT_OK(t, rwc);
	WEFT_ASSERT_EQ(t, int(rwc.value().status), int(WcStatus::Success));
	WEFT_EXPECT_EQ(t, rwc.value().byte_len, uint32_t(len));
	expect_arrived(t, src, dst.p, rwc.value());
	/* The sender's memory keeps its seed: the checksum went into the message, not the buffer. */
	WEFT_EXPECT_EQ(t, src.p[start + offset], uint8_t(seed >> 8));
}

/* In-host: the receiving QP copies from the sender and inserts the checksum. */
void rc_insert_in_host(Test &t)
{
	Pair c;
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M1024));
	static constexpr size_t lens[] = {start + offset + 2, 1000, 1025, 9001, 65524};
	for (size_t len : lens)
		rc_case(t, c, len);
}

/* Packets held on the sender's port are filled by the sender, which inserts the checksum. */
void rc_insert_materialized(Test &t)
{
	Pair c;
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M1024));
	hca::Port *p = static_cast<hca::Hca &>(*c.a.dev).port(1);
	WEFT_ASSERT_TRUE(t, p != nullptr);
	WEFT_ASSERT_OK(t, p->faults().set_hold_ms(hca::FaultKind::Delay, 1));
	p->faults().set_count(hca::FaultKind::Delay, 1000);
	const uint64_t before = p->faults().injected(hca::FaultKind::Delay);
	static constexpr size_t lens[] = {100, 9001};
	for (size_t len : lens)
		rc_case(t, c, len);
	WEFT_EXPECT_GE(t, p->faults().injected(hca::FaultKind::Delay), before + 2);
	p->faults().set_count(hca::FaultKind::Delay, 0);
}

void ud_insert(Test &t)
{
	UdPair u;
	WEFT_ASSERT_OK(t, u.open(0x1111));
	Side &a = u.a, &b = u.b;
	Buf msg(1501), rbuf(40 + 1600);
	fill_message(msg);
	Sge rsg{reinterpret_cast<uint64_t>(rbuf.p), uint32_t(rbuf.n), b.mr->lkey};
	RecvWr rwr;
	rwr.sg = Span<const Sge>(&rsg, 1);
	WEFT_ASSERT_OK(t, b.qp->post_recv(rwr));
	Sge ssg{reinterpret_cast<uint64_t>(msg.p), uint32_t(msg.n), a.mr->lkey};
	SendWr wr = csum_send(ssg);
	u.address(wr);
	WEFT_ASSERT_OK(t, a.qp->post_send(wr));
	WEFT_ASSERT_OK(t, wait_wc(a.cq));
	auto rwc = wait_wc(b.cq);
	WEFT_ASSERT_OK(t, rwc);
	WEFT_ASSERT_EQ(t, int(rwc.value().status), int(WcStatus::Success));
	WEFT_EXPECT_EQ(t, rwc.value().byte_len, uint32_t(40 + msg.n));
	expect_arrived(t, msg, rbuf.p + 40, rwc.value());
	/* Without the flag: the field arrives as sent, the sum still reported. */
	WEFT_ASSERT_OK(t, b.qp->post_recv(rwr));
	wr.send_flags = send_flag::signaled;
	WEFT_ASSERT_OK(t, a.qp->post_send(wr));
	WEFT_ASSERT_OK(t, wait_wc(a.cq));
	auto plain = wait_wc(b.cq);
	WEFT_ASSERT_OK(t, plain);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(rbuf.p + 40, msg.p, msg.n), 0);
	WEFT_EXPECT_EQ(t, hca::csum::fold(plain.value().csum), native_fold(msg.p, msg.n));
}

void csum_rejects(Test &t)
{
	Pair c;
	WEFT_ASSERT_OK(t, c.connect(QpType::Rc, iba::Mtu::M1024));
	WEFT_EXPECT_TRUE(t, c.a.dev->attr().csum_offload);
	Buf src(100);
	Sge ssg{reinterpret_cast<uint64_t>(src.p), 100, c.a.mr->lkey};
	SendWr wr;
	wr.opcode = WrOpcode::Send;
	wr.send_flags = send_flag::csum;
	wr.sg = Span<const Sge>(&ssg, 1);
	wr.csum_start = 3; /* odd */
	WEFT_EXPECT_ERR(t, c.a.qp->post_send(wr), err::EINVAL);
	wr.csum_start = 4;
	wr.csum_offset = 5; /* odd */
	WEFT_EXPECT_ERR(t, c.a.qp->post_send(wr), err::EINVAL);
	wr.csum_offset = 96; /* the field past the end */
	WEFT_EXPECT_ERR(t, c.a.qp->post_send(wr), err::EINVAL);
	wr.csum_offset = 94; /* the last two bytes: fine, but not for a WRITE */
	wr.opcode = WrOpcode::RdmaWrite;
	wr.rdma.remote_addr = reinterpret_cast<uint64_t>(src.p);
	WEFT_EXPECT_ERR(t, c.a.qp->post_send(wr), err::EINVAL);
}

/* The arithmetic: byte-order rotation for odd positions and 0 sent as 0xffff. */
void csum_arithmetic(Test &t)
{
	static const uint8_t bytes[7] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde};
	/* The whole, and the same summed as [0,3) + [3,7) (the second at an odd position). */
	const uint32_t whole = weft_csum(bytes, 7, 0);
	const uint32_t parts = hca::csum::add_at(weft_csum(bytes, 3, 0), weft_csum(bytes + 3, 4, 0), 3);
	WEFT_EXPECT_EQ(t, hca::csum::fold(whole), hca::csum::fold(parts));
	WEFT_EXPECT_EQ(t, hca::csum::fold(whole), native_fold(bytes, 7));
	WEFT_EXPECT_EQ(t, hca::csum::field_value(0xffff), uint16_t(0xffff));
	WEFT_EXPECT_EQ(t, hca::csum::field_value(0x1234), uint16_t(~0x1234 & 0xffff));
}

} // namespace

WEFT_TEST_SUITE(weft_hca_csum, WEFT_CASE(csum_arithmetic), WEFT_CASE(rc_insert_in_host),
		WEFT_CASE(rc_insert_materialized), WEFT_CASE(ud_insert), WEFT_CASE(csum_rejects));
