/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The subnet management interface's directed-route processing (IBA Vol 1
 * 14.2.2): what a node does with a directed-route SMP it sends or
 * receives, hop by hop, as the SMI of a CA port or of a switch.
 */
#ifndef WEFT_MAD_SMI_H
#define WEFT_MAD_SMI_H

#include <weft/iba/mad.h>

namespace weft::mad {

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

/*
 * One node's step for a directed-route SMP, updating its hop pointer and
 * return path in place.  @in is the port it arrived on, or 0 when this
 * node sends it (its SM a request, its SMA a response).
 */
DrStep dr_step(iba::Smp &smp, const DrNode &node, uint8_t in);

const char *dr_action_str(DrAction a);

} // namespace weft::mad

#endif
