/* SPDX-License-Identifier: GPL-2.0 */
/* Draining a CQ from NAPI, shared by the UD (datapath.cpp) and RC (cm_data.cpp) paths. */
#ifndef WEFT_IPOIB_POLL_H
#define WEFT_IPOIB_POLL_H

#include <weft/verbs/verbs.h>

namespace weft::ipoib {

/*
 * Up to @budget receive completions (those whose wr_id has @recv_flag) of
 * @cq to @rx, every send completion met on the way to @tx; the number of
 * receives handled.
 */
template <typename Rx, typename Tx>
int poll_cq(verbs::Cq &cq, int budget, uint64_t recv_flag, Rx &&rx, Tx &&tx)
{
	constexpr int batch = 16;
	int done = 0;
	verbs::Wc wcs[batch];
	while (done < budget) {
		const size_t want = static_cast<size_t>(min(batch, budget - done));
		const size_t n = cq.poll(Span<verbs::Wc>(wcs, want));
		if (!n)
			break;
		for (size_t i = 0; i < n; i++) {
			if (wcs[i].wr_id & recv_flag) {
				rx(wcs[i]);
				done++;
			} else {
				tx(wcs[i]);
			}
		}
	}
	return done;
}

} // namespace weft::ipoib

#endif
