// SPDX-License-Identifier: GPL-2.0
/* A CA port's SMI and GSI (IBA 13.5, 14.2.2): see port_mad.h. */
#include <weft/alloc.h>
#include <weft/iba/smp_attrs.h>

#include "port_mad.h"

namespace weft::mad {

using verbs::MadOutcome;
using verbs::QpType;

namespace {

bool is_request(const Mad &m)
{
	return !(m.hdr().method.get() & 0x80);
}

bool is_dr(const Mad &m)
{
	return m.hdr().mgmt_class.get() == iba::mgmt_class::subn_directed_route;
}

iba::Smp &smp_of(Mad &m)
{
	return *reinterpret_cast<iba::Smp *>(m.bytes);
}

} // namespace

PortMad::PortMad(verbs::Device &dev, uint8_t port) : MadPort(dev, port), smi_(*this), gsi_(*this) {}

PortMad::~PortMad()
{
	stop();
}

Result<void> PortMad::start()
{
	WEFT_TRY(smi_.qp.start());
	WEFT_TRY(gsi_.qp.start());
	return sa_.start();
}

void PortMad::stop()
{
	/* The SA client's queries end (cancelled); memberships outlive the port, orphaned. */
	sa_.stop();
	sa_orphan(device, port);
	/* Phase one: nothing arrives or loops back any more; sends fail with ENODEV. */
	smi_.qp.stop();
	smi_.loop.stop();
	gsi_.qp.stop();
}

/*
 * The device's firmware agents see requests first (in-tree drivers call
 * this process_mad).  @answer says whether @reply is to be sent.
 */
bool PortMad::firmware(const Mad &m, const MadAddr &from, Mad &reply, bool &answer)
{
	answer = false;
	/*
	 * IBA 13.4.2: BaseVersion 1 is the only one; the MAD service drops
	 * and counts another (the firmware agents would only consume it).
	 */
	if (!is_request(m) || m.hdr().base_version.get() != 1)
		return false;
	verbs::MadIn in;
	in.port = port;
	in.slid = from.lid;
	in.sl = from.sl;
	in.src_qp = from.qpn;
	in.pkey_index = from.pkey_index;
	MadOutcome o = device.process_mad(in, m.bytes, reply.bytes);
	answer = o == MadOutcome::Reply;
	return o != MadOutcome::NotMine;
}

PortMad::Smi::Smi(PortMad &p) : port(p), qp(p.device, p.port, QpType::Smi, *this) {}

mad::DrNode PortMad::Smi::dr_node() const
{
	return mad::DrNode{false, port.device.num_ports()};
}

/* From the service: an agent's request or response, or the service's own error answer. */
Result<void> PortMad::Smi::transmit(const Mad &m, const MadAddr &to)
{
	/*
	 * IBA 13.5.1, 14.2.2: subnet management stays inside its subnet (LID
	 * or directed routed); an SMP never carries a GRH.
	 */
	if (to.global)
		return Error(err::EINVAL);
	Mad copy = m;
	return out(copy, to);
}

/*
 * IBA 14.2.2.2/14.2.2.4 at the sending CA: a directed-route SMP takes its
 * first step here.  It leaves by the port (DLID permissive while
 * directed), by LID, or never leaves: a request for this port's own SMA
 * or a response that is already home.
 */
Result<void> PortMad::Smi::out(Mad &m, const MadAddr &to)
{
	MadAddr dst = to;
	dst.qpn = 0;
	if (!is_dr(m))
		return qp.send(m, dst);
	iba::Smp &smp = smp_of(m);
	/* IBA 14.2.2.3: a response travels back with D set, whoever built it. */
	if (!is_request(m))
		iba::Smp::Direction::set(smp.status, 1);
	DrStep step = dr_step(smp, dr_node(), 0);
	switch (step.action) {
	case DrAction::Forward:
		dst.lid = iba::permissive_lid;
		return qp.send(m, dst);
	case DrAction::LidRoute:
		dst.lid = iba::Smp::Direction::get(smp.status) ? smp.dr_slid.get() : smp.dr_dlid.get();
		return qp.send(m, dst);
	case DrAction::ToSma:
		to_sma(m, MadAddr{iba::permissive_lid, 0, 0, 0, 0});
		return ok();
	case DrAction::ToSm:
		return loop.post(m, MadAddr{iba::permissive_lid, 0, 0, 0, 0});
	case DrAction::Discard:
		break;
	}
	dropped.fetch_add(1, Order::Relaxed);
	return Error(err::EINVAL);
}

/*
 * A request for this port's SMA.  SMInfo is for an SM, never an SMA (IBA
 * 14.2.5.1): it and whatever the SMA leaves go to the agents.
 */
void PortMad::Smi::to_sma(const Mad &m, const MadAddr &from)
{
	Mad reply;
	bool answer = false;
	if (m.hdr().attr_id.get() != iba::smp_attr::sm_info && port.firmware(m, from, reply, answer)) {
		/* A full send queue loses the answer (the requester retries): count it. */
		if (answer && !out(reply, from))
			port.device.count_mad_reply_dropped(port.port);
		return;
	}
	(void)loop.post(m, from);
}

/* From QP0: IBA 14.2.2 at the receiving CA. */
void PortMad::Smi::arrived(const Mad &in, const MadAddr &from)
{
	Mad m = in;
	if (!is_dr(m)) {
		if (is_request(m))
			to_sma(m, from);
		else
			service.receive(m, from);
		return;
	}
	DrStep step = dr_step(smp_of(m), dr_node(), port.port);
	switch (step.action) {
	case DrAction::ToSma:
		to_sma(m, from);
		return;
	case DrAction::ToSm:
		service.receive(m, from);
		return;
	case DrAction::Forward:	 /* a CA never forwards (dr_step discards such paths) */
	case DrAction::LidRoute: /* nor routes by LID */
	case DrAction::Discard:
		break;
	}
	dropped.fetch_add(1, Order::Relaxed);
}

PortMad::Gsi::Gsi(PortMad &p) : port(p), qp(p.device, p.port, QpType::Gsi, *this) {}

Result<void> PortMad::Gsi::transmit(const Mad &m, const MadAddr &to)
{
	return qp.send(m, to);
}

void PortMad::Gsi::arrived(const Mad &m, const MadAddr &from)
{
	Mad reply;
	bool answer = false;
	if (port.firmware(m, from, reply, answer)) {
		if (answer && !qp.send(reply, from))
			port.device.count_mad_reply_dropped(port.port);
		return;
	}
	service.receive(m, from);
}

} // namespace weft::mad
