// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the CM when the fabric loses its MADs (the cables' drop knobs)
 * and when strangers send CM MADs: every lost REQ, REP, RTU, DREQ and
 * DREP is recovered by a retransmission or an answer to a duplicate (IBA
 * 12.9.5-12.9.7), data before the RTU establishes the connection (IBA
 * 11.6.3.1 CommEst), an MRA holds the requester off (12.6.6), a REQ from
 * a QP already connected is stale (12.9.8.3.1), and stray messages are
 * answered or counted.
 */
#include <weft/mad/port.h>

#include "fixture.h"

using namespace weft;
using namespace weft::cm;
using namespace weft::cm::testing;
using weft::test::Test;

namespace {

bool up(Pair &x)
{
	return x.ra.wait(EventType::Established) && x.rb.wait(EventType::Established);
}

void req_lost_then_retried(Test &t)
{
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	Pair &x = *px.value();
	Stats s0 = stats();
	Pair::port_of(x.a)->faults().set_count(hca::FaultKind::Drop, 1);
	WEFT_ASSERT_OK(t, connect(*x.active, x.param()));
	WEFT_ASSERT_TRUE(t, up(x));
	WEFT_EXPECT_GE(t, stats().retransmitted - s0.retransmitted, 1ull);
	WEFT_EXPECT_EQ(t, Pair::port_of(x.a)->faults().injected(hca::FaultKind::Drop) >= 1, true);
	WEFT_EXPECT_EQ(t, x.rb.seen(EventType::Request), 1); /* the resent REQ is not a new one */
	WEFT_EXPECT_OK(t, x.send_one(1));
}

void rep_lost_then_answered(Test &t)
{
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	Pair &x = *px.value();
	x.rb.drop_port = Pair::port_of(x.b); /* the REP, sent right after the Request */
	x.rb.drop_next = 1;
	WEFT_ASSERT_OK(t, connect(*x.active, x.param()));
	WEFT_ASSERT_TRUE(t, up(x));
	WEFT_EXPECT_EQ(t, x.ra.seen(EventType::Reply), 1);
	WEFT_EXPECT_EQ(t, x.rb.seen(EventType::Request), 1);
	WEFT_EXPECT_OK(t, x.send_one(2));
}

void rtu_lost_rep_resent(Test &t)
{
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	Pair &x = *px.value();
	Stats s0 = stats();
	x.rb.drop_port = Pair::port_of(x.a); /* weft0's next packet is the RTU */
	x.rb.drop_next = 1;
	WEFT_ASSERT_OK(t, connect(*x.active, x.param()));
	WEFT_ASSERT_TRUE(t, up(x));
	/* The passive side resent its REP; the active side answered the duplicate with the RTU. */
	WEFT_EXPECT_GE(t, stats().retransmitted - s0.retransmitted, 1ull);
	WEFT_EXPECT_EQ(t, x.ra.seen(EventType::Reply), 1);
	WEFT_EXPECT_EQ(t, x.ra.seen(EventType::Established), 1);
	WEFT_EXPECT_OK(t, x.send_one(3));
}

/* Tells the CM about CommEst on the passive QP, as a ULP's QP event handler does. */
struct CommEstHook final : verbs::EventHandler {
	Recorder *rb = nullptr;
	int seen = 0;
	void handle(const verbs::Event &e) override
	{
		if (e.type == verbs::EventType::CommEst && rb->passive) {
			seen++;
			established(*rb->passive);
		}
	}
};

void data_before_rtu_establishes(Test &t)
{
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	Pair &x = *px.value();
	CommEstHook hook;
	hook.rb = &x.rb;
	WEFT_ASSERT_OK(t, verbs::testing::reopen_qp(x.b, x.b.cq, &hook));
	x.rb.accept_qp = x.b.qp;
	x.rb.accept.rts_now = false; /* RTR until the RTU: CommEst comes with the first data */
	x.rb.drop_port = Pair::port_of(x.a);
	x.rb.drop_next = 1;
	ConnectParam p = x.param();
	/* REP and REQ resent only after 17 s, however slow the host: the drop must hit the RTU. */
	p.local_cm_response_timeout = p.remote_cm_response_timeout = 22;
	Stats s0 = stats();
	WEFT_ASSERT_OK(t, connect(*x.active, p));
	WEFT_ASSERT_TRUE(t, x.ra.wait(EventType::Established));
	WEFT_EXPECT_EQ(t, x.rb.seen(EventType::Established), 0);
	WEFT_EXPECT_OK(t, x.send_one(4));
	/* Through CommEst: a REP resent instead would show in the retransmission count below. */
	WEFT_ASSERT_TRUE(t, x.rb.wait(EventType::Established));
	WEFT_EXPECT_EQ(t, hook.seen, 1);
	WEFT_EXPECT_EQ(t, stats().retransmitted, s0.retransmitted);
	WEFT_EXPECT_EQ(t, int(x.b.qp->state()), int(verbs::QpState::Rts));
	destroy(exchange(x.active, nullptr)); /* before the hook goes */
	destroy(x.rb.passive);
	x.rb.npassive = 0;
}

void dreq_and_drep_lost(Test &t)
{
	for (int lose = 0; lose < 2; lose++) {
		auto px = ready();
		WEFT_ASSERT_OK(t, px);
		Pair &x = *px.value();
		WEFT_ASSERT_OK(t, connect(*x.active, x.param()));
		WEFT_ASSERT_TRUE(t, up(x));
		Stats s0 = stats();
		/* 0: the DREQ from weft0 is lost; 1: the DREP from weft1. */
		Pair::port_of(lose ? x.b : x.a)->faults().set_count(hca::FaultKind::Drop, 1);
		WEFT_ASSERT_OK(t, disconnect(*x.active));
		WEFT_EXPECT_TRUE(t, x.ra.wait(EventType::Disconnected));
		WEFT_EXPECT_TRUE(t, x.rb.wait(EventType::Disconnected));
		WEFT_EXPECT_GE(t, stats().retransmitted - s0.retransmitted, 1ull);
		WEFT_EXPECT_EQ(t, x.rb.seen(EventType::Disconnected), 1);
		WEFT_EXPECT_TRUE(t, x.ra.wait(EventType::TimewaitExit));
	}
}

void mra_holds_requester(Test &t)
{
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	Pair &x = *px.value();
	x.rb.on_request = Recorder::OnRequest::Mra; /* 4.3 s more: far beyond the 700 ms below */
	/* 4.096 us * 2^14 = 67 ms, 3 retries: about 270 ms for the MRA to arrive in. */
	ConnectParam p = x.param();
	p.local_cm_response_timeout = p.remote_cm_response_timeout = 14;
	p.max_cm_retries = 3;
	WEFT_ASSERT_OK(t, connect(*x.active, p));
	WEFT_ASSERT_TRUE(t, x.rb.wait(EventType::Request));
	/* Without the MRA, 4 REQs 67 ms apart would have ended in Unreachable by now. */
	weft_msleep(700);
	WEFT_EXPECT_EQ(t, int(state(*x.active)), int(State::RepWait));
	WEFT_EXPECT_EQ(t, x.ra.seen(EventType::Unreachable), 0);
	AcceptParam a;
	a.qp = x.b.qp;
	WEFT_ASSERT_OK(t, accept(*x.rb.passive, a));
	WEFT_ASSERT_TRUE(t, up(x));
	WEFT_EXPECT_OK(t, x.send_one(5));
}

/* Sends hand-made CM MADs from weft0's GSI, as a stranger (a send-only agent). */
struct Stranger final : mad::AgentHandler {
	mad::MadService *gsi = nullptr;
	mad::Agent agent{*this, iba::mgmt_class::cm, iba::cm::class_version};
	void recv(mad::Agent &, const mad::Mad &, const mad::MadAddr &) override {}
	void send_done(mad::Agent &, mad::SendReq &) override {}

