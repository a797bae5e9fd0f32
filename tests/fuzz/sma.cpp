// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the firmware agents of a soft CA: the SMA (drivers/hca/
 * sma*.cpp, IBA 14.2.5) and the PMA (pma.cpp, IBA 16.1), as
 * Device::process_mad offers them a MAD.  A CA node of two ports keeps its
 * state across the input's MADs, so a Set (PortInfo, P_Key table, M_Key
 * and its lease) changes what later MADs meet.  The input is records
 * (fuzz.h): a byte for the arrival port and whether virtual time passes
 * (M_Key lease), then the MAD.  Every Reply must be a response (R bit)
 * with the request's TID; the node must keep its invariants (LMC <= 7,
 * states in range).
 */
#include "sma_offer.h"

using namespace weft;
using namespace weft::hca;

namespace {

/* A CA as Hca is one to the SMA: ports 1..2, no switch tables. */
class CaNode final : public Node {
public:
	CaNode() : p1_(*this, 1), p2_(*this, 2)
	{
		node_guid = 0x0002c90300001234ull;
		p1_.guid = node_guid + 1;
		p2_.guid = node_guid + 2;
	}
	void receive(Port &, Own<PacketBuf>) override {}
	Port *port(uint8_t num) override { return num == 1 ? &p1_ : num == 2 ? &p2_ : nullptr; }
	uint8_t port_count() const override { return 2; }
	bool is_switch() const override { return false; }
	void port_changed(Port &, uint8_t, verbs::PortState) override { changes++; }
	uint32_t changes = 0;

private:
	Port p1_, p2_;
};

} // namespace

WEFT_FUZZ_TARGET(const uint8_t *data, size_t size)
{
	auto *node = new (Gfp::Sleep) CaNode;
	fuzz::check(node, "node");
	for (uint8_t n = 1; n <= 2; n++) {
		node->port(n)->set_link(verbs::PhysState::LinkUp, verbs::PortState::Active);
		node->port(n)->lid.store(n, Order::Relaxed);
	}
	fuzz::offer_all(
		*node, data, size, [](uint8_t ctl) { return uint8_t(ctl & 0x40 ? 2 : 1); },
		[&] { fuzz::check_ports(*node, 1, 2); });
	delete node;
	return 0;
}
