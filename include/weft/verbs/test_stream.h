/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test support: a checked RC message stream from a to b of a connected
 * Pair (IBA 9.7 reliable delivery).  Messages of varied length carry their
 * sequence number and a pattern; the receiver checks each arrives once, in
 * order and intact, the sender that every send completes successfully and
 * in order.  Used by the KUnit reliability suite and by the stock-kernel
 * stream module that runs it for 100k messages over a faulty cable.
 */
#ifndef WEFT_VERBS_TEST_STREAM_H
#define WEFT_VERBS_TEST_STREAM_H

#include <weft/verbs/test_pair.h>

namespace weft::verbs::testing {

struct StreamResult {
	uint32_t sent = 0, acked = 0, received = 0;
	uint32_t bad = 0;     /* arrived out of order, twice, or damaged */
	uint32_t extra = 0;   /* completions after the last message */
	WcStatus failed = WcStatus::Success; /* the first unsuccessful completion */
};

namespace stream_detail {

constexpr uint32_t slots = 32, max_len = 3000;

inline uint32_t length_of(uint32_t seq)
{
	return 4 + (seq * 577) % (max_len - 4);
}

inline void fill(uint8_t *p, uint32_t seq)
{
	__builtin_memcpy(p, &seq, 4);
	for (uint32_t i = 4; i < length_of(seq); i++)
		p[i] = static_cast<uint8_t>(seq * 31 + i);
}

inline bool intact(const uint8_t *p, uint32_t seq, uint32_t len)
{
	uint32_t got;
	__builtin_memcpy(&got, p, 4);
	if (got != seq || len != length_of(seq))
		return false;
	for (uint32_t i = 4; i < len; i++)
		if (p[i] != static_cast<uint8_t>(seq * 31 + i))
			return false;
	return true;
}

/* One send completion, in order and successful; false ends the stream. */
inline bool take_ack(const Wc &wc, StreamResult &r)
{
	if (wc.status != WcStatus::Success || wc.wr_id != r.acked) {
		r.failed = wc.status != WcStatus::Success ? wc.status : WcStatus::GeneralErr;
		return false;
	}
	r.acked++;
	return true;
}

} // namespace stream_detail

/*
 * Send @messages with at most slots/2 in flight.  ETIMEDOUT if nothing
 * completes for 5 s, EIO on an unsuccessful or out-of-order send
 * completion (@out says which); the data checks are counted in @out.
 * b's QP is destroyed at the end (its receives name buffers freed on
 * return, and destroying waits out its engine).
 */
namespace stream_detail {
inline Result<void> stream(Pair &c, uint32_t messages, StreamResult &out, Buf &rx, Buf &tx)
{
	for (uint32_t i = 0; i < slots; i++)
		WEFT_TRY(post_recv_one(c.b, rx.p + i * max_len, max_len, i));
	StreamResult &r = out;
	while (r.received < messages) {
		if (r.sent < messages && r.sent - r.acked < slots / 2) {
			uint8_t *p = tx.p + (r.sent % slots) * max_len;
			fill(p, r.sent);
			Sge sg{reinterpret_cast<uint64_t>(p), length_of(r.sent), c.a.mr->lkey};
			SendWr wr;
			wr.wr_id = r.sent;
			wr.sg = Span<const Sge>(&sg, 1);
			WEFT_TRY(c.a.qp->post_send(wr));
			r.sent++;
			continue;
		}
		Wc wc;
		while (c.a.cq->poll(Span<Wc>(&wc, 1)))
			if (!take_ack(wc, r))
				return Error(err::EIO);
		if (r.received == r.sent) {
			if (r.acked == r.sent)
				continue; /* nothing in flight: post more */
			/* Everything arrived; the window reopens when the ACKs do. */
			if (!take_ack(WEFT_TRY(wait_wc(c.a.cq)), r))
				return Error(err::EIO);
			continue;
		}
		Wc rwc = WEFT_TRY(wait_wc(c.b.cq));
		if (rwc.status != WcStatus::Success) {
			r.failed = rwc.status;
			return Error(err::EIO);
		}
		uint32_t slot = static_cast<uint32_t>(rwc.wr_id);
		if (!intact(rx.p + slot * max_len, r.received, rwc.byte_len))
			r.bad++;
		r.received++;
		WEFT_TRY(post_recv_one(c.b, rx.p + slot * max_len, max_len, slot));
	}
	while (r.acked < messages)
		if (!take_ack(WEFT_TRY(wait_wc(c.a.cq)), r))
			return Error(err::EIO);
	/* Nothing extra arrives: each message exactly once. */
	weft_msleep(100);
	Wc extra;
	r.extra = static_cast<uint32_t>(c.b.cq->poll(Span<Wc>(&extra, 1)));
	return ok();
}
} // namespace stream_detail

inline Result<void> run_stream(Pair &c, uint32_t messages, StreamResult &out)
{
	using namespace stream_detail;
	Buf rx(slots * max_len), tx(slots * max_len);
	if (!rx.p || !tx.p)
		return Error(err::ENOMEM);
	auto r = stream(c, messages, out, rx, tx);
	auto e = c.b.ctx->destroy_qp(c.b.qp);
	c.b.qp = nullptr;
	if (r && !e)
		return e;
	return r;
}

} // namespace weft::verbs::testing

#endif
