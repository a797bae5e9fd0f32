/* SPDX-License-Identifier: GPL-2.0 */
/* Draining a channel's CQ from its poll work, shared by the initiator and the target. */
#ifndef WEFT_SRP_POLL_H
#define WEFT_SRP_POLL_H

#include <weft/verbs/verbs.h>

namespace weft::srp {

/*
 * Completions of @cq to @fn until it is empty and re-armed with none
 * waiting (IBA 11.4.2.2: poll again when the arm reports missed ones):
 * true.  False when @budget completions were taken first: the caller
 * queues its poll again, to let other work run.
 */
template <typename F> bool drain_cq(verbs::Cq &cq, uint32_t budget, F &&fn)
{
	verbs::Wc wc[16];
	for (;;) {
		const size_t n = cq.poll(Span<verbs::Wc>(wc, 16));
		for (size_t i = 0; i < n; i++)
			fn(wc[i]);
		budget = budget > n ? budget - static_cast<uint32_t>(n) : 0;
		if (!budget)
			return false;
		if (!n && !cq.req_notify(false))
			return true;
	}
}

} // namespace weft::srp

#endif
