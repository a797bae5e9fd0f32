/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The subnet management agent (IBA Vol 1 14.2.5) of every soft node, as
 * firmware: SubnGet/SubnSet of the SMP attributes, M_Key protection (IBA
 * 14.2.4), the response built in place.  Directed-route hops are the
 * SMI's (dr_step, done by the caller); the SMA only answers.
 *
 * sma.cpp dispatches and checks the M_Key, sma_port.cpp has PortInfo,
 * sma_tables.cpp the per-port tables, sma_switch.cpp the switch's.
 */
#ifndef WEFT_HCA_SMA_H
#define WEFT_HCA_SMA_H

#include <weft/iba/smp_attrs.h>
#include <weft/verbs/types.h>

#include "fabric.h"

namespace weft::hca::sma {

/*
 * Answer @req, which arrived at @node through in.port (a switch: the
 * external port it came in on, 0 if sent to itself), into @resp (256
 * bytes, may not alias @req).  Any context, never sleeps.  On Reply
 * @resp is the request turned GetResp with its status, the D bit set for
 * a directed-route SMP and its hop fields left for the SMI.  Consumed: a
 * failed M_Key check or a TrapRepress.  NotMine: a response, a Trap, or
 * (at a CA) SMInfo and methods other than Get/Set, for the MAD layer.
 */
verbs::MadOutcome process(Node &node, const verbs::MadIn &in, const iba::Smp &req, iba::Smp &resp);

/* A change to report once mgmt_lock is dropped. */
struct Change {
	Port *port;
	uint8_t what;
	verbs::PortState was;
};

/* One SMP being answered, under node.mgmt_lock. */
struct Ctx {
	Node &node;
	const verbs::MadIn &in;
	const iba::Smp &req;
	iba::Smp &resp;
	bool set;
	bool key_matched = false; /* the SMP's M_Key is the port's (or that is 0) */
	/* Ports changed and to be reported (at most a port and a peer per SMP, with slack). */
	Change changes[4];
	uint8_t nchanges = 0;
	/* A link this SMP took down (retrain) or disabled: its peer follows after the unlock. */
	Port *link_reset = nullptr;
	bool link_disabled = false;

	void changed(Port &p, uint8_t what, verbs::PortState was);
	template <typename T> const T &in_data() const { return *reinterpret_cast<const T *>(req.data); }
	template <typename T> T &out_data() { return *reinterpret_cast<T *>(resp.data); }
	uint32_t attr_mod() const { return req.attr_mod.get(); }
};

/* Attribute handlers: fill resp's data (after a valid Set, with the new values); return an IBA status. */
uint16_t port_info(Ctx &c);
uint16_t guid_info(Ctx &c);
uint16_t pkey_table(Ctx &c);
uint16_t sl_to_vl_table(Ctx &c);
uint16_t vl_arb_table(Ctx &c);
uint16_t switch_info(Ctx &c);
uint16_t linear_fdb(Ctx &c);
uint16_t multicast_fdb(Ctx &c);

/* The port a per-port attribute's modifier names, or nullptr (IBA 14.2.5: 0 at a CA is the arrival port). */
Port *port_for(Ctx &c, uint32_t num);

/* The default CapabilityMask of a CA port and of a switch's port 0. */
uint32_t default_ca_caps();
uint32_t default_switch_caps();

} // namespace weft::hca::sma

#endif
