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
constexpr uint8_t get_multi = 0x14;
constexpr size_t sa_hdr = 56, seg_data = iba::mad_size - sa_hdr;

uint8_t pattern(size_t i)
{
	return static_cast<uint8_t>(i * 7 + (i >> 8));
}

/*
 * Answers GetTable (and GetMulti, whose request may come in segments) with
 * @len bytes of table after the SA header, as OpenSM's SA would.
 */
struct TableServer final : AgentHandler {
	MadService *svc = nullptr;
	size_t len = 0;
	int served = 0;
	bool answer = true;
	/* Multi-segment requests delivered whole: how many, the last one's length, exact or not. */
	Atomic<int> messages{0};
	size_t msg_len = 0;
	bool msg_exact = false;
	void respond(Agent &a, const uint8_t *req, const MadAddr &from)
	{
		auto buf = Array<uint8_t>::make(Gfp::Sleep, sa_hdr + len);
		auto r = make_own<SendReq>(Gfp::Sleep);
		if (!buf || !r)
			return;
		uint8_t *b = buf.value().data();
		__builtin_memcpy(b, req, sa_hdr);
		auto *mh = reinterpret_cast<iba::MadHeader *>(b);
		mh->method.set(mh->method.get() | 0x80);
		iba::RmppHeader &h = rmpp::header(b);
		h.version.set(1);
		h.type.set(iba::rmpp_type::data);
		iba::RmppHeader::Flags::set(h.rtime_flags, iba::rmpp_flag::active);
		h.seg_num.set(0);
		h.paylen_newwin.set(0);
		for (size_t i = 0; i < len; i++)
			b[sa_hdr + i] = pattern(i);
		r.value()->long_msg = ConstBytes(b, sa_hdr + len);
		r.value()->to = from;
		(void)svc->send(a, *r.value());
	}
	void recv(Agent &a, const Mad &m, const MadAddr &from) override
	{
		served++;
		respond(a, m.bytes, from);
	}
	bool recv_message(Agent &a, Array<uint8_t> &msg, size_t n, const MadAddr &from) override
	{
		msg_len = n;
		msg_exact = n > sa_hdr && msg.size() >= n && msg[3] == get_multi &&
			    (iba::RmppHeader::Flags::get(rmpp::header(msg.data()).rtime_flags) & iba::rmpp_flag::active);
		for (size_t i = sa_hdr; msg_exact && i < n; i++)
			msg_exact = msg[i] == pattern(i - sa_hdr);
		if (answer)
			respond(a, msg.data(), from);
		messages.fetch_add(1, Order::Release);
		return true;
	}
	void send_done(Agent &, SendReq &) override {}
};

