/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One CA port's MAD interface (include/weft/mad/port.h), built from its
 * two special QPs:
 *
 * - SMI (QP0, IBA 14.2.2): directed-route SMPs take a dr_step() on every
 *   send and arrival; requests that reach this port go to the device's
 *   SMA (Device::process_mad) first, the rest and all responses to the
 *   port's SMI MadService (the agents of an SM or a diag).  A request to
 *   this very port (hop count 0, the first thing an SM sends) never
 *   touches the wire: the loopback hands the SMA's answer back.
 * - GSI (QP1, IBA 13.5.1): requests the device's firmware serves (the PMA)
 *   are answered there; everything else goes to the GSI MadService.
 */
#ifndef WEFT_MAD_PORT_IMPL_H
#define WEFT_MAD_PORT_IMPL_H

#include <weft/atomic.h>
#include <weft/mad/port.h>
#include <weft/mad/smi.h>

#include "loopback.h"
#include "qp_transport.h"
#include "sa_client.h"

namespace weft::mad {

class PortMad final : public MadPort {
public:
	PortMad(verbs::Device &dev, uint8_t port);
	WEFT_NOCOPY(PortMad);
	~PortMad();

	/* Both QPs up, receives posted. */
	Result<void> start();
	/* Stop arrivals and loopback, then cancel every agent's requests (their owners unregister). */
	void stop();

	MadService &smi() override { return smi_.service; }
	MadService &gsi() override { return gsi_.service; }
	SaPort &sa() { return sa_; }

	ListNode node;

	/* Counted drops: directed-route discards, sends that could not go out. */
	uint64_t smi_dropped() const { return smi_.dropped.load(Order::Relaxed); }
	/* GMPs with a GRH to a GID this port does not have (dropped). */
	uint64_t gsi_foreign_dgid() const { return gsi_.qp.foreign_dgid(); }
	/*
	 * Answers of the device's SMA/PMA that could not be sent (a full
	 * QP0/QP1 send queue): kept by the device, for its hw_counters/.
	 */
	uint64_t replies_dropped() const { return device.mad_replies_dropped(port); }

private:
	/* QP0: the SMI. */
	struct Smi final : MadTransport, MadSink {
		explicit Smi(PortMad &p);
		Result<void> transmit(const Mad &m, const MadAddr &to) override;
		void arrived(const Mad &m, const MadAddr &from) override;
		Result<void> out(Mad &m, const MadAddr &to);
		void to_sma(const Mad &m, const MadAddr &from);
		mad::DrNode dr_node() const;

		PortMad &port;
		MadService service{*this};
		QpTransport qp;
		Loopback loop{service};
		Atomic<uint64_t> dropped{0};
	};
	/* QP1: the GSI. */
	struct Gsi final : MadTransport, MadSink {
		explicit Gsi(PortMad &p);
		Result<void> transmit(const Mad &m, const MadAddr &to) override;
		void arrived(const Mad &m, const MadAddr &from) override;

		PortMad &port;
		MadService service{*this};
		QpTransport qp;
	};

	/* Offer a request to the device's own agents; true if they took it. */
	bool firmware(const Mad &m, const MadAddr &from, Mad &reply, bool &answer);

	Smi smi_;
	Gsi gsi_;
	SaPort sa_{*this};
};

} // namespace weft::mad

#endif
