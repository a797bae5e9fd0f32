// SPDX-License-Identifier: GPL-2.0
/*
 * The device base: key table for memory regions (IBA 10.6.3.3) and async
 * event dispatch (IBA 11.6.3).
 */
#include <weft/copy.h>
#include <weft/verbs/verbs.h>

namespace weft::verbs {

Device::Device(NodeType t, uint8_t num_ports, const DeviceAttr &a)
	: node_type_(t), num_ports_(num_ports), attr_(a),
	  contexts_(WEFT_LOCK_CLASS("weft_verbs_contexts")),
	  keys_lock_(WEFT_LOCK_CLASS("weft_verbs_keys")),
	  handlers_(WEFT_LOCK_CLASS("weft_verbs_event_handlers")),
	  node_desc_(WEFT_LOCK_CLASS("weft_verbs_node_desc"))
{
}

void Device::node_desc(char out[65])
{
	node_desc_.with([&](NodeDesc &d) { __builtin_memcpy(out, d.text, sizeof(d.text)); });
	out[64] = 0;
}

Result<void> Device::set_node_desc(const char *desc, size_t len)
{
	if (len > 64)
		return Error(err::EINVAL);
	NodeDesc fresh;
	__builtin_memcpy(fresh.text, desc, len);
	node_desc_.with([&](NodeDesc &d) { d = fresh; });
	return ok();
}

Device::~Device()
{
	if (WEFT_UNLIKELY(registered_))
		weft_warn(__FILE__, __LINE__, "device freed while registered");
}

/*
 * User contexts hold at most max_mr MRs and max_mw windows device-wide
 * (Context::take_quota); the table has max_mr slots beyond those, so that
 * however many processes register, SRP, iSER and the other kernel
 * consumers (re)connecting still find keys.  Slot 0 is never a key.
 */
static size_t key_slots(const DeviceAttr &a)
{
	return size_t(a.max_mr) * 2 + a.max_mw + 1;
}

/*
 * The upper 24 bits of a key index the table, the low 8 are a variant that
 * changes on every registration, so a stale key from a previous MR in the
 * same slot does not match (IBA 10.6.3.3's "key" portion).
 */
Result<uint32_t> Device::insert_mr(Mr &mr)
{
	if (!keys_.size()) {
		auto t = WEFT_TRY(Array<Mr *>::make(Gfp::Sleep, key_slots(attr_)));
		SpinGuardBh g(keys_lock_);
		if (!keys_.size())
			keys_ = move(t);
	}
	SpinGuardBh g(keys_lock_);
	for (size_t i = 1; i < keys_.size(); i++) {
		if (keys_[i])
			continue;
		keys_[i] = &mr;
		key_variant_++;
		return static_cast<uint32_t>(i << 8 | key_variant_);
	}
	return Error(err::ENOMEM);
}

void Device::erase_mr(Mr &mr)
{
	SpinGuardBh g(keys_lock_);
	size_t i = mr.lkey >> 8;
	if (i < keys_.size() && keys_[i] == &mr)
		keys_[i] = nullptr;
}

Result<void> Device::erase_unbound_mr(Mr &mr)
{
	SpinGuardBh g(keys_lock_);
	if (mr.windows_)
		return Error(err::EBUSY);
	size_t i = mr.lkey >> 8;
	if (i < keys_.size() && keys_[i] == &mr)
		keys_[i] = nullptr;
	return ok();
}

Ref<Mr> Device::lookup_mr(uint32_t key, bool remote)
{
	SpinGuardBh g(keys_lock_);
	size_t i = key >> 8;
	if (i == 0 || i >= keys_.size() || !keys_[i])
		return Ref<Mr>();
	Mr *mr = keys_[i];
	if (mr->kind == MrKind::Window || (remote ? mr->rkey : mr->lkey) != key ||
	    !mr->valid_.load(Order::Relaxed))
		return Ref<Mr>();
	return Ref<Mr>::share(mr);
}

Ref<Mr> Device::lookup_remote(uint32_t rkey, const Qp &qp, uint64_t va, uint64_t len,
			      uint32_t need, uint32_t &recheck)
{
	SpinGuardBh g(keys_lock_);
	size_t i = rkey >> 8;
	Mr *mr = i && i < keys_.size() ? keys_[i] : nullptr;
	/* IBA 10.6.3.1, 10.6.7.2.6: key, validity, PD, bounds and rights. */
	if (!mr || mr->rkey != rkey || &mr->pd != &qp.pd || !mr->valid_.load(Order::Relaxed))
		return Ref<Mr>();
	if (mr->kind != MrKind::Window) {
		if (!mr->check(va, len, need))
			return Ref<Mr>();
		recheck = need;
		return Ref<Mr>::share(mr);
	}
	auto &mw = static_cast<Mw &>(*mr);
	/* IBA 10.6.7.2.6: a type 2 window answers only the QP it was bound through. */
	if (mw.mw_type == MwType::Type2 && (mw.qp_ != &qp || mw.qpn_ != qp.qpn))
		return Ref<Mr>();
	if (va < mw.iova || len > mw.length || va - mw.iova > mw.length - len ||
	    (mw.access & need) != need)
		return Ref<Mr>();
	recheck = 0;
	return Ref<Mr>::share(mw.bound_);
}

void Device::unbind_locked(Mw &mw)
{
	mw.valid_.store(false, Order::Release);
	if (Mr *mr = exchange(mw.bound_, nullptr)) {
		mr->windows_--;
		mr->put();
	}
	mw.qp_ = nullptr;
	mw.qpn_ = 0;
	mw.iova = mw.length = 0;
	mw.access = 0;
}

/*
 * IBA 10.6.7.2.2-3 (o10-36.2.x, o10-37.2.x, C10-72..75): the window and
 * the MR of the QP's PD, the MR registered with MW_BIND (and local write
 * for a writable window), the range inside the MR, the new rkey in the
 * window's slot; a type 2 window free and bound with a length.  Only
 * MRs whose pages never change are bound (not DMA or fast-reg MRs).
 */
Result<void> Device::bind_mw(const Qp &qp, const SendWr &wr)
{
	const auto &b = wr.bind;
	if ((b.access & ~access::window) || (b.new_rkey >> 8) != (b.mw_rkey >> 8))
		return Error(err::EINVAL);
	SpinGuardBh g(keys_lock_);
	size_t i = b.mw_rkey >> 8, j = b.mr_lkey >> 8;
	Mr *w = i && i < keys_.size() ? keys_[i] : nullptr;
	if (!w || w->kind != MrKind::Window || w->rkey != b.mw_rkey || &w->pd != &qp.pd)
		return Error(err::EINVAL);
	auto &mw = static_cast<Mw &>(*w);
	const bool type2 = mw.mw_type == MwType::Type2;
	if (type2 && (mw.valid_.load(Order::Relaxed) || !b.length))
		return Error(err::EINVAL);
	Mr *mr = nullptr;
	if (b.length) {
		mr = j && j < keys_.size() ? keys_[j] : nullptr;
		if (!mr || (mr->kind != MrKind::Kernel && mr->kind != MrKind::User) ||
		    mr->lkey != b.mr_lkey || &mr->pd != &qp.pd || !(mr->access & access::mw_bind))
			return Error(err::EINVAL);
		if ((b.access & (access::remote_write | access::remote_atomic)) &&
		    !(mr->access & access::local_write))
			return Error(err::EINVAL);
		if (b.addr < mr->iova || b.length > mr->length || b.addr - mr->iova > mr->length - b.length)
			return Error(err::EINVAL);
	}
	unbind_locked(mw);
	mw.rkey = b.new_rkey;
	if (!mr)
		return ok(); /* a type 1 window unbound by a zero-length bind */
	mr->get();
	mr->windows_++;
	mw.bound_ = mr;
	mw.iova = b.addr;
	mw.length = b.length;
	mw.access = b.access;
	if (type2) {
		mw.qp_ = &qp;
		mw.qpn_ = qp.qpn;
	}
	mw.valid_.store(true, Order::Release);
	return ok();
}

/* IBA 10.6.3.5: REG_MR gives the MR a new key variant and access rights. */
Result<void> Device::fast_register(Mr &mr, Pd &pd, uint32_t key, uint32_t access)
{
	if (mr.kind != MrKind::FastReg || &mr.pd != &pd || (key >> 8) != (mr.lkey >> 8) ||
	    (access & ~access::all))
		return Error(err::EINVAL);
	SpinGuardBh g(keys_lock_);
	if (mr.valid_.load(Order::Relaxed) || !mr.staged_.n)
		return Error(err::EINVAL); /* IBA 10.6.3.5: must be invalidated first */
	/* The staged page list becomes the region's; nothing reads it while invalid. */
	for (uint32_t i = 0; i < mr.staged_.n; i++)
		mr.pages_[i] = mr.staged_.pages[i];
	mr.page_shift_ = mr.staged_.shift;
	mr.iova = mr.staged_.iova;
	mr.length = mr.staged_.length;
	mr.lkey = key;
	mr.rkey = key;
	mr.access = access;
	mr.valid_.store(true, Order::Release);
	return ok();
}

/* IBA 10.6.3.6, 10.6.7.2.5: local invalidate and send with invalidate. */
Result<void> Device::invalidate(uint32_t key, Pd &pd, const Qp *remote)
{
	SpinGuardBh g(keys_lock_);
	size_t i = key >> 8;
	Mr *mr = i && i < keys_.size() ? keys_[i] : nullptr;
	if (mr && mr->kind == MrKind::Window) {
		auto &mw = static_cast<Mw &>(*mr);
		/* o10-37.2.26: type 1 windows are not invalidated; type 2 only through their QP remotely. */
		if (mw.mw_type != MwType::Type2 || &mw.pd != &pd || mw.rkey != key ||
		    !mw.valid_.load(Order::Relaxed) || (remote && (mw.qp_ != remote || mw.qpn_ != remote->qpn)))
			return Error(err::EINVAL);
		unbind_locked(mw);
		return ok();
	}
	if (!mr || mr->kind != MrKind::FastReg || &mr->pd != &pd || mr->lkey != key ||
	    !mr->valid_.load(Order::Relaxed))
		return Error(err::EINVAL);
	mr->valid_.store(false, Order::Release);
	return ok();
}

void Device::add_event_handler(EventHandler &h)
{
	handlers_.lock()->push_back(h);
}

void Device::remove_event_handler(EventHandler &h)
{
	handlers_.lock()->remove(h);
}

void Device::dispatch_event(const Event &e)
{
	auto l = handlers_.lock();
	for (EventHandler &h : *l)
		h.handle(e);
}

uint8_t *Mr::at(uint64_t va, uint64_t *run) const
{
	if (kind == MrKind::Dma || kind == MrKind::Kernel) {
		*run = kind == MrKind::Dma ? ~0ull - va : length - (va - iova);
		return reinterpret_cast<uint8_t *>(kva + (va - iova));
	}
	/*
	 * iova need not be page aligned: the first page starts at iova's
	 * offset (FastReg), or where the process's buffer starts (User).
	 */
	uint64_t first = kind == MrKind::User ? first_off_ : iova & ((1ull << page_shift_) - 1);
	uint64_t off = va - iova + first;
	uint64_t page = off >> page_shift_, in = off & ((1ull << page_shift_) - 1);
	*run = (1ull << page_shift_) - in;
	return reinterpret_cast<uint8_t *>(pages_[page] + in);
}

/* IBA 10.6.3.1: an access must lie wholly inside the region and be allowed. */
Result<void> Mr::check(uint64_t va, uint64_t len, uint32_t need) const
{
	const Mr &mr = *this;
	if (!mr.valid() || mr.kind == MrKind::Window)
		return Error(err::EACCES); /* a window is reached through lookup_remote() only */
	if (mr.kind == MrKind::Dma) {
		if (len && va + len < va)
			return Error(err::EFAULT);
	} else if (va < mr.iova || len > mr.length || va - mr.iova > mr.length - len) {
		return Error(err::EFAULT);
	}
	if ((mr.access & need) != need)
		return Error(err::EACCES);
	return ok();
}

Result<uint8_t *> Mr::map(uint64_t va, uint64_t len, uint32_t need) const
{
	WEFT_TRY(check(va, len, need));
	uint64_t run;
	uint8_t *p = at(va, &run);
	if (len > run)
		return Error(err::EFAULT); /* spans pages of a fast-reg MR */
	return p;
}

Result<void> Mr::write(uint64_t va, ConstBytes src, uint32_t need) const
{
	return walk(va, src.size(), need,
		    [&](uint8_t *p, size_t off, size_t n) -> Result<void> {
			    copy_bytes(p, src.data() + off, n);
			    return ok();
		    });
}

Result<void> Mr::read(uint64_t va, Bytes dst, uint32_t need) const
{
	return walk(va, dst.size(), need,
		    [&](uint8_t *p, size_t off, size_t n) -> Result<void> {
			    copy_bytes(dst.data() + off, p, n);
			    return ok();
		    });
}

Result<void> Mr::set_pages(Span<const uint64_t> kvas, uint32_t page_size, uint64_t va,
			   uint64_t len)
{
	if (kind != MrKind::FastReg || kvas.size() > staged_.pages.size() || page_size < 4096 ||
	    (page_size & (page_size - 1)))
		return Error(err::EINVAL);
	uint32_t shift = __builtin_ctz(page_size);
	uint64_t first = va & (page_size - 1);
	if (len == 0 || first + len > (uint64_t(kvas.size()) << shift))
		return Error(err::EINVAL);
	for (size_t i = 0; i < kvas.size(); i++)
		staged_.pages[i] = kvas[i];
	staged_.n = static_cast<uint32_t>(kvas.size());
	staged_.shift = shift;
	staged_.iova = va;
	staged_.length = len;
	return ok();
}

} // namespace weft::verbs
