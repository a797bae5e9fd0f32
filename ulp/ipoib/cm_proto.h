/* SPDX-License-Identifier: GPL-2.0 */
/*
 * IPoIB connected mode on the wire (RFC 4755): the connected-mode flag of
 * the link-layer address, the service ID a receiver listens on, and the
 * private data of REQ and REP.  Plain data and pure functions: the KUnit
 * suite weft_ipoib_cm covers them.
 */
#ifndef WEFT_IPOIB_CM_PROTO_H
#define WEFT_IPOIB_CM_PROTO_H

#include <weft/span.h>
#include <weft/wire.h>

#include "addr.h"

namespace weft::ipoib::cmp {

/* RFC 4755 §3.1: the "C" bit of the address's first byte: the node takes RC connections. */
inline constexpr uint8_t flag_connected = 0x80;
/*
 * RFC 4755 §4: the service ID is the IETF prefix (IBA Annex A3) with the
 * receiver's UD QPN in the low 24 bits; the in-tree driver uses the same.
 */
inline constexpr uint64_t ietf_service_prefix = 0x1000000000000000ull;
/* The largest connected-mode MTU (64 KiB less 16, so the header ends aligned). */
inline constexpr uint32_t max_mtu = 0x10000 - 0x10;
/* A receive buffer: the encapsulation header and one packet. */
inline constexpr uint32_t buf_size = max_mtu + encap_len;

uint64_t service_id(uint32_t qpn);
bool has_flag(const HwAddr &a);
void set_flag(HwAddr &a);

/*
 * RFC 4755 §5: REQ and REP carry the sender's UD QPN and the largest
 * message it takes (its receive buffer size, encapsulation header
 * included).  The QPN's top byte is ignored on receive.
 */
struct PrivData {
	be32 qpn;
	be32 mtu;
};
static_assert(sizeof(PrivData) == 8);

PrivData encode(uint32_t ud_qpn, uint32_t rx_buf_size);
/*
 * The peer's largest IP packet (its buffer less the encapsulation
 * header, at most max_mtu); 0 if the private data is too short or the
 * buffer holds no packet.
 */
uint32_t decode_mtu(ConstBytes pd, uint32_t *qpn = nullptr);

} // namespace weft::ipoib::cmp

#endif
