// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: directed-route SMP processing (IBA 14.2.2).  A request walks a
 * chain of switches node by node through dr_step, for every path length
 * the SMP can describe (every hop position), reaches the target's SMA with
 * the way back recorded, and its response retraces that way to the SM.
 * Then each rule that discards, and the LID-routed ends of a path.
 */
#include <weft/alloc.h>
#include <weft/test.h>

#include <weft/mad/smi.h>

using namespace weft;
using namespace weft::mad;
using weft::iba::Smp;
using weft::test::Test;

namespace {

constexpr uint8_t switch_ports = 8;

Smp request(uint8_t hops)
{
	Smp s{};
	s.base_version.set(1);
	s.mgmt_class.set(iba::mgmt_class::subn_directed_route);
	s.class_version.set(1);
	s.method.set(iba::method::get);
	s.hop_count.set(hops);
	s.dr_slid.set(iba::permissive_lid);
	s.dr_dlid.set(iba::permissive_lid);
	return s;
}

void turn_around(Smp &s)
{
	s.method.set(iba::method::get_resp);
	iba::Smp::Direction::set(s.status, 1);
}

/*
 * A chain: node 0 is the SM's CA (one port); node i >= 1 is a switch
 * entered on port in_port(i) and left toward node i+1 on out_port(i).
 * Port numbers vary with the hop so a mixed-up path shows.
 */
uint8_t in_port(uint32_t i) { return static_cast<uint8_t>(1 + i % switch_ports); }
uint8_t out_port(uint32_t i) { return static_cast<uint8_t>(1 + (i * 3 + 1) % switch_ports); }

DrNode node_at(uint32_t i)
{
	return i == 0 ? DrNode{false, 1} : DrNode{true, switch_ports};
}

/* The full round trip for a path of @hops switches, checked at every step. */
void round_trip(Test &t, uint8_t hops)
{
	auto own = make_own<Smp>(Gfp::Sleep);
	if (!WEFT_EXPECT_OK(t, own))
		return;
	Smp &s = *own.value();
	s = request(hops);
	/* InitialPath[h]: the port hop h leaves from (the CA's only port first). */
	s.initial_path[1] = 1;
	for (uint32_t h = 2; h <= hops; h++)
		s.initial_path[h] = out_port(h - 1);
	uint32_t at = 0;
	uint8_t in = 0;
	DrStep st = dr_step(s, node_at(at), in);
	while (st.action == DrAction::Forward) {
		WEFT_EXPECT_EQ(t, st.port, at == 0 ? uint8_t(1) : out_port(at));
		at++;
		in = in_port(at);
		st = dr_step(s, node_at(at), in);
	}
	WEFT_EXPECT_EQ(t, static_cast<int>(st.action), static_cast<int>(DrAction::ToSma));
	WEFT_EXPECT_EQ(t, at, uint32_t(hops)); /* the SMA of the path's last node */
	WEFT_EXPECT_EQ(t, s.hop_pointer.get(), uint8_t(hops + 1));
	for (uint32_t h = 1; h <= hops; h++)
		if (s.return_path[h] != in_port(h))
			WEFT_EXPECT_EQ(t, s.return_path[h], in_port(h));
	/* The SMA answers from where it is; the answer goes home hop by hop. */
	turn_around(s);
	in = 0;
	st = dr_step(s, node_at(at), in);
	while (st.action == DrAction::Forward) {
		WEFT_EXPECT_EQ(t, st.port, in_port(at)); /* back out where it came in */
		at--;
		in = at == 0 ? 1 : out_port(at);
		st = dr_step(s, node_at(at), in);
	}
	WEFT_EXPECT_EQ(t, static_cast<int>(st.action), static_cast<int>(DrAction::ToSm));
	WEFT_EXPECT_EQ(t, at, 0u);
	WEFT_EXPECT_EQ(t, s.hop_pointer.get(), uint8_t(0));
}

void every_path_length(Test &t)
{
	for (uint32_t hops = 0; hops < iba::max_dr_hops; hops++)
		round_trip(t, static_cast<uint8_t>(hops));
}

DrAction step(Smp s, DrNode n, uint8_t in)
{
	return dr_step(s, n, in).action;
}

void discards(Test &t)
{
	const DrNode sw{true, switch_ports}, ca{false, 1};
	/* C14-6: HopCount 64 cannot be described. */
	Smp s = request(64);
	WEFT_EXPECT_EQ(t, int(step(s, ca, 0)), int(DrAction::Discard));
	/* Not a directed-route SMP at all. */
	s = request(1);
	s.mgmt_class.set(iba::mgmt_class::subn_lid_routed);
	WEFT_EXPECT_EQ(t, int(step(s, ca, 0)), int(DrAction::Discard));
	/* The SM sends with a pointer already moved. */
	s = request(2);
	s.hop_pointer.set(1);
	WEFT_EXPECT_EQ(t, int(step(s, ca, 0)), int(DrAction::Discard));
	/* Arrival with a pointer the sender never advanced. */
	s = request(2);
	WEFT_EXPECT_EQ(t, int(step(s, sw, 3)), int(DrAction::Discard));
	/* A CA in the middle of a path. */
	s = request(3);
	s.hop_pointer.set(1);
	s.initial_path[2] = 1;
	WEFT_EXPECT_EQ(t, int(step(s, ca, 1)), int(DrAction::Discard));
	/* A path naming port 0 or a port the switch lacks. */
	s = request(3);
	s.hop_pointer.set(1);
	s.initial_path[2] = 0;
	WEFT_EXPECT_EQ(t, int(step(s, sw, 2)), int(DrAction::Discard));
	s.initial_path[2] = switch_ports + 1;
	WEFT_EXPECT_EQ(t, int(step(s, sw, 2)), int(DrAction::Discard));
	/* Arrival on a port the node does not have. */
	s = request(1);
	s.hop_pointer.set(1);
	WEFT_EXPECT_EQ(t, int(step(s, ca, 2)), int(DrAction::Discard));
	/* Unreasonable pointers either way. */
	s = request(2);
	s.hop_pointer.set(4);
	WEFT_EXPECT_EQ(t, int(step(s, sw, 1)), int(DrAction::Discard));
	turn_around(s);
	WEFT_EXPECT_EQ(t, int(step(s, sw, 1)), int(DrAction::Discard));
	/* A response through a CA in the middle. */
	s = request(3);
	turn_around(s);
	s.hop_pointer.set(2);
	s.return_path[1] = 1;
	WEFT_EXPECT_EQ(t, int(step(s, ca, 1)), int(DrAction::Discard));
	/* A response that names a return port the switch lacks. */
	s.return_path[1] = switch_ports + 1;
	WEFT_EXPECT_EQ(t, int(step(s, sw, 1)), int(DrAction::Discard));
}

/* IBA 14.2.2.2-4: a path may end, or begin, LID routed. */
void lid_routed_ends(Test &t)
{
	const DrNode sw{true, switch_ports}, ca{false, 1};
	/* Out: the directed part ends at a switch that goes on toward DrDLID. */
	Smp s = request(1);
	s.dr_dlid.set(0x21);
	s.hop_pointer.set(1);
	Smp at_switch = s;
	WEFT_EXPECT_EQ(t, int(dr_step(at_switch, sw, 5).action), int(DrAction::LidRoute));
	WEFT_EXPECT_EQ(t, at_switch.hop_pointer.get(), uint8_t(2));
	WEFT_EXPECT_EQ(t, at_switch.return_path[1], uint8_t(5));
	/* ... which a CA cannot do. */
	WEFT_EXPECT_EQ(t, int(step(s, ca, 1)), int(DrAction::Discard));
	/* The target reached by LID hands it to its SMA. */
	WEFT_EXPECT_EQ(t, int(step(at_switch, ca, 1)), int(DrAction::ToSma));
	/* Back: the target answers by LID, the switch steps onto the recorded path. */
	Smp resp = at_switch;
	turn_around(resp);
	WEFT_EXPECT_EQ(t, int(step(resp, ca, 0)), int(DrAction::LidRoute));
	DrStep back = dr_step(resp, sw, 3);
	WEFT_EXPECT_EQ(t, int(back.action), int(DrAction::Forward));
	WEFT_EXPECT_EQ(t, back.port, uint8_t(5));
	WEFT_EXPECT_EQ(t, resp.hop_pointer.get(), uint8_t(1));
	/* The path began by LID (DrSLID not permissive): the first switch goes on by LID. */
	resp.dr_slid.set(0x7);
	Smp first = resp;
	WEFT_EXPECT_EQ(t, int(dr_step(first, sw, 2).action), int(DrAction::LidRoute));
	WEFT_EXPECT_EQ(t, first.hop_pointer.get(), uint8_t(0));
	/* ... and the SM's node takes it from there. */
	WEFT_EXPECT_EQ(t, int(step(first, ca, 1)), int(DrAction::ToSm));
	/* A zero-hop request is the SM talking to its own SMA. */
	Smp self = request(0);
	WEFT_EXPECT_EQ(t, int(dr_step(self, ca, 0).action), int(DrAction::ToSma));
	turn_around(self);
	WEFT_EXPECT_EQ(t, int(dr_step(self, ca, 0).action), int(DrAction::ToSm));
}

/*
 * Mutation sweep (issue 22): every HopCount (0..64), every HopPointer up
 * to one past the longest path (and 255), both directions, at a switch and
 * at a CA, sent or arriving on a port it has or lacks.  Each step is a
 * discard, or leaves the pointer within the path and forwards only out of
 * a port the node has (C14-6, C14-9, C14-13); HopCount 64 always discards.
 */
void every_pointer_and_count(Test &t)
{
	const DrNode nodes[] = {{true, switch_ports}, {false, 1}};
	uint32_t discarded = 0, taken = 0, bad = 0;
	for (const DrNode &n : nodes) {
		const uint8_t ins[] = {0, 1, uint8_t(n.ports + 1)};
		for (uint32_t cnt = 0; cnt <= iba::max_dr_hops; cnt++) {
			for (uint32_t i = 0; i <= iba::max_dr_hops + 2u; i++) {
				const uint32_t ptr = i <= iba::max_dr_hops + 1u ? i : 255;
				for (int back = 0; back < 2; back++) {
					for (uint8_t in : ins) {
						Smp s = request(static_cast<uint8_t>(cnt));
						for (uint32_t h = 1; h < iba::max_dr_hops; h++)
							s.initial_path[h] = s.return_path[h] = static_cast<uint8_t>(1 + h % 3);
						s.hop_pointer.set(static_cast<uint8_t>(ptr));
						if (back)
							turn_around(s);
						const DrStep r = dr_step(s, n, in);
						if (r.action == DrAction::Discard) {
							discarded++;
							continue;
						}
						taken++;
						bad += cnt >= iba::max_dr_hops || s.hop_pointer.get() > cnt + 1 ||
						       (r.action == DrAction::Forward && (r.port < 1 || r.port > n.ports));
					}
				}
			}
		}
	}
	WEFT_EXPECT_GT(t, discarded, 0u);
	WEFT_EXPECT_GT(t, taken, 0u);
	WEFT_EXPECT_EQ(t, bad, 0u);
}

} // namespace

WEFT_TEST_SUITE(weft_mad_smi, WEFT_CASE(every_path_length), WEFT_CASE(discards), WEFT_CASE(lid_routed_ends),
		WEFT_CASE(every_pointer_and_count));
