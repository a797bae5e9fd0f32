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

Result<void> sg_gather(verbs::Device &dev, verbs::Pd &pd, SgRef sg, size_t off, Bytes dst, CsumAcc *acc)
{
	return sg_walk(dev, pd, sg, off, dst.size(),
		       [&](verbs::Mr &mr, uint64_t va, size_t done, size_t n) -> Result<void> {
			       if (!acc)
				       return mr.read(va, Bytes(dst.data() + done, n), 0);
			       return mr.walk(va, n, 0, [&](uint8_t *p, size_t at, size_t k) -> Result<void> {
				       acc->copy(dst.data() + done + at, p, k);
				       return ok();
			       });
		       });
}

Result<void> mr_place(const verbs::Mr &mr, uint64_t va, const Payload &src, uint32_t need)
{
	/* Region by region, each run straight from wherever the payload is. */
	return mr.walk(va, src.size(), need, [&](uint8_t *p, size_t done, size_t n) {
		return src.copy(done, Bytes(p, n));
	});
}

Result<void> sg_scatter(verbs::Device &dev, verbs::Pd &pd, SgRef sg, size_t off, const Payload &src,
			CsumAcc *acc)
{
	return sg_walk(dev, pd, sg, off, src.size(),
		       [&](verbs::Mr &mr, uint64_t va, size_t done, size_t n) {
			       return mr.walk(va, n, verbs::access::local_write,
					      [&](uint8_t *p, size_t at, size_t k) {
						      return src.copy(done + at, Bytes(p, k), acc);
					      });
		       });
}

Result<void> sg_check(verbs::Device &dev, verbs::Pd &pd, SgRef sg, size_t off, size_t len)
{
	return sg_walk(dev, pd, sg, off, len, [&](verbs::Mr &mr, uint64_t va, size_t, size_t n) {
		return mr.check(va, n, 0);
	});
}

SgFill sg_fill_of(verbs::Device &dev, verbs::Pd &pd, const SendWqe &w)
{
	SgFill f{&dev, &pd, SgRef{w.sge, static_cast<uint32_t>(w.wr.sg.size())}, 0};
	if (w.wr.send_flags & verbs::send_flag::csum) {
		f.csum = true;
		f.ins = CsumInsert{w.wr.csum_start, uint32_t(w.wr.csum_start) + w.wr.csum_offset};
		f.msg_len = w.length;
	}
	return f;
}

Result<uint32_t> sg_sum(verbs::Device &dev, verbs::Pd &pd, SgRef sg, size_t off, size_t len)
{
	uint32_t sum = 0;
	WEFT_TRY(sg_walk(dev, pd, sg, off, len, [&](verbs::Mr &mr, uint64_t va, size_t done, size_t n) {
		return mr.walk(va, n, 0, [&](uint8_t *p, size_t at, size_t k) -> Result<void> {
			sum = csum::add_at(sum, weft_csum(p, k, 0), done + at);
			return ok();
		});
	}));
	return sum;
}

namespace {

/* The sender's own insertion, into a packet it fills: sum [start, end) of its memory. */
Result<void> insert_into(const SgFill &f, size_t at, Bytes dst)
{
	const uint32_t sum = WEFT_TRY(sg_sum(*f.dev, *f.pd, f.sg, f.ins.start, f.msg_len - f.ins.start));
	const uint16_t v = csum::field_value(sum);
	const uint8_t *vb = reinterpret_cast<const uint8_t *>(&v);
	for (uint32_t i = 0; i < 2; i++)
		if (f.ins.field + i >= at && f.ins.field + i < at + dst.size())
			dst.data()[f.ins.field + i - at] = vb[i];
	return ok();
}

} // namespace

Result<void> sg_fill(void *sg_fill_ctx, size_t off, Bytes dst, CsumAcc *acc)
{
	auto *f = static_cast<SgFill *>(sg_fill_ctx);
	const size_t at = f->off + off;
	if (acc && f->csum)
		acc->insert(f->ins);
	WEFT_TRY(sg_gather(*f->dev, *f->pd, f->sg, at, dst, acc));
	/* Bytes that leave the in-host path carry the final field. */
	if (!acc && f->csum && f->ins.field + 2 > at && f->ins.field < at + dst.size())
		WEFT_TRY(insert_into(*f, at, dst));
	return ok();
}

} // namespace weft::hca
