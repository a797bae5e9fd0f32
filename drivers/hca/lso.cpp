// SPDX-License-Identifier: GPL-2.0
/* Large send offload: one TCP/IPv4 message as MSS-sized UD SENDs (lso.h). */
#include "lso.h"

#include <weft/copy.h>

namespace weft::hca::lso {

namespace {

template <typename T> T *at(uint8_t *base, uint32_t off) { return reinterpret_cast<T *>(base + off); }
template <typename T> const T *at(const uint8_t *base, uint32_t off) { return reinterpret_cast<const T *>(base + off); }

uint32_t ip_hlen(const Ipv4Header &ip) { return ip.ver_ihl.bits<0, 4>() * 4u; }

/* A 16-bit value as it lies in memory in network order: the unit checksum sums add. */
uint16_t wire16(uint16_t v)
{
	be16 b = be16::from(v);
	uint16_t raw;
	__builtin_memcpy(&raw, static_cast<const void *>(&b), 2);
	return raw;
}

uint16_t raw16(const be16 &f)
{
	uint16_t raw;
	__builtin_memcpy(&raw, static_cast<const void *>(&f), 2);
	return raw;
}

void set_raw16(be16 &f, uint16_t raw) { __builtin_memcpy(static_cast<void *>(&f), &raw, 2); }

} // namespace

Result<void> check(const verbs::SendWr &wr, uint32_t length)
{
	const auto &l = wr.lso;
	if (!l.hdr || !l.mss || l.hlen > max_hlen || !length || length > max_payload ||
	    uint32_t(l.ip_off) + sizeof(Ipv4Header) > l.hlen)
		return Error(err::EINVAL);
	/* The message stands for one IPv4 datagram (RFC 791 §3.1: a 16-bit total length). */
	if (l.hlen - l.ip_off + length > 0xffff)
		return Error(err::EINVAL);
	const auto *ip = at<Ipv4Header>(l.hdr, l.ip_off);
	const uint32_t tcp_off = l.ip_off + ip_hlen(*ip);
	if (ip->ver_ihl.bits<4, 4>() != 4 || ip_hlen(*ip) < sizeof(Ipv4Header) ||
	    ip->protocol.get() != ip_proto_tcp || tcp_off + sizeof(TcpHeader) > l.hlen)
		return Error(err::EINVAL);
	/* The header ends where TCP's does: what follows is all payload. */
	const auto *tcp = at<TcpHeader>(l.hdr, tcp_off);
	if (tcp_off + tcp->doff.bits<4, 4>() * 4u != l.hlen)
		return Error(err::EINVAL);
	if ((wr.send_flags & verbs::send_flag::csum) &&
	    (wr.csum_start != tcp_off || wr.csum_offset != __builtin_offsetof(TcpHeader, check)))
		return Error(err::EINVAL);
	return ok();
}

void make_header(const verbs::SendWr &wr, uint32_t i, uint32_t n, uint32_t len, uint32_t total, Fill &f)
{
	const auto &l = wr.lso;
	f.hlen = l.hlen;
	__builtin_memcpy(f.hdr, l.hdr, l.hlen);
	auto *ip = at<Ipv4Header>(f.hdr, l.ip_off);
	const uint32_t ihl = ip_hlen(*ip);
	const uint32_t tcp_off = l.ip_off + ihl;
	auto *tcp = at<TcpHeader>(f.hdr, tcp_off);
	/* RFC 791 §3.1: this datagram's length and identification; the header checksum over them. */
	ip->tot_len.set(static_cast<uint16_t>(l.hlen - l.ip_off + len));
	ip->id.set(static_cast<uint16_t>(ip->id.get() + i));
	ip->check.set(0);
	set_raw16(ip->check, static_cast<uint16_t>(~csum::fold(weft_csum(ip, ihl, 0))));
	/* RFC 793 §3.1: the segment's first sequence number; FIN and PSH end the message. */
	tcp->seq.set(tcp->seq.get() + i * l.mss);
	uint8_t flags = tcp->flags.get();
	if (i + 1 < n)
		flags &= static_cast<uint8_t>(~(tcp_fin | tcp_psh));
	if (i > 0)
		flags &= static_cast<uint8_t>(~tcp_cwr); /* RFC 3168 §6.1.2 */
	tcp->flags.set(flags);
	f.data.off = size_t(i) * l.mss;
	f.csum = wr.send_flags & verbs::send_flag::csum;
	if (!f.csum)
		return;
	/* The pseudo header's TCP length (RFC 793 §3.1) is this segment's, not the message's. */
	const uint32_t tcp_hdr = l.hlen - tcp_off;
	uint32_t seed = raw16(tcp->check);
	seed = csum::add(csum::sub(seed, wire16(static_cast<uint16_t>(tcp_hdr + total))),
			 wire16(static_cast<uint16_t>(tcp_hdr + len)));
	set_raw16(tcp->check, csum::fold(seed));
	f.ins = CsumInsert{tcp_off, tcp_off + uint32_t(__builtin_offsetof(TcpHeader, check))};
}

Result<void> fill(void *ctx, size_t off, Bytes dst, CsumAcc *acc)
{
	auto *f = static_cast<Fill *>(ctx);
	if (acc && f->csum)
		acc->insert(f->ins);
	size_t done = 0;
	if (off < f->hlen) {
		done = min<size_t>(f->hlen - off, dst.size());
		if (acc)
			acc->copy(dst.data(), f->hdr + off, done);
		else
			copy_bytes(dst.data(), f->hdr + off, done);
	}
	if (done < dst.size())
		WEFT_TRY(sg_gather(*f->data.dev, *f->data.pd, f->data.sg, f->data.off + off + done - f->hlen,
				   Bytes(dst.data() + done, dst.size() - done), acc));
	/* Bytes that leave the in-host path carry the final field (sg_fill's rule). */
	const uint32_t field = f->ins.field;
	if (acc || !f->csum || field + 2 <= off || field >= off + dst.size())
		return ok();
	const uint32_t start = f->ins.start;
	const uint32_t len = static_cast<uint32_t>(f->data.msg_len);
	uint32_t sum = weft_csum(f->hdr + start, f->hlen - start, 0);
	sum = csum::add_at(sum, WEFT_TRY(sg_sum(*f->data.dev, *f->data.pd, f->data.sg, f->data.off, len)),
			   f->hlen - start);
	const uint16_t v = csum::field_value(sum);
	const uint8_t *vb = reinterpret_cast<const uint8_t *>(&v);
	for (uint32_t i = 0; i < 2; i++)
		if (field + i >= off && field + i < off + dst.size())
			dst.data()[field + i - off] = vb[i];
	return ok();
}

Result<void> fill_burst(void *ctx, size_t off, Bytes dst, CsumAcc *acc)
{
	auto *b = static_cast<BurstFill *>(ctx);
	const uint32_t mss = b->wr->lso.mss, each = b->wr->lso.hlen + mss;
	const uint32_t k = static_cast<uint32_t>(off / each), at = static_cast<uint32_t>(off % each);
	/* A reader copies one datagram at a time (PacketBuf::segment, the receiver's loop). */
	if (at + dst.size() > each)
		return Error(err::EINVAL);
	if (b->made != k) {
		make_header(*b->wr, k, b->n, mss, b->total, b->f);
		b->f.data.msg_len = mss;
		b->made = k;
	}
	return fill(&b->f, at, dst, acc);
}

} // namespace weft::hca::lso
