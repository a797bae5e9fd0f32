/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Draining a CQ from the consumer's poll work, shared by the block ULPs
 * (weft_srp, weft_srpt, weft_iser, weft_isert) whose CQ handler only
 * queues that work.
 */
#ifndef WEFT_VERBS_DRAIN_H
#define WEFT_VERBS_DRAIN_H

#include <weft/verbs/verbs.h>

namespace weft::verbs {

/*
 * Completions of @cq to @fn until it is empty and re-armed with none
 * waiting (IBA 11.4.2.2: poll again when the arm reports missed ones):
 * true.  False when @budget completions were taken first: the caller
 * queues its poll work again, to let other work run.  The caller keeps
 * @cq alive for the call: its poll work is cancelled after the QPs
 * using the CQ are destroyed and before the CQ is.
 */
template <typename F> bool drain_cq(Cq &cq, uint32_t budget, F &&fn)
{
	Wc wc[16];
	for (;;) {
		const size_t n = cq.poll(Span<Wc>(wc, 16));
		for (size_t i = 0; i < n; i++)
			fn(wc[i]);
		budget = budget > n ? budget - static_cast<uint32_t>(n) : 0;
		if (!budget)
			return false;
		if (!n && !cq.req_notify(false))
			return true;
	}
}

} // namespace weft::verbs

#endif
