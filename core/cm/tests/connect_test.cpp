// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the CM's connection life cycle between weft0 and weft1 (IBA
 * 12.9): REQ/REP/RTU with the QPs moved to RTS and data moving, DREQ/DREP
 * and time-wait, REJ with reason, ARI and private data, no listener, an
 * unreachable LID, private data limits, listen conflicts, SIDR, and the
 * peer told when an Id is destroyed.
 */
#include "fixture.h"

using namespace weft;
using namespace weft::cm;
using namespace weft::cm::testing;
using weft::test::Test;

namespace {

uint32_t ids_now()
{
	return stats().ids;
}

void establish_transfer_release(Test &t)
{
	uint32_t base = settled_ids();
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	Pair &x = *px.value();
	uint8_t hello[iba::cm::pdata::req];
	for (size_t i = 0; i < sizeof(hello); i++)
		hello[i] = static_cast<uint8_t>(i * 3 + 1);
	ConnectParam p = x.param();
	p.private_data = ConstBytes(hello, sizeof(hello));
	WEFT_ASSERT_OK(t, connect(*x.active, p));
	WEFT_ASSERT_TRUE(t, x.ra.wait(EventType::Established));
	WEFT_ASSERT_TRUE(t, x.rb.wait(EventType::Established));

	/* The Request told the listener who asks, with the REQ's private data intact. */
	WEFT_EXPECT_EQ(t, x.rb.req.service_id, service);
	WEFT_EXPECT_EQ(t, x.rb.req.remote_qpn, x.a.qp->qpn);
	WEFT_EXPECT_EQ(t, x.rb.req.remote_lid, x.a.lid);
	WEFT_EXPECT_EQ(t, x.rb.req.remote_ca_guid, x.a.dev->attr().node_guid);
	WEFT_EXPECT_EQ(t, x.rb.req_pdata_len, sizeof(hello));
	WEFT_EXPECT_EQ(t, __builtin_memcmp(x.rb.req_pdata, hello, sizeof(hello)), 0);
	WEFT_EXPECT_EQ(t, x.ra.seen(EventType::Reply), 1);
	WEFT_EXPECT_EQ(t, int(state(*x.active)), int(State::Established));
	WEFT_EXPECT_EQ(t, int(state(*x.rb.passive)), int(State::Established));
	WEFT_EXPECT_EQ(t, int(x.a.qp->state()), int(verbs::QpState::Rts));
	WEFT_EXPECT_EQ(t, int(x.b.qp->state()), int(verbs::QpState::Rts));
	WEFT_EXPECT_OK(t, x.send_one(0xfeed));
	WEFT_EXPECT_EQ(t, ids_now(), base + 3);

	static const uint8_t bye[] = {'b', 'y', 'e'};
	WEFT_ASSERT_OK(t, disconnect(*x.active, ConstBytes(bye, 3)));
	WEFT_ASSERT_TRUE(t, x.rb.wait(EventType::Disconnected));
	WEFT_EXPECT_EQ(t, __builtin_memcmp(x.rb.pdata, bye, 3), 0);
	WEFT_ASSERT_TRUE(t, x.ra.wait(EventType::Disconnected));
	WEFT_EXPECT_EQ(t, int(x.a.qp->state()), int(verbs::QpState::Err));
	WEFT_EXPECT_EQ(t, int(x.b.qp->state()), int(verbs::QpState::Err));
	WEFT_EXPECT_TRUE(t, x.ra.wait(EventType::TimewaitExit));
	WEFT_EXPECT_TRUE(t, x.rb.wait(EventType::TimewaitExit));
	WEFT_EXPECT_EQ(t, int(state(*x.active)), int(State::Idle));
	WEFT_EXPECT_ERR(t, disconnect(*x.active), err::EINVAL);
	px.value().reset();
	WEFT_EXPECT_EQ(t, settled_ids(), base);
}

void reject_reason_and_data(Test &t)
{
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	Pair &x = *px.value();
	x.rb.on_request = Recorder::OnRequest::Reject;
	WEFT_ASSERT_OK(t, connect(*x.active, x.param()));
	WEFT_ASSERT_TRUE(t, x.ra.wait(EventType::Rejected));
	WEFT_EXPECT_EQ(t, x.ra.reason, iba::cm::rej::consumer);
	WEFT_EXPECT_EQ(t, x.ra.ari_len, size_t(4));
	WEFT_EXPECT_EQ(t, __builtin_memcmp(x.ra.ari, "nope", 4), 0);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(x.ra.pdata, "nope", 4), 0);
	WEFT_EXPECT_EQ(t, int(state(*x.active)), int(State::Idle));
	WEFT_EXPECT_EQ(t, int(x.a.qp->state()), int(verbs::QpState::Err));
	WEFT_EXPECT_EQ(t, x.ra.seen(EventType::Established), 0);
}

