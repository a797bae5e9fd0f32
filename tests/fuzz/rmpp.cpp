// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: RMPP (IBA Vol 1 13.6, core/mad/rmpp.cpp).  The input is a
 * sequence of records (fuzz.h Records).  Its first byte picks the mode:
 *  - even: every record is a DATA segment off the wire, fed to a
 *    Receiver as the MAD service does (wants()/spare() first on odd
 *    segments, like an atomic-context caller), answered with ack() or
 *    refusal(); the message taken is never longer than the class allows;
 *  - odd: the first record is a message to send; a Sender segments it
 *    and the later records are ACKs (segment, new window) from the wire;
 *    every segment it builds goes to a Receiver, and a message that
 *    completes must come out as it went in.
 */
#include "fuzz.h"

#include "../../core/mad/rmpp.h"

using namespace weft;
using namespace weft::mad;
using namespace weft::mad::rmpp;

namespace {

void to_mad(ConstBytes rec, Mad &m)
{
	__builtin_memset(m.bytes, 0, sizeof(m.bytes));
	if (rec.size())
		__builtin_memcpy(m.bytes, rec.data(), rec.size());
}

void receive(fuzz::Records &in)
{
	ConstBytes rec;
	Mad seg, out;
	Receiver *r = nullptr;
	size_t max = 0;
	for (unsigned i = 0; in.next(rec, iba::mad_size); i++) {
		to_mad(rec, seg);
		if (!r) {
			max = max_message(seg.bytes[1]);
			r = new (Gfp::Sleep) Receiver(max);
			fuzz::check(r, "receiver");
		}
		if (i & 1) {
			size_t want = r->wants(seg);
			fuzz::check(want <= max, "wants() within the class maximum");
			if (want) {
				auto buf = Array<uint8_t>::make(Gfp::Sleep, want, Sized::ByInput);
				if (buf)
					r->spare(buf.take());
			}
		}
		switch (r->add(seg, Gfp::Atomic)) {
		case Receiver::Step::Wait:
			break;
		case Receiver::Step::Ack:
			r->ack(seg, out);
			break;
		case Receiver::Step::Done: {
			r->ack(seg, out);
			size_t len = 0;
			Array<uint8_t> msg = r->take(len);
			fuzz::check(len <= msg.size() && len <= max, "message within its buffer and the maximum");
			delete r;
			r = nullptr;
			break;
		}
		case Receiver::Step::Abort:
			r->refusal(seg, out);
			fuzz::check(r->refusal_status() != 0, "a refusal has a status");
			break;
		}
		fuzz::check(!r || r->held() <= max, "buffer within the class maximum");
	}
	delete r;
}

/* The message the Sender was given, against what a Receiver made of its segments. */
bool same(ConstBytes msg, const Array<uint8_t> &got, size_t len)
{
	if (len != msg.size())
		return false;
	/* The RMPP header differs (each segment has its own); the rest must not. */
	for (size_t i = 0; i < len; i++)
		if ((i < sizeof(iba::MadHeader) || i >= rmpp_hdr) && got[i] != msg[i])
			return false;
	return true;
}

void send(fuzz::Records &in)
{
	ConstBytes msg, rec;
	if (!in.next(msg, 4096) || msg.size() < 2)
		return;
	/* Messages only go out on classes with RMPP, as the service's agents send them. */
	if (!iba::class_uses_rmpp(msg[1]))
		return;
	auto made = Sender::make(msg);
	if (!made)
		return;
	Own<Sender> s = made.take();
	Receiver r(max_message(s->mgmt_class()));
	Mad seg;
	bool done = false, aborted = false;
	for (unsigned rounds = 0; rounds < 64 && !done && !aborted; rounds++) {
		while (uint32_t n = s->take_next()) {
			fuzz::check(n >= 1 && n <= s->count(), "segment number in range");
			s->build(n, seg);
			auto step = r.add(seg, Gfp::Sleep);
			done |= step == Receiver::Step::Done;
			aborted |= step == Receiver::Step::Abort;
			if (done || aborted)
				break;
		}
		if (!in.next(rec, 8))
			break;
		uint8_t a[8] = {};
		__builtin_memcpy(a, rec.data(), rec.size());
		uint32_t ackseg = uint32_t(a[0]) << 8 | a[1], newwin = uint32_t(a[2]) << 8 | a[3];
		if (a[4] & 1)
			s->rewind();
		else
			(void)s->ack(ackseg, newwin);
	}
	if (done) {
		size_t len = 0;
		Array<uint8_t> got = r.take(len);
		/* A message shorter than the class's headers goes as one segment of headers. */
		if (msg.size() >= iba::class_data_offset(msg[1]))
			fuzz::check(same(msg, got, len), "RMPP round trip keeps the message");
	}
}

} // namespace

WEFT_FUZZ_TARGET(const uint8_t *data, size_t size)
{
	fuzz::Records in(data, size);
	if (in.byte() & 1)
		send(in);
	else
		receive(in);
	return 0;
}
