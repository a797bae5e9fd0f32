// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the MAD service (IBA 13.4-13.5) between two ports joined by a
 * loopback transport that can lose MADs: agent registration rules,
 * requests matched with responses by TID and route, retries and
 * timeouts, the error answer for a request nobody serves, unmatched
 * responses dropped, and unregistration cancelling what is outstanding
 * with no callback after.
 */
#include <weft/alloc.h>
#include <weft/atomic.h>
#include <weft/iba/pma.h>
#include <weft/test.h>

#include <weft/mad/service.h>

#include "loop.h"

using namespace weft;
using namespace weft::mad;
using weft::test::Test;
using weft::mad::testing::Loop;

namespace {

constexpr uint8_t cls = iba::mgmt_class::perf;

/* Answers every Get with a GetResp carrying the request's attribute modifier + 1. */
struct Responder final : AgentHandler {
	MadService *svc = nullptr;
	int requests = 0;
	void recv(Agent &a, const Mad &m, const MadAddr &from) override
	{
		requests++;
		auto r = make_own<SendReq>(Gfp::Atomic);
		if (!r)
			return;
		SendReq &req = *r.value();
		req.mad = m;
		req.mad.hdr().method.set(iba::method::get_resp);
		req.mad.hdr().attr_mod.set(m.hdr().attr_mod.get() + 1);
		req.to = from;
		(void)svc->send(a, req);
	}
	void send_done(Agent &, SendReq &) override {}
};

/* Records how its requests ended. */
struct Requester final : AgentHandler {
	Atomic<int> done{0};
	int last_status = -1;
	uint16_t resp_status = 0;
	uint32_t resp_mod = 0;
	uint64_t resp_tid = 0;
	void recv(Agent &, const Mad &, const MadAddr &) override {}
	void send_done(Agent &, SendReq &r) override
	{
		last_status = r.status;
		if (r.status == 0) {
			resp_status = r.response.hdr().status.get();
			resp_mod = r.response.hdr().attr_mod.get();
			resp_tid = r.response.hdr().tid.get();
		}
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
	Responder rh;
	Requester qh;
	Agent server{rh, cls, 1}, client{qh, cls, 1};
	SendReq req;

	Fixture()
	{
		la.self.lid = 1;
		lb.self.lid = 2;
		rh.svc = &b;
		server.add_method(iba::method::get);
	}
	void make_get(uint8_t mgmt_class, uint8_t version, uint32_t timeout_ms, uint8_t retries)
	{
		req.mad = Mad{};
		iba::MadHeader &h = req.mad.hdr();
		h.base_version.set(1);
		h.mgmt_class.set(mgmt_class);
		h.class_version.set(version);
		h.method.set(iba::method::get);
		h.tid.set(0x1234);
		h.attr_mod.set(41);
		req.timeout_ms = timeout_ms;
		req.retries = retries;
	}
};

bool wait_done(const Atomic<int> &done, int want)
{
	for (int i = 0; i < 3000 && done.load(Order::Acquire) < want; i++)
		weft_msleep(1);
	return done.load(Order::Acquire) >= want;
}

Result<Own<Fixture>> fixture()
{
	auto f = make_own<Fixture>(Gfp::Sleep);
	if (f) {
		Fixture &x = *f.value();
		/* The client serves Trap, so unsolicited traps would reach it. */
		x.client.add_method(iba::method::trap);
		WEFT_TRY(x.la.connect(x.b));
		WEFT_TRY(x.lb.connect(x.a));
		WEFT_TRY(x.b.register_agent(x.server));
		WEFT_TRY(x.a.register_agent(x.client));
	}
	return f;
}

void teardown(Fixture &f)
{
	f.a.unregister_agent(f.client);
	f.b.unregister_agent(f.server);
}

void registration_rules(Test &t)
{
	auto f = fixture();
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	Responder other;
	Agent same(other, cls, 1), newer(other, cls, 2), none(other, cls, 1), resp(other, cls, 1);
	same.add_method(iba::method::get);
	WEFT_EXPECT_ERR(t, x.b.register_agent(same), err::EBUSY); /* Get of class/version taken */
	newer.add_method(iba::method::get);
	WEFT_EXPECT_OK(t, x.b.register_agent(newer)); /* another class version */
	WEFT_EXPECT_OK(t, x.b.register_agent(none)); /* send-only: conflicts with nobody */
	resp.add_method(iba::method::get_resp);
	WEFT_EXPECT_ERR(t, x.b.register_agent(resp), err::EINVAL);
	WEFT_EXPECT_ERR(t, x.b.register_agent(newer), err::EINVAL); /* twice */
	x.b.unregister_agent(newer);
	x.b.unregister_agent(none);
	teardown(x);
}

void request_matched_by_tid(Test &t)
{
	auto f = fixture();
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	x.make_get(cls, 1, 100, 0);
	WEFT_ASSERT_OK(t, x.a.send(x.client, x.req));
	WEFT_ASSERT_TRUE(t, wait_done(x.qh.done, 1));
	WEFT_EXPECT_EQ(t, x.qh.last_status, 0);
	WEFT_EXPECT_EQ(t, x.qh.resp_mod, 42u);
	WEFT_EXPECT_EQ(t, x.qh.resp_status, uint16_t(0));
	/* IBA 13.4.6.4: the low half is the requester's, the high half the agent's. */
	WEFT_EXPECT_EQ(t, x.qh.resp_tid & 0xffffffffu, 0x1234ull);
	WEFT_EXPECT_NE(t, x.qh.resp_tid >> 32, 0ull);
	WEFT_EXPECT_EQ(t, x.rh.requests, 1);
	/* The same response again matches nothing: dropped, no second callback. */
	uint64_t dropped = x.a.dropped();
	x.a.receive(x.req.response, x.lb.self);
	WEFT_EXPECT_EQ(t, x.a.dropped(), dropped + 1);
	WEFT_EXPECT_EQ(t, x.qh.done.load(Order::Acquire), 1);
	teardown(x);
}

/*
 * A response must come back the way its request left (in-tree's
 * ib_find_send_mad too): to a request sent with a GRH from SGID index 1,
 * an answer with no GRH, or with one to another of our GIDs, is someone
 * else's: a counted drop.  The one to GID index 1 ends the request.  And
 * a request sent without a GRH takes no answer that has one.
 */
void response_matched_by_route(Test &t)
{
	auto f = fixture();
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	x.lb.lose = ~0ull; /* the responder's own answers are lost: these come by hand */
	x.make_get(cls, 1, 5000, 0);
	x.req.to = x.lb.self;
	x.req.to.global = true;
	x.req.to.grh.sgid_index = 1;
	WEFT_ASSERT_OK(t, x.a.send(x.client, x.req));
	Mad resp = x.req.mad; /* with the TID send() gave it */
	resp.hdr().method.set(iba::method::get_resp);
	MadAddr from = x.lb.self;
	const uint64_t dropped = x.a.dropped();
	x.a.receive(resp, from);
	WEFT_EXPECT_EQ(t, x.a.dropped(), dropped + 1);
	from.global = true;
	from.grh.sgid_index = 0;
	x.a.receive(resp, from);
	WEFT_EXPECT_EQ(t, x.a.dropped(), dropped + 2);
	WEFT_EXPECT_EQ(t, x.qh.done.load(Order::Acquire), 0);
	from.grh.sgid_index = 1;
	x.a.receive(resp, from);
	WEFT_EXPECT_EQ(t, x.a.dropped(), dropped + 2);
	WEFT_ASSERT_TRUE(t, wait_done(x.qh.done, 1));
	WEFT_EXPECT_EQ(t, x.qh.last_status, 0);

	x.make_get(cls, 1, 5000, 0);
	x.req.to = x.lb.self; /* no GRH */
	WEFT_ASSERT_OK(t, x.a.send(x.client, x.req));
	resp = x.req.mad;
	resp.hdr().method.set(iba::method::get_resp);
	x.a.receive(resp, from); /* with a GRH */
	WEFT_EXPECT_EQ(t, x.a.dropped(), dropped + 3);
	x.a.receive(resp, x.lb.self);
	WEFT_ASSERT_TRUE(t, wait_done(x.qh.done, 2));
	WEFT_EXPECT_EQ(t, x.qh.last_status, 0);
	WEFT_EXPECT_EQ(t, x.a.dropped(), dropped + 3);
	teardown(x);
}

/* IBA 13.4.7: a Get nobody serves is answered with the reason. */
void unserved_requests_answered(Test &t)
{
	auto f = fixture();
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	x.make_get(iba::mgmt_class::cm, 2, 100, 0); /* nobody serves the class */
	WEFT_ASSERT_OK(t, x.a.send(x.client, x.req));
	WEFT_ASSERT_TRUE(t, wait_done(x.qh.done, 1));
	WEFT_EXPECT_EQ(t, x.qh.resp_status, uint16_t(2 << 2)); /* method not supported */
	x.make_get(cls, 3, 100, 0); /* the class is served, in version 1 only */
	WEFT_ASSERT_OK(t, x.a.send(x.client, x.req));
	WEFT_ASSERT_TRUE(t, wait_done(x.qh.done, 2));
	WEFT_EXPECT_EQ(t, x.qh.resp_status, uint16_t(1 << 2)); /* bad version */
	/* A request of another base version is not answered at all. */
	uint64_t dropped = x.b.dropped();
	Mad odd = x.req.mad;
	odd.hdr().base_version.set(2);
	x.b.receive(odd, x.la.self);
	WEFT_EXPECT_EQ(t, x.b.dropped(), dropped + 1);
	teardown(x);
}

void retries_then_timeout(Test &t)
{
	auto f = fixture();
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	/* Two lost, the third try answered. */
	x.make_get(cls, 1, 200, 3); /* long enough for the answer to the third try, however slow */
	x.la.drop = 2;
	WEFT_ASSERT_OK(t, x.a.send(x.client, x.req));
	WEFT_ASSERT_TRUE(t, wait_done(x.qh.done, 1));
	WEFT_EXPECT_EQ(t, x.qh.last_status, 0);
	WEFT_EXPECT_EQ(t, x.la.sent.load(Order::Relaxed), 3u);
	/* All lost: the first send and two retries, then ETIMEDOUT. */
	x.la.sent.store(0, Order::Relaxed);
	x.la.drop = 1000;
	x.make_get(cls, 1, 20, 2);
	WEFT_ASSERT_OK(t, x.a.send(x.client, x.req));
	WEFT_ASSERT_TRUE(t, wait_done(x.qh.done, 2));
	WEFT_EXPECT_EQ(t, x.qh.last_status, int(err::ETIMEDOUT));
	WEFT_EXPECT_EQ(t, x.la.sent.load(Order::Relaxed), 3u);
	x.la.drop = 0;
	teardown(x);
}

void unregister_cancels(Test &t)
{
	auto f = fixture();
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	x.la.drop = 1000;
	x.make_get(cls, 1, 50, 5);
	WEFT_ASSERT_OK(t, x.a.send(x.client, x.req));
	x.a.unregister_agent(x.client);
	/* Cancelled before unregistration returned ... */
	WEFT_EXPECT_EQ(t, x.qh.done.load(Order::Acquire), 1);
	WEFT_EXPECT_EQ(t, x.qh.last_status, int(err::ECANCELED));
	/* ... and nothing after it, not even when the retries would have run out. */
	weft_msleep(400);
	WEFT_EXPECT_EQ(t, x.qh.done.load(Order::Acquire), 1);
	WEFT_EXPECT_ERR(t, x.a.send(x.client, x.req), err::EINVAL);
	x.b.unregister_agent(x.server);
}

/* IBA 13.4.9: vendor classes 0x30-0x4f are served per OUI. */
void vendor_classes_by_oui(Test &t)
{
	auto f = fixture();
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	constexpr uint8_t vendor = 0x32;
	Responder r1, r2;
	r1.svc = r2.svc = &x.b;
	Agent v1(r1, vendor, 1), v2(r2, vendor, 1), same(r2, vendor, 1), asker(x.qh, vendor, 1);
	v1.oui = same.oui = 0x001405;
	v2.oui = 0x0002c9;
	v1.add_method(iba::method::get);
	v2.add_method(iba::method::get);
	same.add_method(iba::method::get);
	WEFT_ASSERT_OK(t, x.b.register_agent(v1));
	WEFT_ASSERT_OK(t, x.b.register_agent(v2)); /* another OUI: no conflict */
	WEFT_EXPECT_ERR(t, x.b.register_agent(same), err::EBUSY);
	WEFT_ASSERT_OK(t, x.a.register_agent(asker));
	const uint32_t ouis[] = {0x001405, 0x0002c9, 0x123456};
	for (int i = 0; i < 3; i++) {
		x.make_get(vendor, 1, 500, 0);
		auto &v = *reinterpret_cast<iba::VendorHeader *>(x.req.mad.bytes);
		iba::VendorHeader::Oui::set(v.oui_word, ouis[i]);
		WEFT_ASSERT_OK(t, x.a.send(asker, x.req));
		WEFT_ASSERT_TRUE(t, wait_done(x.qh.done, i + 1));
		WEFT_EXPECT_EQ(t, x.qh.last_status, 0);
	}
	WEFT_EXPECT_EQ(t, r1.requests, 1);
	WEFT_EXPECT_EQ(t, r2.requests, 1);
	/* Nobody has the third OUI: the class is served, the method for it is not. */
	WEFT_EXPECT_EQ(t, x.qh.resp_status, uint16_t(2 << 2));
	x.a.unregister_agent(asker);
	x.b.unregister_agent(v1);
	x.b.unregister_agent(v2);
	teardown(x);
}

/* Answers the first request with "redirect" to LID 9, QP 7, Q_Key 0x1234, the next ones as Responder. */
struct Redirector final : AgentHandler {
	MadService *svc = nullptr;
	int requests = 0;
	void recv(Agent &a, const Mad &m, const MadAddr &from) override
	{
		auto r = make_own<SendReq>(Gfp::Sleep);
		if (!r)
			return;
		SendReq &req = *r.value();
		req.mad = m;
		req.mad.hdr().method.set(iba::method::get_resp);
		req.to = from;
		if (requests++ == 0) {
			req.mad.hdr().status.set(0x0002);
			/* IBA 16.1.1: PerfMgt data, and so its ClassPortInfo, starts at byte 64. */
			auto &cpi = *reinterpret_cast<iba::ClassPortInfo *>(req.mad.bytes + 64);
			cpi.redirect_lid.set(9);
			iba::ClassPortInfo::Qp::set(cpi.redirect_qp, 7);
			cpi.redirect_qkey.set(0x1234);
		} else {
			req.mad.hdr().attr_mod.set(m.hdr().attr_mod.get() + 1);
		}
		(void)svc->send(a, req);
	}
	void send_done(Agent &, SendReq &) override {}
};

/* IBA 13.5.3.3: a redirect answer sends the request on to where it names; the owner sees the final answer. */
void redirect_followed(Test &t)
{
	auto f = fixture();
	WEFT_ASSERT_OK(t, f);
	Fixture &x = *f.value();
	x.b.unregister_agent(x.server);
	Redirector rd;
	rd.svc = &x.b;
	Agent redirecting(rd, cls, 1);
	redirecting.add_method(iba::method::get);
	WEFT_ASSERT_OK(t, x.b.register_agent(redirecting));
	x.make_get(cls, 1, 500, 0);
	x.req.to = MadAddr{2, 1, 0x80010000, 0, 0};
	WEFT_ASSERT_OK(t, x.a.send(x.client, x.req));
	WEFT_ASSERT_TRUE(t, wait_done(x.qh.done, 1));
	WEFT_EXPECT_EQ(t, x.qh.last_status, 0);
	WEFT_EXPECT_EQ(t, x.qh.resp_status, uint16_t(0));
	WEFT_EXPECT_EQ(t, x.qh.resp_mod, 42u);
	WEFT_EXPECT_EQ(t, rd.requests, 2);
	WEFT_EXPECT_EQ(t, x.la.sent.load(Order::Relaxed), 2u);
	WEFT_EXPECT_EQ(t, x.la.last_to.lid, uint16_t(9));
	WEFT_EXPECT_EQ(t, x.la.last_to.qpn, 7u);
	WEFT_EXPECT_EQ(t, x.la.last_to.qkey, 0x1234u);
	x.a.unregister_agent(x.client);
	x.b.unregister_agent(redirecting);
}

} // namespace

WEFT_TEST_SUITE(weft_mad_service, WEFT_CASE(registration_rules), WEFT_CASE(request_matched_by_tid),
		WEFT_CASE(response_matched_by_route),
		WEFT_CASE(unserved_requests_answered), WEFT_CASE(retries_then_timeout),
		WEFT_CASE(unregister_cancels), WEFT_CASE(vendor_classes_by_oui), WEFT_CASE(redirect_followed));
