/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A ring shared with a process (abi_rxe.h): kernel memory the process maps
 * with mmap() at the ring's offset.  Refcounted: the verbs object using it
 * holds one reference, the File's mmap table one while it is listed, and
 * an mmap() in progress one; the memory is freed with the last (pages
 * already mapped stay with the process until it unmaps them).
 *
 * The kernel's own view of the ring (mask, element size, its index) is
 * kept here, never re-read from the header the process can write.
 */
#ifndef WEFT_UVERBS_RING_H
#define WEFT_UVERBS_RING_H

#include <weft/list.h>
#include <weft/ref.h>

#include "abi_rxe.h"

namespace weft::uverbs {

class Ring final : public RefCounted<Ring> {
public:
	/* A ring of at least @min_slots + 1 slots (a power of two) of @elem_size bytes (rounded up to one). */
	static Result<Ref<Ring>> make(uint32_t min_slots, size_t elem_size);
	~Ring();

	rxe::QueueHdr &hdr() const { return *static_cast<rxe::QueueHdr *>(kva_); }
	/* Slot @i (masked) of the ring. */
	uint8_t *slot(uint32_t i) const
	{
		return static_cast<uint8_t *>(kva_) + sizeof(rxe::QueueHdr) + (size_t(i & mask) << log2_elem);
	}
	/* Entries the process may have in it at once (one slot stays empty). */
	uint32_t capacity() const { return mask; }
	/* The process's index as it wrote it, brought into range. */
	uint32_t producer() const { return hdr().producer_index.load(Order::Acquire) & mask; }
	uint32_t consumer() const { return hdr().consumer_index.load(Order::Acquire) & mask; }
	rxe::MmInfo mminfo() const { return {offset, uint32_t(bytes), 0}; }
	void *kva() const { return kva_; }

	const uint32_t mask;
	const uint32_t log2_elem;
	const size_t elem_size;
	const size_t bytes;
	uint64_t offset = 0; /* the mmap offset, set when listed */
	ListNode node;	     /* on the File's mmap table */

private:
	Ring(void *kva, uint32_t mask, uint32_t log2_elem, size_t bytes);
	void *kva_;
};

} // namespace weft::uverbs

#endif
