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
 * The upper 24 bits of a key index the table, the low 8 are a variant that
 * changes on every registration, so a stale key from a previous MR in the
 * same slot does not match (IBA 10.6.3.3's "key" portion).
 */
Result<uint32_t> Device::insert_mr(Mr &mr)
{
	if (!keys_.size()) {
		auto t = WEFT_TRY(Array<Mr *>::make(Gfp::Sleep, attr_.max_mr + 1));
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

Ref<Mr> Device::lookup_mr(uint32_t key, bool remote)
{
	SpinGuardBh g(keys_lock_);
	size_t i = key >> 8;
	if (i == 0 || i >= keys_.size() || !keys_[i])
		return Ref<Mr>();
	Mr *mr = keys_[i];
	if ((remote ? mr->rkey : mr->lkey) != key || !mr->valid_.load(Order::Relaxed))
		return Ref<Mr>();
	return Ref<Mr>::share(mr);
}

/* IBA 10.6.3.5: REG_MR gives the MR a new key variant and access rights. */
Result<void> Device::fast_register(Mr &mr, Pd &pd, uint32_t key, uint32_t access)
{
	if (mr.kind != MrKind::FastReg || &mr.pd != &pd || (key >> 8) != (mr.lkey >> 8) ||
	    (access & ~access::all))
		return Error(err::EINVAL);
	SpinGuardBh g(keys_lock_);
	if (mr.valid_.load(Order::Relaxed))
		return Error(err::EINVAL); /* IBA 10.6.3.5: must be invalidated first */
	mr.lkey = key;
	mr.rkey = key;
	mr.access = access;
	mr.valid_.store(true, Order::Release);
	return ok();
}

/* IBA 10.6.3.6: local invalidate and send with invalidate. */
Result<void> Device::invalidate(uint32_t key, Pd &pd)
{
	SpinGuardBh g(keys_lock_);
	size_t i = key >> 8;
	Mr *mr = i && i < keys_.size() ? keys_[i] : nullptr;
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
	if (!mr.valid())
		return Error(err::EACCES);
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
	if (kind != MrKind::FastReg || valid() || kvas.size() > pages_.size() || page_size < 4096 ||
	    (page_size & (page_size - 1)))
		return Error(err::EINVAL);
	uint32_t shift = __builtin_ctz(page_size);
	uint64_t first = va & (page_size - 1);
	if (len == 0 || first + len > (uint64_t(kvas.size()) << shift))
		return Error(err::EINVAL);
	for (size_t i = 0; i < kvas.size(); i++)
		pages_[i] = kvas[i];
	page_shift_ = shift;
	iova = va;
	length = len;
	return ok();
}

} // namespace weft::verbs