struct TableClient final : AgentHandler {
	Atomic<int> done{0};
	int status = -1;
	size_t len = 0;
	bool exact = false;
	size_t want = 0;
	uint8_t asked = get_table;
	void recv(Agent &, const Mad &, const MadAddr &) override {}
	void send_done(Agent &, SendReq &r) override
	{
		status = r.status;
		len = r.long_len;
		exact = r.long_len == sa_hdr + want && r.response.hdr().method.get() == (asked | 0x80);
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
		server.add_method(get_multi);
		server.rmpp = client.rmpp = true;
	}
	Array<uint8_t> req_buf;
	uint32_t asked_multi = 0;
	/* A GetMulti of @req_len data bytes (pattern()), sent in segments, answered with @len. */
	Result<void> ask_multi(size_t req_len, size_t len)
	{
		sh.len = ch.want = len;
		ch.asked = get_multi;
		req_buf = WEFT_TRY(Array<uint8_t>::make(Gfp::Sleep, sa_hdr + req_len));
		uint8_t *b = req_buf.data();
		b[0] = 1;
		b[1] = sa;
		b[2] = 2;
		b[3] = get_multi;
		reinterpret_cast<iba::MadHeader *>(b)->tid.set(0x77 + ++asked_multi); /* a TID per transfer */
		iba::RmppHeader::Flags::set(rmpp::header(b).rtime_flags, iba::rmpp_flag::active);
		rmpp::header(b).version.set(1);
		for (size_t i = 0; i < req_len; i++)
			b[sa_hdr + i] = pattern(i);
		req.mad = Mad{};
		req.long_msg = ConstBytes(b, sa_hdr + req_len);
		req.timeout_ms = 3000;
		req.retries = 1;
		return a.send(client, req);
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
		ch.asked = get_table;
		req.long_msg = ConstBytes();
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
	rmpp::Receiver rx(rmpp::max_message(sa));
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

/* --- hostile segments (issue 22) ------------------------------------------------ */

/* DATA segment @n of an SA GetTable response, its data filled with pattern(). */
Mad segment(uint32_t n, uint8_t flags, uint32_t paylen, uint64_t tid = 0x55)
{
	Mad m{};
	iba::MadHeader &h = m.hdr();
	h.base_version.set(1);
	h.mgmt_class.set(sa);
	h.class_version.set(2);
	h.method.set(get_table_resp);
	h.tid.set(tid);
	iba::RmppHeader &r = rmpp::header(m.bytes);
	r.version.set(1);
	r.type.set(iba::rmpp_type::data);
	iba::RmppHeader::Flags::set(r.rtime_flags, uint8_t(iba::rmpp_flag::active | flags));
	r.seg_num.set(n);
	r.paylen_newwin.set(paylen);
	for (size_t i = 0; i < seg_data; i++)
		m.bytes[sa_hdr + i] = pattern((n - 1) * seg_data + i);
	return m;
}

bool refused_with(const rmpp::Receiver &rx, const Mad &seg, uint8_t type, uint8_t status)
{
	Mad out;
	rx.refusal(seg, out);
	const iba::RmppHeader &h = rmpp::header(out.bytes);
	return h.type.get() == type && h.status.get() == status &&
	       out.hdr().method.get() == (get_table_resp ^ 0x80) && out.hdr().tid.get() == seg.hdr().tid.get();
}

/*
 * PayloadLength is a claim, not a size: a first segment announcing 32 MiB
 * gets a window's worth of buffer; one announcing more than the class's
 * maximum is refused with STOP (ResX) before any memory is taken.
 */
void oversized_payload_length(Test &t)
{
	using Step = rmpp::Receiver::Step;
	WEFT_EXPECT_EQ(t, rmpp::max_message(sa), size_t(64) << 20);
	rmpp::Receiver big(rmpp::max_message(sa));
	Mad first = segment(1, iba::rmpp_flag::first, 32u << 20);
	WEFT_EXPECT_TRUE(t, big.add(first, Gfp::Atomic) == Step::Ack);
	WEFT_EXPECT_LE(t, big.held(), size_t(4096));
	WEFT_EXPECT_EQ(t, big.wants(segment(2, 0, 0)), size_t(0)); /* room for the window still */

	const uint32_t too_long[] = {(64u << 20) + 1, 0x80000000u, 0xffffffffu};
	for (uint32_t paylen : too_long) {
		rmpp::Receiver rx(rmpp::max_message(sa));
		Mad seg = segment(1, iba::rmpp_flag::first, paylen);
		WEFT_EXPECT_EQ(t, rx.wants(seg), size_t(0));
		WEFT_EXPECT_TRUE(t, rx.add(seg, Gfp::Sleep) == Step::Abort);
		WEFT_EXPECT_EQ(t, rx.held(), size_t(0));
		WEFT_EXPECT_TRUE(t, refused_with(rx, seg, iba::rmpp_type::stop, iba::rmpp_status::resources));
		/* Refused stays refused. */
		WEFT_EXPECT_TRUE(t, rx.add(segment(2, 0, 0), Gfp::Sleep) == Step::Abort);
	}
}

/* A sender that never sets Last: the buffer grows per segment up to the maximum, then STOP. */
void endless_sender_stopped(Test &t)
{
	using Step = rmpp::Receiver::Step;
	const size_t max = 16 * 1024;
	rmpp::Receiver rx(max);
	Step step = rx.add(segment(1, iba::rmpp_flag::first, 0), Gfp::Sleep);
	uint32_t n = 1;
	size_t held = rx.held();
	while (step != Step::Abort && n < 1000) {
		WEFT_EXPECT_GE(t, rx.held(), held); /* grows, never shrinks */
		held = rx.held();
		step = rx.add(segment(++n, 0, 0), Gfp::Sleep);
	}
	WEFT_ASSERT_TRUE(t, step == Step::Abort);
	/* Refused at the first segment that would not fit. */
	WEFT_EXPECT_EQ(t, sa_hdr + size_t(n) * seg_data > max, true);
	WEFT_EXPECT_EQ(t, sa_hdr + size_t(n - 1) * seg_data <= max, true);
	WEFT_EXPECT_LE(t, rx.held(), max);
	WEFT_EXPECT_TRUE(t, refused_with(rx, segment(n, 0, 0), iba::rmpp_type::stop, iba::rmpp_status::resources));
}

uint32_t acked(const rmpp::Receiver &rx, const Mad &seg)
{
	Mad out;
	rx.ack(seg, out);
	return rmpp::header(out.bytes).seg_num.get();
}

/* IBA 13.6.5.2: only the next segment is taken; a gap or a repeat is answered with the last ACK. */
void out_of_order_segments(Test &t)
{
	using Step = rmpp::Receiver::Step;
	const uint32_t count = 5, last_len = 20 + 33; /* the SA header counts in the last PayloadLength */
	rmpp::Receiver rx(rmpp::max_message(sa));
	WEFT_EXPECT_TRUE(t, rx.add(segment(2, 0, 0), Gfp::Sleep) == Step::Wait); /* before the first */
	WEFT_EXPECT_TRUE(t, rx.add(segment(1, iba::rmpp_flag::first, count * 220), Gfp::Sleep) == Step::Ack);
	WEFT_EXPECT_TRUE(t, rx.add(segment(3, 0, 0), Gfp::Sleep) == Step::Ack);
	WEFT_EXPECT_EQ(t, acked(rx, segment(3, 0, 0)), 1u);
	WEFT_EXPECT_TRUE(t, rx.add(segment(2, 0, 0), Gfp::Sleep) == Step::Wait);
	WEFT_EXPECT_TRUE(t, rx.add(segment(2, 0, 0), Gfp::Sleep) == Step::Ack); /* a repeat */
	WEFT_EXPECT_EQ(t, acked(rx, segment(2, 0, 0)), 2u);
	WEFT_EXPECT_TRUE(t, rx.add(segment(5, iba::rmpp_flag::last, last_len), Gfp::Sleep) == Step::Ack);
	WEFT_EXPECT_TRUE(t, rx.add(segment(3, 0, 0), Gfp::Sleep) == Step::Wait);
	WEFT_EXPECT_TRUE(t, rx.add(segment(4, 0, 0), Gfp::Sleep) == Step::Wait);
	WEFT_EXPECT_TRUE(t, rx.add(segment(5, iba::rmpp_flag::last, last_len), Gfp::Sleep) == Step::Done);
	size_t len = 0;
	Array<uint8_t> msg = rx.take(len);
	WEFT_ASSERT_EQ(t, len, sa_hdr + 4 * seg_data + 33);
	bool exact = true;
	for (size_t i = 0; i < len - sa_hdr; i++)
		exact &= msg[sa_hdr + i] == pattern(i);
	WEFT_EXPECT_TRUE(t, exact);
}

/* IBA 13.6.2.2: ABORT names the broken rule. */
void broken_segments_aborted(Test &t)
{
	using Step = rmpp::Receiver::Step;
	{
		rmpp::Receiver rx(rmpp::max_message(sa));
		Mad seg = segment(1, 0, 0); /* segment 1 without First */
		WEFT_EXPECT_TRUE(t, rx.add(seg, Gfp::Sleep) == Step::Abort);
		WEFT_EXPECT_TRUE(t, refused_with(rx, seg, iba::rmpp_type::abort, iba::rmpp_status::bad_seg));
	}
	{
		rmpp::Receiver rx(rmpp::max_message(sa));
		WEFT_EXPECT_TRUE(t, rx.add(segment(1, iba::rmpp_flag::first, 0), Gfp::Sleep) == Step::Ack);
		Mad seg = segment(2, iba::rmpp_flag::first, 0); /* First again */
		WEFT_EXPECT_TRUE(t, rx.add(seg, Gfp::Sleep) == Step::Abort);
		WEFT_EXPECT_TRUE(t, refused_with(rx, seg, iba::rmpp_type::abort, iba::rmpp_status::bad_seg));
	}
	const uint32_t bad_last[] = {0u, 19u, 20u + uint32_t(seg_data) + 1, 0xffffffffu};
	for (uint32_t paylen : bad_last) {
		rmpp::Receiver rx(rmpp::max_message(sa));
		Mad seg = segment(1, iba::rmpp_flag::first | iba::rmpp_flag::last, paylen);
		WEFT_EXPECT_TRUE(t, rx.add(seg, Gfp::Sleep) == Step::Abort);
		WEFT_EXPECT_EQ(t, rx.refusal_status(),
			       paylen > (64u << 20) ? iba::rmpp_status::resources : iba::rmpp_status::bad_len);
	}
}

/* Through the service: a forged oversized response is refused, counted and answered with STOP. */
void service_refuses_oversized(Test &t)
{
	auto f = fixture();
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	x.lb.lose = ~0ull; /* the real server's answer never comes */
	WEFT_ASSERT_OK(t, x.ask(100));
	const uint64_t tid = x.req.mad.hdr().tid.get();
	const uint32_t sent = x.la.sent.load(Order::Relaxed);
	const uint64_t dropped = x.a.dropped();
	MadAddr from;
	from.lid = 2;
	x.a.receive(segment(1, iba::rmpp_flag::first, 0xfffffff0u, tid), from);
	WEFT_ASSERT_TRUE(t, wait_done(x.ch.done, 1));
	WEFT_EXPECT_EQ(t, x.ch.status, int(err::EPROTO));
	WEFT_EXPECT_EQ(t, x.a.dropped(), dropped + 1);
	WEFT_EXPECT_EQ(t, x.la.sent.load(Order::Relaxed), sent + 1);
	const iba::RmppHeader &h = rmpp::header(x.la.last.bytes);
	WEFT_EXPECT_EQ(t, h.type.get(), iba::rmpp_type::stop);
	WEFT_EXPECT_EQ(t, h.status.get(), iba::rmpp_status::resources);
	WEFT_EXPECT_EQ(t, x.la.last.hdr().tid.get(), tid);
	/* A segment for no request is a counted drop. */
	x.a.receive(segment(1, iba::rmpp_flag::first, 100, tid + 1), from);
	WEFT_EXPECT_EQ(t, x.a.dropped(), dropped + 2);
	teardown(x);
}

/*
 * IBA 13.6.5: STOP or ABORT ends a transfer on either side.  The
 * receiver's STOP: the sender sends nothing more (no retransmission,
 * although the ACKs are lost).  The sender's ABORT: the request ends
 * at once, not at its timeout.
 */
void stop_and_abort_end_transfers(Test &t)
{
	auto f = fixture();
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	x.la.lose = ~0ull & ~1ull; /* the request goes; every ACK is lost */
	WEFT_ASSERT_OK(t, x.ask(40 * seg_data));
	const uint64_t tid = x.req.mad.hdr().tid.get();
	for (int i = 0; i < 10000 && x.lb.sent.load(Order::Acquire) < 1; i++)
		weft_msleep(1);
	Mad stop = segment(1, 0, 0, tid);
	stop.hdr().method.set(get_table);
	rmpp::header(stop.bytes).type.set(iba::rmpp_type::stop);
	rmpp::header(stop.bytes).status.set(iba::rmpp_status::resources);
	MadAddr from;
	from.lid = 1;
	const uint64_t b_dropped = x.b.dropped();
	x.b.receive(stop, from);
	const uint32_t segs = x.lb.sent.load(Order::Acquire); /* segment 1 (window 1), perhaps resent */
	WEFT_EXPECT_EQ(t, x.b.dropped(), b_dropped); /* taken, not dropped */
	/* The client gives up after its timeout; by then a live sender would have resent twice. */
	WEFT_ASSERT_TRUE(t, wait_done(x.ch.done, 1));
	WEFT_EXPECT_EQ(t, x.ch.status, int(err::ETIMEDOUT));
	WEFT_EXPECT_EQ(t, x.lb.sent.load(Order::Relaxed), segs);

	/* The sender of a response aborts after its first segment: the request ends now. */
	x.la.lose = 0;
	x.lb.lose = ~0ull;
	WEFT_ASSERT_OK(t, x.ask(100));
	const uint64_t tid2 = x.req.mad.hdr().tid.get();
	MadAddr server;
	server.lid = 2;
	x.a.receive(segment(1, iba::rmpp_flag::first, 40 * 220, tid2), server);
	WEFT_EXPECT_EQ(t, x.ch.done.load(Order::Acquire), 1);
	Mad abort = segment(2, 0, 0, tid2);
	rmpp::header(abort.bytes).type.set(iba::rmpp_type::abort);
	rmpp::header(abort.bytes).status.set(127);
	const uint64_t a_dropped = x.a.dropped();
	x.a.receive(abort, server);
	WEFT_EXPECT_EQ(t, x.ch.done.load(Order::Acquire), 2); /* send_done ran inside receive() */
	WEFT_EXPECT_EQ(t, x.ch.status, int(err::EPROTO));
	WEFT_EXPECT_EQ(t, x.a.dropped(), a_dropped);
	/* An ABORT for nothing in flight is a counted drop. */
	x.a.receive(abort, server);
	WEFT_EXPECT_EQ(t, x.a.dropped(), a_dropped + 1);
	teardown(x);
}

/* --- unsolicited multi-segment requests (IBA 13.6.5.2) ------------------------- */

/* The node hand-made request segments come from. */
MadAddr peer()
{
	MadAddr a;
	a.lid = 1;
	a.qpn = 1;
	return a;
}

/* Segment @n of a GetMulti request from another node. */
Mad req_segment(uint32_t n, uint8_t flags, uint32_t paylen, uint64_t tid, uint8_t method = get_multi)
{
	Mad m = segment(n, flags, paylen, tid);
	m.hdr().method.set(method);
	return m;
}

/* The last MAD @l sent is an RMPP @type for @tid with SegmentNumber (ACK) or RMPPStatus (STOP, ABORT) @v. */
bool last_sent(const Loop &l, uint8_t type, uint64_t tid, uint32_t v)
{
	const iba::RmppHeader &h = rmpp::header(l.last.bytes);
	const uint32_t got = type == iba::rmpp_type::ack ? h.seg_num.get() : h.status.get();
	return h.type.get() == type && l.last.hdr().tid.get() == tid && got == v &&
	       (l.last.hdr().method.get() & 0x80); /* back the other way: a request's is a response */
}

bool wait_for(const Atomic<uint32_t> &n, uint32_t want)
{
	for (int i = 0; i < 10000 && n.load(Order::Acquire) < want; i++)
		weft_msleep(1);
	return n.load(Order::Acquire) >= want;
}

/*
 * A GetMulti of 2 and of 3 segments from one service's RMPP agent to the
 * other's: reassembled, given to the serving agent once and exact, and
 * its multi-segment response back to the asker.
 */
void unsolicited_request_reassembled(Test &t)
{
	auto f = fixture();
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	const size_t req_lens[] = {seg_data + 1, 3 * seg_data};
	int n = 0;
	for (size_t req_len : req_lens) {
		n++;
		WEFT_ASSERT_OK(t, x.ask_multi(req_len, 3 * seg_data - 7));
		WEFT_ASSERT_TRUE(t, wait_done(x.ch.done, n));
		WEFT_EXPECT_EQ(t, x.ch.status, 0);
		WEFT_EXPECT_TRUE(t, x.ch.exact);
		WEFT_EXPECT_EQ(t, x.sh.messages.load(Order::Acquire), n);
		WEFT_EXPECT_EQ(t, x.sh.msg_len, sa_hdr + req_len);
		WEFT_EXPECT_TRUE(t, x.sh.msg_exact);
	}
	WEFT_EXPECT_EQ(t, x.sh.served, 0); /* never as a single MAD */
	/* Request segments (2 + 3) and response ACKs; ACKs and 3-segment responses back. */
	WEFT_EXPECT_GE(t, x.la.sent.load(Order::Relaxed), 5u + 4u);
	WEFT_EXPECT_GE(t, x.lb.sent.load(Order::Relaxed), 2u * (2u + 3u));
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving(), 0u);
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving_bytes(), size_t(0));
	teardown(x);
}

