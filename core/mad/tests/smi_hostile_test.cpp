// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit (issue 22): directed-route SMPs of every hop pointer and count,
 * both directions, and with broken MAD headers, sent from a recording node
 * standing in for an SM's port (cabled to a free port of the default
 * subnet's switch) through the switch to weft1, whose SMI on QP0
 * (PortMad, IBA 14.2.2) takes them from its HCA's receive path.  Each SMP
 * must end in exactly what IBA lets it: an answer that comes back to the
 * sender, or a counted drop (the switch's VL15Dropped, weft1's SMI
 * discards or its MAD service's drops, its port's receive errors); never
 * silence, a crash or a WARN.
 */
#include <weft/alloc.h>
#include <weft/iba/smp_attrs.h>
#include <weft/log.h>
#include <weft/mad/port.h>
#include <weft/test.h>

#include "../../../drivers/hca/hca.h"
#include "../../../drivers/hca/tests/sink.h"
#include "../port_mad.h"

using namespace weft;
using namespace weft::mad;
using weft::hca::fixture::Sink;
using weft::test::Test;

namespace {

/* The sender's port on the switch's first free port; weft1 behind the switch. */
struct Rig {
	Sink sm;
	Ref<verbs::Device> d0 = verbs::find_device("weft0"), d1 = verbs::find_device("weft1");
	PortMad *p0 = nullptr, *p1 = nullptr;
	hca::Node *sw = nullptr;
	uint8_t to_weft1 = 0, from_sm = 0;
	bool cabled = false;
	/* A request and its answer (on the heap with the rig: too big for a test's stack under lockdep). */
	iba::Smp req, ans;

	Result<void> up()
	{
		if (!d0 || !d1)
			return Error(err::ENODEV);
		p0 = static_cast<PortMad *>(mad::find_port(*d0, 1));
		p1 = static_cast<PortMad *>(mad::find_port(*d1, 1));
		hca::Port *sp = static_cast<hca::Hca &>(*d1).port(1)->peer();
		if (!p0 || !p1 || !sp || !sp->node.is_switch())
			return Error(err::ENODEV);
		sw = &sp->node;
		to_weft1 = sp->num;
		for (uint8_t i = sw->port_count(); i >= 1 && !from_sm; i--)
			if (!sw->port(i)->peer())
				from_sm = i;
		if (!from_sm)
			return Error(err::EBUSY);
		hca::Fabric &f = hca::Fabric::get();
		f.add(sm);
		cabled = true;
		return f.connect(sm.port_, *sw->port(from_sm));
	}
	~Rig()
	{
		if (cabled)
			hca::Fabric::get().remove(sm);
	}

	/*
	 * Every count that may take an SMP: the switch's VL15Dropped, and
	 * each CA's SMI discards, MAD service drops and receive errors (a
	 * return path may lead anywhere, weft0 too).
	 */
	uint64_t drops()
	{
		uint64_t n = 0;
		for (uint8_t i = 0; i <= sw->port_count(); i++)
			n += sw->port(i)->counters.vl15_dropped.load(Order::Relaxed);
		PortMad *ports[2] = {p0, p1};
		verbs::Device *devs[2] = {&*d0, &*d1};
		for (int i = 0; i < 2; i++) {
			hca::PortCounters &c = static_cast<hca::Hca &>(*devs[i]).port(1)->counters;
			n += ports[i]->smi_dropped() + ports[i]->smi().dropped() + c.rcv_errors.load(Order::Relaxed) +
			     c.no_dest_qp.load(Order::Relaxed);
		}
		return n;
	}

	/* Send @smp as a VL15 packet to QP0 from the SM's port. */
	Result<void> send(const iba::Smp &smp)
	{
		hca::PacketSpec s;
		s.vl = 15;
		s.dlid = iba::permissive_lid;
		s.slid = iba::permissive_lid;
		s.opcode = iba::opcode(iba::Transport::Ud, iba::op::SendOnly);
		s.payload = ConstBytes(reinterpret_cast<const uint8_t *>(&smp), sizeof(smp));
		const size_t len = WEFT_TRY(hca::packet_length(s));
		auto pkt = WEFT_TRY(hca::PacketBuf::alloc(Gfp::Sleep, static_cast<uint32_t>(len)));
		pkt->len = static_cast<uint32_t>(WEFT_TRY(hca::build(Bytes(pkt->data(), len), s)));
		pkt->sealed = true;
		sm.port_.transmit(move(pkt));
		return ok();
	}

