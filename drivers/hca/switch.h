/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The soft IB switch (IBA Vol 1 ch. 18): management port 0 plus N external
 * ports, unicast forwarding by DLID through the linear forwarding table
 * (IBA 18.2.4.3.2) and multicast through the multicast forwarding table
 * (IBA 18.2.4.3.3).  Both are programmable (today by the fabric's
 * test-only autoconfiguration, later by the SMA).
 */
#ifndef WEFT_HCA_SWITCH_H
#define WEFT_HCA_SWITCH_H

#include <weft/verbs/verbs.h>
#include <weft/work.h>

#include "fabric.h"
#include "trap.h"

namespace weft::hca {

inline constexpr uint16_t unicast_lid_top = 0xbfff;	/* IBA 4.1.3: 0x0001-0xbfff */
inline constexpr uint16_t multicast_lid_base = 0xc000; /* 0xc000-0xfffe */
inline constexpr uint16_t permissive_lid = 0xffff;
inline constexpr uint8_t no_port = 0xff;

/* SwitchInfo's settable part (IBA 14.2.5.4), under the switch's mgmt_lock. */
struct SwitchMgmt {
	uint16_t multicast_fdb_top = 0;
	uint8_t default_port = 0, default_mcast_primary = no_port, default_mcast_not_primary = no_port;
	uint8_t life_time_value = 0;
	bool port_state_change = false;
	/* Trap 128 (trap_work_): still to be sent, until repressed or out of tries. */
	bool trap_pending = false;
	uint8_t trap_tries = 0;
	uint32_t trap_tid = 0;
};

class Switch final : public Node, public verbs::Device {
public:
	static constexpr uint16_t mcast_fdb_cap = permissive_lid - multicast_lid_base;

	static Result<Switch *> create(uint8_t ports);
	~Switch() override;

	void receive(Port &in, Own<PacketBuf> pkt) override;
	void link_changed(Port &p) override;
	void port_changed(Port &p, uint8_t what, verbs::PortState was) override;
	/* Trap 128 (its own state) or one of port 0's other notices (traps_). */
	void trap_repressed_locked(Port &p, uint64_t tid) override;
	TrapSender *trap_sender() override { return &traps_; }
	void send_notice(Port &from, Own<PacketBuf> pkt) override;
	/* Port 0's CapabilityMask (IBA 14.2.5.6); a change is trap 144. */
	Result<void> modify_port(uint8_t port, uint32_t set_caps, uint32_t clear_caps) override;
	Port *port(uint8_t num) override { return num <= nports_ ? &ports_[num] : nullptr; }
	uint8_t port_count() const override { return nports_; }
	bool is_switch() const override { return true; }
	verbs::Device *device() override { return this; }

	Result<void> query_port(uint8_t port, verbs::PortAttr &out) override;
	Result<verbs::Gid> query_gid(uint8_t port, uint32_t index) override;
	Result<uint16_t> query_pkey(uint8_t port, uint16_t index) override;
	Result<verbs::Qp *> create_qp(verbs::Pd &pd, const verbs::QpInitAttr &init) override;
	verbs::MadOutcome process_mad(const verbs::MadIn &in, const uint8_t *mad, uint8_t *out) override;

	SwitchMgmt mgmt;

	/*
	 * Forwarding tables; a table write is a single byte/word store.  IBA
	 * 18.2.4.3.2: DLIDs above LinearFDBTop are not forwarded; programming
	 * an entry above it raises it.
	 */
	void set_lft(uint16_t dlid, uint8_t out);
	uint8_t lft(uint16_t dlid) const;
	uint8_t lft_entry(uint16_t dlid) const; /* whatever LinearFDBTop says */
	uint16_t lft_top() const { return lft_top_.load(Order::Relaxed); }
	void set_lft_top(uint16_t top) { lft_top_.store(top, Order::Relaxed); }
	void set_mft(uint16_t mlid, uint64_t port_mask);
	uint64_t mft(uint16_t mlid) const;

private:
	Switch(uint8_t ports, Array<Atomic<uint8_t>> lft, Array<Atomic<uint64_t>> mft, Port *port_array);
	void forward(Port &out, Own<PacketBuf> pkt, bool vl15);
	/* The SMI of the management port (switch_smi.cpp). */
	bool for_smi(uint16_t dlid) const;
	/* A packet that ends at port 0: CRCs checked, parsed (into @out); failures counted at @in. */
	bool port0_parse(Port &in, PacketBuf &pkt, Packet &out);
	void smi_receive(Port &in, Own<PacketBuf> pkt);
	void smi_answer(Port &in, const iba::Lrh &lrh, const uint8_t *req);
	void smi_send(Own<PacketBuf> pkt, uint8_t port);
	void smi_route(Own<PacketBuf> pkt, uint16_t dlid);
	void smi_dr(Port &in, Own<PacketBuf> pkt, uint8_t from);
	/* The GSI of the management port (switch_gsi.cpp): QP1, its PMA. */
	bool for_port0(uint16_t dlid) const;
	void gsi_receive(Port &in, Own<PacketBuf> pkt);
	/* Trap 128 to the SM (switch_smi.cpp), from trap_work_, again until repressed. */
	static void trap_tick(DelayedWork &w);
	void send_trap_128(uint16_t sm_lid, uint16_t lid, uint64_t m_key, uint32_t tid);

	uint8_t nports_;
	Port *ports_; /* [0] is the management port */
	/* Written by the SMA, read by forwarding without a lock: Relaxed, no entry orders another. */
	Array<Atomic<uint8_t>> lft_;
	Array<Atomic<uint64_t>> mft_;
	Atomic<uint16_t> lft_top_{0};
	DelayedWork trap_work_;
	/* Port 0's traps but 128 (256 from the SMA, 144); stopped in ~Switch before the ports go. */
	TrapSender traps_{*this};
};

} // namespace weft::hca

#endif