/*
 * A segmented request whose answer never comes (in-tree alike): its
 * retry after the timeout sends nothing, since the RMPP sender's own
 * clock covers unACKed windows and a transfer ACKed whole needs only its
 * answer (the first segment alone would be a repeat for the receiver to
 * ACK).  It ends ETIMEDOUT after its retry, delivered once.
 */
void segmented_request_not_resent(Test &t)
{
	auto f = fixture();
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	x.sh.answer = false;
	WEFT_ASSERT_OK(t, x.ask_multi(3 * seg_data, 100));
	WEFT_ASSERT_TRUE(t, wait_done(x.ch.done, 1)); /* 2 x 3 s */
	WEFT_EXPECT_EQ(t, x.ch.status, int(err::ETIMEDOUT));
	WEFT_EXPECT_EQ(t, x.sh.messages.load(Order::Acquire), 1);
	WEFT_EXPECT_EQ(t, x.la.sent.load(Order::Relaxed), 3u); /* the three segments, once */
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving(), 0u);
	teardown(x);
}

/*
 * Through the service, by hand: a gap and a repeat are answered with the
 * last ACK, the message is delivered once and exact, a repeat of the last
 * segment after delivery (the final ACK lost) is ACKed again and not
 * delivered twice; a middle segment of nothing is a counted drop.
 */
