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

/*
 * Walk [off, off+len) of the SGE list; copy(mr, va, done, n) moves n bytes
 * at va of the SGE's region, done bytes into the transfer.
 */
template <typename F>
Result<void> sg_walk(verbs::Device &dev, verbs::Pd &pd, SgRef sg, size_t off, size_t len, F copy)
{
	size_t done = 0;
	for (uint32_t i = 0; i < sg.n && done < len; i++) {
		const verbs::Sge &e = sg.sge[i];
		if (off >= e.length) {
			off -= e.length;
			continue;
		}
		size_t chunk = min<size_t>(e.length - off, len - done);
		Ref<verbs::Mr> mr = dev.lookup_mr(e.lkey, false);
		if (!mr || &mr->pd != &pd)
			return Error(err::EACCES);
		WEFT_TRY(copy(*mr, e.addr + off, done, chunk));
		done += chunk;
		off = 0;
	}
	return done < len ? Error(err::EMSGSIZE) : ok();
}

} // namespace

Result<void> sg_gather(verbs::Device &dev, verbs::Pd &pd, SgRef sg, size_t off, Bytes dst)
{
	return sg_walk(dev, pd, sg, off, dst.size(),
		       [&](verbs::Mr &mr, uint64_t va, size_t done, size_t n) {
			       return mr.read(va, Bytes(dst.data() + done, n), 0);
		       });
}

Result<void> mr_place(const verbs::Mr &mr, uint64_t va, const Payload &src, uint32_t need)
{
	/* Region by region, each run straight from wherever the payload is. */
	return mr.walk(va, src.size(), need, [&](uint8_t *p, size_t done, size_t n) {
		return src.copy(done, Bytes(p, n));
	});
}

Result<void> sg_scatter(verbs::Device &dev, verbs::Pd &pd, SgRef sg, size_t off, const Payload &src)
{
	return sg_walk(dev, pd, sg, off, src.size(),
		       [&](verbs::Mr &mr, uint64_t va, size_t done, size_t n) {
			       return mr.walk(va, n, verbs::access::local_write,
					      [&](uint8_t *p, size_t at, size_t k) {
						      return src.copy(done + at, Bytes(p, k));
					      });
		       });
}

Result<void> sg_check(verbs::Device &dev, verbs::Pd &pd, SgRef sg, size_t off, size_t len)
{
	return sg_walk(dev, pd, sg, off, len, [&](verbs::Mr &mr, uint64_t va, size_t, size_t n) {
		return mr.check(va, n, 0);
	});
}

Result<void> sg_fill(void *sg_fill_ctx, size_t off, Bytes dst)
{
	auto *f = static_cast<SgFill *>(sg_fill_ctx);
	return sg_gather(*f->dev, *f->pd, f->sg, f->off + off, dst);
}

} // namespace weft::hca
