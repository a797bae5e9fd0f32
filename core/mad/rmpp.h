/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RMPP, the reliable multi-packet transaction protocol (IBA Vol 1 13.6):
 * a message longer than one MAD travels as numbered DATA segments, each
 * a whole MAD that repeats the message's headers, inside a window the
 * receiver opens with ACKs.  This is the protocol's logic for one
 * message on either side; the MAD service (service.cpp) owns the timers,
 * the matching and the transport.
 */
#ifndef WEFT_MAD_RMPP_H
#define WEFT_MAD_RMPP_H

#include <weft/alloc.h>
#include <weft/mad/service.h>

namespace weft::mad::rmpp {

/* IBA 13.6.2.1: the common MAD header plus the RMPP header. */
inline constexpr size_t rmpp_hdr = 36;
/* Segments a receiver lets the sender have in flight (fewer than QP1's receive ring). */
inline constexpr uint32_t window = 16;
/* IBA 13.6.3: time the other side gets before a window is sent again, and how often. */
inline constexpr uint32_t default_timeout_ms = 1000;
inline constexpr uint8_t default_retries = 3;


inline const iba::RmppHeader &header(const uint8_t *mad)
{
	return *reinterpret_cast<const iba::RmppHeader *>(mad + sizeof(iba::MadHeader));
}
inline iba::RmppHeader &header(uint8_t *mad)
{
	return *reinterpret_cast<iba::RmppHeader *>(mad + sizeof(iba::MadHeader));
}
/* A MAD of an RMPP class with RMPP version 1 and the Active flag: it is part of RMPP. */
bool active(const uint8_t *mad);

/* The sending side of one message (IBA 13.6.5.1). */
class Sender {
public:
	/* A copy of @msg (its headers, iba::class_data_offset() bytes, then the data); EINVAL if shorter. */
	static Result<Own<Sender>> make(ConstBytes msg);

	uint32_t count() const { return count_; }
	/* Segment @seg (1-based) as it goes on the wire. */
	void build(uint32_t seg, Mad &out) const;

	/* The next segment the window allows, or 0. */
	uint32_t take_next();
	enum class Ack : uint8_t { Ignored, Progress, Done };
	/* IBA 13.6.5.1: an ACK of segments up to @seg with the window open to @newwin. */
	Ack ack(uint32_t seg, uint32_t newwin);
	/* The window's segments timed out: send again from the first unacknowledged. */
	void rewind() { next_ = last_ack_ + 1; }

	uint64_t tid() const;
	void set_tid(uint64_t tid);
	uint8_t mgmt_class() const { return data_[1]; }

private:
	Sender() = default;
	Array<uint8_t> data_;
	size_t len_ = 0, off_ = 0, seg_size_ = 0;
	uint32_t count_ = 0, pad_ = 0;
	uint32_t last_ack_ = 0, window_last_ = 1, next_ = 1;
};

/* The longest message reassembled for a class (service.h says why). */
constexpr size_t max_message(uint8_t mgmt_class)
{
	return rmpp_max_message(mgmt_class);
}

/* The receiving side of one message (IBA 13.6.5.2). */
class Receiver {
public:
	explicit Receiver(size_t max_len) : max_(max_len) {}

	enum class Step : uint8_t {
		Wait,  /* in order, window still open: nothing to send */
		Ack,   /* send ack() (window end, duplicate or gap) */
		Done,  /* the last segment is in: send ack(), then take the message */
		Abort, /* refused (broken protocol, too long, no memory): send refusal(), give up */
	};
	/*
	 * Feed one DATA segment (it is active() and of type DATA).  The buffer
	 * grows with the segments that arrive, never from PayloadLength, and
	 * never past the maximum; growth allocates with @gfp unless spare()
	 * gave it the memory.
	 */
	Step add(const Mad &seg, Gfp gfp);
	/*
	 * Capacity add(@seg) would grow the buffer to, or 0 when it would not
	 * grow (or would refuse).  A caller in atomic context allocates that
	 * much where it may sleep and hands it over with spare() first.
	 */
	size_t wants(const Mad &seg) const;
	/* A buffer of wants() bytes for the next add() (smaller ones are ignored). */
	void spare(Array<uint8_t> &&buf);
	/* The ACK for what has arrived in order, addressed like @seg. */
	void ack(const Mad &seg, Mad &out) const;
	/* After Abort: the STOP (resources) or ABORT (IBA 13.6.2.2) telling the sender why. */
	void refusal(const Mad &seg, Mad &out) const;
	uint8_t refusal_status() const { return status_; }
	/* Refuse from outside (out of room elsewhere, out of time): then send refusal(). */
	Step give_up(uint8_t status) { return refuse(status); }
	/* Bytes of buffer held now. */
	size_t held() const { return data_.size(); }
	/* The whole message: the first segment's headers, then every segment's data. */
	Array<uint8_t> take(size_t &len);

private:
	Result<void> grow(size_t need, Gfp gfp);
	size_t capacity_for(size_t need, size_t off) const;
	Step refuse(uint8_t status);
	void reply(const Mad &seg, Mad &out, uint8_t type) const;

	Array<uint8_t> data_;
	size_t len_ = 0, off_ = 0;
	const size_t max_;
	uint32_t expected_ = 1, window_last_ = 0;
	uint8_t status_ = 0;
};

} // namespace weft::mad::rmpp

#endif