	enum class Fate : uint8_t { Answered, Dropped, Silent };

	/* What became of one SMP: an answer at the SM's port (kept in @answer), a drop, or neither within 3 s. */
	Fate fate(const iba::Smp &smp, iba::Smp &answer)
	{
		while (sm.count())
			(void)sm.take();
		const uint64_t before = drops();
		if (!send(smp))
			return Fate::Silent;
		/* By the clock: under TCG a 1 ms sleep takes a jiffy or more. */
		const uint64_t end = weft_jiffies() + weft_msecs_to_jiffies(3000);
		while (weft_jiffies() < end) {
			if (Own<hca::PacketBuf> b = sm.take()) {
				auto p = hca::parse(b->bytes());
				if (p && p.value().payload.size() >= sizeof(answer))
					__builtin_memcpy(&answer, p.value().payload.data(), sizeof(answer));
				return Fate::Answered;
			}
			if (drops() != before)
				return Fate::Dropped;
			weft_msleep(1);
		}
		return Fate::Silent;
	}
};

/*
 * A SubnGet(NodeInfo) by directed route: out of the SM's port 1, the
 * switch's @out, then port 1 each hop; the return path back to the SM's
 * port @home wherever a hop has not recorded it.
 */
void dr_request(iba::Smp &s, uint8_t hops, uint8_t ptr, bool returning, uint8_t out, uint8_t home)
{
	s = iba::Smp{};
	s.base_version.set(1);
	s.mgmt_class.set(iba::mgmt_class::subn_directed_route);
	s.class_version.set(1);
	s.method.set(iba::method::get);
	s.tid.set(0x5100 + hops * 0x100 + ptr);
	s.attr_id.set(iba::smp_attr::node_info);
	s.hop_count.set(hops);
	s.hop_pointer.set(ptr);
	iba::Smp::Direction::set(s.status, returning);
	s.dr_slid.set(iba::permissive_lid);
	s.dr_dlid.set(iba::permissive_lid);
	for (uint8_t i = 1; i < iba::max_dr_hops; i++) {
		s.initial_path[i] = 1;
		s.return_path[i] = home;
	}
	s.initial_path[2] = out;
}

Result<Own<Rig>> rig()
{
	auto r = WEFT_TRY(make_own<Rig>(Gfp::Sleep));
	WEFT_TRY(r->up());
	return r;
}

/*
 * IBA 14.2.2: the path as the SM's SMI leaves it (hop pointer 1, two
 * hops) is answered by weft1, the answer coming back by the return path;
 * hop count 1 by the switch; every other hop pointer and count of 0..5,
 * in either direction, ends answered or counted.
 */
void every_pointer_and_count(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	iba::Smp &req = r.req, &ans = r.ans;

	dr_request(req, 2, 1, false, r.to_weft1, r.from_sm);
	WEFT_ASSERT_EQ(t, int(r.fate(req, ans)), int(Rig::Fate::Answered));
	WEFT_EXPECT_EQ(t, ans.tid.get(), req.tid.get());
	WEFT_EXPECT_EQ(t, ans.method.get(), iba::method::get_resp);
	WEFT_EXPECT_EQ(t, iba::Smp::Direction::get(ans.status), uint16_t(1));
	WEFT_EXPECT_EQ(t, reinterpret_cast<const iba::NodeInfo *>(ans.data)->node_type.get(), uint8_t(1));
	dr_request(req, 1, 1, false, r.to_weft1, r.from_sm);
	WEFT_ASSERT_EQ(t, int(r.fate(req, ans)), int(Rig::Fate::Answered));
	WEFT_EXPECT_EQ(t, reinterpret_cast<const iba::NodeInfo *>(ans.data)->node_type.get(), uint8_t(2));

	uint32_t fates[3] = {};
	for (uint8_t hops = 0; hops <= 5; hops++) {
		for (uint8_t ptr = 0; ptr <= hops + 2; ptr++) {
			for (int d = 0; d < 2; d++) {
				dr_request(req, hops, ptr, d, r.to_weft1, r.from_sm);
				const Rig::Fate f = r.fate(req, ans);
				fates[int(f)]++;
				if (f != Rig::Fate::Silent)
					continue;
				char msg[96];
				format(msg, sizeof(msg), "hop count %u pointer %u %s: neither answered nor counted", hops,
				       ptr, d ? "returning" : "outbound");
				t.fail(__FILE__, __LINE__, msg);
			}
		}
	}
	WEFT_EXPECT_GT(t, fates[int(Rig::Fate::Answered)], 0u);
	WEFT_EXPECT_GT(t, fates[int(Rig::Fate::Dropped)], 0u);
	WEFT_EXPECT_EQ(t, fates[int(Rig::Fate::Silent)], 0u);
}

/* The header of the MAD broken, one field at a time, on the good two-hop path. */
struct Broken {
	const char *name;
	void (*mutate)(iba::Smp &s);
};

const Broken broken[] = {
	{"base version 2", [](iba::Smp &s) { s.base_version.set(2); }},
	{"class version 2", [](iba::Smp &s) { s.class_version.set(2); }},
	{"method 0x7f", [](iba::Smp &s) { s.method.set(0x7f); }},
	{"a response (GetResp) outbound", [](iba::Smp &s) { s.method.set(iba::method::get_resp); }},
	{"attribute 0xfff0", [](iba::Smp &s) { s.attr_id.set(0xfff0); }},
	{"SMInfo (an SM's, not an SMA's)", [](iba::Smp &s) { s.attr_id.set(iba::smp_attr::sm_info); }},
	{"DrSLID not permissive", [](iba::Smp &s) { s.dr_slid.set(0x33); }},
	{"DrDLID not permissive", [](iba::Smp &s) { s.dr_dlid.set(0x33); }},
	{"hop count 64", [](iba::Smp &s) { s.hop_count.set(64); }},
	{"hop count 255, pointer 255", [](iba::Smp &s) { s.hop_count.set(255); s.hop_pointer.set(255); }},
	{"path out of port 0 of the switch", [](iba::Smp &s) { s.initial_path[2] = 0; }},
	{"path out of a port the switch lacks", [](iba::Smp &s) { s.initial_path[2] = 200; }},
};

void broken_headers_answered_or_counted(Test &t)
{
	auto own = rig();
	WEFT_ASSERT_OK(t, own);
	Rig &r = *own.value();
	iba::Smp &req = r.req, &ans = r.ans;
	for (const Broken &b : broken) {
		dr_request(req, 2, 1, false, r.to_weft1, r.from_sm);
		b.mutate(req);
		const Rig::Fate f = r.fate(req, ans);
		if (f == Rig::Fate::Answered) {
			/* An answer is a response to this request, never another SMP. */
			WEFT_EXPECT_EQ(t, ans.tid.get(), req.tid.get());
			WEFT_EXPECT_TRUE(t, ans.method.get() & 0x80);
		}
		if (f != Rig::Fate::Silent)
			continue;
		char msg[96];
		format(msg, sizeof(msg), "%s: neither answered nor counted", b.name);
		t.fail(__FILE__, __LINE__, msg);
	}
	/* weft1 still answers afterwards. */
	dr_request(req, 2, 1, false, r.to_weft1, r.from_sm);
	WEFT_EXPECT_EQ(t, int(r.fate(req, ans)), int(Rig::Fate::Answered));
}

} // namespace

WEFT_TEST_SUITE(weft_mad_smi_hostile, WEFT_CASE(every_pointer_and_count),
		WEFT_CASE(broken_headers_answered_or_counted));
