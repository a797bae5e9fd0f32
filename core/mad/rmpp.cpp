// SPDX-License-Identifier: GPL-2.0
/* RMPP segmentation, windows and reassembly (IBA Vol 1 13.6). */
#include "rmpp.h"

namespace weft::mad::rmpp {

namespace {

/* IBA 13.6.2.1: a segment carries 256 - 36 bytes of RMPP payload, class headers included. */
constexpr uint32_t payload_per_seg = iba::mad_size - rmpp_hdr;

uint8_t flags_of(const uint8_t *mad)
{
	return iba::RmppHeader::Flags::get(header(mad).rtime_flags);
}

} // namespace

bool active(const uint8_t *mad)
{
	const iba::RmppHeader &h = header(mad);
	return iba::class_uses_rmpp(mad[1]) && h.version.get() == 1 &&
	       (flags_of(mad) & iba::rmpp_flag::active);
}

Result<Own<Sender>> Sender::make(ConstBytes msg)
{
	if (msg.size() < sizeof(iba::MadHeader))
		return Error(err::EINVAL);
	size_t off = iba::class_data_offset(msg[1]);
	if (msg.size() < off)
		return Error(err::EINVAL);
	auto *s = new (Gfp::Sleep) Sender;
	if (!s)
		return Error(err::ENOMEM);
	Own<Sender> own(s);
	s->data_ = WEFT_TRY(Array<uint8_t>::make(Gfp::Sleep, msg.size()));
	__builtin_memcpy(s->data_.data(), msg.data(), msg.size());
	s->len_ = msg.size();
	s->off_ = off;
	s->seg_size_ = iba::mad_size - off;
	size_t data_len = msg.size() - off;
	s->count_ = static_cast<uint32_t>(data_len ? (data_len + s->seg_size_ - 1) / s->seg_size_ : 1);
	s->pad_ = static_cast<uint32_t>(s->count_ * s->seg_size_ - data_len);
	return own;
}

uint64_t Sender::tid() const
{
	return reinterpret_cast<const iba::MadHeader *>(data_.data())->tid.get();
}

void Sender::set_tid(uint64_t tid)
{
	reinterpret_cast<iba::MadHeader *>(data_.data())->tid.set(tid);
}

/* IBA 13.6.2.1: PayloadLength is the whole transfer in the first segment, the last one's in the last. */
void Sender::build(uint32_t seg, Mad &out) const
{
	__builtin_memset(out.bytes, 0, sizeof(out.bytes));
	__builtin_memcpy(out.bytes, data_.data(), off_);
	iba::RmppHeader &h = header(out.bytes);
	h.version.set(1);
	h.type.set(iba::rmpp_type::data);
	uint8_t flags = iba::rmpp_flag::active;
	uint32_t paylen = 0;
	if (seg == 1) {
		flags |= iba::rmpp_flag::first;
		paylen = count_ * payload_per_seg - pad_;
	}
	if (seg == count_) {
		flags |= iba::rmpp_flag::last;
		paylen = payload_per_seg - pad_;
	}
	iba::RmppHeader::Flags::set(h.rtime_flags, flags);
	h.status.set(0);
	h.seg_num.set(seg);
	h.paylen_newwin.set(paylen);
	size_t from = off_ + size_t(seg - 1) * seg_size_;
	size_t n = from < len_ ? min(seg_size_, len_ - from) : 0;
	__builtin_memcpy(out.bytes + off_, data_.data() + from, n);
}

uint32_t Sender::take_next()
{
	if (next_ > count_ || next_ > window_last_)
		return 0;
	return next_++;
}

Sender::Ack Sender::ack(uint32_t seg, uint32_t newwin)
{
	/* IBA 13.6.5.1: an ACK outside what was sent, or shrinking the window, is ignored. */
	if (seg > count_ || seg < last_ack_ || newwin < window_last_ || newwin < seg)
		return Ack::Ignored;
	last_ack_ = seg;
	window_last_ = min(newwin, count_);
	if (next_ <= last_ack_)
		next_ = last_ack_ + 1;
	return last_ack_ == count_ ? Ack::Done : Ack::Progress;
}

Result<void> Receiver::grow(size_t need, Gfp gfp)
{
	if (need <= data_.size())
		return ok();
	size_t cap = max(need, 2 * data_.size());
	auto bigger = WEFT_TRY(Array<uint8_t>::make(gfp, cap));
	if (len_)
		__builtin_memcpy(bigger.data(), data_.data(), len_);
	data_ = move(bigger);
	return ok();
}

/* IBA 13.6.5.2: take segments strictly in order; anything else is answered with the last ACK. */
Receiver::Step Receiver::add(const Mad &seg, Gfp gfp)
{
	const iba::RmppHeader &h = header(seg.bytes);
	const uint32_t n = h.seg_num.get();
	const uint8_t flags = flags_of(seg.bytes);
	if (n != expected_)
		return expected_ == 1 ? Step::Wait : Step::Ack; /* before the first: nothing to ACK yet */
	if ((n == 1) != bool(flags & iba::rmpp_flag::first))
		return Step::Abort;
	if (n == 1) {
		off_ = iba::class_data_offset(seg.bytes[1]);
		uint32_t total = h.paylen_newwin.get();
		uint32_t segs = total ? (total + payload_per_seg - 1) / payload_per_seg : window;
		if (!grow(off_ + size_t(segs) * (iba::mad_size - off_), gfp))
			return Step::Abort;
		__builtin_memcpy(data_.data(), seg.bytes, off_);
		len_ = off_;
		window_last_ = 1;
	} else if (!grow(len_ + (iba::mad_size - off_), gfp)) {
		return Step::Abort;
	}
	size_t n_data = iba::mad_size - off_;
	if (flags & iba::rmpp_flag::last) {
		/* The last segment's PayloadLength counts its class headers past the RMPP header too. */
		uint32_t paylen = h.paylen_newwin.get();
		size_t extra = off_ - rmpp_hdr;
		if (paylen < extra || paylen - extra > n_data)
			return Step::Abort;
		n_data = paylen - extra;
	}
	__builtin_memcpy(data_.data() + len_, seg.bytes + off_, n_data);
	len_ += n_data;
	expected_++;
	if (flags & iba::rmpp_flag::last)
		return Step::Done;
	if (n == window_last_) {
		window_last_ = n + window;
		return Step::Ack;
	}
	return Step::Wait;
}

/* IBA 13.6.2.3: an ACK names the last segment in order and the new window's end. */
void Receiver::ack(const Mad &seg, Mad &out) const
{
	__builtin_memset(out.bytes, 0, sizeof(out.bytes));
	__builtin_memcpy(out.bytes, seg.bytes, sizeof(iba::MadHeader));
	/* It goes back the other way: a response's ACK is a request and vice versa. */
	out.hdr().method.set(seg.hdr().method.get() ^ 0x80);
	out.hdr().status.set(0);
	iba::RmppHeader &h = header(out.bytes);
	h.version.set(1);
	h.type.set(iba::rmpp_type::ack);
	iba::RmppHeader::Flags::set(h.rtime_flags, iba::rmpp_flag::active);
	h.seg_num.set(expected_ - 1);
	h.paylen_newwin.set(max(window_last_, expected_ - 1));
}

Array<uint8_t> Receiver::take(size_t &len)
{
	len = len_;
	len_ = 0;
	return move(data_);
}

} // namespace weft::mad::rmpp
