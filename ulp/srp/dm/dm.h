/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device management agent of Weft's SRP target (IBA Vol 1 16.3): on a
 * CA port it makes the port an I/O unit with one I/O controller (slot 1),
 * answering Get(ClassPortInfo), Get(IOUnitInfo), Get(IOControllerProfile)
 * and Get(ServiceEntries) of class 0x06 on the port's GSI (QP1), and sets
 * IsDeviceManagementSupported in the port's CapabilityMask (IBA 14.2.5.6),
 * which is how an SM's PortInfoRecord query (srp_daemon, ibsrpdm) finds
 * DM-capable ports.  The SRP target is the IOC's only user: the service
 * entry names the target (SRP r16a B.7: "SRP.T10:" and the 16 hex digits
 * of its id_ext) and gives the service ID its CM listens on.
 *
 * Use (the target, one Agent per port it serves):
 *
 *	Ioc ioc = Ioc::defaults(dev);   // node GUID as ioc_guid/id_ext/service_id
 *	ioc.max_send_size = ...;        // the target's own limits, if known
 *	Agent *a = WEFT_TRY(Agent::attach(dev, port, ioc));
 *	...
 *	a->set_present(false);          // IOUnitInfo shows slot 1 not installed
 *	a->detach();                    // capability bit cleared, no answer after
 *
 * attach() needs weft_mad's port (a verbs client registered after
 * weft_mad, from its add() on); detach() must run before that client's
 * remove() returns.  attach() and detach() sleep.  The Ioc is copied and
 * fixed for the Agent's life; set_present(false) may be called any time
 * from any context, set_present(true) sleeps (it re-announces the port:
 * the capability bit off and on, two traps 144).  A new Agent answers with its controller present unless
 * attach() says otherwise (in-tree ib_srpt shows it whenever loaded;
 * weft_srpt's host only while LIO has an enabled target port there):
 * srp_daemon asks for the profile of present slots only.
 */
#ifndef WEFT_SRP_DM_H
#define WEFT_SRP_DM_H

#include <weft/atomic.h>
#include <weft/mad/port.h>

namespace weft::srp::dm {

/* SRP r16a B.7 (and in-tree ib_srpt): how an SRP target's IOC describes itself. */
inline constexpr uint16_t srp_io_class = 0x0100, srp_io_subclass = 0x609e, srp_protocol = 0x0108,
			  srp_protocol_version = 0x0001;
/* "SRP.T10:" and 16 hex digits, NUL-padded to ServiceEntry.name's 40 bytes. */
inline constexpr size_t service_name_size = 40;

/* One I/O controller, as IOControllerProfile and its ServiceEntry show it. */
struct Ioc {
	uint64_t ioc_guid = 0;	 /* IOControllerProfile.GUID; ibsrpdm's ioc_guid= */
	uint64_t id_ext = 0;	 /* the target port identifier's extension; in the service name */
	uint64_t service_id = 0; /* the CM service ID of the SRP login; ibsrpdm's service_id= */
	uint32_t vendor_id = 0;	 /* 24 bits (IEEE OUI) */
	uint32_t device_id = 0;
	uint16_t device_version = 0;
	uint16_t send_queue_depth = 0;	/* SRP IUs the target takes at once */
	uint8_t rdma_read_depth = 0;	/* RDMA Reads it has outstanding per channel */
	uint32_t max_send_size = 0;	/* the largest SRP IU it receives, bytes */
	uint32_t max_rdma_size = 0;	/* the largest RDMA transfer it issues, bytes */
	char id_string[64] = {};	/* NUL-terminated within the 64 */

	/*
	 * The in-tree ib_srpt's choices: ioc_guid = id_ext = service_id = the
	 * node GUID, vendor/device/version from the device's attributes,
	 * send queue depth min(4096, max_qp_wr), RDMA read depth 4, sends of
	 * 4096 bytes, RDMA transfers of 1 MiB, id "Weft SRP target".
	 */
	static Ioc defaults(const verbs::Device &dev);
	/* The service name (SRP r16a B.7): "SRP.T10:" and id_ext in 16 lower-case hex digits. */
	void service_name(char out[service_name_size]) const;
};

/* The I/O unit's state: is the IOC in slot 1, and IOUnitInfo.ChangeID (IBA 16.3.3.3). */
struct UnitState {
	bool present = true;
	uint16_t change_id = 1;
};

/*
 * The response to a DevMgt request @req (IBA 16.3), in @resp; false when
 * none is due (@req is a response, a Trap/Report/Send, or not of class
 * 0x06 version 1).  Pure: what the agent sends, as the KUnit suite checks.
 */
bool answer(const Ioc &ioc, UnitState unit, const mad::Mad &req, mad::Mad &resp);

class Agent final : mad::AgentHandler {
public:
	/*
	 * Serve DevMgt on @dev's @port and set its IsDeviceManagementSupported.
	 * EINVAL: not a CA port; ENODEV: weft_mad has no GSI there; EBUSY:
	 * another agent (a umad user, a second attach) serves DevMgt there;
	 * ENOMEM.  Slot 1 starts as @present says.
	 */
	static Result<Agent *> attach(verbs::Device &dev, uint8_t port, const Ioc &ioc,
				      bool present = true);
	/*
	 * Clear the capability bit, stop answering (waits for an answer being
	 * sent), free the Agent.
	 */
	void detach();

	/*
	 * Slot 1 present or not installed; a change bumps IOUnitInfo.ChangeID,
	 * and an IOC appearing toggles the capability bit (trap 144).
	 */
	void set_present(bool p);
	UnitState unit() const { return unpack(state_.load(Order::Relaxed)); }
	const Ioc &ioc() const { return ioc_; }
	verbs::Device &device() const { return port_.device; }
	uint8_t port() const { return port_.port; }
	/* Requests answered, and answers that could not be sent (no memory, transport error). */
	uint64_t answered() const { return answered_.load(Order::Relaxed); }
	uint64_t send_failed() const { return send_failed_.load(Order::Relaxed); }

private:
	Agent(mad::MadPort &p, const Ioc &ioc);
	~Agent() = default;
	void recv(mad::Agent &a, const mad::Mad &m, const mad::MadAddr &from) override;
	void send_done(mad::Agent &, mad::SendReq &) override {}

	mad::MadPort &port_;
	const Ioc ioc_;
	mad::Agent agent_;
	static UnitState unpack(uint32_t v) { return UnitState{bool(v >> 16), uint16_t(v)}; }
	/* UnitState packed: present in bit 16, ChangeID in bits 0-15. */
	Atomic<uint32_t> state_{(1u << 16) | 1};
	Atomic<uint64_t> answered_{0}, send_failed_{0};
};

} // namespace weft::srp::dm

#endif
