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

Result<void> sg_scatter(verbs::Device &dev, verbs::Pd &pd, SgRef sg, size_t off, ConstBytes src)
{
	return sg_walk(dev, pd, sg, off, src.size(),
		       [&](verbs::Mr &mr, uint64_t va, size_t done, size_t n) {
			       return mr.write(va, ConstBytes(src.data() + done, n),
					       verbs::access::local_write);
		       });
}

Result<void> sg_fill(void *sg_fill_ctx, Bytes dst)
{
	auto *f = static_cast<SgFill *>(sg_fill_ctx);
	return sg_gather(*f->dev, *f->pd, f->sg, f->off, dst);
}

} // namespace weft::hca
