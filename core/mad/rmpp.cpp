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
	s->data_ = WEFT_TRY(Array<uint8_t>::make(Gfp::Sleep, msg.size(), Sized::ByInput));
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

/* Double (a window's worth at first), as far as the class allows. */
size_t Receiver::capacity_for(size_t need, size_t off) const
{
	if (need > max_)
		return 0;
	if (need <= data_.size())
		return data_.size();
	size_t first = off + size_t(window) * (iba::mad_size - off);
	return min(max_, max(need, max(first, 2 * data_.size())));
}

Result<void> Receiver::grow(size_t need, Gfp gfp)
{
	if (need <= data_.size())
		return ok();
	size_t cap = capacity_for(need, off_);
	if (!cap)
		return Error(err::EMSGSIZE);
	auto bigger = WEFT_TRY(Array<uint8_t>::make(gfp, cap, Sized::ByInput));
	if (len_)
		__builtin_memcpy(bigger.data(), data_.data(), len_);
	data_ = move(bigger);
	return ok();
}

size_t Receiver::wants(const Mad &seg) const
{
	const iba::RmppHeader &h = header(seg.bytes);
	if (h.seg_num.get() != expected_ || status_)
		return 0;
	const bool first = expected_ == 1;
	if (first && h.paylen_newwin.get() > max_)
		return 0;
	size_t off = first ? iba::class_data_offset(seg.bytes[1]) : off_;
	size_t need = (first ? off : len_) + (iba::mad_size - off);
	return need <= data_.size() ? 0 : capacity_for(need, off);
}

void Receiver::spare(Array<uint8_t> &&buf)
{
	if (buf.size() <= data_.size())
		return;
	if (len_)
		__builtin_memcpy(buf.data(), data_.data(), len_);
	data_ = move(buf);
}

Receiver::Step Receiver::refuse(uint8_t status)
{
	status_ = status;
	return Step::Abort;
}

/* IBA 13.6.5.2: take segments strictly in order; anything else is answered with the last ACK. */
Receiver::Step Receiver::add(const Mad &seg, Gfp gfp)
{
	const iba::RmppHeader &h = header(seg.bytes);
	const uint32_t n = h.seg_num.get();
	const uint8_t flags = flags_of(seg.bytes);
	if (status_)
		return Step::Abort;
	if (n != expected_)
		return expected_ == 1 ? Step::Wait : Step::Ack; /* before the first: nothing to ACK yet */
	if ((n == 1) != bool(flags & iba::rmpp_flag::first))
		return refuse(iba::rmpp_status::bad_seg);
	if (n == 1) {
		off_ = iba::class_data_offset(seg.bytes[1]);
		/*
		 * PayloadLength announces the whole (13.6.2.1): more than the
		 * class may have is refused before any memory is taken; less is
		 * not trusted either, the buffer follows the segments.
		 */
		if (h.paylen_newwin.get() > max_)
			return refuse(iba::rmpp_status::resources);
		if (!grow(off_ + (iba::mad_size - off_), gfp))
			return refuse(iba::rmpp_status::resources);
		__builtin_memcpy(data_.data(), seg.bytes, off_);
		len_ = off_;
		window_last_ = 1;
	} else if (!grow(len_ + (iba::mad_size - off_), gfp)) {
		return refuse(iba::rmpp_status::resources); /* past the class's maximum, or no memory */
	}
	size_t n_data = iba::mad_size - off_;
	if (flags & iba::rmpp_flag::last) {
		/* The last segment's PayloadLength counts its class headers past the RMPP header too. */
		uint32_t paylen = h.paylen_newwin.get();
		size_t extra = off_ - rmpp_hdr;
		if (paylen < extra || paylen - extra > n_data)
			return refuse(iba::rmpp_status::bad_len);
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

/* An ACK, STOP or ABORT goes back the other way: a response's is a request and vice versa. */
void Receiver::reply(const Mad &seg, Mad &out, uint8_t type) const
{
	__builtin_memset(out.bytes, 0, sizeof(out.bytes));
	__builtin_memcpy(out.bytes, seg.bytes, sizeof(iba::MadHeader));
	out.hdr().method.set(seg.hdr().method.get() ^ 0x80);
	out.hdr().status.set(0);
	iba::RmppHeader &h = header(out.bytes);
	h.version.set(1);
	h.type.set(type);
	iba::RmppHeader::Flags::set(h.rtime_flags, iba::rmpp_flag::active);
}

/* IBA 13.6.2.3: an ACK names the last segment in order and the new window's end. */
void Receiver::ack(const Mad &seg, Mad &out) const
{
	reply(seg, out, iba::rmpp_type::ack);
	iba::RmppHeader &h = header(out.bytes);
	h.seg_num.set(expected_ - 1);
	h.paylen_newwin.set(max(window_last_, expected_ - 1));
}

/* IBA 13.6.2.2: STOP with ResX when out of room, ABORT with the broken rule otherwise. */
void Receiver::refusal(const Mad &seg, Mad &out) const
{
	reply(seg, out, status_ == iba::rmpp_status::resources ? iba::rmpp_type::stop : iba::rmpp_type::abort);
	header(out.bytes).status.set(status_);
}

Array<uint8_t> Receiver::take(size_t &len)
{
	len = len_;
	len_ = 0;
	return move(data_);
}

} // namespace weft::mad::rmpp
