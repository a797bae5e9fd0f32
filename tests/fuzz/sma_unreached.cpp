// SPDX-License-Identifier: GPL-2.0
/*
 * For the sma target: what the SMA and PMA sources link against but a CA
 * node without a verbs device never reaches (the switch's forwarding
 * tables, the device's NodeDescription; capture: capture_unreached.cpp).
 * Reaching one is a finding: each WARNs, which aborts the run.
 */
#include <weft/verbs/verbs.h>

#include "../../drivers/hca/fabric.h"
#include "../../drivers/hca/switch.h"

namespace weft::hca {

void Switch::set_lft(uint16_t, uint8_t) { weft_warn(__FILE__, __LINE__, "switch table at a CA"); }
uint8_t Switch::lft_entry(uint16_t) const
{
	weft_warn(__FILE__, __LINE__, "switch table at a CA");
	return 0;
}
void Switch::set_mft(uint16_t, uint64_t) { weft_warn(__FILE__, __LINE__, "switch table at a CA"); }
uint64_t Switch::mft(uint16_t) const
{
	weft_warn(__FILE__, __LINE__, "switch table at a CA");
	return 0;
}

} // namespace weft::hca

void weft::verbs::Device::node_desc(char out[65])
{
	weft_warn(__FILE__, __LINE__, "a device at a node that has none");
	out[0] = 0;
}
