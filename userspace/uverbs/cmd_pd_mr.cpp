// SPDX-License-Identifier: GPL-2.0
/*
 * ALLOC/DEALLOC_PD, REG/DEREG_MR, ALLOC/DEALLOC_MW and CREATE/DESTROY_AH,
 * as the in-tree 6.1 uverbs_cmd.c answers them (ib_uverbs_alloc_pd(),
 * ib_uverbs_reg_mr(), ib_uverbs_alloc_mw(), ib_uverbs_create_ah()), on the
 * file's verbs context (IBA 11.2.2.1, 11.2.3.1-2, 11.2.8.1, 11.2.8.9,
 * 11.2.9.1-3).  A user MR is the process's memory,
 * pinned as in-tree ib_umem_get() pins it (shim_uverbs.c).
 */
#include "abi_rxe.h"
#include "abi_verbs.h"
#include "commands.h"

namespace weft::uverbs {

namespace {

/* ibv_access_flags: the relaxed-ordering range is optional and may be ignored (in-tree IB_ACCESS_OPTIONAL). */
constexpr uint32_t access_optional = 0x3ff00000u;

/* Undo a create whose response could not be written (in-tree uobj_alloc_abort()). */
template <typename F> Result<void> respond_or(Call &c, const void *resp, size_t len, F undo)
{
	auto r = c.response(resp, len);
	if (!r)
		undo();
	return r;
}

/*
 * REG_MR's pages pinned into @u, and their kernel addresses.  Pinning
 * charges them against RLIMIT_MEMLOCK first: a length beyond the limit is
 * refused before anything its size is allocated.
 */
Result<Array<uint64_t>> pin(UMr &u, const abi::RegMr &req, uint32_t access, size_t npages)
{
	/* IBA 10.6.3.2: anything the HCA may write needs the pages writable. */
	const bool writable = access & (verbs::access::local_write | verbs::access::remote_write |
					verbs::access::remote_atomic);
	int e = 0;
	u.umem = weft_uverbs_umem_pin(req.start, req.length, writable, npages, &e);
	if (!u.umem)
		return Error(-e);
	auto kvas = Array<uint64_t>::make(Gfp::Sleep, npages, Sized::ByInput);
	if (!kvas) {
		u.release();
		return kvas.error();
	}
	weft_uverbs_umem_kvas(u.umem, kvas.value().data(), npages);
	return kvas;
}

} // namespace

Result<void> cmd_alloc_pd(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::AllocPd req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	File &f = c.file;
	verbs::Pd *pd = WEFT_TRY(f.context()->alloc_pd());
	auto *u = new (Gfp::Sleep) UPd(pd);
	if (!u || !f.add_object(*u)) {
		delete u;
		(void)f.context()->dealloc_pd(pd);
		return Error(err::ENOMEM);
	}
	abi::AllocPdResp resp{u->id};
	return respond_or(c, &resp, sizeof(resp), [&] {
		(void)f.context()->dealloc_pd(pd);
		f.free_object(*u);
	});
}

Result<void> cmd_dealloc_pd(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::DeallocPd req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	File &f = c.file;
	UPd *u = f.objects().find<UPd>(req.pd_handle, ObjType::Pd);
	if (!u)
		return Error(err::EINVAL);
	/* IBA 11.2.3.2: EBUSY while MRs, QPs or AHs use it. */
	WEFT_TRY(f.context()->dealloc_pd(u->pd));
	f.free_object(*u);
	return ok();
}

Result<void> cmd_reg_mr(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::RegMr req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	File &f = c.file;
	/* In-tree: the buffer and the iova share their offset in a page (ib_umem_find_best_pgsz()). */
	if ((req.start & 4095) != (req.hca_va & 4095) || !req.length)
		return Error(err::EINVAL);
	const uint32_t access = req.access_flags & ~access_optional;
	if (access & ~verbs::access::all)
		return Error(err::EINVAL); /* zero-based, on-demand paging, huge pages: not offered */
	UPd *pd = f.objects().find<UPd>(req.pd_handle, ObjType::Pd);
	if (!pd)
		return Error(err::EINVAL);
	if (req.length > f.device().attr().max_mr_size || req.start + req.length < req.start)
		return Error(err::EINVAL);
	const uint64_t first = req.start & ~uint64_t(4095);
	const size_t npages = size_t((req.start + req.length + 4095 - first) >> 12);
	auto *u = new (Gfp::Sleep) UMr();
	if (!u)
		return Error(err::ENOMEM);
	auto kvas = pin(*u, req, access, npages);
	if (!kvas) {
		delete u;
		return kvas.error();
	}
	auto mr = f.context()->reg_user_mr(pd->pd, req.hca_va, req.length, access, move(kvas.value()),
					   uint32_t(req.start & 4095), u);
	if (!mr) {
		delete u; /* reg_user_mr released the pages */
		return mr.error();
	}
	u->mr = mr.value();
	if (!f.add_object(*u)) {
		(void)f.context()->dereg_mr(u->mr);
		delete u;
		return Error(err::ENOMEM);
	}
	abi::RegMrResp resp{u->id, u->mr->lkey, u->mr->rkey};
	return respond_or(c, &resp, sizeof(resp), [&] {
		(void)f.context()->dereg_mr(u->mr);
		f.free_object(*u);
	});
}

Result<void> cmd_dereg_mr(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::DeregMr req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	File &f = c.file;
	UMr *u = f.objects().find<UMr>(req.mr_handle, ObjType::Mr);
	if (!u)
		return Error(err::EINVAL);
	/*
	 * Waits for the data path to let go, then the pages are unpinned
	 * (UMr::release()); EBUSY while windows are bound to it (IBA 10.6.7.2.1).
	 */
	WEFT_TRY(f.context()->dereg_mr(u->mr));
	f.free_object(*u);
	return ok();
}

/* Bound by BIND_MW work requests in the QP's ring (qp_send.cpp), as librxe posts them. */
Result<void> cmd_alloc_mw(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::AllocMw req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	File &f = c.file;
	UPd *pd = f.objects().find<UPd>(req.pd_handle, ObjType::Pd);
	if (!pd)
		return Error(err::EINVAL);
	/* In-tree: EINVAL for a type other than 1 and 2 (pyverbs' wrong-type test). */
	if (req.mw_type != uint8_t(verbs::MwType::Type1) && req.mw_type != uint8_t(verbs::MwType::Type2))
		return Error(err::EINVAL);
	verbs::Mw *mw = WEFT_TRY(f.context()->alloc_mw(pd->pd, verbs::MwType(req.mw_type)));
	auto *u = new (Gfp::Sleep) UMw(mw);
	if (!u || !f.add_object(*u)) {
		delete u;
		(void)f.context()->dealloc_mw(mw);
		return Error(err::ENOMEM);
	}
	abi::AllocMwResp resp{u->id, mw->rkey};
	return respond_or(c, &resp, sizeof(resp), [&] {
		(void)f.context()->dealloc_mw(mw);
		f.free_object(*u);
	});
}

Result<void> cmd_dealloc_mw(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::DeallocMw req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	File &f = c.file;
	UMw *u = f.objects().find<UMw>(req.mw_handle, ObjType::Mw);
	if (!u)
		return Error(err::EINVAL);
	WEFT_TRY(f.context()->dealloc_mw(u->mw));
	f.free_object(*u);
	return ok();
}

Result<void> cmd_create_ah(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::CreateAh req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	File &f = c.file;
	/* librxe takes the kernel's AH only with an ah_num: there must be room for it. */
	if (c.drv_out.len < sizeof(rxe::CreateAhResp))
		return Error(err::EINVAL);
	UPd *pd = f.objects().find<UPd>(req.pd_handle, ObjType::Pd);
	if (!pd)
		return Error(err::EINVAL);
	verbs::AhAttr a;
	a.dlid = req.attr.dlid;
	a.sl = req.attr.sl;
	a.src_path_bits = req.attr.src_path_bits;
	a.static_rate = req.attr.static_rate;
	a.port = req.attr.port_num;
	a.global = req.attr.is_global;
	__builtin_memcpy(a.dgid.raw, req.attr.dgid, 16);
	a.sgid_index = req.attr.sgid_index;
	a.hop_limit = req.attr.hop_limit;
	a.traffic_class = req.attr.traffic_class;
	a.flow_label = req.attr.flow_label;
	verbs::Ah *ah = WEFT_TRY(f.context()->create_ah(pd->pd, a));
	auto *u = new (Gfp::Sleep) UAh(ah);
	if (!u || !f.add_object(*u)) {
		delete u;
		(void)f.context()->destroy_ah(ah);
		return Error(err::ENOMEM);
	}
	u->user_handle = req.user_handle;
	auto undo = [&] {
		(void)f.context()->destroy_ah(ah);
		f.free_object(*u);
	};
	/* The WQEs of a UD QP name the AH by ah_num: its handle + 1 (0 means "none"). */
	rxe::CreateAhResp drv{u->id + 1, 0};
	auto r = c.driver_response(&drv, sizeof(drv));
	if (!r) {
		undo();
		return r;
	}
	abi::CreateAhResp resp{u->id};
	return respond_or(c, &resp, sizeof(resp), undo);
}

Result<void> cmd_destroy_ah(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::DestroyAh req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	File &f = c.file;
	UAh *u = f.objects().find<UAh>(req.ah_handle, ObjType::Ah);
	if (!u)
		return Error(err::EINVAL);
	WEFT_TRY(f.context()->destroy_ah(u->ah));
	f.free_object(*u);
	return ok();
}

} // namespace weft::uverbs
