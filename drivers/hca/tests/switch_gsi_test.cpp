// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the switch's GSI (drivers/hca/switch_gsi.cpp) on a private
 * switch, with a recording node as the performance manager's CA port:
 * PerfMgt GMPs to the switch's LID are answered from QP1 back to the
 * sender's QP through the LFT; PortSelect names any external port, port
 * 0 and all ports; a Set clears; the QP1 checks (Q_Key, P_Key, QP number)
 * drop and count; other classes get "unsupported"; forwarded packets
 * count unicast on both ports, unroutable ones a relay error; a GMP with
 * a GRH to port 0's GID is answered through a GRH back to the sender's.
 */
#include <weft/iba/pma.h>
#include <weft/test.h>

#include "../switch.h"
#include "../trap.h"
#include "sample_packet.h"
#include "sink.h"

using namespace weft;
using namespace weft::hca;
using namespace weft::iba;
using weft::hca::fixture::Sink;
using weft::test::Test;

namespace {

constexpr uint16_t pm_lid = 7, sw_lid = 0x20, peer_lid = 9;
constexpr uint32_t pm_qp = 0x55;

/* A 4-port switch at sw_lid, the manager's port on its port 1 and a peer on port 2, all ACTIVE. */
struct Rig {
	Sink pm, peer;
	Switch *sw = nullptr;
	PmaMad req{}, resp{};
	Lrh lrh{};
	Bth bth{};
	Deth deth{};
	Grh grh{};
	bool global = false; /* the answer had a GRH (in grh) */
	/* Set: requests go with a GRH from this GID to dgid. */
	const uint8_t *sgid = nullptr, *dgid = nullptr;