void unsolicited_out_of_order_and_repeats(Test &t)
{
	auto f = fixture();
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	x.sh.answer = false;
	const MadAddr from = peer();
	const uint64_t tid = 0x900;
	const uint32_t last_len = 20 + 50, sent = x.lb.sent.load(Order::Relaxed);
	x.b.receive(req_segment(1, iba::rmpp_flag::first, 3 * 220, tid), from);
	WEFT_EXPECT_EQ(t, x.lb.sent.load(Order::Relaxed), sent + 1);
	WEFT_EXPECT_TRUE(t, last_sent(x.lb, iba::rmpp_type::ack, tid, 1));
	WEFT_EXPECT_EQ(t, rmpp::header(x.lb.last.bytes).paylen_newwin.get(), 1u + rmpp::window);
	x.b.receive(req_segment(3, iba::rmpp_flag::last, last_len, tid), from); /* a gap */
	WEFT_EXPECT_EQ(t, x.lb.sent.load(Order::Relaxed), sent + 2);
	WEFT_EXPECT_TRUE(t, last_sent(x.lb, iba::rmpp_type::ack, tid, 1));
	x.b.receive(req_segment(2, 0, 0, tid), from); /* in order, window open: no ACK */
	WEFT_EXPECT_EQ(t, x.lb.sent.load(Order::Relaxed), sent + 2);
	x.b.receive(req_segment(2, 0, 0, tid), from); /* a repeat */
	WEFT_EXPECT_EQ(t, x.lb.sent.load(Order::Relaxed), sent + 3);
	WEFT_EXPECT_TRUE(t, last_sent(x.lb, iba::rmpp_type::ack, tid, 2));
	WEFT_EXPECT_EQ(t, x.sh.messages.load(Order::Acquire), 0);
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving(), 1u);
	WEFT_EXPECT_GT(t, x.b.rmpp_receiving_bytes(), size_t(0));
	x.b.receive(req_segment(3, iba::rmpp_flag::last, last_len, tid), from);
	WEFT_EXPECT_EQ(t, x.lb.sent.load(Order::Relaxed), sent + 4);
	WEFT_EXPECT_TRUE(t, last_sent(x.lb, iba::rmpp_type::ack, tid, 3));
	WEFT_EXPECT_EQ(t, x.sh.messages.load(Order::Acquire), 1);
	WEFT_EXPECT_EQ(t, x.sh.msg_len, sa_hdr + 2 * seg_data + 50);
	WEFT_EXPECT_TRUE(t, x.sh.msg_exact);
	x.b.receive(req_segment(3, iba::rmpp_flag::last, last_len, tid), from); /* our ACK was lost */
	WEFT_EXPECT_EQ(t, x.lb.sent.load(Order::Relaxed), sent + 5);
	WEFT_EXPECT_TRUE(t, last_sent(x.lb, iba::rmpp_type::ack, tid, 3));
	WEFT_EXPECT_EQ(t, x.sh.messages.load(Order::Acquire), 1);
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving(), 0u);
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving_bytes(), size_t(0));
	/* The same TID from another node is another transfer; a middle segment of none is dropped. */
	const uint64_t dropped = x.b.dropped();
	MadAddr other = peer();
	other.lid = 9;
	x.b.receive(req_segment(2, 0, 0, tid), other);
	WEFT_EXPECT_EQ(t, x.b.dropped(), dropped + 1);
	WEFT_EXPECT_EQ(t, x.lb.sent.load(Order::Relaxed), sent + 5);
	teardown(x);
}

