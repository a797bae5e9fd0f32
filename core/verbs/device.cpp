// SPDX-License-Identifier: GPL-2.0
/*
 * The device base: key table for memory regions (IBA 10.6.3.3) and async
 * event dispatch (IBA 11.6.3).
 */
#include <weft/verbs/verbs.h>

namespace weft::verbs {

Device::Device(NodeType t, uint8_t num_ports, const DeviceAttr &a)
	: node_type_(t), num_ports_(num_ports), attr_(a),
	  contexts_(WEFT_LOCK_CLASS("weft_verbs_contexts")),
	  keys_lock_(WEFT_LOCK_CLASS("weft_verbs_keys")),
	  handlers_(WEFT_LOCK_CLASS("weft_verbs_event_handlers"))
{
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
	if ((remote ? mr->rkey : mr->lkey) != key)
		return Ref<Mr>();
	return Ref<Mr>::share(mr);
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

/* IBA 10.6.3.1: an access must lie wholly inside the region and be allowed. */
Result<uint8_t *> Mr::map(uint64_t va, uint64_t len, uint32_t need) const
{
	if (kind == MrKind::Dma) {
		if (len && va + len < va)
			return Error(err::EFAULT);
	} else if (va < iova || len > length || va - iova > length - len) {
		return Error(err::EFAULT);
	}
	if ((access & need) != need)
		return Error(err::EACCES);
	return reinterpret_cast<uint8_t *>(kva + (va - iova));
}

} // namespace weft::verbs
