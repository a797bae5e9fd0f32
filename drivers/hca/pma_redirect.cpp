// SPDX-License-Identifier: GPL-2.0
/*
 * PMA redirection (IBA 13.5.3.3): with weft_hca's pma_redirect set, the
 * PMA answers every request on QP1 with the redirect status and a
 * ClassPortInfo naming the port's LID and a QP of its own; requesters
 * (libibmad's perfquery among them) ask again there.  That QP lives in
 * the HCA's firmware: a datagram to it is answered right here, in the
 * receive path, and never reaches a verbs QP.
 */
#include "fw_mad.h"
#include "hca.h"
#include "hca_module.h"
#include "pma.h"

namespace weft::hca {

namespace pma {

bool redirected()
{
	return __atomic_load_n(&weft_hca_pma_redirect, __ATOMIC_RELAXED);
}

void set_redirected(bool on)
{
	__atomic_store_n(&weft_hca_pma_redirect, on, __ATOMIC_RELAXED);
}

/* IBA 13.4.8.1, 13.5.3.3: status "redirect", and where to go instead. */
verbs::MadOutcome redirect(const Port &port, const iba::PmaMad &req, iba::PmaMad &resp)
{
	if (req.hdr.base_version.get() != 1)
		return verbs::MadOutcome::Consumed;
	if (iba::MadHeader::Response::get(req.hdr.method))
		return verbs::MadOutcome::NotMine;
	resp = iba::PmaMad{};
	resp.hdr = req.hdr;
	resp.hdr.method.set(iba::method::get_resp);
	resp.hdr.status.set(iba::mad_status::redirect);
	auto &cpi = *reinterpret_cast<iba::ClassPortInfo *>(resp.data);
	cpi.base_version.set(1);
	cpi.class_version.set(iba::pma_class_version);
	cpi.capability_mask.set(capabilities());
	cpi.redirect_lid.set(port.lid.load(Order::Relaxed));
	cpi.redirect_pkey.set(0xffff);
	iba::ClassPortInfo::Qp::set(cpi.redirect_qp, redirect_qpn);
	cpi.redirect_qkey.set(redirect_qkey);
	return verbs::MadOutcome::Reply;
}

} // namespace pma

/*
 * A datagram for the PMA's own QP (IBA 9.8, 10.2.5 checks as for any UD
 * QP: a SEND ONLY of one MAD, the QP's Q_Key, a P_Key of the port): the
 * PMA's answer goes back to the sender's QP as a datagram of this QP.
 */
void Hca::pma_qp_receive(Port &in, const Packet &p)
{
	if (!pma::redirected()) {
		PortCounters::bump(in.counters.no_dest_qp);
		return;
	}
	FwDatagram d;
	if (fw_accept(p, in, in, pma::redirect_qkey, d) != FwCheck::Ok)
		return;
	iba::PmaMad resp;
	const auto &req = *reinterpret_cast<const iba::PmaMad *>(d.mad);
	if (pma::process(*this, d.from, req, resp) != verbs::MadOutcome::Reply)
		return;
	__atomic_fetch_add(&weft_hca_pma_redirected_served, 1, __ATOMIC_RELAXED);
	/* IBA 13.5.1: the requester's QP1 shares the GSI Q_Key, the one the request carried. */
	auto pkt = fw_answer(d, in.lid.load(Order::Relaxed), pma::redirect_qpn, pma::redirect_qkey,
			     reinterpret_cast<const uint8_t *>(&resp));
	if (!pkt) {
		PortCounters::bump(in.counters.xmit_discards);
		return;
	}
	PortCounters::bump(in.counters.unicast_xmit);
	in.transmit(pkt.take());
}

} // namespace weft::hca
