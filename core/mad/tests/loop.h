/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test transport: two MadServices joined back to back.  What one sends
 * the other receives through a Loopback (in order, from a work item, as
 * from a real QP's poller, so an exchange of many MADs never nests inside
 * one transmit).  It loses MADs on request: the next @drop ones, or by
 * number (bit n of @lose: the n-th MAD transmitted, counting from 0).
 * stop() before the services go.
 */
#ifndef WEFT_MAD_TEST_LOOP_H
#define WEFT_MAD_TEST_LOOP_H

#include <weft/alloc.h>
#include <weft/atomic.h>

#include "../loopback.h"

namespace weft::mad::testing {

struct Loop final : MadTransport {
	MadAddr self;
	MadAddr last_to; /* where the last MAD was addressed */
	Mad last;	 /* and what it was */
	uint32_t drop = 0;
	Atomic<uint32_t> sent{0};
	uint64_t lose = 0;

	~Loop() { stop(); }
	/* Deliver to @peer from now on (ENOMEM). */
	Result<void> connect(MadService &peer)
	{
		to_peer_ = WEFT_TRY(make_own<Loopback>(Gfp::Sleep, peer));
		return ok();
	}
	void stop()
	{
		if (to_peer_)
			to_peer_->stop();
	}

	Result<void> transmit(const Mad &m, const MadAddr &to) override
	{
		uint32_t n = sent.fetch_add(1, Order::Relaxed);
		last_to = to;
		last = m;
		if (drop) {
			drop--;
			return ok();
		}
		if (n < 64 && (lose >> n) & 1)
			return ok();
		return to_peer_->post(m, self);
	}

private:
	Own<Loopback> to_peer_;
};

} // namespace weft::mad::testing

#endif
