// SPDX-License-Identifier: GPL-2.0
/*
 * The DM agent on a port's GSI (IBA 16.3): a DevMgt class 0x06 version 1
 * agent for Get and Set on weft_mad's MadService of the port.  Requests
 * in another class version never reach it: the service answers those with
 * the bad-version status (IBA 13.4.7).  While attached, the port's
 * CapabilityMask has IsDeviceManagementSupported (IBA 14.2.5.6), set and
 * cleared through the device's modify_port (IBA 11.2.1.3), as in-tree
 * ib_srpt does through ib_modify_port.
 */
#include <weft/alloc.h>
#include <weft/iba/dm.h>
#include <weft/log.h>

#include "dm.h"

namespace weft::srp::dm {

namespace {
const Logger log("weft_srpt_dm");
}

Agent::Agent(mad::MadPort &p, const Ioc &ioc) :
	port_(p), ioc_(ioc), agent_(*this, iba::mgmt_class::dev_mgt, iba::dm_class_version)
{
	agent_.add_method(iba::method::get);
	agent_.add_method(iba::method::set);
}

Result<Agent *> Agent::attach(verbs::Device &dev, uint8_t port, const Ioc &ioc, bool present)
{
	if (dev.node_type() != verbs::NodeType::Ca || port < 1 || port > dev.num_ports())
		return Error(err::EINVAL);
	mad::MadPort *mp = mad::find_port(dev, port);
	if (!mp)
		return Error(err::ENODEV);
	auto *a = new (Gfp::Sleep) Agent(*mp, ioc);
	if (!a)
		return Error(err::ENOMEM);
	a->state_.store((uint32_t(present) << 16) | 1, Order::Relaxed);
	if (auto r = mp->gsi().register_agent(a->agent_); !r) {
		delete a;
		return r.error();
	}
	/* Answer first, then advertise: whoever finds the bit finds the agent. */
	if (auto r = dev.modify_port(port, verbs::port_cap::is_device_management_supported, 0); !r) {
		mp->gsi().unregister_agent(a->agent_);
		delete a;
		return r.error();
	}
	return a;
}

void Agent::detach()
{
	/* Stop advertising, then stop answering: no callback runs after unregister_agent(). */
	(void)port_.device.modify_port(port_.port, 0, verbs::port_cap::is_device_management_supported);
	port_.gsi().unregister_agent(agent_);
	delete this;
}

void Agent::set_present(bool p)
{
	uint32_t v = state_.load(Order::Relaxed), want;
	do {
		UnitState u = unpack(v);
		if (u.present == p)
			return;
		/* IBA 16.3.3.3: ChangeID moves whenever an IOC comes or goes. */
		want = (uint32_t(p) << 16) | uint16_t(u.change_id + 1);
	} while (!state_.compare_exchange(v, want, Order::Relaxed, Order::Relaxed));
	/*
	 * Nothing in IBA tells subscribers that an IOC came (16.3 has no
	 * notice of its own), so the port re-announces itself: the bit off
	 * and on again is two traps 144 (IBA 14.2.5.1), and a subscriber
	 * that rescans a port whose new CapabilityMask has the bit
	 * (srp_daemon) finds the IOC.  In-tree, the IOC is there from load,
	 * so the trap of the bit's first setting says it.
	 */
	if (p) {
		(void)port_.device.modify_port(port_.port, 0, verbs::port_cap::is_device_management_supported);
		(void)port_.device.modify_port(port_.port, verbs::port_cap::is_device_management_supported, 0);
	}
}

void Agent::recv(mad::Agent &a, const mad::Mad &m, const mad::MadAddr &from)
{
	auto r = make_own<mad::SendReq>(Gfp::Sleep);
	if (!r) {
		send_failed_.fetch_add(1, Order::Relaxed);
		return;
	}
	mad::SendReq &s = *r.value();
	if (!answer(ioc_, unit(), m, s.mad))
		return;
	/* IBA 13.5.1: the response goes back to the requester's QP with the GSI's Q_Key. */
	s.to = from;
	s.to.qkey = iba::gsi_qkey;
	if (auto sent = port_.gsi().send(a, s); !sent) {
		send_failed_.fetch_add(1, Order::Relaxed);
		WEFT_LOG_RATELIMITED(log, Level::Warn, "%s/%u: DevMgt answer to LID 0x%x not sent (errno %d)",
				     port_.device.name(), port_.port, from.lid, sent.error().code());
		return;
	}
	answered_.fetch_add(1, Order::Relaxed);
}

} // namespace weft::srp::dm
