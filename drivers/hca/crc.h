/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The two CRCs that end every IBA packet (IBA 7.8).
 *
 * ICRC (7.8.1): CRC-32 with the Ethernet polynomial over the fields no
 * switch or router may change, end to end: the packet from the LRH through
 * the payload and pad, with the variant fields taken as all ones (LRH VL;
 * GRH TClass, FlowLabel, HopLmt; BTH Resv8a).
 * VCRC (7.8.2): CRC-16, polynomial 0x100B, over every byte from the LRH
 * through the ICRC; recomputed hop by hop.
 *
 * Both are processed least significant bit first, seeded with all ones and
 * inverted at the end, and stored least significant byte first, as
 * Ethernet's FCS is.  (To be confirmed against a capture from real IB
 * hardware; between Weft ports both are checked consistently.)
 */
#ifndef WEFT_HCA_CRC_H
#define WEFT_HCA_CRC_H

#include <weft/span.h>

namespace weft::hca {

/* CRC-16/0x100B over @data (reflected, seed 0xffff, inverted). */
uint16_t crc16_iba(ConstBytes data);

/* ICRC of @wire (a whole packet: LRH .. VCRC, lengths already validated). */
Result<uint32_t> compute_icrc(ConstBytes wire);
/* VCRC of @wire (a whole packet). */
Result<uint16_t> compute_vcrc(ConstBytes wire);

/* Fill in the ICRC and VCRC of a built packet. */
Result<void> seal(Bytes wire);

enum class CrcCheck { Ok, BadVcrc, BadIcrc };
/* Which CRC of a received packet is wrong, VCRC checked first (as a link would). */
Result<CrcCheck> check_crcs(ConstBytes wire);
/* Only the VCRC, as a switch checks it (the ICRC is end to end). */
Result<bool> check_vcrc(ConstBytes wire);

} // namespace weft::hca

#endif
