// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the SMA and PMA of a soft switch's management port 0
 * (drivers/hca/sma*.cpp, sma_switch.cpp, pma.cpp; IBA 14.2.5, 18.2.4.3,
 * 16.1) on a real hca::Switch: SwitchInfo, LinearForwardingTable,
 * MulticastForwardingTable, PortInfo of every port (a switch's external
 * ports have no LID of their own), the P_Key tables, M_Key and its lease in
 * virtual time.  State is kept across the input's MADs, so a Set changes
 * what later MADs meet.  The input is records (fuzz.h): a byte for the
 * arrival port and whether virtual time passes, then the MAD.
 *
 * Checks: a Reply is a response with the request's TID; LinearFDBTop never
 * names a DLID above the unicast range and every LFT entry reads back a
 * port the switch has or "none"; every MFT mask names only the switch's
 * ports; LMC 0..7 and port states in range on every port.  (MulticastFDBTop
 * is kept as the SM writes it and read back: forwarding never uses it.)
 */
#include "sma_offer.h"

#include "../../drivers/hca/hca_module.h"
#include "../../drivers/hca/switch.h"

using namespace weft;
using namespace weft::hca;

namespace {

constexpr uint8_t nports = 6;

void check_tables(Switch &sw)
{
	fuzz::check(sw.lft_top() <= unicast_lid_top, "LinearFDBTop in the unicast range");
	/* Sampled: the whole LFT is 48K entries. */
	for (uint32_t lid = 0; lid <= unicast_lid_top; lid += 499) {
		const uint8_t p = sw.lft_entry(static_cast<uint16_t>(lid));
		fuzz::check(p == no_port || p <= nports, "an LFT entry names a port of the switch or none");
	}
	for (uint32_t mlid = multicast_lid_base; mlid < permissive_lid; mlid += 251)
		fuzz::check(!(sw.mft(static_cast<uint16_t>(mlid)) >> (nports + 1)), "an MFT mask names only ports it has");
	fuzz::check_ports(sw, 0, nports);
}

} // namespace

WEFT_FUZZ_TARGET(const uint8_t *data, size_t size)
{
	static bool fabric_up;
	if (!fabric_up) {
		weft_hca_fabric_init();
		fabric_up = true;
	}
	auto made = Switch::create(nports);
	fuzz::check(bool(made), "switch");
	Switch &sw = *made.value();
	for (uint8_t n = 1; n <= nports; n++)
		sw.port(n)->set_link(verbs::PhysState::LinkUp, verbs::PortState::Active);
	sw.port(0)->lid.store(1, Order::Relaxed);
	/* The port an SMP came in on (0: from the switch itself). */
	fuzz::offer_all(
		sw, data, size, [](uint8_t ctl) { return uint8_t((ctl & 0x7) % (nports + 1)); },
		[&] { check_tables(sw); });
	sw.put();
	return 0;
}
