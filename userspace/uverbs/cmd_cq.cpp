// SPDX-License-Identifier: GPL-2.0
/*
 * CREATE_COMP_CHANNEL, CREATE/DESTROY_CQ and REQ_NOTIFY_CQ, as the in-tree
 * 6.1 uverbs_cmd.c and rxe answer them (IBA 11.2.6.1-4 Create/Destroy CQ,
 * 11.4.2.2 Request Completion Notification).  A CQ's completions are
 * written to a ring the process maps (librxe polls it without a system
 * call); its completion events go to its channel.
 */
#include "abi_rxe.h"
#include "abi_verbs.h"
#include "commands.h"

namespace weft::uverbs {

Result<void> cmd_create_comp_channel(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::CreateCompChannel req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	Ref<CompChannel> ch = WEFT_TRY(make_ref<CompChannel>(Gfp::Sleep));
	ch->owner = &c.file;
	int fd = -1, e = 0;
	ch->get(); /* the event file's */
	weft_uverbs_evfd *efd = weft_uverbs_evfd_reserve(static_cast<EventSource *>(ch.get()), &fd, &e);
	if (!efd) {
		ch->put();
		return Error(-e);
	}
	abi::CreateCompChannelResp resp{uint32_t(fd)};
	auto sent = c.response(&resp, sizeof(resp));
	if (!sent) {
		weft_uverbs_evfd_abort(efd);
		return sent;
	}
	weft_uverbs_evfd_commit(efd);
	c.file.add_channel(*ch);
	return ok();
}

namespace {

/*
 * The completion channel behind @fd (-1: none), with a reference: one
 * made through @f.  In-tree ib_uverbs_lookup_comp_file() answers EBADF
 * for an fd that is not open, not a completion channel, or made through
 * another uverbs file (lookup_get_fd_uobject()).
 */
Result<Ref<CompChannel>> channel_of(const File &f, int32_t fd)
{
	if (fd < 0)
		return Ref<CompChannel>();
	auto *src = static_cast<EventSource *>(weft_uverbs_evfd_lookup(fd));
	if (!src)
		return Error(err::EBADF);
	/* A closed channel's file is gone: its address may be another's now. */
	if (!src->is_comp_channel() || static_cast<CompChannel *>(src)->owner != &f || src->is_closed()) {
		src->put();
		return Error(err::EBADF);
	}
	return Ref<CompChannel>::adopt(static_cast<CompChannel *>(src));
}

} // namespace

namespace {

/*
 * CREATE_CQ, legacy or extended: the CQ, then @respond writes the core
 * response (its form differs); on any failure nothing is left behind.
 */
template <typename Respond>
Result<void> create_cq(Call &c, uint64_t user_handle, uint32_t want, uint32_t comp_vector,
		       int32_t comp_channel, Respond respond)
{
	File &f = c.file;
	const verbs::DeviceAttr &a = f.device().attr();
	/* In-tree ib_uverbs_create_cq(), rxe_cq_chk_attr(): EINVAL for these. */
	if (comp_vector >= a.num_comp_vectors || want == 0 || want > a.max_cqe)
		return Error(err::EINVAL);
	if (c.drv_out.len < sizeof(rxe::CreateCqResp))
		return Error(err::EINVAL);
	Ref<CompChannel> ch = WEFT_TRY(channel_of(f, comp_channel));
	Ref<Ring> ring = WEFT_TRY(Ring::make(want, sizeof(rxe::Wc)));
	const uint32_t cqe = ring->capacity();
	if (cqe > a.max_cqe)
		return Error(err::EINVAL);
	auto *u = new (Gfp::Sleep) UCq(move(ring), move(ch), f.events(), user_handle);
	if (!u)
		return Error(err::ENOMEM);
	/* The handler only queues an event: it may run in the producer's context (Atomic). */
	auto cq = f.context()->create_cq(cqe, UCq::comp_handler, u, verbs::Cq::HandlerContext::Atomic,
					 verbs::Cq::no_vector, u);
	if (!cq) {
		delete u;
		return cq.error();
	}
	u->cq = cq.value();
	if (!f.add_object(*u)) {
		(void)f.context()->destroy_cq(u->cq);
		delete u;
		return Error(err::ENOMEM);
	}
	rxe::CreateCqResp drv{u->rings[0]->mminfo()};
	auto r = c.driver_response(&drv, sizeof(drv));
	if (r)
		r = respond(abi::CreateCqResp{u->id, cqe});
	if (!r) {
		(void)f.context()->destroy_cq(u->cq);
		f.free_object(*u);
	}
	return r;
}

} // namespace

Result<void> cmd_create_cq(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::CreateCq req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	return create_cq(c, req.user_handle, req.cqe, req.comp_vector, req.comp_channel,
			 [&](const abi::CreateCqResp &resp) { return c.response(&resp, sizeof(resp)); });
}

/* The extended CREATE_CQ (ibv_create_cq_ex()): no flags offered, as rxe (EOPNOTSUPP). */
Result<void> cmd_ex_create_cq(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::ExCreateCq req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	if (req.comp_mask || req.reserved)
		return Error(err::EINVAL);
	if (req.flags)
		return Error(err::EOPNOTSUPP);
	return create_cq(c, req.user_handle, req.cqe, req.comp_vector, req.comp_channel,
			 [&](const abi::CreateCqResp &base) {
				 abi::ExCreateCqResp resp{base, 0, 0};
				 resp.response_length = uint32_t(min(c.out.len, sizeof(resp)));
				 return c.response(&resp, sizeof(resp));
			 });
}

/*
 * RESIZE_CQ (IBA 11.2.6.3), as librxe drives it: a new ring, its place
 * answered in the driver response (librxe unmaps the old ring and maps
 * it), the completions not yet polled moved over.
 */
Result<void> cmd_resize_cq(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::ResizeCq req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	File &f = c.file;
	UCq *u = f.objects().find<UCq>(req.cq_handle, ObjType::Cq);
	if (!u)
		return Error(err::EINVAL);
	const verbs::DeviceAttr &a = f.device().attr();
	/* In-tree rxe_resize_cq(), rxe_cq_chk_attr(): EINVAL for these. */
	if (c.drv_out.len < sizeof(rxe::ResizeCqResp) || req.cqe == 0 || req.cqe > a.max_cqe)
		return Error(err::EINVAL);
	Ref<Ring> fresh = WEFT_TRY(Ring::make(req.cqe, sizeof(rxe::Wc)));
	if (fresh->capacity() > a.max_cqe)
		return Error(err::EINVAL);
	/* As rxe: the new ring's place goes out before the exchange. */
	f.list_ring(*fresh);
	rxe::ResizeCqResp drv{fresh->mminfo()};
	auto r = c.driver_response(&drv, sizeof(drv));
	if (r) {
		u->spare = fresh;
		r = u->cq->resize(req.cqe);
	}
	/* Whichever ring is not the CQ's now leaves the mmap table (pages mapped stay mapped). */
	f.unlist_ring(r ? *u->spare : *fresh);
	u->spare.reset();
	if (!r)
		return r;
	abi::ResizeCqResp resp{fresh->capacity(), 0};
	return c.response(&resp, sizeof(resp));
}

Result<void> cmd_destroy_cq(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::DestroyCq req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	File &f = c.file;
	UCq *u = f.objects().find<UCq>(req.cq_handle, ObjType::Cq);
	if (!u)
		return Error(err::EINVAL);
	/* IBA 11.2.6.4: EBUSY while a QP uses it.  After this no event comes. */
	WEFT_TRY(f.context()->destroy_cq(u->cq));
	/* The events not read are taken back; the counts are of those read (libibverbs waits for their acks). */
	if (u->channel)
		u->channel->purge(u->pending);
	u->events->purge(&u->async_events);
	abi::DestroyCqResp resp{u->pending.events.reported.load(Order::Relaxed),
				u->async_events.reported.load(Order::Relaxed)};
	f.free_object(*u);
	return c.response(&resp, sizeof(resp));
}

Result<void> cmd_req_notify_cq(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::ReqNotifyCq req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	UCq *u = c.file.objects().find<UCq>(req.cq_handle, ObjType::Cq);
	if (!u)
		return Error(err::EINVAL);
	/* The process polls again after arming (librxe, ibv_req_notify_cq(3)): the answer is not needed. */
	(void)u->cq->req_notify(req.solicited_only != 0);
	return ok();
}

} // namespace weft::uverbs