	Result<void> send(uint16_t attr, uint16_t to_lid, void (*fill)(mad::Mad &, void *), void *arg)
	{
		auto r = WEFT_TRY(make_own<mad::SendReq>(Gfp::Sleep));
		mad::Mad &m = r->mad;
		auto &h = m.hdr();
		h.base_version.set(1);
		h.mgmt_class.set(iba::mgmt_class::cm);
		h.class_version.set(iba::cm::class_version);
		h.method.set(iba::method::send);
		h.tid.set(0x77000000ull | attr);
		h.attr_id.set(attr);
		fill(m, arg);
		r->to = mad::MadAddr{to_lid, iba::gsi_qpn, iba::gsi_qkey, 0, 0};
		return gsi->send(agent, *r);
	}
};

template <typename T> T &cm_body(mad::Mad &m)
{
	return *reinterpret_cast<T *>(m.bytes + sizeof(iba::MadHeader));
}

void stale_connection_released(Test &t)
{
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	Pair &x = *px.value();
	WEFT_ASSERT_OK(t, connect(*x.active, x.param()));
	WEFT_ASSERT_TRUE(t, up(x));
	auto st = make_own<Stranger>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, st);
	Stranger &s = *st.value();
	s.gsi = &mad::find_port(*x.a.dev, 1)->gsi();
	WEFT_ASSERT_OK(t, s.gsi->register_agent(s.agent));
	Stats s0 = stats();
	/* A new REQ from the very QP weft1 is connected to: the peer must have lost that connection. */
	struct Args {
		Pair *x;
	} args{&x};
	auto fill = [](mad::Mad &m, void *arg) {
		Pair &x = *static_cast<Args *>(arg)->x;
		auto &r = cm_body<iba::cm::Req>(m);
		ConnectParam p = x.param();
		r.local_comm_id.set(0x5eed);
		r.service_id.set(service);
		r.local_ca_guid.set(x.a.dev->attr().node_guid);
		iba::cm::Req::Qpn::set(r.qpn_rr, x.a.qp->qpn);
		r.pkey.set(0xffff);
		iba::cm::Req::Mtu::set(r.mtu_flags, static_cast<uint8_t>(iba::Mtu::M2048));
		r.primary.local_lid = p.path.slid;
		r.primary.remote_lid = p.path.dlid;
	};
	WEFT_ASSERT_OK(t, s.send(iba::cm::attr::req, x.b.lid, fill, &args));
	WEFT_EXPECT_TRUE(t, x.rb.wait(EventType::Disconnected));
	WEFT_EXPECT_TRUE(t, x.ra.wait(EventType::Disconnected));
	weft_msleep(100); /* the DREP, or anything else, has come by now */
	WEFT_EXPECT_EQ(t, x.rb.seen(EventType::Disconnected), 1);
	WEFT_EXPECT_EQ(t, x.ra.seen(EventType::Disconnected), 1);
	WEFT_EXPECT_EQ(t, stats().stale_rej - s0.stale_rej, 1ull);
	WEFT_EXPECT_EQ(t, x.rb.seen(EventType::Request), 1);
	s.gsi->unregister_agent(s.agent);
}

