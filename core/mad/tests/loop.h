/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test transport: two MadServices joined back to back, each transmit
 * handed straight to the peer's receive() (in the sender's context).  It
 * loses MADs on request: the next @drop ones, or by number (bit n of
 * @lose: the n-th MAD transmitted, counting from 0).
 */
#ifndef WEFT_MAD_TEST_LOOP_H
#define WEFT_MAD_TEST_LOOP_H

#include <weft/mad/service.h>

namespace weft::mad::testing {

struct Loop final : MadTransport {
	MadService *peer = nullptr;
	MadAddr self;
	uint32_t drop = 0, sent = 0;
	uint64_t lose = 0;
	Result<void> transmit(const Mad &m, const MadAddr &) override
	{
		uint32_t n = __atomic_fetch_add(&sent, 1, __ATOMIC_RELAXED);
		if (drop) {
			drop--;
			return ok();
		}
		if (n < 64 && (lose >> n) & 1)
			return ok();
		peer->receive(m, self);
		return ok();
	}
};

} // namespace weft::mad::testing

#endif
