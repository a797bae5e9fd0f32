/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Directed-route SMP processing (IBA Vol 1 14.2.2: 14.2.2.2 outgoing,
 * 14.2.2.4 returning), as the SMI of a CA port (the MAD layer) or of a
 * switch (the soft switch's "firmware") does it.  Pure logic on the SMP,
 * header-only, so that the HCA driver and the MAD layer share it without
 * the driver depending on the mid-layer.
 *
 * The path is InitialPath[1..HopCount] out of the SM's node; each hop
 * records the port it came in on in ReturnPath so the response can retrace
 * it.  HopPointer says where along the path the SMP is.
 */
#ifndef WEFT_IBA_DR_H
#define WEFT_IBA_DR_H

#include <weft/iba/mad.h>

namespace weft::iba {

/* The node an SMP is at, as its SMI sees it. */
struct DrNode {
	bool is_switch;
	uint8_t ports; /* external ports 1..ports */
};

/* What the SMI does next with a directed-route SMP. */
enum class DrAction : uint8_t {
	Discard,  /* a rule of IBA 14.2.2 failed: dropped (and counted), never answered */
	Forward,  /* out of DrStep::port, directed */
	LidRoute, /* on by LID: to DrDLID going out, to DrSLID coming back */
	ToSma,    /* to this node's SMA: the request has arrived */
	ToSm,     /* to this node's SM: the response is home */
};

struct DrStep {
	DrAction action;
	uint8_t port; /* Forward only */
};

namespace dr_detail {

inline bool valid_port(const DrNode &node, uint8_t port)
{
	return port >= 1 && port <= node.ports;
}

inline DrStep forward(const DrNode &node, uint8_t port)
{
	return valid_port(node, port) ? DrStep{DrAction::Forward, port} : DrStep{DrAction::Discard, 0};
}

inline constexpr DrStep discard{DrAction::Discard, 0};

/* IBA 14.2.2.2, C14-9: the request on its way out (D = 0). */
inline DrStep outgoing(Smp &smp, const DrNode &node, uint8_t in)
{
	const uint8_t cnt = smp.hop_count.get();
	uint8_t ptr = smp.hop_pointer.get();
	const bool to_sma = smp.dr_dlid.get() == iba::permissive_lid;
	if (in == 0) {
		/* 1. The SM's node starts the path: the pointer moves to hop 1. */
		if (ptr != 0)
			return discard;
		smp.hop_pointer.set(1);
		if (cnt > 0)
			return forward(node, smp.initial_path[1]);
		/* A zero-hop path ends here at once (step 3 at the sender). */
		if (to_sma)
			return {DrAction::ToSma, 0};
		return node.is_switch ? DrStep{DrAction::LidRoute, 0} : discard;
	}
	/* 2. A hop pointer of 0 on arrival: the sender did not advance it. */
	if (ptr == 0)
		return discard;
	/* 3. An intermediate hop, which only a switch can be: note the way back, go on. */
	if (ptr < cnt) {
		if (!node.is_switch)
			return discard;
		smp.return_path[ptr] = in;
		smp.hop_pointer.set(++ptr);
		return forward(node, smp.initial_path[ptr]);
	}
	/* 4. The end of the directed part: here, or on by LID toward DrDLID (switches only). */
	if (ptr == cnt) {
		smp.return_path[ptr] = in;
		smp.hop_pointer.set(ptr + 1);
		if (to_sma)
			return {DrAction::ToSma, 0};
		return node.is_switch ? DrStep{DrAction::LidRoute, 0} : discard;
	}
	/* 5. Arrived over the LID-routed part after the directed one. */
	if (ptr == cnt + 1)
		return {DrAction::ToSma, 0};
	/* 6. Any other pointer is unreasonable. */
	return discard;
}

/* IBA 14.2.2.4, C14-13: the response on its way back (D = 1). */
inline DrStep returning(Smp &smp, const DrNode &node, uint8_t in)
{
	const uint8_t cnt = smp.hop_count.get();
	uint8_t ptr = smp.hop_pointer.get();
	const bool to_sm = smp.dr_slid.get() == iba::permissive_lid;
	/*
	 * 1. At the far end of the directed part (the SMA answering a purely
	 * directed request, or the switch the LID-routed answer came back
	 * to): step back onto the recorded path.  A request that came on by
	 * LID is answered by LID first.
	 */
	if (cnt > 0 && ptr == cnt + 1) {
		if (in == 0 && smp.dr_dlid.get() != iba::permissive_lid)
			return {DrAction::LidRoute, 0};
		smp.hop_pointer.set(--ptr);
		return forward(node, smp.return_path[ptr]);
	}
	/* 2. An intermediate hop back, again only at a switch. */
	if (ptr >= 2 && ptr <= cnt) {
		if (in == 0 || !node.is_switch)
			return discard;
		smp.hop_pointer.set(--ptr);
		return forward(node, smp.return_path[ptr]);
	}
	/* 3. The start of the path: the SM is here, or further on by LID toward DrSLID. */
	if (ptr == 1) {
		smp.hop_pointer.set(0);
		if (to_sm)
			return {DrAction::ToSm, 0};
		return node.is_switch ? DrStep{DrAction::LidRoute, 0} : discard;
	}
	/* 4. Arrived home over the LID-routed part before the directed one. */
	if (ptr == 0 && in != 0)
		return {DrAction::ToSm, 0};
	/* 5. Any other pointer is unreasonable. */
	return discard;
}

} // namespace dr_detail

/*
 * One node's step for a directed-route SMP, updating its hop pointer and
 * return path in place.  @in is the port it arrived on, or 0 when this
 * node sends it (its SM a request, its SMA a response).
 */
inline DrStep dr_step(Smp &smp, const DrNode &node, uint8_t in)
{
	using namespace dr_detail;
	/* IBA 14.2.1.2, C14-6: HopCount 0..63 (the paths have 64 entries). */
	if (smp.hop_count.get() >= iba::max_dr_hops)
		return discard;
	if (smp.mgmt_class.get() != iba::mgmt_class::subn_directed_route)
		return discard;
	if (in != 0 && in > node.ports)
		return discard;
	return iba::Smp::Direction::get(smp.status) ? returning(smp, node, in) : outgoing(smp, node, in);
}

inline const char *dr_action_str(DrAction a)
{
	switch (a) {
	case DrAction::Discard:
		return "discard";
	case DrAction::Forward:
		return "forward";
	case DrAction::LidRoute:
		return "lid-route";
	case DrAction::ToSma:
		return "to-sma";
	case DrAction::ToSm:
		return "to-sm";
	}
	return "?";
}

} // namespace weft::iba

#endif