	Result<void> up()
	{
		Fabric &f = Fabric::get();
		sw = WEFT_TRY(Switch::create(4));
		f.add(pm);
		f.add(peer);
		f.add(*sw);
		WEFT_TRY(f.connect(pm.port_, *sw->port(1)));
		WEFT_TRY(f.connect(peer.port_, *sw->port(2)));
		for (uint8_t p = 1; p <= 2; p++)
			sw->port(p)->set_link(verbs::PhysState::LinkUp, verbs::PortState::Active);
		sw->port(0)->lid.store(sw_lid, Order::Relaxed);
		sw->set_lft(pm_lid, 1);
		sw->set_lft(peer_lid, 2);
		return ok();
	}
	~Rig()
	{
		Fabric &f = Fabric::get();
		f.remove(pm);
		f.remove(peer);
		if (sw) {
			f.remove(*sw);
			sw->put();
		}
	}
	void request(uint8_t mth, uint16_t attr, uint8_t port_select = 1, uint16_t select = 0)
	{
		req = PmaMad{};
		req.hdr.base_version.set(1);
		req.hdr.mgmt_class.set(mgmt_class::perf);
		req.hdr.class_version.set(pma_class_version);
		req.hdr.method.set(mth);
		req.hdr.tid.set(0x4242);
		req.hdr.attr_id.set(attr);
		auto &pc = *reinterpret_cast<iba::PortCounters *>(req.data);
		pc.port_select.set(port_select);
		pc.counter_select.set(select);
	}
	/* Send req from the manager's port as a GMP (UD SEND ONLY) to @dqp with @qkey and @pkey. */
	Result<void> send(uint32_t dqp = gsi_qpn, uint32_t qkey = gsi_qkey, uint16_t pkey = 0xffff,
			  uint16_t dlid = sw_lid)
	{
		PacketSpec s;
		s.dlid = dlid;
		s.slid = pm_lid;
		s.sl = 3;
		s.opcode = iba::opcode(Transport::Ud, op::SendOnly);
		s.pkey = pkey;
		s.dqp = dqp;
		s.sqp = pm_qp;
		s.qkey = qkey;
		s.sgid = sgid;
		s.dgid = dgid;
		s.tclass = 0x44;
		s.flow = 0x9abcd;
		s.hoplmt = 7;
		s.payload = ConstBytes(reinterpret_cast<const uint8_t *>(&req), sizeof(req));
		size_t len = WEFT_TRY(packet_length(s));
		auto pkt = WEFT_TRY(PacketBuf::alloc(Gfp::Sleep, static_cast<uint32_t>(len)));
		pkt->len = static_cast<uint32_t>(WEFT_TRY(build(Bytes(pkt->data(), len), s)));
		pkt->sealed = true;
		pm.port_.transmit(move(pkt));
		return ok();
	}
	/* The answer the manager's port got (into resp and its headers), if any. */
	bool answered()
	{
		Own<PacketBuf> b = pm.take();
		if (!b)
			return false;
		auto p = parse(b->bytes());
		if (!p || !p.value().deth || p.value().payload.size() != sizeof(PmaMad))
			return false;
		__builtin_memcpy(&resp, p.value().payload.data(), sizeof(resp));
		lrh = *p.value().lrh;
		bth = *p.value().bth;
		deth = *p.value().deth;
		global = p.value().grh;
		if (global)
			grh = *p.value().grh;
		return true;
	}
	/* Ask and return the answer's status (0xffff: no answer). */
	uint16_t ask(uint8_t mth, uint16_t attr, uint8_t port_select, uint16_t select = 0)
	{
		request(mth, attr, port_select, select);
		if (!send() || !answered())
			return 0xffff;
		return resp.hdr.status.get();
	}
	const iba::PortCounters &pc() const { return *reinterpret_cast<const iba::PortCounters *>(resp.data); }
	hca::PortCounters &c(uint8_t port) { return sw->port(port)->counters; }
};

Result<Own<Rig>> rig()
{
	auto r = WEFT_TRY(make_own<Rig>(Gfp::Sleep));
	WEFT_TRY(r->up());
	return r;
}

/* IBA 13.5.1, 16.1: ClassPortInfo from the switch's QP1, back to the asker's QP through the LFT. */
void class_port_info_from_qp1(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	WEFT_ASSERT_EQ(t, r.ask(method::get, pma_attr::class_port_info, 0), uint16_t(0));
	WEFT_EXPECT_EQ(t, r.resp.hdr.method.get(), method::get_resp);
	WEFT_EXPECT_EQ(t, r.resp.hdr.tid.get(), uint64_t(0x4242));
	const auto &cpi = *reinterpret_cast<const ClassPortInfo *>(r.resp.data);
	WEFT_EXPECT_EQ(t, cpi.capability_mask.get(), uint16_t(pma_cap::all_port_select | pma_cap::ext_width));
	WEFT_EXPECT_EQ(t, r.lrh.dlid.get(), pm_lid);
	WEFT_EXPECT_EQ(t, r.lrh.slid.get(), sw_lid);
	WEFT_EXPECT_EQ(t, Lrh::Vl::get(r.lrh.vl_lver), uint8_t(0));
	WEFT_EXPECT_EQ(t, Lrh::Sl::get(r.lrh.sl_lnh), uint8_t(3));
	WEFT_EXPECT_EQ(t, Bth::DestQp::get(r.bth.dqp), pm_qp);
	WEFT_EXPECT_EQ(t, Deth::SrcQp::get(r.deth.sqp), gsi_qpn);
	WEFT_EXPECT_EQ(t, r.deth.qkey.get(), gsi_qkey);
	WEFT_EXPECT_EQ(t, r.bth.pkey.get(), uint16_t(0xffff));
	/* The request and the answer crossed port 1: unicast both ways. */
	WEFT_EXPECT_EQ(t, r.c(1).unicast_rcv.load(Order::Relaxed), uint64_t(1));
	WEFT_EXPECT_EQ(t, r.c(1).unicast_xmit.load(Order::Relaxed), uint64_t(1));
	WEFT_EXPECT_FALSE(t, r.answered());
}

/* IBA 16.1.3.5: PortSelect 1..N, 0 (the management port) and 0xFF; a Set clears what CounterSelect names. */
void port_counters_by_port_select(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	r.c(3).rcv_errors.store(5, Order::Relaxed);
	r.c(4).rcv_errors.store(2, Order::Relaxed);
	r.c(0).vl15_dropped.store(4, Order::Relaxed);
	WEFT_ASSERT_EQ(t, r.ask(method::get, pma_attr::port_counters, 3), uint16_t(0));
	WEFT_EXPECT_EQ(t, r.pc().port_select.get(), uint8_t(3));
	WEFT_EXPECT_EQ(t, r.pc().rcv_errors.get(), uint16_t(5));
	WEFT_ASSERT_EQ(t, r.ask(method::get, pma_attr::port_counters, 0), uint16_t(0));
	WEFT_EXPECT_EQ(t, r.pc().vl15_dropped.get(), uint16_t(4));
	WEFT_EXPECT_EQ(t, r.pc().rcv_errors.get(), uint16_t(0));
	WEFT_ASSERT_EQ(t, r.ask(method::get, pma_attr::port_counters, pma_all_ports), uint16_t(0));
	WEFT_EXPECT_EQ(t, r.pc().rcv_errors.get(), uint16_t(7));
	/* Port 1 carried the earlier requests in, their answers out. */
	WEFT_EXPECT_GE(t, r.pc().rcv_packets.get(), uint32_t(3));
	WEFT_EXPECT_EQ(t, r.ask(method::get, pma_attr::port_counters, 5), mad_status::invalid_value);
	WEFT_EXPECT_EQ(t, r.ask(method::set, pma_attr::port_counters, pma_all_ports, pc_select::rcv_errors),
			uint16_t(0));
	WEFT_EXPECT_EQ(t, r.pc().rcv_errors.get(), uint16_t(0));
	WEFT_EXPECT_EQ(t, r.c(3).rcv_errors.load(Order::Relaxed), uint64_t(0));
	WEFT_EXPECT_EQ(t, r.c(4).rcv_errors.load(Order::Relaxed), uint64_t(0));
	WEFT_EXPECT_EQ(t, r.ask(method::get, pma_attr::port_counters_ext, 1), uint16_t(0));
}

/* IBA 13.5.1 and 10.9.3: QP1's checks drop and count; 13.4.7: other classes are unsupported. */
void qp1_checks_and_other_classes(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	hca::PortCounters &mp = r.c(0);
	r.request(method::get, pma_attr::class_port_info);
	WEFT_ASSERT_OK(t, r.send(gsi_qpn, 0x1234));
	WEFT_EXPECT_FALSE(t, r.answered());
	WEFT_EXPECT_EQ(t, mp.bad_qkey.load(Order::Relaxed), uint64_t(1));
	WEFT_ASSERT_OK(t, r.send(gsi_qpn, gsi_qkey, 0x8005));
	WEFT_EXPECT_FALSE(t, r.answered());
	WEFT_EXPECT_EQ(t, mp.bad_pkey.load(Order::Relaxed), uint64_t(1));
	WEFT_ASSERT_OK(t, r.send(2));
	WEFT_EXPECT_FALSE(t, r.answered());
	WEFT_EXPECT_EQ(t, mp.no_dest_qp.load(Order::Relaxed), uint64_t(1));
	/* A response is for a manager, not for the switch. */
	r.request(method::get_resp, pma_attr::class_port_info);
	WEFT_ASSERT_OK(t, r.send());
	WEFT_EXPECT_FALSE(t, r.answered());
	/* DevMgt Get: no agent here. */
	r.request(method::get, pma_attr::class_port_info);
	r.req.hdr.mgmt_class.set(mgmt_class::dev_mgt);
	WEFT_ASSERT_OK(t, r.send());
	WEFT_ASSERT_TRUE(t, r.answered());
	WEFT_EXPECT_EQ(t, r.resp.hdr.method.get(), method::get_resp);
	WEFT_EXPECT_EQ(t, r.resp.hdr.status.get(), mad_status::method_unsupported);
	/* No route back to the asker: dropped, counted at port 0. */
	r.sw->set_lft(pm_lid, no_port);
	r.request(method::get, pma_attr::class_port_info);
	WEFT_ASSERT_OK(t, r.send());
	WEFT_EXPECT_FALSE(t, r.answered());
	WEFT_EXPECT_EQ(t, mp.xmit_discards.load(Order::Relaxed), uint64_t(1));
}

/*
 * Forwarded unicast counts in the arrival port's PortUnicastRcvPkts and
 * the out port's PortUnicastXmitPkts; what cannot be forwarded, in the
 * arrival port's PortRcvSwitchRelayErrors.
 */
void forwarded_unicast_counted(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	r.request(method::get, pma_attr::class_port_info);
	WEFT_ASSERT_OK(t, r.send(gsi_qpn, gsi_qkey, 0xffff, peer_lid));
	WEFT_EXPECT_EQ(t, r.peer.count(), size_t(1));
	WEFT_EXPECT_EQ(t, r.c(1).unicast_rcv.load(Order::Relaxed), uint64_t(1));
	WEFT_EXPECT_EQ(t, r.c(2).unicast_xmit.load(Order::Relaxed), uint64_t(1));
	WEFT_EXPECT_EQ(t, r.c(2).xmit_packets.load(Order::Relaxed), uint64_t(1));
	WEFT_EXPECT_FALSE(t, r.answered());
	/* IBA 16.1.3.5: no LFT entry for the DLID: a relay error of the arrival port, in PortCounters. */
	WEFT_ASSERT_OK(t, r.send(gsi_qpn, gsi_qkey, 0xffff, 0x33));
	WEFT_EXPECT_EQ(t, r.c(1).switch_relay_errors.load(Order::Relaxed), uint64_t(1));
	WEFT_EXPECT_EQ(t, r.c(1).xmit_discards.load(Order::Relaxed), uint64_t(0));
	WEFT_ASSERT_EQ(t, r.ask(method::get, pma_attr::port_counters, 1), uint16_t(0));
	WEFT_EXPECT_EQ(t, r.pc().rcv_switch_relay_errors.get(), uint16_t(1));
	WEFT_ASSERT_EQ(t, r.ask(method::set, pma_attr::port_counters, 1, pc_select::rcv_switch_relay_errors),
			uint16_t(0));
	WEFT_EXPECT_EQ(t, r.c(1).switch_relay_errors.load(Order::Relaxed), uint64_t(0));
}

/*
 * One packet at the manager's port (the SM here): a notice's trap number
 * (0: not a notice), details and issuer LID; repressed at once so it is
 * not repeated into the next check.
 */
uint16_t repress_notice(Rig &r, PacketBuf &b, uint8_t *details, uint16_t &issuer)
{
	auto p = parse(b.bytes());
	if (!p || !p.value().deth || p.value().payload.size() != mad_size)
		return 0;
	const auto &smp = *reinterpret_cast<const Smp *>(p.value().payload.data());
	if (smp.mgmt_class.get() != mgmt_class::subn_lid_routed || smp.method.get() != method::trap ||
	    smp.attr_id.get() != smp_attr::notice)
		return 0;
	const auto &n = *reinterpret_cast<const Notice *>(smp.data);
	__builtin_memcpy(details, n.data_details, sizeof(n.data_details));
	issuer = n.issuer_lid.get();
	SpinGuardBh g(r.sw->mgmt_lock);
	r.sw->trap_sender()->repressed_locked(*r.sw->port(0), smp.tid.get());
	return n.trap_number.get();
}

/*
 * The trap `want` at the SM within 2 s (0: none came).  Other notices are
 * repressed and passed over: the switch's trap 128 for its ports coming
 * up waits for an SM to be known and may go out first.
 */
uint16_t notice_at_sm(Rig &r, uint16_t want, uint8_t *details, uint16_t &issuer)
{
	for (int i = 0; i < 2000; i++) {
		while (Own<PacketBuf> b = r.pm.take())
			if (repress_notice(r, *b, details, issuer) == want)
				return want;
		weft_msleep(1);
	}
	return 0;
}

uint32_t be32_at(const uint8_t *d) { return uint32_t(d[0]) << 24 | uint32_t(d[1]) << 16 | uint32_t(d[2]) << 8 | d[3]; }

/*
 * IBA 14.2.5.1 traps 258 and 257: with an SM known, a GMP failing QP1's
 * Q_Key or P_Key check is reported from port 0 to the SM: LID1 the
 * sender, LID2 the switch, the 32-bit key (a P_Key in its low half), the
 * sender's SL and QP, QP2 1.
 */
void qp1_key_violations_trapped(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	r.sw->port(0)->sm_lid = pm_lid;
	r.request(method::get, pma_attr::class_port_info);
	WEFT_ASSERT_OK(t, r.send(gsi_qpn, 0x1234));
	uint8_t d[54] = {};
	uint16_t issuer = 0;
	WEFT_ASSERT_EQ(t, notice_at_sm(r, trap::bad_q_key, d, issuer), trap::bad_q_key);
	WEFT_EXPECT_EQ(t, issuer, sw_lid);
	WEFT_EXPECT_EQ(t, uint16_t(d[2] << 8 | d[3]), pm_lid);
	WEFT_EXPECT_EQ(t, uint16_t(d[4] << 8 | d[5]), sw_lid);
	WEFT_EXPECT_EQ(t, be32_at(d + 6), uint32_t(0x1234));
	WEFT_EXPECT_EQ(t, be32_at(d + 10), uint32_t(3) << 28 | pm_qp);
	WEFT_EXPECT_EQ(t, be32_at(d + 14), gsi_qpn);
	WEFT_EXPECT_EQ(t, r.c(0).bad_qkey.load(Order::Relaxed), uint64_t(1));
	WEFT_ASSERT_OK(t, r.send(gsi_qpn, gsi_qkey, 0x8005));
	WEFT_ASSERT_EQ(t, notice_at_sm(r, trap::bad_p_key, d, issuer), trap::bad_p_key);
	WEFT_EXPECT_EQ(t, be32_at(d + 6), uint32_t(0x8005));
	WEFT_EXPECT_EQ(t, r.c(0).bad_pkey.load(Order::Relaxed), uint64_t(1));
	/* A good GMP is answered, and raises nothing. */
	WEFT_ASSERT_OK(t, r.send());
	WEFT_ASSERT_TRUE(t, r.answered());
	WEFT_EXPECT_EQ(t, r.resp.hdr.status.get(), uint16_t(0));
}

/*
 * IBA 8.3.1, 13.5.1: a GMP with a GRH to the switch's GID (port 0's) is
 * answered through a GRH: from that GID back to the sender's, its traffic
 * class and flow label, hop limit 255.  One to another GID is not for
 * this node: dropped, counted at port 0.
 */
void grh_answered_through_grh(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	const verbs::Gid mine = r.sw->query_gid(0, 0).value();
	const verbs::Gid pm = verbs::Gid::make(0xfe80000000000000ull, 0x0200574654009999ull);
	r.sgid = pm.raw;
	r.dgid = mine.raw;
	WEFT_ASSERT_EQ(t, r.ask(method::get, pma_attr::class_port_info, 0), uint16_t(0));
	WEFT_ASSERT_TRUE(t, r.global);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(r.grh.sgid, mine.raw, 16), 0);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(r.grh.dgid, pm.raw, 16), 0);
	WEFT_EXPECT_EQ(t, Grh::TClass::get(r.grh.ver_tclass_flow), uint32_t(0x44));
	WEFT_EXPECT_EQ(t, Grh::FlowLabel::get(r.grh.ver_tclass_flow), uint32_t(0x9abcd));
	WEFT_EXPECT_EQ(t, r.grh.hoplmt.get(), uint8_t(0xff));
	WEFT_EXPECT_EQ(t, Deth::SrcQp::get(r.deth.sqp), gsi_qpn);
	/* To a GID the switch does not have. */
	r.dgid = pm.raw;
	const uint64_t before = r.c(0).no_dest_qp.load(Order::Relaxed);
	WEFT_EXPECT_EQ(t, r.ask(method::get, pma_attr::class_port_info, 0), uint16_t(0xffff));
	WEFT_EXPECT_EQ(t, r.c(0).no_dest_qp.load(Order::Relaxed), before + 1);
	/* Without a GRH, none back. */
	r.sgid = r.dgid = nullptr;
	WEFT_ASSERT_EQ(t, r.ask(method::get, pma_attr::class_port_info, 0), uint16_t(0));
	WEFT_EXPECT_FALSE(t, r.global);
}

} // namespace

WEFT_TEST_SUITE(weft_hca_switch_gsi, WEFT_CASE(class_port_info_from_qp1), WEFT_CASE(port_counters_by_port_select),
		WEFT_CASE(qp1_checks_and_other_classes), WEFT_CASE(forwarded_unicast_counted),
		WEFT_CASE(qp1_key_violations_trapped), WEFT_CASE(grh_answered_through_grh));
