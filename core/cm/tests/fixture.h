/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit support for the CM suites: an active side on weft0 and a passive
 * side on weft1 (the default subnet, through the soft switch), each with
 * an RC QP, a handler that records CM events, and a path record built
 * from the ports as the SA would give it.  Faults on the cables come from
 * the soft fabric's knobs (drivers/hca/faults.h).
 */
#ifndef WEFT_CM_TESTS_FIXTURE_H
#define WEFT_CM_TESTS_FIXTURE_H

#include <weft/atomic.h>
#include <weft/cm/cm.h>
#include <weft/test.h>
#include <weft/verbs/test_pair.h>

#include "../../../drivers/hca/hca.h"

namespace weft::cm::testing {

using verbs::testing::Side;

inline constexpr uint64_t service = 0x1000000000000abcull;

/* Records what the CM tells one side; on Request, does what @on_request says. */
struct Recorder final : Handler {
	enum class OnRequest : uint8_t { Accept, Reject, Mra, Hold, Refuse };

	Atomic<int> counts[16];
	uint16_t reason = 0;
	uint8_t pdata[iba::cm::pdata::rtu] = {};
	size_t pdata_len = 0, ari_len = 0;
	uint8_t ari[72] = {};
	RequestInfo req{};
	uint8_t req_pdata[iba::cm::pdata::req] = {};
	size_t req_pdata_len = 0;
	SidrInfo sidr{};
	Id *passive = nullptr; /* the Id the last Request brought */
	Id *sidr_passive = nullptr;
	Id *passives[128] = {};
	int npassive = 0;

	OnRequest on_request = OnRequest::Accept;
	int accept_errno = 0; /* the last accept() that failed */
	verbs::Qp *accept_qp = nullptr;
	verbs::Qp *accept_qps[128] = {};
	AcceptParam accept;
	/* Arm this port to drop its next @drop_next packets when a Request arrives. */
	hca::Port *drop_port = nullptr;
	uint32_t drop_next = 0;

	int event(const Event &e) override
	{
		switch (e.type) {
		case EventType::Request: return on_req(e);
		case EventType::Rejected:
			reason = e.reason;
			ari_len = e.ari.size();
			__builtin_memcpy(ari, e.ari.data(), e.ari.size());
			break;
		case EventType::SidrRequest:
		case EventType::SidrReply: sidr = *e.sidr; break;
		default: break;
		}
		if (e.type == EventType::SidrRequest)
			sidr_passive = e.id;
		record(e);
		return 0;
	}

	int seen(EventType t) const { return counts[int(t)].load(Order::Acquire); }
	/*
	 * Handlers run from work items: wait up to @ms for @want events of @t.
	 * The bound only ends a failing test; it is generous because a loaded
	 * host running the debug kernel under TCG can be very slow.
	 */
	bool wait(EventType t, int want = 1, int ms = 30000) const
	{
		for (int i = 0; i < ms && seen(t) < want; i++)
			weft_msleep(1);
		return seen(t) >= want;
	}

private:
	void record(const Event &e)
	{
		pdata_len = e.private_data.size();
		__builtin_memcpy(pdata, e.private_data.data(), pdata_len);
		counts[int(e.type)].fetch_add(1, Order::Release);
	}

	int on_req(const Event &e)
	{
		req = *e.req;
		req_pdata_len = e.private_data.size();
		__builtin_memcpy(req_pdata, e.private_data.data(), req_pdata_len);
		int n = npassive;
		if (drop_port)
			drop_port->faults().set_count(hca::FaultKind::Drop, drop_next);
		int ret = 0;
		switch (on_request) {
		case OnRequest::Accept: {
			AcceptParam a = accept;
			a.qp = n < 128 && accept_qps[n] ? accept_qps[n] : accept_qp;
			auto r = cm::accept(*e.id, a);
			if (!r) {
				accept_errno = r.error().code();
				ret = -1;
			}
			break;
		}
		case OnRequest::Reject: {
			static const uint8_t why[] = {'n', 'o', 'p', 'e'};
			(void)cm::reject(*e.id, iba::cm::rej::consumer, ConstBytes(why, 4), ConstBytes(why, 4));
			break;
		}
		case OnRequest::Mra: (void)send_mra(*e.id, 20); break; /* 4.3 s */
		case OnRequest::Hold: break;
		case OnRequest::Refuse: ret = -1; break;
		}
		/* Ids the handler had destroyed (ret < 0) are not ours to destroy again. */
		if (ret == 0 && n < 128) {
			passive = e.id;
			passives[npassive++] = e.id;
		}
		record(e);
		return ret;
	}
};

/* weft0 (active) and weft1 (passive), a listener on weft1, an Id on weft0. */
struct Pair {
	Side a, b;
	Recorder ra, rb;
	Id *active = nullptr, *listener = nullptr;