void strays_answered_or_counted(Test &t)
{
	auto px = ready();
	WEFT_ASSERT_OK(t, px);
	Pair &x = *px.value();
	auto st = make_own<Stranger>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, st);
	Stranger &s = *st.value();
	s.gsi = &mad::find_port(*x.a.dev, 1)->gsi();
	WEFT_ASSERT_OK(t, s.gsi->register_agent(s.agent));
	Stats s0 = stats();
	auto ids = [](mad::Mad &m, void *) {
		auto &r = cm_body<iba::cm::Rtu>(m);
		r.local_comm_id.set(0xdead);
		r.remote_comm_id.set(0xbeef);
	};
	/* IBA 12.9.8.4: a DREQ for no connection still gets a DREP (which weft0's CM drops). */
	uint16_t attrs[] = {iba::cm::attr::dreq, iba::cm::attr::rep, iba::cm::attr::rtu, iba::cm::attr::drep,
			    iba::cm::attr::mra, iba::cm::attr::rej, iba::cm::attr::lap, iba::cm::attr::sidr_rep,
			    0x99};
	for (uint16_t a : attrs)
		WEFT_EXPECT_OK(t, s.send(a, x.b.lid, ids, nullptr));
	/* A malformed REQ (MTU 0, LID 0) is refused, not taken. */
	WEFT_EXPECT_OK(t, s.send(iba::cm::attr::req, x.b.lid, ids, nullptr));
	Stats s1;
	for (int i = 0; i < 30000; i++) {
		s1 = stats();
		if (s1.received - s0.received >= 13)
			break;
		weft_msleep(1);
	}
	/* 10 strays at weft1; DREP, REJ (of the REP), APR, REJ (of the REQ) back at weft0. */
	WEFT_EXPECT_GE(t, s1.received - s0.received, 13ull);
	WEFT_EXPECT_GE(t, s1.dropped - s0.dropped, 8ull);
	WEFT_EXPECT_EQ(t, x.rb.seen(EventType::Request), 0);
	s.gsi->unregister_agent(s.agent);
	/* The CM still works. */
	WEFT_ASSERT_OK(t, connect(*x.active, x.param()));
	WEFT_EXPECT_TRUE(t, up(x));
}

} // namespace

WEFT_TEST_SUITE(weft_cm_faults, WEFT_CASE(req_lost_then_retried), WEFT_CASE(rep_lost_then_answered),
		WEFT_CASE(rtu_lost_rep_resent), WEFT_CASE(data_before_rtu_establishes),
		WEFT_CASE(dreq_and_drep_lost), WEFT_CASE(mra_holds_requester),
		WEFT_CASE(stale_connection_released), WEFT_CASE(strays_answered_or_counted));