/* IBA 13.6.5.2: a transfer that stops coming is ABORTed (T2L, 118) and freed, and counted. */
void unsolicited_request_timeout(Test &t)
{
	auto f = fixture();
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	x.sh.answer = false;
	x.b.set_rmpp_recv_timeout(100);
	const MadAddr from = peer();
	const uint64_t tid = 0x910, dropped = x.b.dropped();
	const uint32_t sent = x.lb.sent.load(Order::Relaxed);
	x.b.receive(req_segment(1, iba::rmpp_flag::first, 3 * 220, tid), from);
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving(), 1u);
	WEFT_ASSERT_TRUE(t, wait_for(x.lb.sent, sent + 2)); /* the ACK, then the ABORT */
	WEFT_EXPECT_TRUE(t, last_sent(x.lb, iba::rmpp_type::abort, tid, iba::rmpp_status::total_time));
	WEFT_EXPECT_EQ(t, x.lb.last_to.lid, from.lid);
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving(), 0u);
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving_bytes(), size_t(0));
	WEFT_EXPECT_EQ(t, x.b.dropped(), dropped + 1);
	/* What comes after belongs to nothing. */
	x.b.receive(req_segment(2, iba::rmpp_flag::last, 30, tid), from);
	WEFT_EXPECT_EQ(t, x.b.dropped(), dropped + 2);
	WEFT_EXPECT_EQ(t, x.sh.messages.load(Order::Acquire), 0);
	teardown(x);
}

