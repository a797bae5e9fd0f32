// SPDX-License-Identifier: GPL-2.0
/*
 * Resource owners: every verbs object is created, tracked and destroyed
 * through its Context.  Destroy is two-phase: unlink and stop the object so
 * no new reference can be taken, drop the owner's reference, wait until
 * in-flight users (the data path) drop theirs, then free.
 */
#include <weft/log.h>
#include <weft/verbs/verbs.h>

#include "qp_transition.h"
#include "task_kapi.h"

namespace weft::verbs {

namespace {
const Logger log("weft_verbs");

/* Drop the owner's reference and wait for the data path to let go. */
template <typename T> void drain(T *obj, Completion &drained)
{
	obj->put();
	drained.wait();
}
} // namespace

Qp::Qp(Device &d, Pd &p, const QpInitAttr &init, uint32_t num)
	: dev(d), pd(p), type(init.type), qpn(num), send_cq(*init.send_cq), recv_cq(*init.recv_cq),
	  srq(init.srq), cap(init.cap), sq_sig_all(init.sq_sig_all), events(init.events),
	  user(init.user), port_(init.port), modify_lock_(WEFT_LOCK_CLASS("weft_verbs_qp_modify"))
{
}

void Qp::raise(EventType t)
{
	if (events)
		events->handle(Event{t, &dev, port(), this, nullptr});
}

constinit Atomic<ModifyHook> modify_hook;

static void modify_step(Qp &qp, ModifyStep step)
{
	if (ModifyHook h = modify_hook.load(Order::Acquire); WEFT_UNLIKELY(h))
		h(qp, step);
}

Context::Context(Device &d, const char *o)
	: dev(d), owner(o), res_id(d.next_res_id(Device::ResKind::Ctx)),
	  lock_(WEFT_LOCK_CLASS("weft_verbs_context"))
{
}

Result<Context *> Context::make(Device &dev, const char *owner, bool user)
{
	auto *ctx = new (Gfp::Sleep) Context(dev, owner);
	if (!ctx)
		return Error(err::ENOMEM);
	if (user)
		ctx->task_ = weft_task_current_tgid(ctx->comm_);
	dev.get();
	dev.contexts_.lock()->push_back(*ctx);
	return ctx;
}

Result<Context *> Context::open(Device &dev, const char *owner)
{
	return make(dev, owner, false);
}

Result<Context *> Context::open_user(Device &dev, const char *owner)
{
	return make(dev, owner, true);
}

uint32_t Context::owner_pid() const
{
	return task_ ? weft_task_pid_vnr(task_) : 0;
}

void Context::close(bool expect_empty)
{
	{
		auto l = dev.contexts_.lock();
		if (node.linked())
			l->remove(*this);
	}
	{
		MutexGuard g(lock_);
		size_t left = qps_.size() + cqs_.size() + mrs_.size() + mws_.size() + ahs_.size() +
			      pds_.size() + srqs_.size();
		if (left && expect_empty)
			log.err("%s: %s closed its context with %zu objects left (leak)", dev.name(),
				owner, left);
		while (Qp *qp = qps_.front())
			destroy_qp_locked(qp);
		while (Srq *srq = srqs_.front())
			destroy_srq_locked(srq);
		while (Cq *cq = cqs_.front())
			destroy_cq_locked(cq);
		while (Ah *ah = ahs_.pop_front()) {
			ah->pd.usecnt--;
			ah->put();
			put_quota(Quota::Ah);
		}
		/* Windows first: the MRs they are bound to then deregister. */
		while (Mr *mw = mws_.front())
			dealloc_mw_locked(static_cast<Mw *>(mw));
		while (Mr *mr = mrs_.front())
			dereg_mr_locked(mr);
		while (Pd *pd = pds_.pop_front()) {
			delete pd;
			put_quota(Quota::Pd);
		}
	}
	if (task_)
		weft_task_put(task_);
	Device &d = dev;
	delete this;
	d.put();
}

/*
 * The errno of in-tree rxe's full pool: rxe_reg_user_mr() answers ENOMEM
 * when rxe_alloc() finds none left, the others come through
 * __rxe_add_to_pool() with EINVAL.
 */
static int pool_full(Quota k)
{
	return k == Quota::Mr ? err::ENOMEM : err::EINVAL;
}

/*
 * A user context's objects count device-wide (Device::user_objects), as
 * in-tree rxe's pools: many files of one process get no more than the
 * device advertises, and all processes together leave the kernel its MR
 * keys (device.cpp).  A kernel context's count against its own lists.
 */
Result<void> Context::take_quota(Quota k, size_t have, uint32_t max)
{
	lock_.assert_held();
	if (!is_user())
		return have >= max ? Error(err::ENOMEM) : ok();
	Atomic<uint32_t> &n = dev.user_objs_[static_cast<uint8_t>(k)];
	uint32_t cur = n.load(Order::Relaxed);
	do {
		if (cur >= max)
			return Error(pool_full(k));
	} while (!n.compare_exchange(cur, cur + 1, Order::Relaxed, Order::Relaxed));
	return ok();
}

void Context::put_quota(Quota k)
{
	if (is_user())
		dev.user_objs_[static_cast<uint8_t>(k)].fetch_sub(1, Order::Relaxed);
}

bool Context::owns(Pd *pd)
{
	for (Pd &p : pds_)
		if (&p == pd)
			return true;
	return false;
}

Result<Pd *> Context::alloc_pd()
{
	MutexGuard g(lock_);
	WEFT_TRY(take_quota(Quota::Pd, pds_.size(), dev.attr().max_pd));
	auto *pd = new (Gfp::Sleep) Pd(*this, next_pd_++);
	if (!pd) {
		put_quota(Quota::Pd);
		return Error(err::ENOMEM);
	}
	pd->res_id = dev.next_res_id(Device::ResKind::Pd);
	pds_.push_back(*pd);
	return pd;
}

/* IBA 11.2.3.2: a PD still referenced by QPs, MRs or AHs cannot be freed. */
Result<void> Context::dealloc_pd(Pd *pd)
{
	MutexGuard g(lock_);
	if (!owns(pd))
		return Error(err::EINVAL);
	if (pd->usecnt)
		return Error(err::EBUSY);
	pds_.remove(*pd);
	delete pd;
	put_quota(Quota::Pd);
	return ok();
}

Result<Mr *> Context::get_dma_mr(Pd *pd, uint32_t access)
{
	return reg_kernel_mr(pd, nullptr, 0, access);
}

/* IBA 10.6.3.2: known rights only; remote write or atomic access requires local write. */
static Result<void> check_access(uint32_t access)
{
	if (access & ~access::all)
		return Error(err::EINVAL);
	if ((access & (access::remote_write | access::remote_atomic)) && !(access & access::local_write))
		return Error(err::EINVAL);
	return ok();
}

/*
 * IBA 11.2.8.1 Register Memory Region.  addr == nullptr with len 0 is the
 * DMA MR (all kernel memory).  IBA 10.6.3.2: remote write or atomic access
 * requires local write.
 */
Result<Mr *> Context::reg_kernel_mr(Pd *pd, void *addr, uint64_t len, uint32_t access)
{
	WEFT_TRY(check_access(access));
	bool dma = addr == nullptr && len == 0;
	if (!dma && (!addr || len == 0 || len > dev.attr().max_mr_size))
		return Error(err::EINVAL);
	MutexGuard g(lock_);
	if (!owns(pd))
		return Error(err::EINVAL);
	uintptr_t kva = reinterpret_cast<uintptr_t>(addr);
	auto *mr = new (Gfp::Sleep) Mr(*pd, dma ? MrKind::Dma : MrKind::Kernel, kva, len, kva, access);
	if (!mr)
		return Error(err::ENOMEM);
	auto r = publish_mr_locked(*mr);
	if (!r) {
		delete mr;
		return r.error();
	}
	return mr;
}

/* A new MR gets its keys (remote ones only with remote rights) and joins the context. */
Result<void> Context::publish_mr_locked(Mr &mr)
{
	lock_.assert_held();
	const uint32_t key = WEFT_TRY(dev.insert_mr(mr));
	mr.lkey = key;
	mr.rkey = mr.access & (access::remote_read | access::remote_write | access::remote_atomic) ? key : 0;
	mr.res_id = dev.next_res_id(Device::ResKind::Mr);
	mr.pd.usecnt++;
	mrs_.push_back(mr);
	return ok();
}


/* A process's pages as uverbs pins them (x86-64 base pages). */
static constexpr uint32_t page_shift = 12;
static constexpr uint64_t page_size = 1ull << page_shift;

/* IBA 11.2.8.1 Register Memory Region, for a process (uverbs pinned @pages). */
Result<Mr *> Context::reg_user_mr(Pd *pd, uint64_t iova, uint64_t len, uint32_t access,
				  Array<uint64_t> pages, uint32_t first_off, UserPages *owner)
{
	Mr *mr = nullptr;
	auto r = [&]() -> Result<void> {
		WEFT_TRY(check_access(access));
		if (len == 0 || len > dev.attr().max_mr_size || iova + len < iova ||
		    first_off >= page_size || (first_off + len + page_size - 1) / page_size > pages.size())
			return Error(err::EINVAL);
		MutexGuard g(lock_);
		if (!owns(pd))
			return Error(err::EINVAL);
		WEFT_TRY(take_quota(Quota::Mr, mrs_.size(), dev.attr().max_mr));
		mr = new (Gfp::Sleep) Mr(*pd, MrKind::User, iova, len, 0, access);
		if (!mr) {
			put_quota(Quota::Mr);
			return Error(err::ENOMEM);
		}
		mr->pages_ = move(pages);
		mr->page_shift_ = page_shift;
		mr->first_off_ = first_off;
		auto published = publish_mr_locked(*mr);
		if (!published) {
			delete exchange(mr, nullptr);
			put_quota(Quota::Mr);
			return published;
		}
		mr->user_pages_ = owner;
		return ok();
	}();
	if (!r) {
		owner->release();
		return r.error();
	}
	return mr;
}

Result<Mr *> Context::alloc_fast_reg_mr(Pd *pd, uint32_t max_pages)
{
	if (max_pages == 0 || max_pages > dev.attr().max_fast_reg_page_list_len)
		return Error(err::EINVAL);
	auto pages = WEFT_TRY(Array<uint64_t>::make(Gfp::Sleep, max_pages));
	auto staged = WEFT_TRY(Array<uint64_t>::make(Gfp::Sleep, max_pages));
	MutexGuard g(lock_);
	if (!owns(pd))
		return Error(err::EINVAL);
	auto *mr = new (Gfp::Sleep) Mr(*pd, MrKind::FastReg, 0, 0, 0, 0);
	if (!mr)
		return Error(err::ENOMEM);
	mr->pages_ = move(pages);
	mr->staged_.pages = move(staged);
	mr->valid_.store(false, Order::Relaxed);
	auto key = dev.insert_mr(*mr);
	if (!key) {
		delete mr;
		return key.error();
	}
	mr->lkey = mr->rkey = key.value();
	mr->res_id = dev.next_res_id(Device::ResKind::Mr);
	pd->usecnt++;
	mrs_.push_back(*mr);
	return mr;
}

void Context::dereg_mr_locked(Mr *mr)
{
	lock_.assert_held();
	mrs_.remove(*mr);
	/* Its windows were deallocated before (close), or dereg_mr() checked there are none. */
	dev.erase_mr(*mr);
	drain(mr, mr->drained_);
	mr->pd.usecnt--;
	/* Nothing reads the pages now: they may go back to the process. */
	if (UserPages *up = exchange(mr->user_pages_, nullptr))
		up->release();
	if (mr->kind == MrKind::User)
		put_quota(Quota::Mr);
	delete mr;
}

Result<void> Context::dereg_mr(Mr *mr)
{
	MutexGuard g(lock_);
	if (!mr || &mr->pd.ctx != this || !mr->node.linked() || mr->kind == MrKind::Window)
		return Error(err::EINVAL);
	/* IBA 10.6.7.2.1, 11.2.8.2: not while windows are bound to it (checked against binds). */
	WEFT_TRY(dev.erase_unbound_mr(*mr));
	dereg_mr_locked(mr);
	return ok();
}

/* IBA 11.2.9.1 Allocate Memory Window. */
Result<Mw *> Context::alloc_mw(Pd *pd, MwType type)
{
	if (!dev.attr().max_mw)
		return Error(err::EOPNOTSUPP);
	if (type != MwType::Type1 && type != MwType::Type2)
		return Error(err::EINVAL);
	MutexGuard g(lock_);
	if (!owns(pd))
		return Error(err::EINVAL);
	WEFT_TRY(take_quota(Quota::Mw, mws_.size(), dev.attr().max_mw));
	auto *mw = new (Gfp::Sleep) Mw(*pd, type);
	if (!mw) {
		put_quota(Quota::Mw);
		return Error(err::ENOMEM);
	}
	auto key = dev.insert_mr(*mw);
	if (!key) {
		delete mw;
		put_quota(Quota::Mw);
		return key.error();
	}
	mw->lkey = mw->rkey = key.value();
	pd->usecnt++;
	mws_.push_back(*mw);
	return mw;
}

/* Unbound and out of the key table under the keys lock: no lookup reaches it after. */
void Context::dealloc_mw_locked(Mw *mw)
{
	lock_.assert_held();
	mws_.remove(*mw);
	dev.erase_mr(*mw);
	{
		SpinGuardBh g(dev.keys_lock_);
		Device::unbind_locked(*mw);
	}
	drain(mw, mw->drained_);
	mw->pd.usecnt--;
	delete mw;
	put_quota(Quota::Mw);
}

/* IBA 11.2.9.3 Deallocate Memory Window. */
Result<void> Context::dealloc_mw(Mw *mw)
{
	MutexGuard g(lock_);
	if (!mw || &mw->pd.ctx != this || !mw->node.linked())
		return Error(err::EINVAL);
	dealloc_mw_locked(mw);
	return ok();
}

Result<Cq *> Context::create_cq(uint32_t cqe, Cq::CompHandler handler, void *arg, Cq::HandlerContext hc,
				int comp_vector, CqSink *sink)
{
	const DeviceAttr &a = dev.attr();
	if (cqe == 0 || cqe > a.max_cqe)
		return Error(err::EINVAL);
	if (comp_vector != Cq::no_vector && (comp_vector < 0 || uint32_t(comp_vector) >= a.num_comp_vectors))
		return Error(err::EINVAL);
	const int cpu = comp_vector == Cq::no_vector ? Cq::no_vector
						     : weft_vector_cpu(a.comp_vector_base + uint32_t(comp_vector));
	/* A user CQ's entries go to its sink: its own ring stays unused. */
	auto ring = WEFT_TRY(Array<Wc>::make(Gfp::Sleep, sink ? 2 : size_t(cqe) + 1));
	MutexGuard g(lock_);
	WEFT_TRY(take_quota(Quota::Cq, cqs_.size(), a.max_cq));
	auto *cq = new (Gfp::Sleep) Cq(*this, move(ring), handler, arg, hc, cpu, sink);
	if (!cq) {
		put_quota(Quota::Cq);
		return Error(err::ENOMEM);
	}
	cq->cqe.store(cqe, Order::Relaxed);
	cq->res_id = dev.next_res_id(Device::ResKind::Cq);
	cqs_.push_back(*cq);
	return cq;
}

void Context::destroy_cq_locked(Cq *cq)
{
	lock_.assert_held();
	cqs_.remove(*cq);
	drain(cq, cq->drained_);
	delete cq;
	put_quota(Quota::Cq);
}

/* IBA 11.2.6.4: a CQ still associated with a QP cannot be destroyed. */
Result<void> Context::destroy_cq(Cq *cq)
{
	MutexGuard g(lock_);
	if (!cq || &cq->ctx != this || !cq->node.linked())
		return Error(err::EINVAL);
	if (cq->usecnt)
		return Error(err::EBUSY);
	destroy_cq_locked(cq);
	return ok();
}

/* IBA 11.2.4.1 Create QP: types, caps against the device, CQs of this owner. */
Result<Qp *> Context::create_qp(Pd *pd, const QpInitAttr &init)
{
	const DeviceAttr &a = dev.attr();
	if (!init.send_cq || !init.recv_cq || &init.send_cq->ctx != this ||
	    &init.recv_cq->ctx != this)
		return Error(err::EINVAL);
	WEFT_TRY(check_qp_cap(init.cap, a));
	bool special = init.type == QpType::Smi || init.type == QpType::Gsi;
	if (special && (init.port < dev.first_port() ||
			init.port >= dev.first_port() + dev.num_ports()))
		return Error(err::EINVAL);
	if (init.srq && (&init.srq->ctx != this || init.type == QpType::Ud ||
			 init.type == QpType::Smi || init.type == QpType::Gsi))
		return Error(err::EINVAL); /* IBA 10.2.9: RC and UC only here */
	MutexGuard g(lock_);
	if (!owns(pd))
		return Error(err::EINVAL);
	Qp *qp = WEFT_TRY(dev.create_qp(*pd, init));
	if (init.srq)
		init.srq->usecnt++;
	pd->usecnt++;
	init.send_cq->usecnt++;
	init.recv_cq->usecnt++;
	qps_.push_back(*qp);
	return qp;
}

/*
 * IBA 11.2.5: the core checks the request, the driver applies it.  The QP
 * is held (a reference) from the lookup under the context's lock to the
 * end, and its modify lock serialises this against other modifies and
 * against destroy_qp(), which marks it destroyed under the same lock: a
 * modify that loses that race gets EINVAL and never touches a freed QP.
 */
Result<void> Context::modify_qp(Qp *qp, const QpAttr &attr, uint32_t mask)
{
	{
		MutexGuard g(lock_);
		if (!qp || &qp->pd.ctx != this || !qp->node.linked())
			return Error(err::EINVAL);
		qp->get();
	}
	Ref<Qp> hold = Ref<Qp>::adopt(qp);
	modify_step(*qp, ModifyStep::Found);
	MutexGuard g(qp->modify_lock_);
	if (qp->destroyed_)
		return Error(err::EINVAL);
	uint8_t port = (mask & qp_attr::port) ? attr.port_num : qp->port();
	PortAttr pa;
	ModifyLimits lim;
	lim.dev = &dev.attr();
	lim.num_ports = dev.num_ports();
	if (port >= 1 && port <= dev.num_ports() && dev.query_port(port, pa).ok()) {
		lim.pkey_tbl_len = pa.pkey_tbl_len;
		lim.gid_tbl_len = pa.gid_tbl_len;
		lim.max_mtu = pa.max_mtu;
	}
	const QpState from = qp->state();
	WEFT_TRY(check_modify(qp->type, from, attr, mask, lim));
	modify_step(*qp, ModifyStep::Checked);
	WEFT_TRY(qp->modify(attr, mask, from));
	modify_step(*qp, ModifyStep::Applied);
	return ok();
}

/*
 * Destroy, two-phase: unlinked (no new lookup finds it), marked destroyed
 * under its modify lock (a modify in progress finishes first, one still
 * to come is refused), stopped, then freed once the last holder lets go.
 */
void Context::destroy_qp_locked(Qp *qp)
{
	lock_.assert_held();
	qps_.remove(*qp);
	{
		MutexGuard g(qp->modify_lock_);
		qp->destroyed_ = true;
		qp->shutdown();
	}
	drain(qp, qp->drained_);
	qp->pd.usecnt--;
	qp->send_cq.usecnt--;
	qp->recv_cq.usecnt--;
	if (qp->srq)
		qp->srq->usecnt--;
	delete qp;
}

Result<void> Context::destroy_qp(Qp *qp)
{
	MutexGuard g(lock_);
	if (!qp || &qp->pd.ctx != this || !qp->node.linked())
		return Error(err::EINVAL);
	destroy_qp_locked(qp);
	return ok();
}

/*
 * IBA 10.5, 11.3.1: only UD QPs join multicast groups; the MGID is a
 * multicast GID (first byte 0xff) and the MLID a multicast LID.
 */
static bool mcast_ok(const Qp *qp, const Gid &mgid, uint16_t mlid)
{
	return qp->type == QpType::Ud && mgid.raw[0] == 0xff && mlid >= 0xc000 && mlid != 0xffff;
}

Result<void> Context::attach_mcast(Qp *qp, const Gid &mgid, uint16_t mlid)
{
	MutexGuard g(lock_);
	if (!qp || &qp->pd.ctx != this || !qp->node.linked() || !mcast_ok(qp, mgid, mlid))
		return Error(err::EINVAL);
	return qp->attach_mcast(mgid, mlid);
}

Result<void> Context::detach_mcast(Qp *qp, const Gid &mgid, uint16_t mlid)
{
	MutexGuard g(lock_);
	if (!qp || &qp->pd.ctx != this || !qp->node.linked() || !mcast_ok(qp, mgid, mlid))
		return Error(err::EINVAL);
	return qp->detach_mcast(mgid, mlid);
}

/* IBA 11.2.3.3 Create SRQ. */
Result<Srq *> Context::create_srq(Pd *pd, uint32_t max_wr, uint32_t max_sge, EventHandler *events,
				  SrqUserQueue *user)
{
	const DeviceAttr &a = dev.attr();
	if (max_wr == 0 || max_wr > a.max_srq_wr || max_sge > a.max_srq_sge ||
	    max_sge > RecvEntry::max_sge)
		return Error(err::EINVAL);
	auto ring = WEFT_TRY(Array<RecvEntry>::make(Gfp::Sleep, user ? 1 : max_wr));
	MutexGuard g(lock_);
	if (!owns(pd))
		return Error(err::EINVAL);
	WEFT_TRY(take_quota(Quota::Srq, srqs_.size(), a.max_srq));
	auto *srq = new (Gfp::Sleep) Srq(*this, *pd, move(ring), max_sge, events, user);
	if (!srq) {
		put_quota(Quota::Srq);
		return Error(err::ENOMEM);
	}
	pd->usecnt++;
	srqs_.push_back(*srq);
	return srq;
}

void Context::destroy_srq_locked(Srq *srq)
{
	lock_.assert_held();
	srqs_.remove(*srq);
	drain(srq, srq->drained_);
	srq->pd.usecnt--;
	delete srq;
	put_quota(Quota::Srq);
}

/* IBA 11.2.3.6: an SRQ with QPs attached cannot be destroyed. */
Result<void> Context::destroy_srq(Srq *srq)
{
	MutexGuard g(lock_);
	if (!srq || &srq->ctx != this || !srq->node.linked())
		return Error(err::EINVAL);
	if (srq->usecnt)
		return Error(err::EBUSY);
	destroy_srq_locked(srq);
	return ok();
}

/* IBA 11.2.2.1 Create Address Handle. */
Result<Ah *> Context::create_ah(Pd *pd, const AhAttr &attr)
{
	if (attr.port < 1 || attr.port > dev.num_ports() || attr.sl > 15 || attr.dlid == 0)
		return Error(err::EINVAL);
	/* IBA 8.3.1: a GRH's SGID is one of the port's GIDs (in-tree: EINVAL past the table). */
	if (attr.global && !dev.query_gid(attr.port, attr.sgid_index))
		return Error(err::EINVAL);
	MutexGuard g(lock_);
	if (!owns(pd))
		return Error(err::EINVAL);
	/* The advertised max_ah holds (kernel contexts' AHs per context). */
	WEFT_TRY(take_quota(Quota::Ah, ahs_.size(), dev.attr().max_ah));
	auto *ah = new (Gfp::Sleep) Ah(*pd, attr);
	if (!ah) {
		put_quota(Quota::Ah);
		return Error(err::ENOMEM);
	}
	pd->usecnt++;
	ahs_.push_back(*ah);
	return ah;
}

Result<void> Context::destroy_ah(Ah *ah)
{
	MutexGuard g(lock_);
	if (!ah || &ah->pd.ctx != this || !ah->node.linked())
		return Error(err::EINVAL);
	ahs_.remove(*ah);
	ah->pd.usecnt--;
	ah->put();
	put_quota(Quota::Ah);
	return ok();
}

} // namespace weft::verbs