	~Pair()
	{
		if (active)
			destroy(active);
		for (int i = 0; i < rb.npassive; i++)
			destroy(rb.passives[i]);
		if (rb.sidr_passive)
			destroy(rb.sidr_passive);
		if (listener)
			destroy(listener);
		hca::Port *ports[] = {port_of(a), port_of(b)};
		for (hca::Port *p : ports)
			if (p)
				p->faults().clear();
	}

	static hca::Port *port_of(Side &s) { return s.dev ? static_cast<hca::Hca &>(*s.dev).port(1) : nullptr; }

	Result<void> open()
	{
		WEFT_TRY(a.open("weft0", verbs::QpType::Rc, verbs::access::all & ~verbs::access::mw_bind));
		WEFT_TRY(b.open("weft1", verbs::QpType::Rc, verbs::access::all & ~verbs::access::mw_bind));
		rb.accept_qp = b.qp;
		listener = WEFT_TRY(create_id(*b.dev, rb, nullptr));
		WEFT_TRY(listen(*listener, service));
		active = WEFT_TRY(create_id(*a.dev, ra, nullptr));
		return ok();
	}

	/* The path weft0 -> weft1 as an SA would answer (IBA 15.2.5.16). */
	iba::PathRecord path() const
	{
		iba::PathRecord pr{};
		auto sg = a.dev->query_gid(1, 0), dg = b.dev->query_gid(1, 0);
		if (sg)
			__builtin_memcpy(pr.sgid, sg.value().raw, 16);
		if (dg)
			__builtin_memcpy(pr.dgid, dg.value().raw, 16);
		pr.slid.set(a.lid);
		pr.dlid.set(b.lid);
		pr.pkey.set(0xffff);
		iba::PathRecord::Value::set(pr.mtu, static_cast<uint8_t>(iba::Mtu::M2048));
		iba::PathRecord::Value::set(pr.pkt_life, 2);
		return pr;
	}

	ConnectParam param() const
	{
		ConnectParam p;
		p.qp = a.qp;
		p.path = path();
		p.service_id = service;
		/*
		 * 4.096 us * 2^16 = 268 ms to answer, 15 retries: a loaded host's
		 * slow peer never makes a connect time out (16 ms and 3 retries
		 * did, on the debug kernel).  Tests about retries set their own.
		 */
		p.local_cm_response_timeout = p.remote_cm_response_timeout = 16;
		p.max_cm_retries = 15;
		return p;
	}

	/* One SEND a -> b over the connected QPs, checked on both sides. */
	Result<void> send_one(uint32_t value)
	{
		uint32_t in = 0, out = value;
		WEFT_TRY(verbs::testing::post_recv_one(b, &in, sizeof(in), 7));
		verbs::Sge sg{reinterpret_cast<uint64_t>(&out), sizeof(out), a.mr->lkey};
		verbs::SendWr wr;
		wr.opcode = verbs::WrOpcode::Send;
		wr.sg = Span<const verbs::Sge>(&sg, 1);
		WEFT_TRY(a.qp->post_send(wr));
		auto wa = WEFT_TRY(verbs::testing::wait_wc(a.cq));
		auto wb = WEFT_TRY(verbs::testing::wait_wc(b.cq));
		if (wa.status != verbs::WcStatus::Success || wb.status != verbs::WcStatus::Success || in != value)
			return Error(err::EIO);
		return ok();
	}
};

/*
 * Ids alive once none lingers: the ones the tests' owners hold.  A test's
 * destroyed Ids stay in DREQ retries, time-wait and the reaper's queue
 * after it returns, longer the slower the host, so counts are taken only
 * after each of those was freed: settle() waits for those events, and
 * gives up only after a quiet spell far longer than any time-wait here.
 */
inline constexpr uint32_t settle_quiet_ms = 60000;

inline uint32_t settled_ids()
{
	(void)settle(settle_quiet_ms);
	return stats().ids;
}

/* A Pair, opened: listener on weft1, Id on weft0. */
inline Result<Own<Pair>> ready()
{
	auto px = WEFT_TRY(make_own<Pair>(Gfp::Sleep));
	WEFT_TRY(px->open());
	return px;
}

} // namespace weft::cm::testing

#endif
