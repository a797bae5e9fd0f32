/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a port's SMA keeps beyond the fields the data path reads (LID,
 * LMC, state, P_Keys live in Port itself): the rest of PortInfo (IBA
 * 14.2.5.6), M_Key protection (IBA 14.2.4) and the SL-to-VL and VL
 * arbitration tables.  Written under the node's mgmt_lock.
 */
#ifndef WEFT_HCA_PORT_MGMT_H
#define WEFT_HCA_PORT_MGMT_H

#include <weft/iba/headers.h>
#include <weft/iba/smp_attrs.h>

namespace weft::hca {

/* What Weft's soft ports can do, as PortInfo encodes it. */
namespace port_caps {
inline constexpr uint8_t width_4x = 2, widths_supported = 1 | 2; /* 1X, 4X */
inline constexpr uint8_t speeds_supported = 1 | 2 | 4, speed_qdr = 4; /* SDR, DDR, QDR */
inline constexpr uint8_t ext_speeds_supported = 1 | 2, ext_speed_edr = 2; /* FDR, EDR */
inline constexpr uint8_t vl_cap = 1;				 /* VL0 only */
inline constexpr uint8_t vl_arb_cap = 8;			 /* entries per table */
inline constexpr uint8_t mtu_cap = static_cast<uint8_t>(iba::Mtu::M4096);
inline constexpr uint8_t resp_time_value = 8; /* 4.096 us * 2^8, about 1 ms */
} // namespace port_caps

struct PortMgmt {
	/* IBA 14.2.4: M_Key and its protection. */
	uint64_t m_key = 0;
	uint64_t lease_deadline = 0;	 /* jiffies at which protection lapses; 0: none running */
	uint16_t m_key_lease_period = 0; /* seconds; 0: the lease never runs out */
	uint16_t m_key_violations = 0;
	uint8_t m_key_protect = 0;

	uint64_t gid_prefix = 0xfe80000000000000ull; /* IBA 4.1.1 default */
	uint32_t caps = 0;			      /* CapabilityMask */
	uint8_t neighbor_mtu = port_caps::mtu_cap;
	uint8_t operational_vls = 1;
	uint8_t vl_high_limit = 0;
	uint8_t subnet_timeout = 0;
	uint8_t link_down_default = 2; /* Polling */
	uint8_t link_width_enabled = port_caps::widths_supported;
	uint8_t link_speed_enabled = port_caps::speeds_supported;
	uint8_t link_speed_ext_enabled = port_caps::ext_speeds_supported;
	uint8_t hoq_life = 0, vl_stall_count = 0;
	uint8_t local_phy_errors = 0, overrun_errors = 0;
	/* Local physical errors since the last one past the LocalPhyErrors threshold (trap.cpp). */
	uint8_t phy_errors = 0;
	uint8_t mcast_pkey_trap_suppress = 0;
	uint8_t enforce = 0; /* PortInfo's partition enforcement and raw filter bits, as on the wire */

	iba::SlToVlTable sl_to_vl{};
	iba::VlArbTable vl_arb_low{}, vl_arb_high{};
};

} // namespace weft::hca

#endif
