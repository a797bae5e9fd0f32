// SPDX-License-Identifier: GPL-2.0
/*
 * Local memory access through scatter/gather lists: every SGE's lkey is
 * looked up and checked (IBA 10.6.3.1: same PD, inside the region, with the
 * access the operation needs) before a byte is copied.
 */
#include "qp.h"

namespace weft::hca {

size_t sg_length(SgRef sg)
{
	size_t n = 0;
	for (uint32_t i = 0; i < sg.n; i++)
		n += sg.sge[i].length;
	return n;
}

namespace {

/* Walk [off, off+len) of the SGE list, calling fn(kernel pointer, chunk). */
template <typename F>
Result<void> sg_walk(verbs::Device &dev, verbs::Pd &pd, SgRef sg, size_t off, size_t len,
		     uint32_t need, F fn)
{
	for (uint32_t i = 0; i < sg.n && len; i++) {
		const verbs::Sge &e = sg.sge[i];
		if (off >= e.length) {
			off -= e.length;
			continue;
		}
		size_t chunk = min<size_t>(e.length - off, len);
		Ref<verbs::Mr> mr = dev.lookup_mr(e.lkey, false);
		if (!mr || &mr->pd != &pd)
			return Error(err::EACCES);
		uint8_t *p = WEFT_TRY(mr->map(e.addr + off, chunk, need));
		fn(p, chunk);
		len -= chunk;
		off = 0;
	}
	return len ? Error(err::EMSGSIZE) : ok();
}

} // namespace

Result<void> sg_gather(verbs::Device &dev, verbs::Pd &pd, SgRef sg, size_t off, Bytes dst)
{
	uint8_t *out = dst.data();
	return sg_walk(dev, pd, sg, off, dst.size(), 0, [&](uint8_t *p, size_t n) {
		__builtin_memcpy(out, p, n);
		out += n;
	});
}

Result<void> sg_scatter(verbs::Device &dev, verbs::Pd &pd, SgRef sg, size_t off, ConstBytes src)
{
	const uint8_t *in = src.data();
	return sg_walk(dev, pd, sg, off, src.size(), verbs::access::local_write,
		       [&](uint8_t *p, size_t n) {
			       __builtin_memcpy(p, in, n);
			       in += n;
		       });
}

Result<void> sg_fill(void *sg_fill_ctx, Bytes dst)
{
	auto *f = static_cast<SgFill *>(sg_fill_ctx);
	return sg_gather(*f->dev, *f->pd, f->sg, f->off, dst);
}

} // namespace weft::hca