/*
 * Issue 22's bounds for unsolicited transfers: at most
 * max_rmpp_recvs_per_agent per agent and max_rmpp_recvs per port; the
 * first segment past either gets STOP (ResX) and is counted; a finished
 * transfer frees its place.
 */
void unsolicited_limits(Test &t)
{
	auto f = fixture();
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	x.sh.answer = false;
	Agent o1{x.sh, sa, 2}, o2{x.sh, sa, 2};
	o1.add_method(0x20);
	o2.add_method(0x21);
	o1.rmpp = o2.rmpp = true;
	WEFT_ASSERT_OK(t, x.b.register_agent(o1));
	WEFT_ASSERT_OK(t, x.b.register_agent(o2));
	const MadAddr from = peer();
	const uint32_t per_agent = MadService::max_rmpp_recvs_per_agent;
	const uint64_t dropped = x.b.dropped();
	auto start = [&](uint64_t tid, uint8_t method) {
		x.b.receive(req_segment(1, iba::rmpp_flag::first, 2 * 220, tid, method), from);
	};
	for (uint32_t i = 0; i < per_agent; i++)
		start(0x1000 + i, get_multi);
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving(), per_agent);
	WEFT_EXPECT_TRUE(t, last_sent(x.lb, iba::rmpp_type::ack, 0x1000 + per_agent - 1, 1));
	start(0x1000 + per_agent, get_multi); /* the agent's limit */
	WEFT_EXPECT_TRUE(t, last_sent(x.lb, iba::rmpp_type::stop, 0x1000 + per_agent, iba::rmpp_status::resources));
	WEFT_EXPECT_EQ(t, x.b.dropped(), dropped + 1);
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving(), per_agent);
	for (uint32_t i = 0; i < MadService::max_rmpp_recvs - per_agent; i++)
		start(0x2000 + i, 0x20);
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving(), MadService::max_rmpp_recvs);
	start(0x3000, 0x21); /* o2 has none, but the port is full */
	WEFT_EXPECT_TRUE(t, last_sent(x.lb, iba::rmpp_type::stop, 0x3000, iba::rmpp_status::resources));
	WEFT_EXPECT_EQ(t, x.b.dropped(), dropped + 2);
	/* One completes: its place is free again. */
	x.b.receive(req_segment(2, iba::rmpp_flag::last, 20 + 10, 0x1000), from);
	WEFT_EXPECT_EQ(t, x.sh.messages.load(Order::Acquire), 1);
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving(), MadService::max_rmpp_recvs - 1);
	start(0x3001, 0x21);
	WEFT_EXPECT_TRUE(t, last_sent(x.lb, iba::rmpp_type::ack, 0x3001, 1));
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving(), MadService::max_rmpp_recvs);
	WEFT_EXPECT_EQ(t, x.b.dropped(), dropped + 2);
	x.b.unregister_agent(o1);
	x.b.unregister_agent(o2);
	teardown(x); /* the service frees the transfers still open */
}

