// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: RMPP (IBA 13.6) through the MAD service.  An SA-class agent asks
 * for a table; the answering agent sends it as one long message that the
 * service cuts into segments, and the asking side's service puts it back
 * together, acknowledging windows.  The loopback between them loses
 * chosen MADs (segments or ACKs): the transfer must still arrive whole
 * and exact, through the sender's timer and the receiver's repeated ACKs.
 * Plus the segment logic on its own: headers, lengths, window rules.
 */
#include <weft/alloc.h>
#include <weft/atomic.h>
#include <weft/test.h>

#include "../rmpp.h"
#include "loop.h"

using namespace weft;
using namespace weft::mad;
using weft::test::Test;
using weft::mad::testing::Loop;

namespace {

constexpr uint8_t sa = iba::mgmt_class::subn_adm;
constexpr uint8_t get_table = 0x12, get_table_resp = 0x92; /* IBA 15.4.2 */
constexpr size_t sa_hdr = 56, seg_data = iba::mad_size - sa_hdr;

uint8_t pattern(size_t i)
{
	return static_cast<uint8_t>(i * 7 + (i >> 8));
}

/* Answers GetTable with @len bytes of table (after the SA header), as OpenSM's SA would. */
struct TableServer final : AgentHandler {
	MadService *svc = nullptr;
	size_t len = 0;
	int served = 0;
	void recv(Agent &a, const Mad &m, const MadAddr &from) override
	{
		served++;
		auto buf = Array<uint8_t>::make(Gfp::Sleep, sa_hdr + len);
		auto r = make_own<SendReq>(Gfp::Sleep);
		if (!buf || !r)
			return;
		uint8_t *b = buf.value().data();
		__builtin_memcpy(b, m.bytes, sa_hdr);
		reinterpret_cast<iba::MadHeader *>(b)->method.set(get_table_resp);
		iba::RmppHeader &h = rmpp::header(b);
		h.version.set(1);
		h.type.set(iba::rmpp_type::data);
		iba::RmppHeader::Flags::set(h.rtime_flags, iba::rmpp_flag::active);
		for (size_t i = 0; i < len; i++)
			b[sa_hdr + i] = pattern(i);
		r.value()->long_msg = ConstBytes(b, sa_hdr + len);
		r.value()->to = from;
		(void)svc->send(a, *r.value());
	}
	void send_done(Agent &, SendReq &) override {}
};

struct TableClient final : AgentHandler {
	Atomic<int> done{0};
	int status = -1;
	size_t len = 0;
	bool exact = false;
	size_t want = 0;
	void recv(Agent &, const Mad &, const MadAddr &) override {}
	void send_done(Agent &, SendReq &r) override
	{
		status = r.status;
		len = r.long_len;
		exact = r.long_len == sa_hdr + want && r.response.hdr().method.get() == get_table_resp;
		for (size_t i = 0; exact && i < want; i++)
			exact = r.long_response[sa_hdr + i] == pattern(i);
		done.fetch_add(1, Order::Release);
	}
};

struct Fixture {
	Loop la, lb;
	MadService a{la}, b{lb};
	/* Nothing may reach a service that is going. */
	~Fixture()
	{
		la.stop();
		lb.stop();
	}
	TableServer sh;
	TableClient ch;
	Agent server{sh, sa, 2}, client{ch, sa, 2};
	SendReq req;

