// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the PMA (drivers/hca/pma.cpp) through Device::process_mad: each
 * attribute's Get, the counter mapping and its saturation on a private
 * two-port HCA, Sets clearing only what CounterSelect names (seen by
 * query_counters too, the sysfs source), bad requests answered with IBA
 * 13.4.7 statuses, and counters growing with real RC traffic between
 * weft0 and weft1 of the default subnet.
 */
#include <weft/iba/pma.h>
#include <weft/iba/smp_attrs.h>
#include <weft/test.h>
#include <weft/verbs/test_pair.h>

#include "../hca.h"
#include "../pma.h"
#include "sink.h"

using namespace weft;
using namespace weft::hca;
using namespace weft::iba;
using weft::test::Test;
using verbs::MadOutcome;
using verbs::testing::Buf;
using verbs::testing::Pair;

namespace {

/* A PerfMgt request and its response, on the heap. */
struct PmaPair {
	PmaMad req, resp;

	void request(uint8_t mth, uint16_t attr, uint8_t port_select = 0, uint16_t select = 0)
	{
		req = PmaMad{};
		req.hdr.base_version.set(1);
		req.hdr.mgmt_class.set(mgmt_class::perf);
		req.hdr.class_version.set(pma_class_version);
		req.hdr.method.set(mth);
		req.hdr.tid.set(0x5678);
		req.hdr.attr_id.set(attr);
		/* PortSelect and CounterSelect sit alike in both counter attributes. */
		auto &pc = *reinterpret_cast<iba::PortCounters *>(req.data);
		pc.port_select.set(port_select);
		pc.counter_select.set(select);
	}
	MadOutcome ask(verbs::Device &dev, uint8_t port)
	{
		verbs::MadIn in;
		in.port = port;
		resp = PmaMad{};
		return dev.process_mad(in, reinterpret_cast<const uint8_t *>(&req), reinterpret_cast<uint8_t *>(&resp));
	}
	/* Get or Set @attr of @port_select through arrival port @port: the status (0xffff: no reply). */
	uint16_t run(verbs::Device &dev, uint8_t port, uint8_t mth, uint16_t attr, uint8_t port_select,
		     uint16_t select = 0)
	{
		request(mth, attr, port_select, select);
		return ask(dev, port) == MadOutcome::Reply ? resp.hdr.status.get() : 0xffff;
	}
	const iba::PortCounters &pc() const { return *reinterpret_cast<const iba::PortCounters *>(resp.data); }
	const PortCountersExt &pcx() const { return *reinterpret_cast<const PortCountersExt *>(resp.data); }
	const ClassPortInfo &cpi() const { return *reinterpret_cast<const ClassPortInfo *>(resp.data); }
};

/* A private two-port HCA beside the default subnet, and a MAD pair. */
struct Rig {
	Hca *h = nullptr;
	PmaPair m;

