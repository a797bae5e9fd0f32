// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: directed-route SMP processing (IBA Vol 1 14.2.2,
 * include/weft/iba/dr.h), as the SMIs of the CAs and switches along a
 * path apply it.  The input is an SMP (256 bytes) and then, one byte
 * pair per hop, the node the SMP reaches (switch or CA, port count) and
 * the port it arrives on.  The walk starts at the SM's node; at the SMA
 * the request turns into a response (D set) and walks back.  Whatever
 * the hop fields say, every step keeps HopPointer within the path, never
 * forwards out of a port the node lacks, and a walk ends (Discard or at
 * the SM) within a bounded number of hops.
 */
#include "fuzz.h"

#include <weft/iba/dr.h>

using namespace weft;
using namespace weft::iba;

WEFT_FUZZ_TARGET(const uint8_t *data, size_t size)
{
	if (size < mad_size)
		return 0;
	Smp smp;
	__builtin_memcpy(&smp, data, mad_size);
	fuzz::Records hops(data + mad_size, size - mad_size);
	DrNode node{(hops.byte() & 1) != 0, uint8_t(hops.byte() % 64)};
	uint8_t in = 0;
	bool answered = false;
	/* Out and back along at most 64 hops, plus the LID-routed legs at either end. */
	const unsigned bound = 2 * max_dr_hops + 8;
	for (unsigned step = 0;; step++) {
		fuzz::check(step <= bound, "a directed-route walk ends");
		const uint8_t cnt = smp.hop_count.get();
		DrStep s = dr_step(smp, node, in);
		if (s.action == DrAction::Discard || s.action == DrAction::ToSm)
			return 0;
		fuzz::check(smp.hop_pointer.get() <= cnt + 1, "hop pointer within the path");
		if (s.action == DrAction::ToSma) {
			fuzz::check(!Smp::Direction::get(smp.status) && !answered, "a request reaches one SMA");
			answered = true;
			/* The SMA answers from where it stands: the response starts there. */
			Smp::Direction::set(smp.status, 1);
			in = 0;
			continue;
		}
		if (s.action == DrAction::Forward)
			fuzz::check(s.port >= 1 && s.port <= node.ports, "forwarded out of a port the node has");
		/* Forward or LidRoute: the next node, from the input. */
		const uint8_t kind = hops.byte(), port = hops.byte();
		if (!kind && !port)
			return 0; /* the input's fabric ends here */
		node = DrNode{(kind & 1) != 0, uint8_t(kind >> 1 & 63)};
		in = port;
	}
}
