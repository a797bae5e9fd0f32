/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BTH opcodes (IBA 9.2.1, table 35 in Vol 1 1.3): transport in bits 7:5,
 * operation in 4:0, and for each valid opcode which extended headers follow
 * the BTH (always in the order DETH, RETH, AtomicETH, AETH, AtomicAckETH,
 * ImmDt, IETH) and whether it carries payload.
 */
#ifndef WEFT_IBA_OPCODE_H
#define WEFT_IBA_OPCODE_H

#include <weft/iba/headers.h>

namespace weft::iba {

enum class Transport : uint8_t { Rc = 0x00, Uc = 0x20, Rd = 0x40, Ud = 0x60 };

/* Operation codes, IBA 9.2.1 (low five bits). */
namespace op {
enum : uint8_t {
	SendFirst = 0x00,
	SendMiddle = 0x01,
	SendLast = 0x02,
	SendLastImm = 0x03,
	SendOnly = 0x04,
	SendOnlyImm = 0x05,
	WriteFirst = 0x06,
	WriteMiddle = 0x07,
	WriteLast = 0x08,
	WriteLastImm = 0x09,
	WriteOnly = 0x0a,
	WriteOnlyImm = 0x0b,
	ReadRequest = 0x0c,
	ReadResponseFirst = 0x0d,
	ReadResponseMiddle = 0x0e,
	ReadResponseLast = 0x0f,
	ReadResponseOnly = 0x10,
	Acknowledge = 0x11,
	AtomicAcknowledge = 0x12,
	CompareSwap = 0x13,
	FetchAdd = 0x14,
	SendLastInv = 0x16,
	SendOnlyInv = 0x17,
};
} // namespace op

constexpr uint8_t opcode(Transport t, uint8_t operation)
{
	return static_cast<uint8_t>(static_cast<uint8_t>(t) | operation);
}

/* Which headers follow the BTH. */
enum Hdr : uint8_t {
	HDeth = 1 << 0,
	HReth = 1 << 1,
	HAtomicEth = 1 << 2,
	HAeth = 1 << 3,
	HAtomicAckEth = 1 << 4,
	HImmDt = 1 << 5,
	HIeth = 1 << 6,
};

struct OpcodeInfo {
	const char *name;
	uint8_t headers;  /* Hdr mask; 0 with valid == false: not an opcode */
	bool valid;
	bool payload;     /* carries payload (possibly of zero length) */
	bool first;       /* starts a message (FIRST or ONLY) */
	bool last;        /* ends a message (LAST or ONLY) */

	constexpr size_t ext_bytes() const
	{
		return ((headers & HDeth) ? sizeof(Deth) : 0) + ((headers & HReth) ? sizeof(Reth) : 0) +
		       ((headers & HAtomicEth) ? sizeof(AtomicEth) : 0) +
		       ((headers & HAeth) ? sizeof(Aeth) : 0) +
		       ((headers & HAtomicAckEth) ? sizeof(AtomicAckEth) : 0) +
		       ((headers & HImmDt) ? sizeof(ImmDt) : 0) + ((headers & HIeth) ? sizeof(Ieth) : 0);
	}
};

/* The table entry of an opcode; entries with valid == false for everything
 * Weft does not speak (RD, CNP, manufacturer-specific, reserved). */
const OpcodeInfo &opcode_info(uint8_t opcode);

} // namespace weft::iba

#endif