	Result<void> up()
	{
		h = WEFT_TRY(Hca::create(2));
		Fabric::get().add(*h);
		return ok();
	}
	~Rig()
	{
		if (h) {
			Fabric::get().remove(*h);
			h->put();
		}
	}
	hca::PortCounters &c(uint8_t port) { return h->port(port)->counters; }
};

Result<Own<Rig>> rig()
{
	auto r = WEFT_TRY(make_own<Rig>(Gfp::Sleep));
	WEFT_TRY(r->up());
	return r;
}

void class_port_info(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	WEFT_ASSERT_EQ(t, r.m.run(*r.h, 1, method::get, pma_attr::class_port_info, 0), uint16_t(0));
	WEFT_EXPECT_EQ(t, r.m.resp.hdr.method.get(), method::get_resp);
	WEFT_EXPECT_EQ(t, r.m.resp.hdr.tid.get(), uint64_t(0x5678));
	const ClassPortInfo &cpi = r.m.cpi();
	WEFT_EXPECT_EQ(t, cpi.base_version.get(), uint8_t(1));
	WEFT_EXPECT_EQ(t, cpi.class_version.get(), uint8_t(1));
	WEFT_EXPECT_EQ(t, cpi.capability_mask.get(), uint16_t(pma_cap::all_port_select | pma_cap::ext_width));
	WEFT_EXPECT_EQ(t, ClassPortInfo::CapabilityMask2::get(cpi.cap2_resp_time), 0u);
	WEFT_EXPECT_TRUE(t, ClassPortInfo::RespTimeValue::get(cpi.cap2_resp_time) != 0);
	WEFT_EXPECT_EQ(t, cpi.redirect_lid.get(), uint16_t(0)); /* not redirected */
	WEFT_EXPECT_EQ(t, ClassPortInfo::Qp::get(cpi.redirect_qp), 0u);
	/* Nothing in it is settable. */
	WEFT_EXPECT_EQ(t, r.m.run(*r.h, 1, method::set, pma_attr::class_port_info, 0), mad_status::attr_unsupported);
}

/* Port 1 and port 2 with distinct values, some beyond their field's width. */
void load_counters(Rig &r)
{
	hca::PortCounters &a = r.c(1), &b = r.c(2);
	a.link_downed.store(300, Order::Relaxed);
	a.rcv_errors.store(0x12345, Order::Relaxed);
	a.xmit_discards.store(9, Order::Relaxed);
	a.vl15_dropped.store(7, Order::Relaxed);
	a.xmit_words.store(5ull << 32, Order::Relaxed);
	a.rcv_words.store(1000, Order::Relaxed);
	a.xmit_packets.store(40, Order::Relaxed);
	a.rcv_packets.store(50, Order::Relaxed);
	a.unicast_xmit.store(30, Order::Relaxed);
	a.unicast_rcv.store(45, Order::Relaxed);
	a.multicast_xmit.store(10, Order::Relaxed);
	a.multicast_rcv.store(5, Order::Relaxed);
	a.bad_pkey.store(3, Order::Relaxed);
	b.rcv_errors.store(2, Order::Relaxed);
	b.xmit_packets.store(4, Order::Relaxed);
	b.rcv_words.store(0xffffffffull, Order::Relaxed);
}

void port_counters_mapping(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	load_counters(r);
	WEFT_ASSERT_EQ(t, r.m.run(*r.h, 1, method::get, pma_attr::port_counters, 1), uint16_t(0));
	const iba::PortCounters &pc = r.m.pc();
	WEFT_EXPECT_EQ(t, pc.port_select.get(), uint8_t(1));
	WEFT_EXPECT_EQ(t, pc.link_downed.get(), uint8_t(0xff));	     /* 300 saturates */
	WEFT_EXPECT_EQ(t, pc.rcv_errors.get(), uint16_t(0xffff));    /* saturates */
	WEFT_EXPECT_EQ(t, pc.xmit_data.get(), uint32_t(0xffffffff)); /* saturates, never wraps */
	WEFT_EXPECT_EQ(t, pc.xmit_discards.get(), uint16_t(9));
	WEFT_EXPECT_EQ(t, pc.vl15_dropped.get(), uint16_t(7));
	WEFT_EXPECT_EQ(t, pc.rcv_data.get(), uint32_t(1000));
	WEFT_EXPECT_EQ(t, pc.xmit_packets.get(), uint32_t(40));
	WEFT_EXPECT_EQ(t, pc.rcv_packets.get(), uint32_t(50));
	/* Honest zeros: nothing on the soft wire counts these; P_Key violations live in PortInfo. */
	WEFT_EXPECT_EQ(t, pc.symbol_errors.get(), uint16_t(0));
	WEFT_EXPECT_EQ(t, pc.rcv_constraint_errors.get(), uint8_t(0));
	WEFT_EXPECT_EQ(t, pc.link_integrity_overrun.get(), uint8_t(0));
	WEFT_EXPECT_EQ(t, pc.xmit_wait.get(), uint32_t(0));
	/* PortSelect 0 at a CA: the arrival port; 2: port 2 whichever port asked. */
	WEFT_ASSERT_EQ(t, r.m.run(*r.h, 2, method::get, pma_attr::port_counters, 0), uint16_t(0));
	WEFT_EXPECT_EQ(t, r.m.pc().rcv_errors.get(), uint16_t(2));
	WEFT_ASSERT_EQ(t, r.m.run(*r.h, 1, method::get, pma_attr::port_counters, 2), uint16_t(0));
	WEFT_EXPECT_EQ(t, r.m.pc().xmit_packets.get(), uint32_t(4));
	WEFT_EXPECT_EQ(t, r.m.pc().rcv_data.get(), uint32_t(0xffffffff));
	/* 0xFF (AllPortSelect): the sum, saturated after adding. */
	WEFT_ASSERT_EQ(t, r.m.run(*r.h, 1, method::get, pma_attr::port_counters, pma_all_ports), uint16_t(0));
	WEFT_EXPECT_EQ(t, r.m.pc().xmit_packets.get(), uint32_t(44));
	WEFT_EXPECT_EQ(t, r.m.pc().rcv_data.get(), uint32_t(0xffffffff));
}

void port_counters_extended(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	load_counters(r);
	WEFT_ASSERT_EQ(t, r.m.run(*r.h, 1, method::get, pma_attr::port_counters_ext, 1), uint16_t(0));
	const PortCountersExt &x = r.m.pcx();
	WEFT_EXPECT_EQ(t, x.port_select.get(), uint8_t(1));
	WEFT_EXPECT_EQ(t, x.xmit_data.get(), 5ull << 32); /* full width */
	WEFT_EXPECT_EQ(t, x.rcv_data.get(), uint64_t(1000));
	WEFT_EXPECT_EQ(t, x.xmit_packets.get(), uint64_t(40));
	WEFT_EXPECT_EQ(t, x.rcv_packets.get(), uint64_t(50));
	WEFT_EXPECT_EQ(t, x.unicast_xmit_packets.get(), uint64_t(30));
	WEFT_EXPECT_EQ(t, x.unicast_rcv_packets.get(), uint64_t(45));
	WEFT_EXPECT_EQ(t, x.multicast_xmit_packets.get(), uint64_t(10));
	WEFT_EXPECT_EQ(t, x.multicast_rcv_packets.get(), uint64_t(5));
	WEFT_ASSERT_EQ(t, r.m.run(*r.h, 1, method::get, pma_attr::port_counters_ext, pma_all_ports), uint16_t(0));
	WEFT_EXPECT_EQ(t, r.m.pcx().rcv_data.get(), 1000ull + 0xffffffffull);
}

/* A Set clears what CounterSelect names and nothing else, in sysfs's view too. */
void set_clears_selected(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	load_counters(r);
	const uint16_t sel = pc_select::rcv_errors | pc_select::xmit_data | pc_select::symbol_errors;
	WEFT_ASSERT_EQ(t, r.m.run(*r.h, 1, method::set, pma_attr::port_counters, 1, sel), uint16_t(0));
	WEFT_EXPECT_EQ(t, r.m.resp.hdr.method.get(), method::get_resp);
	WEFT_EXPECT_EQ(t, r.m.pc().rcv_errors.get(), uint16_t(0)); /* the response shows the result */
	verbs::PortCounterValues v;
	WEFT_ASSERT_OK(t, r.h->query_counters(1, v));
	WEFT_EXPECT_EQ(t, v.rcv_errors, uint64_t(0));
	WEFT_EXPECT_EQ(t, v.xmit_words, uint64_t(0));
	WEFT_EXPECT_EQ(t, v.rcv_words, uint64_t(1000));
	WEFT_EXPECT_EQ(t, v.xmit_discards, uint64_t(9));
	WEFT_EXPECT_EQ(t, v.link_downed, uint64_t(300));
	WEFT_EXPECT_EQ(t, v.xmit_packets, uint64_t(40));
	WEFT_EXPECT_EQ(t, r.c(2).rcv_errors.load(Order::Relaxed), uint64_t(2)); /* the other port is not touched */
	WEFT_EXPECT_EQ(t, r.c(1).bad_pkey.load(Order::Relaxed), uint64_t(3));  /* PortInfo's, not the PMA's */
	/* PortCountersExtended: only the unicast receive count; its data counters are PortCounters'. */
	WEFT_ASSERT_EQ(t, r.m.run(*r.h, 1, method::set, pma_attr::port_counters_ext, 1, pcx_select::unicast_rcv),
		       uint16_t(0));
	WEFT_EXPECT_EQ(t, r.c(1).unicast_rcv.load(Order::Relaxed), uint64_t(0));
	WEFT_EXPECT_EQ(t, r.c(1).unicast_xmit.load(Order::Relaxed), uint64_t(30));
	WEFT_EXPECT_EQ(t, r.c(1).rcv_packets.load(Order::Relaxed), uint64_t(50));
	/* 0xFF clears every port. */
	WEFT_ASSERT_EQ(t, r.m.run(*r.h, 2, method::set, pma_attr::port_counters, pma_all_ports, 0xffff),
		       uint16_t(0));
	WEFT_EXPECT_EQ(t, r.c(1).rcv_packets.load(Order::Relaxed), uint64_t(0));
	WEFT_EXPECT_EQ(t, r.c(2).xmit_packets.load(Order::Relaxed), uint64_t(0));
	WEFT_EXPECT_EQ(t, r.c(1).multicast_xmit.load(Order::Relaxed), uint64_t(10)); /* PortCounters has no such counter */
}

void bad_requests(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	PmaPair &m = r.m;
	r.c(1).rcv_errors.store(5, Order::Relaxed);
	WEFT_EXPECT_EQ(t, m.run(*r.h, 1, method::get, pma_attr::port_counters, 3), mad_status::invalid_value);
	WEFT_EXPECT_EQ(t, m.run(*r.h, 1, method::set, pma_attr::port_counters, 3, 0xffff), mad_status::invalid_value);
	WEFT_EXPECT_EQ(t, m.run(*r.h, 1, method::get, pma_attr::port_counters_ext, 0xfe), mad_status::invalid_value);
	WEFT_EXPECT_EQ(t, r.c(1).rcv_errors.load(Order::Relaxed), uint64_t(5));
	WEFT_EXPECT_EQ(t, m.run(*r.h, 1, method::get, pma_attr::port_samples_control, 1), mad_status::attr_unsupported);
	WEFT_EXPECT_EQ(t, m.run(*r.h, 1, method::get, 0x7777, 1), mad_status::attr_unsupported);
	WEFT_EXPECT_EQ(t, m.run(*r.h, 1, method::send, pma_attr::port_counters, 1), mad_status::method_unsupported);
	WEFT_EXPECT_EQ(t, m.run(*r.h, 1, method::trap, pma_attr::port_counters, 1), mad_status::method_unsupported);
	/* A modifier where IBA wants 0. */
	m.request(method::get, pma_attr::port_counters, 1);
	m.req.hdr.attr_mod.set(1);
	WEFT_ASSERT_EQ(t, int(m.ask(*r.h, 1)), int(MadOutcome::Reply));
	WEFT_EXPECT_EQ(t, m.resp.hdr.status.get(), mad_status::invalid_value);
	/* Class version 2: answered with bad version; base version 2: dropped. */
	m.request(method::get, pma_attr::port_counters, 1);
	m.req.hdr.class_version.set(2);
	WEFT_ASSERT_EQ(t, int(m.ask(*r.h, 1)), int(MadOutcome::Reply));
	WEFT_EXPECT_EQ(t, m.resp.hdr.status.get(), mad_status::bad_version);
	m.request(method::get, pma_attr::port_counters, 1);
	m.req.hdr.base_version.set(2);
	WEFT_EXPECT_EQ(t, int(m.ask(*r.h, 1)), int(MadOutcome::Consumed));
	/* A response is a performance manager's business, not the agent's. */
	m.request(method::get_resp, pma_attr::port_counters, 1);
	WEFT_EXPECT_EQ(t, int(m.ask(*r.h, 1)), int(MadOutcome::NotMine));
	/* A port the device does not have: not for this device at all. */
	m.request(method::get, pma_attr::port_counters, 1);
	WEFT_EXPECT_EQ(t, int(m.ask(*r.h, 3)), int(MadOutcome::NotMine));
}

/* Real RC traffic from weft0 to weft1 shows in both ends' PortCounters and PortCountersExtended. */
void counters_grow_with_traffic(Test &t)
{
	Pair c;
	WEFT_ASSERT_OK(t, c.connect(verbs::QpType::Rc, Mtu::M4096));
	auto own = make_own<PmaPair>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, own);
	PmaPair &m = *own.value();
	verbs::Device &a = *c.a.dev, &b = *c.b.dev;
	WEFT_ASSERT_EQ(t, m.run(a, 1, method::set, pma_attr::port_counters, 1, 0xffff), uint16_t(0));
	WEFT_ASSERT_EQ(t, m.run(b, 1, method::set, pma_attr::port_counters, 1, 0xffff), uint16_t(0));
	WEFT_ASSERT_EQ(t, m.run(b, 1, method::set, pma_attr::port_counters_ext, 1, 0xff), uint16_t(0));
	constexpr uint32_t len = 64 * 1024; /* 16 packets of 4096 bytes */
	Buf src(len), dst(len);
	WEFT_ASSERT_OK(t, verbs::testing::post_recv_one(c.b, dst.p, len, 1));
	verbs::Sge sg{reinterpret_cast<uint64_t>(src.p), len, c.a.mr->lkey};
	verbs::SendWr wr;
	wr.sg = Span<const verbs::Sge>(&sg, 1);
	WEFT_ASSERT_OK(t, c.a.qp->post_send(wr));
	auto swc = verbs::testing::wait_wc(c.a.cq);
	WEFT_ASSERT_OK(t, swc);
	WEFT_EXPECT_EQ(t, int(swc.value().status), int(verbs::WcStatus::Success));
	WEFT_ASSERT_OK(t, verbs::testing::wait_wc(c.b.cq));
	WEFT_ASSERT_EQ(t, m.run(a, 1, method::get, pma_attr::port_counters, 1), uint16_t(0));
	WEFT_EXPECT_TRUE(t, m.pc().xmit_packets.get() >= 16);
	WEFT_EXPECT_TRUE(t, m.pc().xmit_data.get() >= len / 4);
	WEFT_EXPECT_TRUE(t, m.pc().rcv_packets.get() >= 1); /* the ACK */
	WEFT_ASSERT_EQ(t, m.run(b, 1, method::get, pma_attr::port_counters, 1), uint16_t(0));
	WEFT_EXPECT_TRUE(t, m.pc().rcv_packets.get() >= 16);
	WEFT_EXPECT_TRUE(t, m.pc().rcv_data.get() >= len / 4);
	WEFT_EXPECT_EQ(t, m.pc().rcv_errors.get(), uint16_t(0));
	const uint32_t rcv_data = m.pc().rcv_data.get();
	WEFT_ASSERT_EQ(t, m.run(b, 1, method::get, pma_attr::port_counters_ext, 1), uint16_t(0));
	WEFT_EXPECT_TRUE(t, m.pcx().unicast_rcv_packets.get() >= 16);
	WEFT_EXPECT_TRUE(t, m.pcx().rcv_data.get() >= rcv_data);
}

