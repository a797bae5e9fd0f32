// SPDX-License-Identifier: GPL-2.0
/* Rings shared with a process (ring.h). */
#include "ring.h"

namespace weft::uverbs {

Ring::Ring(void *kva, uint32_t m, uint32_t l, size_t b)
	: mask(m), log2_elem(l), elem_size(size_t(1) << l), bytes(b), kva_(kva)
{
	hdr().log2_elem_size = l;
	hdr().index_mask = m;
}

Ring::~Ring()
{
	weft_uverbs_ring_free(kva_);
}

Result<Ref<Ring>> Ring::make(uint32_t min_slots, size_t elem_size)
{
	/* The provider's indices are 32-bit and masked: at most 2^20 slots here. */
	if (min_slots == 0 || min_slots >= (1u << 20) || elem_size == 0 || elem_size > 4096)
		return Error(err::EINVAL);
	const uint32_t slots = 1u << log2_ceil(size_t(min_slots) + 1);
	const uint32_t l = log2_ceil(elem_size);
	const size_t raw = sizeof(rxe::QueueHdr) + (size_t(slots) << l);
	const size_t bytes = (raw + 4095) & ~size_t(4095);
	void *kva = weft_uverbs_ring_alloc(bytes);
	if (!kva)
		return Error(err::ENOMEM);
	auto *r = new (Gfp::Sleep) Ring(kva, slots - 1, l, bytes);
	if (!r) {
		weft_uverbs_ring_free(kva);
		return Error(err::ENOMEM);
	}
	return Ref<Ring>::adopt(r);
}

} // namespace weft::uverbs
