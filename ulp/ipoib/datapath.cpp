// SPDX-License-Identifier: GPL-2.0
/*
 * The fast path of an IPoIB interface in datagram mode (RFC 4391 §6): one
 * UD send per IP packet with its encapsulation header, one receive buffer
 * per datagram, and one CQ for both, drained by NAPI.
 *
 * Rings: a send slot holds the skb and a reference on the address handle
 * it went with until its completion; a receive slot holds the skb posted
 * for it.  wr_id is the slot index, with recv_flag for receives.  Send
 * completions of a UD QP arrive in posting order (IBA 10.8.3), so tx_tail_
 * counts them.
 */
#include <weft/log.h>

#include "cm.h"
#include "interface.h"
#include "poll.h"

namespace weft::ipoib {

static_assert(static_cast<int>(RxKind::Host) == WEFT_IPOIB_RX_HOST &&
	      static_cast<int>(RxKind::Broadcast) == WEFT_IPOIB_RX_BROADCAST &&
	      static_cast<int>(RxKind::Multicast) == WEFT_IPOIB_RX_MULTICAST);

namespace {
const Logger log("weft_ipoib");
constexpr uint64_t recv_flag = 1ull << 63;
} // namespace

uint64_t Interface::now_ms() const
{
	return weft_jiffies() * 1000 / weft_msecs_to_jiffies(1000);
}

void Interface::cq_event(verbs::Cq &, void *arg)
{
	Interface *ifc = static_cast<Interface *>(arg);
	if (ifc->nd_)
		weft_ipoib_napi_schedule(ifc->nd_);
}

int Interface::xmit(void *skb, const HwAddr &dst)
{
	if (!qp_rts_.load(Order::Acquire) || dying_.load(Order::Acquire)) {
		count(&weft_ipoib_stats::tx_dropped);
		weft_ipoib_skb_free(skb, false);
		return 0;
	}
	if (cm_) {
		const int r = cm_->xmit(skb, dst);
		if (r >= 0)
			return r;
	}
	return xmit_ud(skb, dst);
}

uint32_t Interface::ud_mtu_now() const
{
	const uint32_t m = mcast_mtu_.load(Order::Acquire);
	return m ? m : ud_mtu(static_cast<uint8_t>(iba::Mtu::M2048));
}

int Interface::xmit_ud(void *skb, const HwAddr &dst)
{
	DestTable::Decision d;
	{
		SpinGuardBh g(lock_);
		d = dests_.send(dst.gid_value(), skb, dst.qpn(), now_ms());
		if (d.verdict == DestTable::Verdict::Send)
			d.ah->get(); /* the send slot's */
	}
	switch (d.verdict) {
	case DestTable::Verdict::Send:
		post(skb, d.ah, dst.qpn());
		break;
	case DestTable::Verdict::Queued:
		break;
	case DestTable::Verdict::Unreachable:
	case DestTable::Verdict::QueueFull:
		count(&weft_ipoib_stats::tx_dropped);
		count(d.verdict == DestTable::Verdict::QueueFull ? &weft_ipoib_stats::tx_queue_full
								  : &weft_ipoib_stats::tx_no_dest);
		weft_ipoib_skb_free(skb, false);
		break;
	}
	if (d.kick)
		resolve_work_.queue();
	return 0;
}

bool Interface::tx_csum(void *skb, verbs::SendWr &wr)
{
	uint16_t start, offset;
	const int r = weft_ipoib_skb_csum(skb, &start, &offset);
	if (r < 0)
		return false;
	if (r > 0) {
		wr.send_flags |= verbs::send_flag::csum;
		wr.csum_start = start;
		wr.csum_offset = offset;
		count(&weft_ipoib_stats::tx_csum_offload);
	}
	return true;
}

weft_ipoib_rx_csum Interface::rx_csum(const verbs::Wc &wc)
{
	return weft_ipoib_rx_csum{(wc.wc_flags & verbs::wc_flag::csum) != 0, wc.csum};
}

uint32_t Interface::gather(void *skb, verbs::Sge (&out)[tx_sge], uint32_t skip)
{
	weft_ipoib_sg segs[tx_sge];
	const int n = weft_ipoib_skb_gather(skb, segs, tx_sge);
	if (n <= 0)
		return 0;
	if (n > 1)
		count(&weft_ipoib_stats::tx_gathered);
	uint32_t k = 0;
	for (int i = 0; i < n; i++) {
		const uint32_t drop = min(skip, segs[i].len);
		skip -= drop;
		if (segs[i].len > drop)
			out[k++] = verbs::Sge{reinterpret_cast<uint64_t>(segs[i].addr) + drop, segs[i].len - drop,
					      mr_->lkey};
	}
	return k;
}

/*
 * Segmentation offload: a GSO packet goes to the HCA whole, its headers
 * apart, to be cut into MSS-sized datagrams (verbs WrOpcode::Lso).  The
 * number of bytes the gather list leaves out (the headers), or -1 to drop.
 */
int Interface::tx_lso(void *skb, verbs::SendWr &wr)
{
	uint16_t hlen, mss, ip_off;
	const int r = weft_ipoib_skb_lso(skb, &hlen, &mss, &ip_off);
	if (r <= 0)
		return r;
	uint32_t len;
	wr.opcode = verbs::WrOpcode::Lso;
	wr.lso.hdr = weft_ipoib_skb_data(skb, &len);
	wr.lso.hlen = hlen;
	wr.lso.mss = mss;
	wr.lso.ip_off = ip_off;
	return hlen;
}

/* Under the transmit lock; takes over @skb and the reference on @ah. */
void Interface::post(void *skb, verbs::Ah *ah, uint32_t qpn)
{
	const uint32_t size = static_cast<uint32_t>(tx_.size());
	/* Only we write it (under the transmit lock). */
	const uint32_t head = tx_head_.load(Order::Relaxed);
	uint32_t len;
	(void)weft_ipoib_skb_data(skb, &len);
	verbs::SendWr wr;
	wr.opcode = verbs::WrOpcode::Send;
	/* Before the gather: these may move the data. */
	const int skip = tx_lso(skb, wr);
	const bool csum_ok = skip >= 0 && tx_csum(skb, wr);
	verbs::Sge sge[tx_sge];
	const uint32_t nsge = csum_ok ? gather(skb, sge, static_cast<uint32_t>(skip)) : 0;
	if (head - tx_tail_.load(Order::Acquire) >= size || !nsge) {
		count(&weft_ipoib_stats::tx_dropped);
		ah->put();
		weft_ipoib_skb_free(skb, false);
		return;
	}
	tx_[head % size] = TxSlot{skb, ah, len};
	tx_head_.store(head + 1, Order::Release);
	wr.wr_id = head % size;
	wr.send_flags |= verbs::send_flag::signaled;
	wr.sg = Span<const verbs::Sge>(sge, nsge);
	wr.ud.ah = ah;
	wr.ud.remote_qpn = qpn;
	wr.ud.remote_qkey = qkey_.load(Order::Acquire);
	wr.ud.pkey_index = pkey_index_.load(Order::Relaxed);
	if (qpn == mcast_qpn)
		count(&weft_ipoib_stats::tx_multicast);
	auto r = qp_->post_send(wr);
	if (!r) {
		/* Nothing was queued, so no completion will come for the slot. */
		tx_head_.store(head, Order::Release);
		tx_[head % size] = TxSlot{};
		count(&weft_ipoib_stats::tx_errors);
		ah->put();
		weft_ipoib_skb_free(skb, false);
		return;
	}
	if (wr.opcode == verbs::WrOpcode::Lso)
		count(&weft_ipoib_stats::tx_lso);
	/* Leave room for one more, and look again after stopping (NAPI may just have freed some). */
	if (head + 1 - tx_tail_.load(Order::Acquire) >= size) {
		weft_ipoib_stop_queue(nd_);
		/*
		 * Pairs with handle_tx()'s fence: either it sees the queue
		 * stopped or we see its new tail.  Stopping is a set_bit,
		 * which orders nothing (memory-barriers.txt; only x86's
		 * locked instruction happens to), so without this our load
		 * of the tail may pass it, both sides miss each other, and
		 * the queue may stay stopped with nothing left to complete.
		 */
		fence(Order::SeqCst);
		if (head + 1 - tx_tail_.load(Order::Acquire) < size)
			weft_ipoib_wake_queue(nd_);
	}
}

void Interface::handle_tx(const verbs::Wc &wc)
{
	const uint32_t size = static_cast<uint32_t>(tx_.size());
	if (wc.wr_id >= size)
		return;
	TxSlot s = tx_[wc.wr_id];
	tx_[wc.wr_id] = TxSlot{};
	if (!s.skb)
		return;
	if (wc.status == verbs::WcStatus::Success) {
		count(&weft_ipoib_stats::tx_packets);
		count(&weft_ipoib_stats::tx_bytes, s.len - encap_len);
	} else {
		count(&weft_ipoib_stats::tx_errors);
		WEFT_LOG_RATELIMITED(log, Level::Info, "send completion %s", verbs::wc_status_str(wc.status));
	}
	s.ah->put();
	weft_ipoib_skb_free(s.skb, wc.status == verbs::WcStatus::Success);
	/* Only NAPI writes it. */
	const uint32_t tail = tx_tail_.load(Order::Relaxed) + 1;
	tx_tail_.store(tail, Order::Release);
	/* Pairs with post()'s fence after stopping the queue. */
	fence(Order::SeqCst);
	if (weft_ipoib_queue_stopped(nd_) && tx_head_.load(Order::Acquire) - tail <= size / 2 &&
	    admin_up_.load(Order::Acquire))
		weft_ipoib_wake_queue(nd_);
}

Result<void> Interface::post_recv(uint32_t idx)
{
	RxSlot &s = rx_[idx];
	if (!s.skb) {
		s.skb = weft_ipoib_rx_alloc(nd_, rx_buf_size_, &s.data);
		if (!s.skb)
			return Error(err::ENOMEM);
	}
	verbs::Sge sge{reinterpret_cast<uint64_t>(s.data), rx_buf_size_, mr_->lkey};
	verbs::RecvWr wr;
	wr.wr_id = recv_flag | idx;
	wr.sg = Span<const verbs::Sge>(&sge, 1);
	return qp_->post_recv(wr);
}

/*
 * RFC 4391 §6: GRH (or its 40 bytes) and the encapsulation header, then
 * the IP packet.  Our own multicast may come back to us through the
 * switch (IBA 10.5.2.3 lets a port receive what it sent); it is dropped.
 */
void Interface::handle_rx(const verbs::Wc &wc)
{
	const uint32_t idx = static_cast<uint32_t>(wc.wr_id & ~recv_flag);
	if (idx >= rx_.size())
		return;
	RxSlot &s = rx_[idx];
	/* A completion for a slot with no buffer posted names nothing we gave the HCA. */
	if (!s.skb) {
		count(&weft_ipoib_stats::rx_errors);
		return;
	}
	if (wc.status != verbs::WcStatus::Success) {
		if (wc.status != verbs::WcStatus::WrFlushErr)
			count(&weft_ipoib_stats::rx_errors);
		weft_ipoib_skb_free(s.skb, false);
		s = RxSlot{};
		return;
	}
	auto repost = [&]() {
		if (!post_recv(idx))
			count(&weft_ipoib_stats::rx_errors);
	};
	const RxFrame f = ud_frame(ConstBytes(s.data, rx_buf_size_), wc.byte_len,
				   (wc.wc_flags & verbs::wc_flag::grh) != 0, pkey_);
	if (!f.ok) {
		count(&weft_ipoib_stats::rx_bad_header);
		count(&weft_ipoib_stats::rx_dropped);
		return repost();
	}
	if (wc.src_qp == qp_->qpn && wc.slid == lid_.load(Order::Acquire)) {
		count(&weft_ipoib_stats::rx_own_dropped);
		return repost();
	}
	if (!admin_up_.load(Order::Acquire))
		return repost();
	uint8_t *fresh_data;
	void *fresh = weft_ipoib_rx_alloc(nd_, rx_buf_size_, &fresh_data);
	if (!fresh) {
		/* No new buffer: this one goes back, the packet is lost. */
		count(&weft_ipoib_stats::rx_dropped);
		return repost();
	}
	const RxSlot got = s;
	s = RxSlot{fresh, fresh_data};
	repost();
	count(&weft_ipoib_stats::rx_packets);
	count(&weft_ipoib_stats::rx_bytes, f.len);
	if (f.kind != RxKind::Host)
		count(&weft_ipoib_stats::rx_multicast);
	weft_ipoib_rx_deliver(nd_, got.skb, wc.byte_len, grh_len + encap_len, f.proto, static_cast<int>(f.kind),
			      rx_csum(wc));
}

int Interface::poll(int budget)
{
	int done = poll_cq(
		*cq_, budget, recv_flag, [this](const verbs::Wc &wc) { handle_rx(wc); },
		[this](const verbs::Wc &wc) { handle_tx(wc); });
	if (cm_ && done < budget)
		done += cm_->poll(budget - done);
	if (done >= budget)
		return budget;
	/* Re-arm, and go round again for what came between the last poll and the arming. */
	if (weft_ipoib_napi_complete(nd_, done)) {
		bool more = cq_->req_notify(false);
		if (cm_ && cm_->req_notify())
			more = true;
		if (more)
			weft_ipoib_napi_schedule(nd_);
	}
	return done;
}

void Interface::free_rings()
{
	for (TxSlot &s : tx_) {
		if (s.skb) {
			s.ah->put();
			weft_ipoib_skb_free(s.skb, false);
		}
		s = TxSlot{};
	}
	for (RxSlot &s : rx_) {
		if (s.skb)
			weft_ipoib_skb_free(s.skb, false);
		s = RxSlot{};
	}
}

} // namespace weft::ipoib
