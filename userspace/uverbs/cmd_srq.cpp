// SPDX-License-Identifier: GPL-2.0
/*
 * CREATE/MODIFY/QUERY/DESTROY_SRQ (IBA 11.2.3.3-6), as the in-tree 6.1
 * uverbs_cmd.c and rxe answer them: the SRQ's receive WQEs are a ring the
 * process maps and posts to with no system call.
 */
#include "abi_rxe.h"
#include "abi_verbs.h"
#include "commands.h"
#include "wqe.h"

namespace weft::uverbs {

Result<void> cmd_create_srq(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::CreateSrq req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	File &f = c.file;
	const verbs::DeviceAttr &a = f.device().attr();
	if (c.drv_out.len < sizeof(rxe::CreateSrqResp))
		return Error(err::EINVAL);
	if (req.max_wr == 0 || req.max_wr > a.max_srq_wr || req.max_sge > a.max_srq_sge)
		return Error(err::EINVAL);
	UPd *pd = f.objects().find<UPd>(req.pd_handle, ObjType::Pd);
	if (!pd)
		return Error(err::EINVAL);
	Ref<Ring> ring = WEFT_TRY(Ring::make(req.max_wr, recv_slot_size(req.max_sge)));
	const uint32_t cap = ring->capacity();
	if (req.srq_limit > cap)
		return Error(err::EINVAL);
	auto *u = new (Gfp::Sleep) USrq(move(ring), req.max_sge, f.events(), req.user_handle);
	if (!u)
		return Error(err::ENOMEM);
	auto srq = f.context()->create_srq(pd->pd, cap, req.max_sge, u, u);
	if (!srq) {
		delete u;
		return srq.error();
	}
	u->srq = srq.value();
	if (req.srq_limit)
		(void)u->arm_limit(req.srq_limit);
	if (!f.add_object(*u)) {
		(void)f.context()->destroy_srq(u->srq);
		delete u;
		return Error(err::ENOMEM);
	}
	rxe::CreateSrqResp drv{u->rings[0]->mminfo(), 0, 0};
	abi::CreateSrqResp resp{u->id, cap, req.max_sge, 0};
	auto r = c.driver_response(&drv, sizeof(drv));
	if (r)
		r = c.response(&resp, sizeof(resp));
	if (!r) {
		(void)f.context()->destroy_srq(u->srq);
		f.free_object(*u);
	}
	return r;
}

/*
 * MODIFY_SRQ max_wr, as librxe drives it: a new ring, its place written
 * where the driver data points (rxe's urxe_modify_srq), then the posted
 * WQEs moved over; librxe unmaps the old ring and maps the new one.
 */
namespace {

Result<void> resize_srq(Call &c, USrq &u, uint32_t max_wr)
{
	File &f = c.file;
	rxe::ModifySrqCmd drv{};
	if (c.drv_in.len < sizeof(drv))
		return Error(err::EINVAL);
	WEFT_TRY(from_errno(weft_uverbs_copy_from_user(&drv, c.drv_in.ptr(), sizeof(drv))));
	/* rxe_srq_chk_attr(): EINVAL beyond the device's maximum. */
	if (max_wr == 0 || max_wr > f.device().attr().max_srq_wr)
		return Error(err::EINVAL);
	Ref<Ring> fresh = WEFT_TRY(Ring::make(max_wr, u.rings[0]->elem_size));
	f.list_ring(*fresh);
	const rxe::MmInfo mi = fresh->mminfo();
	auto r = from_errno(weft_uverbs_copy_to_user(
		reinterpret_cast<void *>(static_cast<uintptr_t>(drv.mmap_info_addr)), &mi, sizeof(mi)));
	if (r)
		r = u.resize(fresh);
	/* Whichever ring is not the SRQ's now leaves the mmap table (pages mapped stay mapped). */
	f.unlist_ring(*fresh);
	return r;
}

} // namespace

Result<void> cmd_modify_srq(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::ModifySrq req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	USrq *u = c.file.objects().find<USrq>(req.srq_handle, ObjType::Srq);
	if (!u)
		return Error(err::EINVAL);
	if (req.attr_mask & ~(abi::srq_max_wr | abi::srq_limit))
		return Error(err::EINVAL);
	if (req.attr_mask & abi::srq_max_wr)
		WEFT_TRY(resize_srq(c, *u, req.max_wr));
	if (req.attr_mask & abi::srq_limit)
		return u->srq->arm_limit(req.srq_limit);
	return ok();
}

Result<void> cmd_query_srq(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::QuerySrq req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	USrq *u = c.file.objects().find<USrq>(req.srq_handle, ObjType::Srq);
	if (!u)
		return Error(err::EINVAL);
	abi::QuerySrqResp r{u->rings[0]->capacity(), u->max_sge, u->limit(), 0};
	return c.response(&r, sizeof(r));
}

Result<void> cmd_destroy_srq(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::DestroySrq req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	File &f = c.file;
	USrq *u = f.objects().find<USrq>(req.srq_handle, ObjType::Srq);
	if (!u)
		return Error(err::EINVAL);
	WEFT_TRY(f.context()->destroy_srq(u->srq));
	u->events->purge(&u->async_events);
	abi::DestroySrqResp resp{u->async_events.reported.load(Order::Relaxed)};
	f.free_object(*u);
	return c.response(&resp, sizeof(resp));
}

} // namespace weft::uverbs
