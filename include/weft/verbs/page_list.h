/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A block ULP's scatterlist as the page list of one fast registration
 * (IBA 10.6.3.5, Mr::set_pages), shared by weft_srp and weft_iser.  The
 * region starts at the first entry's kernel address; the SCSI host's
 * virt_boundary_mask (the page size) is what makes every scatterlist a
 * page list: each entry after the first starts on a page, each before
 * the last ends on one.
 */
#ifndef WEFT_VERBS_PAGE_LIST_H
#define WEFT_VERBS_PAGE_LIST_H

#include <weft/result.h>
#include <weft/span.h>

namespace weft::verbs {

/* IBA 10.6.3.3: a key's next variant (the consumer-owned low byte), for each new registration. */
constexpr uint32_t next_key(uint32_t key) { return (key & ~0xffu) | ((key + 1) & 0xffu); }

struct PageList {
	uint64_t iova = 0; /* the first entry's address */
	uint64_t len = 0;  /* the entries' total length */
	uint32_t n = 0;	   /* pages filled */
};

/*
 * The @nsg entries (Seg: .kva, .len) that @fetch(first, Seg *out, max)
 * hands out, 16 at a time, as page addresses into @pages.  EINVAL: not a
 * page list, or more pages than @pages holds.
 */
template <typename Seg, typename F>
Result<PageList> page_list(uint32_t nsg, uint32_t page_size, Span<uint64_t> pages, F &&fetch)
{
	PageList pl;
	const uintptr_t mask = page_size - 1;
	for (uint32_t f = 0; f < nsg; f += 16) {
		Seg e[16];
		fetch(f, e, 16u);
		for (uint32_t i = 0; i < 16 && f + i < nsg; i++) {
			const uintptr_t a = e[i].kva, end = a + e[i].len;
			if ((f + i && (a & mask)) || (f + i + 1 < nsg && (end & mask)))
				return Error(err::EINVAL);
			if (f + i == 0)
				pl.iova = a;
			for (uintptr_t pg = a & ~mask; pg < end; pg += page_size) {
				if (pl.n == pages.size())
					return Error(err::EINVAL);
				pages[pl.n++] = pg;
			}
			pl.len += e[i].len;
		}
	}
	return pl;
}

} // namespace weft::verbs

#endif
