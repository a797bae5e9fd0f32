// SPDX-License-Identifier: GPL-2.0
/*
 * weft_selftest_stream: at load, send a checked RC stream from weft0 to
 * weft1 (include/weft/verbs/test_stream.h) and fail the load unless every
 * message arrived exactly once, in order and intact, and every send
 * completed successfully.  tests/integration/stream_faults.sh loads it on a
 * cable whose fault knobs drop, duplicate, reorder and corrupt packets.
 */
#include <weft/log.h>
#include <weft/verbs/test_stream.h>

using namespace weft;
using namespace weft::verbs;
using namespace weft::verbs::testing;

extern "C" int weft_selftest_stream_run(unsigned int messages);

namespace {
const Logger log("weft_selftest_stream");
} // namespace

int weft_selftest_stream_run(unsigned int messages)
{
	auto pair = make_own<Pair>(Gfp::Sleep);
	if (!pair)
		return -err::ENOMEM;
	Pair &c = *pair.value();
	/* ~4 ms local ACK timeout, 7 retries: a lossy link recovers quickly. */
	auto r = c.connect(QpType::Rc, iba::Mtu::M1024, 7, 10, 7);
	StreamResult s;
	if (r)
		r = run_stream(c, messages, s);
	log.info("STREAM-RESULT sent %u acked %u received %u bad %u extra %u failed %s errno %d", s.sent,
		 s.acked, s.received, s.bad, s.extra, wc_status_str(s.failed), r.to_errno());
	if (!r)
		return r.to_errno();
	return s.received == messages && s.acked == messages && !s.bad && !s.extra ? 0 : -err::EIO;
}