	Fixture()
	{
		la.self.lid = 1;
		lb.self.lid = 2;
		sh.svc = &b;
		server.add_method(get_table);
		server.rmpp = client.rmpp = true;
	}
	Result<void> ask(size_t len)
	{
		sh.len = ch.want = len;
		req.mad = Mad{};
		iba::MadHeader &h = req.mad.hdr();
		h.base_version.set(1);
		h.mgmt_class.set(sa);
		h.class_version.set(2);
		h.method.set(get_table);
		h.tid.set(0x55);
		req.timeout_ms = 3000;
		req.retries = 1;
		return a.send(client, req);
	}
};

bool wait_done(const Atomic<int> &done, int want)
{
	for (int i = 0; i < 10000 && done.load(Order::Acquire) < want; i++)
		weft_msleep(1);
	return done.load(Order::Acquire) >= want;
}

Result<Own<Fixture>> fixture()
{
	auto f = make_own<Fixture>(Gfp::Sleep);
	if (f) {
		WEFT_TRY(f.value()->la.connect(f.value()->b));
		WEFT_TRY(f.value()->lb.connect(f.value()->a));
		WEFT_TRY(f.value()->b.register_agent(f.value()->server));
		WEFT_TRY(f.value()->a.register_agent(f.value()->client));
	}
	return f;
}

void teardown(Fixture &f)
{
	f.a.unregister_agent(f.client);
	f.b.unregister_agent(f.server);
}

/* IBA 13.6.2.1: segment headers, PayloadLength in the first and last, data in between. */
void segments_and_lengths(Test &t)
{
	const size_t len = 3 * seg_data + 17;
	auto buf = Array<uint8_t>::make(Gfp::Sleep, sa_hdr + len);
	WEFT_ASSERT_OK(t, buf);
	uint8_t *b = buf.value().data();
	b[1] = sa;
	for (size_t i = 0; i < len; i++)
		b[sa_hdr + i] = pattern(i);
	auto s = rmpp::Sender::make(ConstBytes(b, sa_hdr + len));
	WEFT_ASSERT_OK(t, s);
	rmpp::Sender &snd = *s.value();
	WEFT_EXPECT_EQ(t, snd.count(), 4u);
	Mad seg;
	snd.build(1, seg);
	const iba::RmppHeader &h = rmpp::header(seg.bytes);
	WEFT_EXPECT_TRUE(t, rmpp::active(seg.bytes));
	WEFT_EXPECT_EQ(t, iba::RmppHeader::Flags::get(h.rtime_flags),
		       uint8_t(iba::rmpp_flag::active | iba::rmpp_flag::first));
	/* 4 segments of 220 payload bytes (SA header included), less the last one's padding. */
	WEFT_EXPECT_EQ(t, h.paylen_newwin.get(), uint32_t(4 * 220 - (seg_data - 17)));
	snd.build(4, seg);
	WEFT_EXPECT_EQ(t, iba::RmppHeader::Flags::get(h.rtime_flags),
		       uint8_t(iba::rmpp_flag::active | iba::rmpp_flag::last));
	WEFT_EXPECT_EQ(t, h.paylen_newwin.get(), uint32_t(20 + 17));
	WEFT_EXPECT_EQ(t, h.seg_num.get(), 4u);
	WEFT_EXPECT_EQ(t, seg.bytes[sa_hdr], pattern(3 * seg_data));
	/* The window starts at one segment; an ACK opens it; a shrinking one is ignored. */
	WEFT_EXPECT_EQ(t, snd.take_next(), 1u);
	WEFT_EXPECT_EQ(t, snd.take_next(), 0u);
	WEFT_EXPECT_TRUE(t, snd.ack(1, 3) == rmpp::Sender::Ack::Progress);
	WEFT_EXPECT_EQ(t, snd.take_next(), 2u);
	WEFT_EXPECT_EQ(t, snd.take_next(), 3u);
	WEFT_EXPECT_EQ(t, snd.take_next(), 0u);
	WEFT_EXPECT_TRUE(t, snd.ack(2, 2) == rmpp::Sender::Ack::Ignored);
	WEFT_EXPECT_TRUE(t, snd.ack(9, 9) == rmpp::Sender::Ack::Ignored);
	WEFT_EXPECT_TRUE(t, snd.ack(4, 4) == rmpp::Sender::Ack::Done);
	/* A receiver refuses a first segment without the First flag. */
	rmpp::Receiver rx;
	snd.build(2, seg);
	rmpp::header(seg.bytes).seg_num.set(1);
	WEFT_EXPECT_TRUE(t, rx.add(seg, Gfp::Sleep) == rmpp::Receiver::Step::Abort);
	/* A message shorter than its class's headers cannot be sent. */
	WEFT_EXPECT_ERR(t, rmpp::Sender::make(ConstBytes(b, sa_hdr - 1)), err::EINVAL);
}

void table_whole(Test &t)
{
	auto f = fixture();
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	/* 40 segments: more than two windows. */
	WEFT_ASSERT_OK(t, x.ask(40 * seg_data - 5));
	WEFT_ASSERT_TRUE(t, wait_done(x.ch.done, 1));
	WEFT_EXPECT_EQ(t, x.ch.status, 0);
	WEFT_EXPECT_TRUE(t, x.ch.exact);
	WEFT_EXPECT_EQ(t, x.ch.len, sa_hdr + 40 * seg_data - 5);
	/* Request, then ACKs at segments 1, 17, 33 and the last. */
	WEFT_EXPECT_EQ(t, x.la.sent.load(Order::Relaxed), 5u);
	WEFT_EXPECT_EQ(t, x.lb.sent.load(Order::Relaxed), 40u);
	/* A table that fits one segment still travels as RMPP, and is acknowledged. */
	x.la.sent.store(0, Order::Relaxed);
	x.lb.sent.store(0, Order::Relaxed);
	WEFT_ASSERT_OK(t, x.ask(100));
	WEFT_ASSERT_TRUE(t, wait_done(x.ch.done, 2));
	WEFT_EXPECT_TRUE(t, x.ch.exact);
	WEFT_EXPECT_EQ(t, x.la.sent.load(Order::Relaxed), 2u);
	teardown(x);
}

void lost_segments_and_acks(Test &t)
{
	auto f = fixture();
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	/* Segments 3 and 9 of the first pass are lost, and so is the client's first ACK. */
	x.la.lose = 1ull << 1;
	x.lb.lose = 1ull << 3 | 1ull << 9; /* after segment 1 twice: segments 3 and 9 */
	WEFT_ASSERT_OK(t, x.ask(20 * seg_data));
	WEFT_ASSERT_TRUE(t, wait_done(x.ch.done, 1));
	WEFT_EXPECT_EQ(t, x.ch.status, 0);
	WEFT_EXPECT_TRUE(t, x.ch.exact);
	/* Resent: segment 1 after its ACK was lost, then the window from the gap. */
	WEFT_EXPECT_GT(t, x.lb.sent.load(Order::Relaxed), 20u);
	WEFT_EXPECT_EQ(t, x.sh.served, 1);
	/* Everything lost from the server: the request times out, nothing leaks. */
	x.lb.sent.store(0, Order::Relaxed);
	x.lb.lose = ~0ull;
	WEFT_ASSERT_OK(t, x.ask(5 * seg_data));
	WEFT_ASSERT_TRUE(t, wait_done(x.ch.done, 2));
	WEFT_EXPECT_EQ(t, x.ch.status, int(err::ETIMEDOUT));
	teardown(x);
}

} // namespace

WEFT_TEST_SUITE(weft_mad_rmpp, WEFT_CASE(segments_and_lengths), WEFT_CASE(table_whole),
		WEFT_CASE(lost_segments_and_acks));