void refused_by_handler(Test &t)
{
	uint32_t base = settled_ids();
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	Pair &x = *px.value();
	x.rb.on_request = Recorder::OnRequest::Refuse; /* the handler returns < 0 */
	WEFT_ASSERT_OK(t, connect(*x.active, x.param()));
	WEFT_ASSERT_TRUE(t, x.ra.wait(EventType::Rejected));
	WEFT_EXPECT_EQ(t, x.ra.reason, iba::cm::rej::consumer);
	px.value().reset();
	WEFT_EXPECT_EQ(t, settled_ids(), base);
}

void no_listener_rejected(Test &t)
{
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	Pair &x = *px.value();
	ConnectParam p = x.param();
	p.service_id = service + 1;
	WEFT_ASSERT_OK(t, connect(*x.active, p));
	/* The peer's REJ, not our retries running out (that would be Unreachable). */
	WEFT_ASSERT_TRUE(t, x.ra.wait(EventType::Rejected));
	WEFT_EXPECT_EQ(t, x.ra.reason, iba::cm::rej::invalid_service_id);
	WEFT_EXPECT_EQ(t, x.ra.seen(EventType::Unreachable), 0);
	WEFT_EXPECT_EQ(t, x.rb.seen(EventType::Request), 0);
}

void unreachable_after_retries(Test &t)
{
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	Pair &x = *px.value();
	ConnectParam p = x.param();
	p.path.dlid.set(0x3333); /* no port has it: the switch drops the REQ */
	p.remote_cm_response_timeout = 8; /* 4.096 us * 2^8: 1 ms */
	iba::PathRecord::Value::set(p.path.pkt_life, 10); /* 4 ms, 8 ms there and back */
	p.max_cm_retries = 2;
	Stats s0 = stats();
	uint64_t t0 = weft_ktime_ns();
	WEFT_ASSERT_OK(t, connect(*x.active, p));
	WEFT_ASSERT_TRUE(t, x.ra.wait(EventType::Unreachable));
	/*
	 * IBA 12.7.27: each wait is the peer's response time plus a round
	 * trip, 9 ms; three of them at least (timers never fire early; a slow
	 * host only makes it longer, so no upper bound).
	 */
	WEFT_EXPECT_GE(t, weft_ktime_ns() - t0, 27000000ull);
	/* IBA 12.7.27: the REQ, then MaxCMRetries more, then a REJ(timeout). */
	Stats s1 = stats();
	WEFT_EXPECT_EQ(t, s1.retransmitted - s0.retransmitted, 2ull);
	WEFT_EXPECT_GE(t, s1.sent - s0.sent, 4ull);
	WEFT_EXPECT_EQ(t, int(state(*x.active)), int(State::Idle));
	WEFT_EXPECT_EQ(t, int(x.a.qp->state()), int(verbs::QpState::Err));
}

