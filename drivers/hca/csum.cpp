// SPDX-License-Identifier: GPL-2.0
/* Checksum offload: sums taken while copying (csum.h). */
#include "csum.h"

#include <weft/copy.h>

namespace weft::hca {

void CsumAcc::insert(const CsumInsert &ins)
{
	/* Only before the field: once past it, it was not copied raw by us. */
	if (!insert_ && pos_ <= ins.field) {
		insert_ = true;
		ins_ = ins;
	}
}

void CsumAcc::copy_run(uint8_t *dst, const uint8_t *src, size_t n)
{
	const uint32_t block = copy_csum(dst, src, n);
	sum_ = csum::add_at(sum_, block, pos_);
	if (insert_ && pos_ < ins_.start)
		head_ = csum::add_at(head_, block, pos_);
	if (insert_) {
		for (uint32_t i = 0; i < 2; i++)
			if (ins_.field + i >= pos_ && ins_.field + i < pos_ + n)
				field_[i] = dst + (ins_.field + i - pos_);
	}
	pos_ += n;
}

void CsumAcc::copy(uint8_t *dst, const uint8_t *src, size_t n)
{
	/* Split at csum_start, so that the head's sum is of whole runs. */
	if (insert_ && pos_ < ins_.start && pos_ + n > ins_.start) {
		const size_t k = ins_.start - pos_;
		copy_run(dst, src, k);
		dst += k;
		src += k;
		n -= k;
	}
	if (n)
		copy_run(dst, src, n);
}

uint32_t CsumAcc::finish()
{
	if (insert_ && field_[0] && field_[1]) {
		/* The field holds the sender's seed (a pseudo-header sum, say), summed at an even position. */
		uint16_t seed;
		uint8_t *b = reinterpret_cast<uint8_t *>(&seed);
		b[0] = *field_[0];
		b[1] = *field_[1];
		const uint16_t v = csum::field_value(csum::sub(sum_, head_));
		const uint8_t *vb = reinterpret_cast<const uint8_t *>(&v);
		*field_[0] = vb[0];
		*field_[1] = vb[1];
		sum_ = csum::add(csum::sub(sum_, seed), v);
	}
	const uint32_t s = sum_;
	reset();
	return s;
}

} // namespace weft::hca
