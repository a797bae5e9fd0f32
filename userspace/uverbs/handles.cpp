// SPDX-License-Identifier: GPL-2.0
/*
 * The handle table of one file (objects.h Objects): handles are slot
 * numbers, reused once freed, the table doubling up to its bound.  No
 * kernel call beyond the allocator (the host fuzz target uverbs_wqe finds
 * its AHs here).
 */
#include <weft/log.h>

#include "objects.h"

namespace weft::uverbs {

Objects::~Objects()
{
	for (size_t i = 0; i < slots_.size(); i++)
		if (slots_[i])
			weft_warn(__FILE__, __LINE__, "uverbs object table freed with objects in it");
}

Result<void> Objects::insert(UObject &o)
{
	const size_t n = slots_.size();
	for (size_t k = 0; k < n; k++) {
		const uint32_t i = uint32_t((next_ + k) % n);
		if (!slots_[i]) {
			slots_[i] = &o;
			o.id = i;
			next_ = i + 1;
			return ok();
		}
	}
	/* Full: twice the size, up to the bound. */
	const size_t grown = n ? n * 2 : 64;
	if (grown > max_objects)
		return Error(err::ENOMEM);
	auto bigger = WEFT_TRY(Array<UObject *>::make(Gfp::Sleep, grown));
	for (size_t i = 0; i < n; i++)
		bigger[i] = slots_[i];
	slots_ = move(bigger);
	slots_[n] = &o;
	o.id = uint32_t(n);
	next_ = uint32_t(n + 1);
	return ok();
}

UObject *Objects::find(uint32_t handle, ObjType t) const
{
	if (handle >= slots_.size())
		return nullptr;
	UObject *o = slots_[handle];
	return o && o->type == t ? o : nullptr;
}

void Objects::remove(UObject &o)
{
	if (o.id < slots_.size() && slots_[o.id] == &o)
		slots_[o.id] = nullptr;
}

UObject *Objects::pop()
{
	/* Onwards from the last one taken: emptying a table of n objects is O(n), not O(n^2). */
	for (; pop_at_ < slots_.size(); pop_at_++)
		if (UObject *o = exchange(slots_[pop_at_], nullptr))
			return o;
	pop_at_ = 0;
	return nullptr;
}

} // namespace weft::uverbs
