// SPDX-License-Identifier: GPL-2.0
/* Fault injection on cables (faults.h): the decisions and the held packets. */
#include "fabric.h"

namespace weft::hca {

namespace {

/* Uniform in [0, n) without a division (Lemire's multiply-shift). */
uint32_t random_below(uint32_t n)
{
	return static_cast<uint32_t>((static_cast<uint64_t>(weft_random_u32()) * n) >> 32);
}

constexpr const char *names[fault_kinds] = {"drop", "corrupt", "duplicate", "reorder", "delay"};

} // namespace

const char *fault_name(FaultKind k)
{
	return names[static_cast<size_t>(k)];
}

Faults::Faults(Port &port)
	: port_(port), lock_(WEFT_LOCK_CLASS("weft_hca_faults")),
	  release_(release_due, WEFT_LOCK_CLASS("weft_hca_faults_release"))
{
}

Faults::~Faults()
{
	/* The port is going: nobody transmits on it any more. */
	purge();
}

Result<void> Faults::set_probability(FaultKind k, uint32_t ppm)
{
	if (idx(k) >= fault_kinds || ppm > ppm_all)
		return Error(err::EINVAL);
	knob(k).ppm.store(ppm, Order::Relaxed);
	if (ppm)
		arm();
	return ok();
}

void Faults::set_count(FaultKind k, uint32_t n)
{
	if (idx(k) >= fault_kinds)
		return;
	knob(k).count.store(n, Order::Relaxed);
	if (n)
		arm();
}

Result<void> Faults::set_hold_ms(FaultKind k, uint32_t ms)
{
	if (ms == 0 || ms > max_hold_ms)
		return Error(err::EINVAL);
	if (k == FaultKind::Delay)
		delay_ms_.store(ms, Order::Relaxed);
	else if (k == FaultKind::Reorder)
		reorder_ms_.store(ms, Order::Relaxed);
	else
		return Error(err::EINVAL);
	return ok();
}

uint32_t Faults::hold_ms(FaultKind k) const
{
	if (k == FaultKind::Delay)
		return delay_ms_.load(Order::Relaxed);
	if (k == FaultKind::Reorder)
		return reorder_ms_.load(Order::Relaxed);
	return 0;
}

void Faults::clear()
{
	/*
	 * Disarm first: a transmitter that still sees armed_ finds zero
	 * knobs, one that does not skips them, both are right.
	 */
	armed_.store(false, Order::Relaxed);
	for (Knob &k : knobs_) {
		k.count.store(0, Order::Relaxed);
		k.ppm.store(0, Order::Relaxed);
	}
}

bool Faults::decide(FaultKind k)
{
	Knob &kn = knob(k);
	/* Counts first, taken one at a time by whoever wins the exchange. */
	uint32_t c = kn.count.load(Order::Relaxed);
	while (c) {
		if (kn.count.compare_exchange(c, c - 1, Order::Relaxed, Order::Relaxed))
			return true;
	}
	uint32_t ppm = kn.ppm.load(Order::Relaxed);
	if (ppm == 0)
		return false;
	return ppm >= ppm_all || random_below(ppm_all) < ppm;
}

void Faults::transmit(Port &to, Own<PacketBuf> pkt)
{
	/*
	 * Faults hold, copy and alter wire bytes: they need them all, and a
	 * held packet outlives the run that sent it.
	 */
	pkt->from = nullptr;
	if (!pkt->materialize()) {
		PortCounters::bump(to.counters.rcv_errors);
		return;
	}
	if (decide(FaultKind::Drop)) {
		bump(FaultKind::Drop);
		return;
	}
	if (decide(FaultKind::Corrupt)) {
		bump(FaultKind::Corrupt);
		/*
		 * Seal first, then flip a bit the VCRC covers (any bit: it
		 * covers the whole packet): every receiver, switch or CA,
		 * checks the VCRC of a sealed packet.  A packet too malformed
		 * to seal is what the receiver would reject anyway.
		 */
		if (!pkt->seal()) {
			PortCounters::bump(to.counters.rcv_errors);
			return;
		}
		uint32_t bit = random_below(pkt->len * 8);
		pkt->data()[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
	}
	Own<PacketBuf> copy;
	if (decide(FaultKind::Duplicate)) {
		auto c = pkt->clone(Gfp::Atomic);
		if (c) {
			copy = c.take();
			bump(FaultKind::Duplicate);
		}
	}
	if (decide(FaultKind::Delay)) {
		bump(FaultKind::Delay);
		hold(delayed_, delay_ms_.load(Order::Relaxed), move(pkt), move(copy));
		return;
	}
	if (decide(FaultKind::Reorder)) {
		bump(FaultKind::Reorder);
		hold(reordered_, reorder_ms_.load(Order::Relaxed), move(pkt), move(copy));
		return;
	}
	Port::deliver(to, move(pkt));
	if (copy)
		Port::deliver(to, move(copy));
	release_overtaken(to);
}

void Faults::defer(Port &to, Own<PacketBuf> pkt)
{
	/* A held packet outlives the run that sent it: it needs its own bytes. */
	pkt->from = nullptr;
	if (!pkt->materialize()) {
		PortCounters::bump(to.counters.rcv_errors);
		return;
	}
	deferred_.fetch_add(1, Order::Relaxed);
	hold(delayed_, 0, move(pkt), Own<PacketBuf>());
}

void Faults::hold(Queue &q, uint32_t ms, Own<PacketBuf> pkt, Own<PacketBuf> copy)
{
	uint64_t due = weft_jiffies() + weft_msecs_to_jiffies(ms);
	{
		SpinGuardBh g(lock_);
		Own<PacketBuf> both[] = {move(pkt), move(copy)};
		for (Own<PacketBuf> &b : both) {
			if (!b)
				continue;
			b->hold_until = due;
			q.push_back(*b.release());
			held_.fetch_add(1, Order::Relaxed);
		}
	}
	/* Already pending: it fires no later than this packet's deadline needs. */
	release_.queue(ms);
}

void Faults::deliver_all(Port *to, Queue &q)
{
	while (PacketBuf *b = q.pop_front()) {
		Own<PacketBuf> pkt(b);
		if (to)
			Port::deliver(*to, move(pkt));
	}
}

/* A packet went straight through: whatever waited to be overtaken follows it. */
void Faults::release_overtaken(Port &to)
{
	if (!held_.load(Order::Relaxed))
		return;
	Queue out;
	{
		SpinGuardBh g(lock_);
		while (PacketBuf *b = reordered_.pop_front()) {
			out.push_back(*b);
			held_.fetch_sub(1, Order::Relaxed);
		}
	}
	deliver_all(&to, out);
}

void Faults::release_due(DelayedWork &w)
{
	Faults &f = *container_of(&w, &Faults::release_);
	uint64_t now = weft_jiffies();
	uint64_t next = 0;
	Queue out;
	{
		SpinGuardBh g(f.lock_);
		Queue *qs[] = {&f.delayed_, &f.reordered_};
		for (Queue *q : qs) {
			Queue keep;
			while (PacketBuf *b = q->pop_front()) {
				if (static_cast<int64_t>(b->hold_until - now) <= 0) {
					out.push_back(*b);
					f.held_.fetch_sub(1, Order::Relaxed);
				} else {
					keep.push_back(*b);
					if (!next || static_cast<int64_t>(b->hold_until - next) < 0)
						next = b->hold_until;
				}
			}
			q->splice_back(keep);
		}
	}
	{
		/* The cable may have been cut meanwhile: then they are lost with it. */
		RcuReadGuard rcu;
		Port *to = f.port_.peer();
		if (!to)
			PortCounters::bump(f.port_.counters.xmit_discards, out.size());
		deliver_all(to, out);
	}
	if (next) {
		/* Jiffies to ms rounds down; one jiffy more than needed is harmless. */
		uint64_t left = next - now;
		w.queue(static_cast<unsigned long>(left) * 1000 / weft_msecs_to_jiffies(1000) + 1);
	}
}

void Faults::purge()
{
	release_.cancel_sync();
	Queue gone;
	{
		SpinGuardBh g(lock_);
		gone.splice_back(delayed_);
		gone.splice_back(reordered_);
		held_.store(0, Order::Relaxed);
	}
	deliver_all(nullptr, gone);
}

} // namespace weft::hca