/*
 * The port's byte budget for unsolicited transfers: a segment that would
 * grow their buffers past it gets STOP (ResX), is counted, and frees its
 * transfer; the others go on.  (The real budget, 64 MiB, is shortened.)
 */
void unsolicited_budget(Test &t)
{
	auto f = fixture();
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	x.sh.answer = false;
	const MadAddr from = peer();
	/* Each first segment takes a window's buffer: 56 + 16 x 200 bytes. */
	const size_t window_buf = sa_hdr + rmpp::window * seg_data;
	x.b.set_rmpp_recv_budget(2 * window_buf + window_buf / 2);
	const uint64_t dropped = x.b.dropped();
	for (uint64_t tid = 0x4000; tid < 0x4002; tid++) {
		x.b.receive(req_segment(1, iba::rmpp_flag::first, 40 * 220, tid), from);
		WEFT_EXPECT_TRUE(t, last_sent(x.lb, iba::rmpp_type::ack, tid, 1));
	}
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving_bytes(), 2 * window_buf);
	x.b.receive(req_segment(1, iba::rmpp_flag::first, 40 * 220, 0x4002), from);
	WEFT_EXPECT_TRUE(t, last_sent(x.lb, iba::rmpp_type::stop, 0x4002, iba::rmpp_status::resources));
	WEFT_EXPECT_EQ(t, x.b.dropped(), dropped + 1);
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving(), 2u);
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving_bytes(), 2 * window_buf);
	/* Growing past its first buffer: the budget refuses the first one's 17th segment. */
	for (uint32_t n = 2; n <= rmpp::window; n++)
		x.b.receive(req_segment(n, 0, 0, 0x4000), from);
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving_bytes(), 2 * window_buf); /* 16 segments fill it exactly */
	x.b.receive(req_segment(rmpp::window + 1, 0, 0, 0x4000), from);
	WEFT_EXPECT_TRUE(t, last_sent(x.lb, iba::rmpp_type::stop, 0x4000, iba::rmpp_status::resources));
	WEFT_EXPECT_EQ(t, x.b.dropped(), dropped + 2);
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving(), 1u);
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving_bytes(), window_buf);
	/* The other completes within what is left. */
	x.b.receive(req_segment(2, iba::rmpp_flag::last, 20 + 10, 0x4001), from);
	WEFT_EXPECT_EQ(t, x.sh.messages.load(Order::Acquire), 1);
	WEFT_EXPECT_EQ(t, x.b.rmpp_receiving_bytes(), size_t(0));
	teardown(x);
}

