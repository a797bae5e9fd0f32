/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Partitions for IPoIB (IBA 10.9, RFC 4391 §4): which P_Key values make a
 * child interface, where a P_Key sits in a port's table, and the name a
 * child gets.  Plain data and pure functions: KUnit weft_ipoib_pkey.
 */
#ifndef WEFT_IPOIB_PKEY_H
#define WEFT_IPOIB_PKEY_H

#include <weft/result.h>

namespace weft::ipoib {

/* IBA 10.9.1.2: bit 15 is the membership type (1 full), bits 0-14 the partition. */
inline constexpr uint16_t pkey_full_bit = 0x8000;
inline constexpr uint16_t pkey_base(uint16_t k) { return k & 0x7fff; }
/* IBA 10.9.1.1: the default partition, full (0xffff) or limited (0x7fff). */
inline constexpr uint16_t default_pkey = 0xffff;

/*
 * The P_Key of a child interface from what create_child or IFLA_IPOIB_PKEY
 * gave: 1..0xffff except 0x8000 (0 and 0x8000 name no partition, IBA
 * 10.9.1.2), with the full-membership bit set as Linux's ipoib does: an
 * interface always acts as a full member (RFC 4391 §4 puts that P_Key in
 * the broadcast MGID).  EINVAL otherwise.
 */
Result<uint16_t> child_pkey(long value);

/*
 * The index of @pkey in a port's P_Key table: an entry of the same
 * partition, a full-member one before a limited one (IBA 10.9.1.2: a
 * limited member cannot talk to another limited member).  ENOENT if the
 * partition is not in the table.
 */
Result<uint16_t> pkey_index_in(const uint16_t *table, size_t len, uint16_t pkey);

/*
 * The default name of a child: "<parent>.<pkey>" with the P_Key as given
 * (four hex digits) and at most 10 characters of the parent's name, so
 * that it fits IFNAMSIZ (16) as Linux's ipoib names them.
 */
void child_name(char *out, size_t size, const char *parent, uint16_t given);

} // namespace weft::ipoib

#endif
