/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The soft HCA: a channel adapter node on the fabric and a verbs device.
 * It owns its ports, the QP number space (IBA 10.2.3: QP0 and QP1 per port,
 * the rest shared), and demultiplexes arriving packets to QP engines.
 */
#ifndef WEFT_HCA_HCA_H
#define WEFT_HCA_HCA_H

#include <weft/verbs/verbs.h>
#include <weft/work.h>

#include "fabric.h"
#include "mcast.h"
#include "trap.h"

namespace weft::hca {

class SoftQp;

class Hca final : public Node, public verbs::Device {
public:
	static constexpr uint8_t max_ports = 2;
	static Result<Hca *> create(uint8_t ports);
	~Hca() override;

	/* Node */
	void receive(Port &in, Own<PacketBuf> pkt) override;
	void link_changed(Port &p) override;
	void port_changed(Port &p, uint8_t what, verbs::PortState was) override;
	Port *port(uint8_t num) override { return num >= 1 && num <= nports_ ? &ports_[num - 1] : nullptr; }
	uint8_t port_count() const override { return nports_; }
	bool is_switch() const override { return false; }
	verbs::Device *device() override { return this; }

	/* verbs::Device */
	Result<void> query_port(uint8_t port, verbs::PortAttr &out) override;
	Result<verbs::Gid> query_gid(uint8_t port, uint32_t index) override;
	Result<uint16_t> query_pkey(uint8_t port, uint16_t index) override;
	Result<verbs::Qp *> create_qp(verbs::Pd &pd, const verbs::QpInitAttr &init) override;
	Result<void> query_counters(uint8_t port, verbs::PortCounterValues &out) override;
	/* Classes 0x01 and 0x81 to the SMA (sma.h), 0x04 to the PMA (pma.h); any context. */
	verbs::MadOutcome process_mad(const verbs::MadIn &in, const uint8_t *mad, uint8_t *out) override;
	Result<void> modify_port(uint8_t port, uint32_t set_caps, uint32_t clear_caps) override;
	void trap_repressed_locked(Port &p, uint64_t tid) override { traps_.repressed_locked(p, tid); }
	TrapSender *trap_sender() override { return &traps_; }

	/* The QP a packet for @qpn arriving on @port is for, with a reference. */
	Ref<SoftQp> lookup_qp(uint32_t qpn, uint8_t port);
	void remove_qp(SoftQp &qp);
	McastTable *mcast(uint8_t port) { return port >= 1 && port <= nports_ ? &mcast_[port - 1] : nullptr; }


private:
	explicit Hca(uint8_t ports);
	/* The PMA's redirect QP, served in firmware (pma_redirect.cpp); atomic context. */
	void pma_qp_receive(Port &in, const Packet &p);

	uint8_t nports_;
	Port ports_[max_ports] = {Port(*this, 1), Port(*this, 2)};
	SpinLock qps_lock_;
	Array<SoftQp *> qps_; /* by QPN; 0 and 1 unused (special QPs below) */
	SoftQp *special_[max_ports][2] = {};
	McastTable mcast_[max_ports];
	uint32_t next_qpn_ = 2;
	TrapSender traps_{*this}; /* after ports_: its work is cancelled before they go */

	/* Port events the SMA raised, dispatched from process context in order. */
	void queue_event(verbs::EventType t, uint8_t port);
	static void deliver_events(Work &w);
	static constexpr uint8_t max_pending_events = 32;
	SpinLock events_lock_;
	verbs::Event pending_[max_pending_events];
	uint8_t npending_ = 0;
	Work events_work_; /* last: cancelled before anything it uses goes */
};

} // namespace weft::hca

#endif
