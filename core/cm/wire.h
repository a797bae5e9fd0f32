/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading received CM messages (IBA Vol 1 12.6, 12.8, 12.11): which
 * message a MAD is, its IDs, its private data, and the fields each handler
 * takes into connection state, decoded and checked here (the handlers'
 * lookups still compare the two comm IDs in place).  No kernel object and
 * no CM state in it, so the host fuzzes it as it is (tests/fuzz/cm.cpp).
 */
#ifndef WEFT_CM_WIRE_H
#define WEFT_CM_WIRE_H

#include <weft/cm/cm.h>
#include <weft/mad/service.h>

namespace weft::cm::wire {

/* IBA 12.6 (table 104), 12.8, 12.11: the messages by AttributeID. */
enum class Kind : uint8_t { Req, Mra, Rej, Rep, Rtu, Dreq, Drep, Lap, Apr, SidrReq, SidrRep, Other };
Kind kind_of(const mad::Mad &m);

/*
 * The sender's comm ID (or SIDR RequestID) and the one it believes is ours
 * (0 where the message has none: REQ, the SIDR pair).
 */
struct Ids {
	uint32_t sender = 0, ours = 0;
};
Ids ids(const mad::Mad &m, Kind k);

/* The message's private data area (IBA 12.6 tables 106-120; empty for LAP, APR and Other). */
ConstBytes private_data(const mad::Mad &m, Kind k);

/* IBA 12.6.5: what the passive side takes from a REQ. */
struct Req {
	/* PathPacketPayloadMTU 256..4096, a primary LID, a QPN past QP1 (else REJ, 12.6.7.2). */
	bool valid = false;
	bool rc_or_uc = false; /* TransportServiceType: only RC and UC are served */
	RequestInfo info{};    /* all but port */
	uint32_t remote_psn = 0;
	uint8_t sl = 0, ack_timeout = 0;
	uint8_t pkt_life = 0; /* IBA 12.7.34: from the ACK timeout the active side chose */
	uint8_t peer_cm_timeout = 0, max_cm_retries = 0;
};
Req req(const mad::Mad &m);

/* IBA 12.6.8: what the active side takes from a REP. */
struct Rep {
	uint64_t ca_guid = 0;
	uint32_t qpn = 0, psn = 0;
	uint8_t rnr_retry = 0, responder_resources = 0, initiator_depth = 0;
};
Rep rep(const mad::Mad &m);

/* IBA 12.6.7: a REJ's reason and its ARI (RejectedInfoLength, at most 72 bytes). */
struct Rej {
	uint16_t reason = 0;
	uint8_t rejected = 0; /* MessageRejected: iba::cm::msg */
	ConstBytes ari;
};
Rej rej(const mad::Mad &m);

/* IBA 12.6.6: which message an MRA is for, and how long it asks the sender to wait. */
struct Mra {
	uint8_t mraed = 0; /* iba::cm::msg; 3 is reserved */
	uint32_t service_timeout_ms = 0;
};
Mra mra(const mad::Mad &m);

/* IBA 12.6.10: the QPN a DREQ names (the receiver's own). */
uint32_t dreq_qpn(const mad::Mad &m);

/* IBA 12.11.1-2: SIDR_REQ and SIDR_REP. */
struct SidrReq {
	uint16_t pkey = 0;
	uint64_t service_id = 0;
};
SidrReq sidr_req(const mad::Mad &m);
SidrInfo sidr_rep(const mad::Mad &m);

} // namespace weft::cm::wire

#endif
