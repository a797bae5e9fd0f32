// SPDX-License-Identifier: GPL-2.0
/*
 * The switch's general services interface, QP1 of its management port 0,
 * in firmware.  IBA 18.2.1: port 0 is the switch's own end node, reached
 * at the switch's LID (and its LMC range), and it hosts the agents every
 * node has: the SMA behind QP0 (switch_smi.cpp) and, behind QP1 (IBA
 * 13.5.1, the GSI), the PMA that IBA 16.1 requires of switches too.  A
 * base port 0 has no link of its own: a GMP for it enters through an
 * external port and its answer leaves through the LFT like any packet
 * the switch sends.
 *
 * PerfMgt is the one class served here; a Get or Set of any other class
 * is answered "unsupported" (IBA 13.4.7, as a GSI with no agent for it
 * does), anything else dropped.  A GMP with a GRH to port 0's GID is
 * answered through a GRH (fw_answer).  Atomic context throughout.
 */
#include "fw_mad.h"
#include "pma.h"
#include "switch.h"
#include "trap.h"

namespace weft::hca {

namespace {

/* IBA 13.4.7, 13.5.1: Get and Set of a class nobody serves here: GetResp "unsupported". */
bool unserved_request(const iba::PmaMad &req, iba::PmaMad &resp)
{
	const uint8_t m = req.hdr.method.get();
	if (req.hdr.base_version.get() != 1 || (m != iba::method::get && m != iba::method::set))
		return false;
	__builtin_memcpy(&resp, &req, sizeof(resp));
	resp.hdr.method.set(iba::method::get_resp);
	resp.hdr.status.set(iba::mad_status::method_unsupported);
	return true;
}

} // namespace

bool Switch::for_port0(uint16_t dlid) const
{
	return dlid != permissive_lid && for_smi(dlid);
}

/* A GMP that came in on @in for port 0: checked as QP1 checks it (counted at port 0), then answered. */
void Switch::gsi_receive(Port &in, Own<PacketBuf> pkt)
{
	Port &mp = ports_[0];
	Packet p;
	if (!port0_parse(in, *pkt, p))
		return;
	FwDatagram d;
	if (!p.bth || iba::Bth::DestQp::get(p.bth->dqp) != iba::gsi_qpn) {
		PortCounters::bump(mp.counters.no_dest_qp);
		return;
	}
	switch (fw_accept(p, in, mp, iba::gsi_qkey, d)) {
	case FwCheck::Ok:
		break;
	/* IBA 14.2.5.1: a switch's GSI reports key violations as a CA's does, from port 0. */
	case FwCheck::BadPKey:
		gsi_key_violation(mp, trap::bad_p_key, p, p.bth->pkey.get());
		return;
	case FwCheck::BadQKey:
		gsi_key_violation(mp, trap::bad_q_key, p, p.deth->qkey.get());
		return;
	default:
		return;
	}
	const auto &req = *reinterpret_cast<const iba::PmaMad *>(d.mad);
	iba::PmaMad resp;
	const verbs::MadOutcome o = pma::process(*this, d.from, req, resp);
	if (o == verbs::MadOutcome::Consumed || (o == verbs::MadOutcome::NotMine && !unserved_request(req, resp)))
		return;
	/* IBA 13.5.1: from QP1 to the requester's QP, through the LFT like anything the switch sends. */
	auto answer = fw_answer(d, mp.lid.load(Order::Relaxed), iba::gsi_qpn, iba::gsi_qkey,
				reinterpret_cast<const uint8_t *>(&resp));
	const uint8_t out = lft(d.from.slid);
	if (!answer || out == 0 || out > nports_) {
		PortCounters::bump(mp.counters.xmit_discards);
		return;
	}
	PortCounters::bump(ports_[out].counters.unicast_xmit);
	forward(ports_[out], answer.take(), false);
}

} // namespace weft::hca