void private_data_limits(Test &t)
{
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	Pair &x = *px.value();
	static uint8_t big[iba::cm::pdata::rtu + 1];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = static_cast<uint8_t>(0xa0 + i);
	ConnectParam p = x.param();
	p.private_data = ConstBytes(big, iba::cm::pdata::req + 1);
	WEFT_EXPECT_ERR(t, connect(*x.active, p), err::EINVAL);
	p.private_data = {};
	p.qp = nullptr;
	WEFT_EXPECT_ERR(t, connect(*x.active, p), err::EINVAL);
	p = x.param();
	iba::PathRecord::Value::set(p.path.mtu, 7);
	WEFT_EXPECT_ERR(t, connect(*x.active, p), err::EINVAL);

	/* The passive side holds the REQ: the answers' limits, then the largest REP. */
	x.rb.on_request = Recorder::OnRequest::Hold;
	WEFT_ASSERT_OK(t, connect(*x.active, x.param()));
	WEFT_EXPECT_ERR(t, connect(*x.active, x.param()), err::EINVAL); /* busy */
	WEFT_ASSERT_TRUE(t, x.rb.wait(EventType::Request));
	Id &pid = *x.rb.passive;
	AcceptParam a;
	a.qp = x.b.qp;
	a.private_data = ConstBytes(big, iba::cm::pdata::rep + 1);
	WEFT_EXPECT_ERR(t, accept(pid, a), err::EINVAL);
	WEFT_EXPECT_ERR(t, reject(pid, iba::cm::rej::consumer, ConstBytes(big, 73)), err::EINVAL);
	WEFT_EXPECT_ERR(t, send_mra(pid, 32), err::EINVAL);
	WEFT_EXPECT_ERR(t, disconnect(pid), err::EINVAL);
	a.private_data = ConstBytes(big, iba::cm::pdata::rep);
	WEFT_ASSERT_OK(t, accept(pid, a));
	WEFT_EXPECT_ERR(t, accept(pid, a), err::EINVAL); /* answered already */
	WEFT_ASSERT_TRUE(t, x.ra.wait(EventType::Established));
	WEFT_EXPECT_TRUE(t, x.rb.wait(EventType::Established));
	WEFT_EXPECT_ERR(t, disconnect(*x.active, ConstBytes(big, iba::cm::pdata::dreq + 1)), err::EINVAL);
}

void reply_carries_private_data(Test &t)
{
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	Pair &x = *px.value();
	static uint8_t rep[iba::cm::pdata::rep];
	for (size_t i = 0; i < sizeof(rep); i++)
		rep[i] = static_cast<uint8_t>(0x55 ^ i);
	x.rb.accept.private_data = ConstBytes(rep, sizeof(rep));
	struct OnReply final : Handler {
		uint8_t got[iba::cm::pdata::rep] = {};
		Atomic<int> replies{0}, up{0};
		int event(const Event &e) override
		{
			if (e.type == EventType::Reply && e.private_data.size() >= sizeof(got)) {
				__builtin_memcpy(got, e.private_data.data(), sizeof(got));
				replies.fetch_add(1, Order::Release);
			}
			if (e.type == EventType::Established)
				up.fetch_add(1, Order::Release);
			return 0;
		}
	} h;
	set_handler(*x.active, h, nullptr);
	WEFT_ASSERT_OK(t, connect(*x.active, x.param()));
	for (int i = 0; i < 30000 && !h.up.load(Order::Acquire); i++)
		weft_msleep(1);
	WEFT_EXPECT_EQ(t, h.replies.load(Order::Acquire), 1);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(h.got, rep, sizeof(rep)), 0);
	destroy(x.active); /* before @h goes */
	x.active = nullptr;
}

void listen_conflicts(Test &t)
{
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	Pair &x = *px.value();
	auto rr = make_own<Recorder>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, rr);
	Recorder &r = *rr.value();
	auto a = create_id(*x.b.dev, r, nullptr);
	WEFT_ASSERT_OK(t, a);
	WEFT_EXPECT_ERR(t, listen(*a.value(), service), err::EBUSY);
	WEFT_EXPECT_ERR(t, listen(*a.value(), service & ~0xffull, ~0xffull), err::EBUSY);
	WEFT_EXPECT_OK(t, listen(*a.value(), service + 0x100));
	WEFT_EXPECT_ERR(t, listen(*a.value(), service + 0x200), err::EINVAL);
	destroy(a.value());
	auto c = create_id(*x.a.dev, r, nullptr); /* another device: no conflict */
	WEFT_ASSERT_OK(t, c);
	WEFT_EXPECT_OK(t, listen(*c.value(), service));
	destroy(c.value());
	auto sw = verbs::find_device("weftsw0");
	if (sw)
		WEFT_EXPECT_ERR(t, create_id(*sw, r, nullptr), err::ENODEV);
}