/*
 * Mutation sweep (issue 22): every bit of the RMPP header of every segment
 * of a three-segment SA transfer flipped in turn, the segments fed to a
 * Receiver as the service feeds it (only active DATA segments reach it).
 * Each outcome is one of: the message, exact up to where a flipped Last
 * flag or PayloadLength ends it (a last PayloadLength claiming more than
 * was sent takes the segment's zero pad, IBA 13.6.2.1: the receiver cannot
 * tell), never more than the segments carried; a STOP or ABORT carrying
 * the refusal's status; or a transfer still waiting for its segment (a
 * flipped SegmentNumber).  Never a crash, a read past a segment or a
 * buffer past the class's maximum.
 */
void mutated_headers_refused_or_exact(Test &t)
{
	constexpr size_t len = sa_hdr + 2 * seg_data + 50;
	auto buf = Array<uint8_t>::make(Gfp::Sleep, len);
	WEFT_ASSERT_OK(t, buf);
	uint8_t *msg = buf.value().data();
	for (size_t i = 0; i < len; i++)
		msg[i] = pattern(i);
	msg[0] = 1;
	msg[1] = sa;
	msg[2] = 2;
	msg[3] = get_table_resp;
	auto made = rmpp::Sender::make(ConstBytes(msg, len));
	WEFT_ASSERT_OK(t, made);
	rmpp::Sender &snd = *made.value();
	WEFT_ASSERT_EQ(t, snd.count(), 3u);
	constexpr size_t hdr_at = sizeof(iba::MadHeader);
	uint32_t done = 0, aborted = 0, waiting = 0, wrong = 0;
	for (uint32_t which = 1; which <= 3; which++) {
		for (size_t bit = 0; bit < rmpp::rmpp_hdr * 8 - hdr_at * 8; bit++) {
			rmpp::Receiver r(rmpp::max_message(sa));
			Mad seg, out;
			bool finished = false;
			for (uint32_t n = 1; n <= 3 && !finished; n++) {
				snd.build(n, seg);
				if (n == which)
					seg.bytes[hdr_at + bit / 8] ^= uint8_t(1u << (bit % 8));
				const iba::RmppHeader &h = rmpp::header(seg.bytes);
				if (!rmpp::active(seg.bytes) || h.type.get() != iba::rmpp_type::data)
					continue; /* not a DATA segment: the service never gives it to a Receiver */
				switch (r.add(seg, Gfp::Sleep)) {
				case rmpp::Receiver::Step::Done: {
					size_t got_len = 0;
					Array<uint8_t> got = r.take(got_len);
					/* What three segments carry at most; past the message, only their pad. */
					bool same = got_len <= sa_hdr + 3 * seg_data && got_len >= rmpp::rmpp_hdr;
					for (size_t i = rmpp::rmpp_hdr; same && i < got_len; i++)
						same = got[i] == (i < len ? msg[i] : 0);
					(same ? done : wrong)++;
					finished = true;
					break;
				}
				case rmpp::Receiver::Step::Abort: {
					r.refusal(seg, out);
					const iba::RmppHeader &o = rmpp::header(out.bytes);
					const uint8_t type = o.type.get();
					bool right = r.refusal_status() && o.status.get() == r.refusal_status() &&
						     (type == iba::rmpp_type::stop || type == iba::rmpp_type::abort);
					(right ? aborted : wrong)++;
					finished = true;
					break;
				}
				default:
					if (r.held() > rmpp::max_message(sa))
						wrong++;
					break;
				}
			}
			waiting += !finished;
		}
	}
	WEFT_EXPECT_EQ(t, wrong, 0u);
	WEFT_EXPECT_GT(t, done, 0u);
	WEFT_EXPECT_GT(t, aborted, 0u);
	WEFT_EXPECT_GT(t, waiting, 0u);
	WEFT_EXPECT_EQ(t, done + aborted + waiting, uint32_t(3 * (rmpp::rmpp_hdr - hdr_at) * 8));
}

} // namespace

WEFT_TEST_SUITE(weft_mad_rmpp, WEFT_CASE(segments_and_lengths), WEFT_CASE(table_whole),
		WEFT_CASE(lost_segments_and_acks), WEFT_CASE(oversized_payload_length),
		WEFT_CASE(endless_sender_stopped), WEFT_CASE(out_of_order_segments),
		WEFT_CASE(broken_segments_aborted), WEFT_CASE(service_refuses_oversized),
		WEFT_CASE(stop_and_abort_end_transfers), WEFT_CASE(mutated_headers_refused_or_exact),
		WEFT_CASE(unsolicited_request_reassembled), WEFT_CASE(segmented_request_not_resent),
		WEFT_CASE(unsolicited_out_of_order_and_repeats),
		WEFT_CASE(unsolicited_request_timeout), WEFT_CASE(unsolicited_limits),
		WEFT_CASE(unsolicited_budget));
