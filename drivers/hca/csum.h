/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checksum offload (verbs send_flag::csum, wc_flag::csum): RFC 1071
 * Internet checksum sums of a message, taken in the same pass as the copy
 * that moves its bytes.
 *
 * Sums are the kernel's __wsum: unfolded 32-bit ones' complement sums of
 * 16-bit words in memory order, a block's first byte taken as even; a
 * block at an odd position is rotated by a byte before it is added (RFC
 * 1071 §2(B), byte order independence).
 *
 * CsumAcc follows one message as its bytes are placed, in order.  On the
 * in-host path the receiving QP copies straight from the sender's memory,
 * so it also does the sender's checksum insertion (send_flag::csum): it
 * notes where the checksum field landed and, at the end of the message,
 * writes the complement of the folded sum of [csum_start, end) there and
 * corrects its own sum.  Packets that leave that path (a capture, a fault,
 * a cable) were filled by the sender, which inserted the checksum itself
 * (sg_fill); the field then arrives final and nothing is patched.
 */
#ifndef WEFT_HCA_CSUM_H
#define WEFT_HCA_CSUM_H

#include <weft/rt/kapi.h>
#include <weft/util.h>

namespace weft::hca {

namespace csum {
/* One's complement addition, end-around carry (RFC 1071 §2(A)). */
constexpr uint32_t add(uint32_t a, uint32_t b)
{
	const uint32_t r = a + b;
	return r + (r < b);
}
constexpr uint32_t sub(uint32_t a, uint32_t b) { return add(a, ~b); }
/* @block's sum, its first byte at message position @pos. */
constexpr uint32_t add_at(uint32_t sum, uint32_t block, uint64_t pos)
{
	return add(sum, (pos & 1) ? (block >> 8) | (block << 24) : block);
}
/* Folded to 16 bits, not complemented. */
constexpr uint16_t fold(uint32_t s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return static_cast<uint16_t>(s);
}
/* The value a checksum field gets: the complement, 0 sent as 0xffff (RFC 768). */
constexpr uint16_t field_value(uint32_t s)
{
	const uint16_t v = static_cast<uint16_t>(~fold(s));
	return v ? v : 0xffff;
}
} // namespace csum

/* What the sender asked for, in message offsets (both even). */
struct CsumInsert {
	uint32_t start = 0;
	uint32_t field = 0;
};

class CsumAcc {
public:
	/* Copy @n bytes to @dst (the message's bytes at position pos()) and sum them. */
	void copy(uint8_t *dst, const uint8_t *src, size_t n);
	/* Message bytes summed so far. */
	uint64_t pos() const { return pos_; }
	/*
	 * The bytes now being copied come straight from a sender that asked
	 * for @ins: the field will be written by finish().
	 */
	void insert(const CsumInsert &ins);
	/* End of message: insert the checksum if asked; the sum of the bytes as placed. */
	uint32_t finish();
	void reset() { *this = CsumAcc{}; }

private:
	void copy_run(uint8_t *dst, const uint8_t *src, size_t n);

	uint64_t pos_ = 0;
	uint32_t sum_ = 0;
	bool insert_ = false;
	CsumInsert ins_;
	uint32_t head_ = 0;		 /* sum of [0, ins_.start) */
	uint8_t *field_[2] = {};	 /* where the field's two bytes landed */
};

} // namespace weft::hca

#endif