/*
 * IBA 13.5.3.3: redirected, QP1's answer to any request is the redirect
 * status with the PMA's own QP; a datagram to that QP is answered from it.
 */
void redirect_to_own_qp(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	Port &p1 = *r.h->port(1);
	p1.lid.store(0x21, Order::Relaxed);
	pma::set_redirected(true);
	uint16_t st = r.m.run(*r.h, 1, method::get, pma_attr::port_counters, 1);
	pma::set_redirected(false);
	WEFT_EXPECT_EQ(t, st, mad_status::redirect);
	WEFT_EXPECT_EQ(t, r.m.cpi().redirect_lid.get(), uint16_t(0x21));
	WEFT_EXPECT_EQ(t, ClassPortInfo::Qp::get(r.m.cpi().redirect_qp), pma::redirect_qpn);
	WEFT_EXPECT_EQ(t, r.m.cpi().redirect_qkey.get(), pma::redirect_qkey);
	WEFT_EXPECT_EQ(t, r.m.run(*r.h, 1, method::get, pma_attr::port_counters, 1), uint16_t(0));

	/* A requester's QP 1 at LID 0x22, cabled to port 1, asks the redirect QP. */
	auto sink = make_own<fixture::Sink>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, sink);
	fixture::Sink &asker = *sink.value();
	Fabric &f = Fabric::get();
	f.add(asker);
	/* Off the fabric (cable cut) on every way out, before the sink goes. */
	struct Off {
		Fabric &f;
		Node &n;
		~Off() { f.remove(n); }
	} off{f, asker};
	WEFT_ASSERT_OK(t, f.connect(asker.port_, p1));
	p1.state.store(verbs::PortState::Active, Order::Relaxed);
	r.c(1).xmit_packets.store(0, Order::Relaxed);
	r.m.request(method::get, pma_attr::port_counters, 1);
	PacketSpec s;
	s.dlid = 0x21;
	s.slid = 0x22;
	s.opcode = iba::opcode(Transport::Ud, op::SendOnly);
	s.dqp = pma::redirect_qpn;
	s.sqp = 1;
	s.qkey = pma::redirect_qkey;
	s.payload = ConstBytes(reinterpret_cast<const uint8_t *>(&r.m.req), sizeof(r.m.req));
	auto len = packet_length(s);
	WEFT_ASSERT_OK(t, len);
	for (int on = 0; on < 2; on++) {
		pma::set_redirected(on);
		auto pkt = PacketBuf::alloc(Gfp::Sleep, static_cast<uint32_t>(len.value()));
		WEFT_ASSERT_OK(t, pkt);
		auto n = build(Bytes(pkt.value()->data(), len.value()), s, false);
		WEFT_ASSERT_OK(t, n);
		pkt.value()->len = static_cast<uint32_t>(n.value());
		asker.port_.transmit(pkt.take());
	}
	pma::set_redirected(false);
	/* Off: nobody there.  On: the answer, from the PMA's QP to the asker's QP 1. */
	WEFT_EXPECT_EQ(t, asker.count(), size_t(1));
	Own<PacketBuf> got = asker.take();
	WEFT_ASSERT_TRUE(t, bool(got));
	auto parsed = parse(got->bytes());
	WEFT_ASSERT_OK(t, parsed);
	const Packet &a = parsed.value();
	WEFT_EXPECT_EQ(t, a.lrh->dlid.get(), uint16_t(0x22));
	WEFT_EXPECT_EQ(t, iba::Bth::DestQp::get(a.bth->dqp), 1u);
	WEFT_EXPECT_EQ(t, iba::Deth::SrcQp::get(a.deth->sqp), pma::redirect_qpn);
	const auto &resp = *reinterpret_cast<const PmaMad *>(a.payload.data());
	WEFT_EXPECT_EQ(t, resp.hdr.method.get(), method::get_resp);
	WEFT_EXPECT_EQ(t, resp.hdr.status.get(), uint16_t(0));
	WEFT_EXPECT_EQ(t, r.c(1).no_dest_qp.load(Order::Relaxed), 1ull);
}

} // namespace

WEFT_TEST_SUITE(weft_hca_pma, WEFT_CASE(class_port_info), WEFT_CASE(port_counters_mapping),
		WEFT_CASE(port_counters_extended), WEFT_CASE(set_clears_selected), WEFT_CASE(bad_requests),
		WEFT_CASE(counters_grow_with_traffic), WEFT_CASE(redirect_to_own_qp));