void sidr_resolves(Test &t)
{
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	Pair &x = *px.value();
	SidrParam p;
	p.path = x.path();
	p.service_id = service;
	p.timeout_ms = 2000; /* no resend racing the reply below */
	WEFT_ASSERT_OK(t, sidr_request(*x.active, p));
	WEFT_ASSERT_TRUE(t, x.rb.wait(EventType::SidrRequest));
	WEFT_EXPECT_EQ(t, x.rb.sidr.service_id, service);
	WEFT_EXPECT_EQ(t, x.rb.sidr.pkey, uint16_t(0xffff));
	WEFT_ASSERT_OK(t, sidr_reply(*x.rb.sidr_passive, iba::cm::sidr::ok, 0x123456, 0x11223344));
	WEFT_ASSERT_TRUE(t, x.ra.wait(EventType::SidrReply));
	WEFT_EXPECT_EQ(t, x.ra.sidr.status, iba::cm::sidr::ok);
	WEFT_EXPECT_EQ(t, x.ra.sidr.qpn, 0x123456u);
	WEFT_EXPECT_EQ(t, x.ra.sidr.qkey, 0x11223344u);
	WEFT_EXPECT_ERR(t, sidr_reply(*x.rb.sidr_passive, 0, 1, 1), err::EINVAL);

	/* Nobody serves this one. */
	p.service_id = service + 7;
	WEFT_ASSERT_OK(t, sidr_request(*x.active, p));
	WEFT_ASSERT_TRUE(t, x.ra.wait(EventType::SidrReply, 2));
	WEFT_EXPECT_EQ(t, x.ra.sidr.status, iba::cm::sidr::unsupported_sid);
}

/* The active side gives up while the passive one still decides: REJ(timeout) with its GUID as ARI. */
void abandoned_request_rejected(Test &t)
{
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	Pair &x = *px.value();
	x.rb.on_request = Recorder::OnRequest::Hold;
	WEFT_ASSERT_OK(t, connect(*x.active, x.param()));
	WEFT_ASSERT_TRUE(t, x.rb.wait(EventType::Request));
	destroy(exchange(x.active, nullptr));
	WEFT_ASSERT_TRUE(t, x.rb.wait(EventType::Rejected));
	WEFT_EXPECT_EQ(t, x.rb.reason, iba::cm::rej::timeout);
	WEFT_EXPECT_EQ(t, x.rb.ari_len, size_t(8));
	WEFT_EXPECT_EQ(t, int(state(*x.rb.passive)), int(State::Idle));
	AcceptParam a;
	a.qp = x.b.qp;
	WEFT_EXPECT_ERR(t, accept(*x.rb.passive, a), err::EINVAL);
}

void destroy_tells_peer(Test &t)
{
	for (int side = 0; side < 2; side++) {
		auto px = ready();
		WEFT_ASSERT_OK(t, px);
		Pair &x = *px.value();
		WEFT_ASSERT_OK(t, connect(*x.active, x.param()));
		WEFT_ASSERT_TRUE(t, x.ra.wait(EventType::Established));
		WEFT_ASSERT_TRUE(t, x.rb.wait(EventType::Established));
		if (side == 0) {
			destroy(exchange(x.active, nullptr));
			WEFT_EXPECT_TRUE(t, x.rb.wait(EventType::Disconnected));
			WEFT_EXPECT_EQ(t, int(x.a.qp->state()), int(verbs::QpState::Err));
		} else {
			destroy(x.rb.passive);
			x.rb.npassive = 0;
			WEFT_EXPECT_TRUE(t, x.ra.wait(EventType::Disconnected));
			WEFT_EXPECT_EQ(t, int(x.b.qp->state()), int(verbs::QpState::Err));
		}
	}
}

} // namespace

WEFT_TEST_SUITE(weft_cm_connect, WEFT_CASE(establish_transfer_release), WEFT_CASE(reject_reason_and_data),
		WEFT_CASE(refused_by_handler), WEFT_CASE(no_listener_rejected),
		WEFT_CASE(unreachable_after_retries), WEFT_CASE(private_data_limits),
		WEFT_CASE(reply_carries_private_data), WEFT_CASE(listen_conflicts), WEFT_CASE(sidr_resolves),
		WEFT_CASE(abandoned_request_rejected), WEFT_CASE(destroy_tells_peer));
