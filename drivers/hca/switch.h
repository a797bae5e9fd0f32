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

#include "fabric.h"

namespace weft::hca {

inline constexpr uint16_t unicast_lid_top = 0xbfff;	/* IBA 4.1.3: 0x0001-0xbfff */
inline constexpr uint16_t multicast_lid_base = 0xc000; /* 0xc000-0xfffe */
inline constexpr uint16_t permissive_lid = 0xffff;
inline constexpr uint8_t no_port = 0xff;

class Switch final : public Node, public verbs::Device {
public:
	static Result<Switch *> create(uint8_t ports);
	~Switch() override;

	void receive(Port &in, Own<PacketBuf> pkt) override;
	Port *port(uint8_t num) override { return num <= nports_ ? &ports_[num] : nullptr; }
	uint8_t port_count() const override { return nports_; }
	bool is_switch() const override { return true; }
	verbs::Device *device() override { return this; }

	Result<void> query_port(uint8_t port, verbs::PortAttr &out) override;
	Result<verbs::Gid> query_gid(uint8_t port, uint32_t index) override;
	Result<uint16_t> query_pkey(uint8_t port, uint16_t index) override;
	Result<verbs::Qp *> create_qp(verbs::Pd &pd, const verbs::QpInitAttr &init) override;

	/* Forwarding tables; a table write is a single byte/word store. */
	void set_lft(uint16_t dlid, uint8_t out);
	uint8_t lft(uint16_t dlid) const;
	void set_mft(uint16_t mlid, uint64_t port_mask);
	uint64_t mft(uint16_t mlid) const;

private:
	Switch(uint8_t ports, Array<uint8_t> lft, Array<uint64_t> mft, Port *port_array);
	void forward(Port &out, Own<PacketBuf> pkt, bool vl15);

	uint8_t nports_;
	Port *ports_; /* [0] is the management port */
	Array<uint8_t> lft_;
	Array<uint64_t> mft_;
};

} // namespace weft::hca

#endif
