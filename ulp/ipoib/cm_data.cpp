// SPDX-License-Identifier: GPL-2.0
/*
 * The fast path of IPoIB connected mode (RFC 4755 §5): packets with their
 * encapsulation header (no GRH) as RC SENDs on a connection to the peer,
 * and receives from the shared SRQ into 64 KiB paged buffers.
 *
 * One CQ takes the completions of every RC QP and of the SRQ.  A send's
 * wr_id is the connection's generation (31 bits), its slot in slots_ and
 * the ring index; a completion whose generation is no longer the
 * connection's belongs to a released QP and its skb was freed already.
 * A receive's wr_id is rx_tag with the SRQ buffer index.
 */
#include <weft/log.h>

#include "cm.h"
#include "interface.h"
#include "poll.h"

namespace weft::ipoib {

namespace {
const Logger log("weft_ipoib");
constexpr uint64_t rx_tag = 1ull << 63;
} // namespace

Cm::TxConn *Cm::find_locked(const HwAddr &dst)
{
	lock_.assert_held();
	for (TxConn &c : tx_conns_)
		if (c.dst.qpn() == dst.qpn() && __builtin_memcmp(c.dst.gid, dst.gid, 16) == 0)
			return &c;
	return nullptr;
}

Cm::TxConn *Cm::add_locked(const HwAddr &dst)
{
	lock_.assert_held();
	if (nconns_ >= slots_.size())
		return nullptr;
	auto *c = new (Gfp::Atomic) TxConn();
	if (!c)
		return nullptr;
	auto ring = Array<TxSlot>::make(Gfp::Atomic, params_.ring_size);
	if (!ring) {
		delete c;
		return nullptr;
	}
	c->ring = static_cast<Array<TxSlot> &&>(*ring);
	for (TxSlot &s : c->ring)
		s = TxSlot{};
	c->dst = dst;
	for (uint32_t i = 0; i < slots_.size(); i++)
		if (!slots_[i]) {
			c->slot = i;
			break;
		}
	slots_[c->slot] = c;
	nconns_++;
	tx_conns_.push_back(*c);
	return c;
}

void Cm::too_big(void *skb)
{
	const uint32_t mtu = ifc_.ud_mtu_now();
	ifc_.count(&weft_ipoib_stats::cm_too_big);
	ifc_.count(&weft_ipoib_stats::tx_dropped);
	weft_ipoib_too_big(ifc_.nd_, skb, mtu);
}

/* A packet that waited for a connection that failed: as a datagram (process context). */
void Cm::ud_send(void *skb, const HwAddr &dst)
{
	if (!weft_ipoib_skb_fits(skb, ifc_.ud_mtu_now()))
		return too_big(skb);
	weft_ipoib_tx_lock(ifc_.nd_);
	if (ifc_.xmit_ud(skb, dst))
		weft_ipoib_skb_free(skb, false);
	weft_ipoib_tx_unlock(ifc_.nd_);
}

/* Under lock_: on @c's RC QP; false if its ring is full (the netdev queue is then stopped). */
bool Cm::post_locked(TxConn &c, void *skb)
{
	lock_.assert_held();
	const uint32_t size = static_cast<uint32_t>(c.ring.size());
	if (c.head - c.tail >= size) {
		weft_ipoib_stop_queue(ifc_.nd_);
		return false;
	}
	uint32_t len;
	(void)weft_ipoib_skb_data(skb, &len);
	verbs::SendWr wr;
	verbs::Sge sge[Interface::tx_sge];
	const uint32_t nsge = ifc_.tx_csum(skb, wr) ? ifc_.gather(skb, sge) : 0;
	if (!nsge) {
		ifc_.count(&weft_ipoib_stats::tx_dropped);
		weft_ipoib_skb_free(skb, false);
		return true;
	}
	const uint32_t idx = c.head % size;
	c.ring[idx] = TxSlot{skb, len};
	wr.wr_id = (static_cast<uint64_t>(c.gen) << 32) | (c.slot << 16) | idx;
	wr.opcode = verbs::WrOpcode::Send;
	wr.send_flags |= verbs::send_flag::signaled;
	wr.sg = Span<const verbs::Sge>(sge, nsge);
	if (!c.qp->post_send(wr)) {
		c.ring[idx] = TxSlot{};
		ifc_.count(&weft_ipoib_stats::tx_errors);
		weft_ipoib_skb_free(skb, false);
		return true;
	}
	c.head++;
	return true;
}

int Cm::xmit(void *skb, const HwAddr &dst)
{
	uint32_t len;
	(void)weft_ipoib_skb_data(skb, &len);
	/* A GSO packet is judged by its segments (datagram mode's TSO cuts it up). */
	const bool big = !weft_ipoib_skb_fits(skb, ifc_.ud_mtu_now());
	if (connected() && !dst.multicast() && cmp::has_flag(dst)) {
		bool kick_work = false;
		int ret = -1;
		{
			SpinGuardBh g(lock_);
			TxConn *c = find_locked(dst);
			if (!c) {
				c = add_locked(dst);
				kick_work = c != nullptr;
			} else if (c->state == TxState::Failed && !c->release && !c->id &&
				   now_ms() >= c->failed_at) {
				c->state = TxState::Connecting;
				c->started = false;
				c->mtu = 0;
				kick_work = true;
			}
			if (c)
				c->used_at = now_ms(); /* age_tx() */
			if (c && c->state == TxState::Up && len - encap_len <= c->mtu) {
				ret = post_locked(*c, skb) ? 0 : 1;
				if (!ret)
					ifc_.count(&weft_ipoib_stats::cm_tx_packets);
			} else if (c && c->state == TxState::Connecting) {
				if (c->npending < max_pending) {
					c->pending[c->npending++] = skb;
					ret = 0;
				} else if (big) {
					/* Not a path MTU matter: the connection is on its way. */
					ifc_.count(&weft_ipoib_stats::tx_dropped);
					weft_ipoib_skb_free(skb, false);
					ret = 0;
				}
			}
		}
		if (kick_work)
			kick();
		if (ret >= 0)
			return ret;
	}
	/*
	 * RFC 4755 §6: a datagram-only path carries at most the UD MTU (also
	 * what was queued before a switch to datagram mode clamped the MTU).
	 */
	if (big) {
		too_big(skb);
		return 0;
	}
	return -1;
}

/* The packets that waited for @c, now Up (process context). */
void Cm::send_pending(TxConn &c)
{
	SpinGuardBh g(lock_);
	for (uint32_t i = 0; i < c.npending; i++) {
		if (!post_locked(c, c.pending[i])) {
			ifc_.count(&weft_ipoib_stats::tx_dropped);
			weft_ipoib_skb_free(c.pending[i], false);
		}
	}
	c.npending = 0;
}

/* The skbs of a released QP's ring (its completions no longer match). */
void Cm::drain_ring(TxConn &c)
{
	SpinGuardBh g(lock_);
	for (TxSlot &s : c.ring) {
		if (s.skb)
			weft_ipoib_skb_free(s.skb, false);
		s = TxSlot{};
	}
	c.head = c.tail = 0;
	/* Its full ring may have stopped the queue. */
	if (ifc_.nd_ && !dying_.load(Order::Acquire))
		weft_ipoib_wake_queue(ifc_.nd_);
}

void Cm::handle_tx(const verbs::Wc &wc)
{
	const uint32_t gen = static_cast<uint32_t>(wc.wr_id >> 32);
	const uint32_t slot = static_cast<uint32_t>(wc.wr_id >> 16) & 0xffff;
	const uint32_t idx = static_cast<uint32_t>(wc.wr_id) & 0xffff;
	TxSlot s{};
	bool broken = false;
	{
		SpinGuardBh g(lock_);
		TxConn *c = slot < slots_.size() ? slots_[slot] : nullptr;
		if (!c || c->gen != gen || idx >= c->ring.size())
			return;
		s = c->ring[idx];
		c->ring[idx] = TxSlot{};
		c->tail++;
		if (weft_ipoib_queue_stopped(ifc_.nd_) && c->head - c->tail <= c->ring.size() / 2)
			weft_ipoib_wake_queue(ifc_.nd_);
		if (wc.status != verbs::WcStatus::Success && c->state == TxState::Up) {
			/* The connection broke (retries exhausted): work_ releases it. */
			ifc_.uncount(&weft_ipoib_stats::cm_connections);
			c->state = TxState::Failed;
			c->failed_at = now_ms();
			c->release = true;
			broken = true;
		}
	}
	if (!s.skb)
		return;
	if (wc.status == verbs::WcStatus::Success) {
		ifc_.count(&weft_ipoib_stats::tx_packets);
		ifc_.count(&weft_ipoib_stats::tx_bytes, s.len - encap_len);
	} else {
		ifc_.count(&weft_ipoib_stats::tx_errors);
		WEFT_LOG_RATELIMITED(log, Level::Info, "RC send completion %s", verbs::wc_status_str(wc.status));
	}
	weft_ipoib_skb_free(s.skb, wc.status == verbs::WcStatus::Success);
	if (broken)
		kick();
}

Result<void> Cm::post_rx(uint32_t idx, bool can_sleep)
{
	RxBuf &b = rx_[idx];
	if (!b.skb) {
		b.skb = weft_ipoib_cm_rx_alloc(ifc_.nd_, can_sleep, b.sg);
		if (!b.skb)
			return Error(err::ENOMEM);
	}
	verbs::Sge sge[WEFT_IPOIB_CM_SG];
	for (int i = 0; i < WEFT_IPOIB_CM_SG; i++)
		sge[i] = verbs::Sge{reinterpret_cast<uint64_t>(b.sg[i].addr), b.sg[i].len, ifc_.mr_->lkey};
	verbs::RecvWr wr;
	wr.wr_id = rx_tag | idx;
	wr.sg = Span<const verbs::Sge>(sge, WEFT_IPOIB_CM_SG);
	return srq_->post_recv(wr);
}

/*
 * RFC 4755 §5: the encapsulation header, then the packet.  A small one is
 * copied into a fresh skb and the big buffer goes back to the SRQ; a large
 * one goes up in its paged buffer and a new one takes its place.
 */
void Cm::handle_rx(const verbs::Wc &wc)
{
	const uint32_t idx = static_cast<uint32_t>(wc.wr_id & ~rx_tag);
	if (idx >= rx_.size())
		return;
	RxBuf &b = rx_[idx];
	/* A completion for a slot with no buffer posted names nothing we gave the HCA. */
	if (!b.skb) {
		ifc_.count(&weft_ipoib_stats::rx_errors);
		return;
	}
	auto repost = [&]() {
		if (!post_rx(idx, false))
			ifc_.count(&weft_ipoib_stats::rx_errors);
	};
	if (wc.status != verbs::WcStatus::Success) {
		if (wc.status != verbs::WcStatus::WrFlushErr)
			ifc_.count(&weft_ipoib_stats::rx_errors);
		return repost();
	}
	const uint32_t len = wc.byte_len;
	const RxFrame f = cm_frame(ConstBytes(static_cast<const uint8_t *>(b.sg[0].addr), b.sg[0].len), len,
				   cmp::buf_size);
	if (!f.ok) {
		ifc_.count(&weft_ipoib_stats::rx_bad_header);
		ifc_.count(&weft_ipoib_stats::rx_dropped);
		return repost();
	}
	if (!ifc_.admin_up_.load(Order::Acquire))
		return repost();
	const uint16_t proto = f.proto;
	ifc_.count(&weft_ipoib_stats::rx_packets);
	ifc_.count(&weft_ipoib_stats::rx_bytes, f.len);
	ifc_.count(&weft_ipoib_stats::cm_rx_packets);
	if (len <= WEFT_IPOIB_CM_HEAD) {
		uint8_t *data;
		void *skb = weft_ipoib_rx_alloc(ifc_.nd_, len, &data);
		if (skb)
			__builtin_memcpy(data, b.sg[0].addr, len);
		repost();
		if (!skb) {
			ifc_.count(&weft_ipoib_stats::rx_dropped);
			return;
		}
		weft_ipoib_rx_deliver(ifc_.nd_, skb, len, encap_len, proto, WEFT_IPOIB_RX_HOST, Interface::rx_csum(wc));
		return;
	}
	RxBuf fresh{};
	fresh.skb = weft_ipoib_cm_rx_alloc(ifc_.nd_, false, fresh.sg);
	if (!fresh.skb) {
		/* No memory for a new buffer: this one goes back, the packet is lost. */
		ifc_.count(&weft_ipoib_stats::rx_dropped);
		return repost();
	}
	void *full = b.skb;
	b = fresh;
	repost();
	weft_ipoib_cm_rx_deliver(ifc_.nd_, full, len, proto, Interface::rx_csum(wc));
}

int Cm::poll(int budget)
{
	return poll_cq(
		*cq_, budget, rx_tag, [this](const verbs::Wc &wc) { handle_rx(wc); },
		[this](const verbs::Wc &wc) { handle_tx(wc); });
}

bool Cm::req_notify()
{
	return cq_->req_notify(false);
}

void Cm::free_rx()
{
	for (RxBuf &b : rx_) {
		if (b.skb)
			weft_ipoib_skb_free(b.skb, false);
		b = RxBuf{};
	}
	weft_ipoib_cm_pages_drain(ifc_.nd_);
}

} // namespace weft::ipoib
