// SPDX-License-Identifier: GPL-2.0
/* The soft fabric: cables, link state and the test-only autoconfiguration. */
#include <weft/copy.h>
#include <weft/log.h>
#include <weft/verbs/verbs.h>

#include "crc.h"
#include "fabric.h"
#include "hca_module.h"
#include "switch.h"

namespace weft::hca {

namespace {

/* Stack left below which Port::transmit defers instead of delivering inline. */
constexpr unsigned long deep_stack = 6144;
const Logger log("weft_hca");

Fabric *fabric;
alignas(Fabric) unsigned char fabric_storage[sizeof(Fabric)];
void *packet_cache; /* full-size PacketBufs (NULL: kmalloc them) */
} // namespace

Result<Own<PacketBuf>> PacketBuf::alloc(Gfp gfp, uint32_t cap)
{
	size_t size = sizeof(PacketBuf) + cap;
	/*
	 * Full-size packets from their own cache: init_on_alloc would zero
	 * ~4 KiB per packet, more than the payload copy costs, and every byte
	 * is written before it is read.  Small ones fit kmalloc better.
	 */
	void *cache = packet_cache;
	void *mem = cache && size > 512 && size <= weft_kmem_cache_size(cache)
			    ? weft_kmem_cache_alloc(cache, gfp_flags(gfp))
			    : weft_kmalloc(size, gfp_flags(gfp));
	if (!mem)
		return Error(err::ENOMEM);
	auto *b = new (mem) PacketBuf();
	b->cap = cap;
	return Own<PacketBuf>(b);
}

Result<void> PacketBuf::materialize()
{
	if (!by_ref())
		return ok();
	if (burst > 1)
		return Error(err::EINVAL);
	WEFT_TRY(ref.copy(0, Bytes(data() + ref_at, ref.len)));
	ref = Payload();
	PortCounters::bump(Fabric::get().materialized);
	return ok();
}

Result<Own<PacketBuf>> PacketBuf::clone(Gfp gfp)
{
	WEFT_TRY(materialize());
	auto copy = WEFT_TRY(alloc(gfp, len));
	copy_bytes(copy->data(), data(), len);
	copy->len = len;
	copy->sealed = sealed;
	return copy;
}

Result<void> PacketBuf::seal()
{
	if (!sealed) {
		WEFT_TRY(materialize());
		WEFT_TRY(hca::seal(Bytes(data(), len)));
		sealed = true;
	}
	return ok();
}

namespace {

/* IBA 9.2.4, 7.8: payload, pad to 4 bytes, ICRC (4), VCRC (2) end a packet. */
uint32_t wire_len(uint32_t ref_at, uint32_t payload)
{
	return ref_at + payload + (4 - payload % 4) % 4 + 6;
}

/*
 * A burst's last packet may carry less than the others: its lengths
 * (LRH PktLen, GRH PayLen, BTH PadCnt; IBA 7.7.8, 8.3.1, 9.2.4) are made
 * anew for @payload bytes.
 */
Result<void> resize_segment(PacketBuf &one, const Packet &hdr, uint32_t payload)
{
	const uint32_t len = wire_len(one.ref_at, payload);
	if (len > one.cap)
		return Error(err::EMSGSIZE);
	/* @hdr was parsed from the burst's bytes, which @one's begin with: same offsets. */
	uint8_t *base = one.data();
	const auto *from = reinterpret_cast<const uint8_t *>(hdr.lrh);
	auto at = [&](const void *h) { return base + (static_cast<const uint8_t *>(h) - from); };
	__builtin_memset(base + one.ref_at + payload, 0, len - one.ref_at - payload);
	auto *lrh = reinterpret_cast<iba::Lrh *>(at(hdr.lrh));
	(void)iba::Lrh::PktLen::set(lrh->pktlen, static_cast<uint16_t>((len - 2) / 4));
	if (hdr.grh) {
		uint8_t *grh = at(hdr.grh);
		const size_t after = len - size_t(grh - base) - sizeof(iba::Grh) - 2;
		reinterpret_cast<iba::Grh *>(grh)->paylen.set(static_cast<uint16_t>(after));
	}
	auto *bth = reinterpret_cast<iba::Bth *>(at(hdr.bth));
	(void)iba::Bth::PadCnt::set(bth->flags, static_cast<uint8_t>((4 - payload % 4) % 4));
	one.len = len;
	return ok();
}

} // namespace

uint32_t PacketBuf::payload_of(uint32_t i) const
{
	if (burst == 1)
		return static_cast<uint32_t>(ref.len);
	return i + 1 < burst ? each : static_cast<uint32_t>(ref.len - size_t(each) * (burst - 1));
}

uint64_t PacketBuf::wire_words() const
{
	if (burst == 1)
		return len / 4;
	return uint64_t(len / 4) * (burst - 1) + wire_len(ref_at, payload_of(burst - 1)) / 4;
}

Result<Own<PacketBuf>> PacketBuf::segment(uint32_t i, Gfp gfp) const
{
	auto hdr = parse(ConstBytes(data(), len));
	if (!hdr || i >= burst)
		return Error(err::EINVAL);
	auto one = WEFT_TRY(alloc(gfp, len));
	copy_bytes(one->data(), data(), len);
	one->len = len;
	one->ref = ref.slice(size_t(i) * each, payload_of(i));
	one->ref_at = ref_at;
	one->from = from;
	auto *bth = reinterpret_cast<iba::Bth *>(one->data() + (reinterpret_cast<const uint8_t *>(hdr.value().bth) - data()));
	/* IBA 9.7.1: PSNs count up through the burst; only its last asks for an ACK or solicits. */
	iba::Bth::Psn::set(bth->psn, (iba::Bth::Psn::get(bth->psn) + i) & 0xffffff);
	if (i)
		bth->opcode.set(i + 1 < burst ? mid_op : last_op);
	if (i + 1 < burst) {
		iba::Bth::AckReq::set(bth->psn, 0);
		iba::Bth::Se::set(bth->flags, 0);
	} else if (payload_of(i) != payload_of(0)) {
		WEFT_TRY(resize_segment(*one, hdr.value(), payload_of(i)));
	}
	return one;
}

verbs::PortCounterValues PortCounters::read() const
{
	auto rd = [](const Atomic<uint64_t> &v) { return v.load(Order::Relaxed); };
	verbs::PortCounterValues out;
	out.xmit_packets = rd(xmit_packets);
	out.rcv_packets = rd(rcv_packets);
	out.xmit_words = rd(xmit_words);
	out.rcv_words = rd(rcv_words);
	out.xmit_discards = rd(xmit_discards);
	out.rcv_errors = rd(rcv_errors);
	out.vl15_dropped = rd(vl15_dropped);
	out.link_downed = rd(link_downed);
	out.unicast_xmit = rd(unicast_xmit);
	out.unicast_rcv = rd(unicast_rcv);
	out.multicast_xmit = rd(multicast_xmit);
	out.multicast_rcv = rd(multicast_rcv);
	out.out_of_buffer = rd(out_of_buffer);
	return out;
}

void Port::transmit_segments(Own<PacketBuf> pkt)
{
	for (uint32_t i = 0; i < pkt->burst; i++) {
		auto one = pkt->segment(i, Gfp::Atomic);
		if (!one) {
			PortCounters::bump(counters.xmit_discards);
			continue;
		}
		transmit(one.take());
	}
}

void Port::set_link(verbs::PhysState ph, verbs::PortState st)
{
	SpinGuardBh g(node.mgmt_lock);
	phys.store(ph, Order::Relaxed);
	state.store(st, Order::Relaxed);
}

void Port::transmit(Own<PacketBuf> pkt)
{
	/* IBA 5.4: nothing leaves a port whose link is not up (Disabled by the SM, or its peer). */
	if (__builtin_expect(phys.load(Order::Relaxed) != verbs::PhysState::LinkUp, 0)) {
		PortCounters::bump(counters.xmit_discards, pkt->burst);
		return;
	}
	const bool faulty = faults_.armed();
	if (pkt->burst > 1 && (capture_users.load(Order::Relaxed) || faulty))
		return transmit_segments(move(pkt));
	tap(*pkt);
	RcuReadGuard rcu;
	Port *p = peer();
	if (!p) {
		PortCounters::bump(counters.xmit_discards, pkt->burst);
		return;
	}
	PortCounters::bump(counters.xmit_packets, pkt->burst);
	PortCounters::bump(counters.xmit_words, pkt->wire_words());
	if (faulty)
		return faults_.transmit(*p, move(pkt));
	/*
	 * In-host packets cross switches inline, each hop some 550 bytes
	 * deeper on the sender's stack; an SMP and its answer across an 8 x 8
	 * torus (20 hops) overflowed it.  Deep in, the packet goes on from
	 * the release work of this direction's fault queue.
	 */
	if (__builtin_expect(weft_stack_left() < deep_stack, 0))
		return faults_.defer(*p, move(pkt));
	deliver(*p, move(pkt));
}

void Port::deliver(Port &to, Own<PacketBuf> pkt)
{
	PortCounters::bump(to.counters.rcv_packets, pkt->burst);
	PortCounters::bump(to.counters.rcv_words, pkt->wire_words());
	to.node.receive(to, move(pkt));
}

Fabric::Fabric()
	: lock(WEFT_LOCK_CLASS("weft_hca_fabric")), capture_lock(WEFT_LOCK_CLASS("weft_hca_capture"))
{
}

Fabric &Fabric::get()
{
	return *fabric;
}

uint64_t Fabric::next_guid()
{
	/* A locally administered EUI-64 range: 0x02 in the top byte. */
	return 0x0200000000000000ull | 0x00574654ull << 24 | (guid_seq_.fetch_add(1, Order::Relaxed) + 1);
}

void Fabric::add(Node &n)
{
	MutexGuard g(lock);
	nodes.push_back(n);
	n.on_fabric_ = true;
}

Node *Fabric::find(const char *name)
{
	lock.assert_held();
	for (Node &n : nodes)
		if (n.device() && __builtin_strcmp(n.device()->name(), name) == 0)
			return &n;
	return nullptr;
}

void Fabric::remove(Node &n)
{
	MutexGuard g(lock);
	/* The far ends of the cut cables, to free what they hold for @n. */
	Port *far[64] = {};
	for (uint8_t i = 0; i <= n.port_count() && i < 64; i++) {
		Port *p = n.port(i);
		Port *q = p ? p->peer_.load(Order::Relaxed) : nullptr; /* ours: under the mutex */
		if (q) {
			p->peer_.store(nullptr, Order::Release);
			q->peer_.store(nullptr, Order::Release);
			q->set_link(verbs::PhysState::Polling, verbs::PortState::Down);
			q->node.link_changed(*q);
			far[i] = q;
		}
	}
	nodes.remove(n);
	n.on_fabric_ = false;
	/*
	 * No packet is on its way into @n once this returns.  Expedited, as
	 * in-tree's synchronize_net() under RTNL: tearing down a fabric of a
	 * thousand nodes waits here once per node and once per cable.
	 */
	weft_synchronize_rcu_expedited();
	for (uint8_t i = 0; i <= n.port_count() && i < 64; i++) {
		if (Port *p = n.port(i))
			p->faults_.purge();
		if (far[i])
			far[i]->faults_.purge();
	}
}

/* IBA 5.4 / 7.2: after link training both ends are LinkUp, PortState Init. */
Result<void> Fabric::connect(Port &a, Port &b)
{
	MutexGuard g(lock);
	if (!a.node.on_fabric_ || !b.node.on_fabric_)
		return Error(err::ENODEV);
	if (&a == &b || a.peer_.load(Order::Relaxed) || b.peer_.load(Order::Relaxed) || a.num == 0 ||
	    b.num == 0)
		return Error(err::EBUSY);
	Port *ends[] = {&a, &b};
	for (Port *p : ends)
		p->set_link(verbs::PhysState::LinkUp, verbs::PortState::Init);
	a.peer_.store(&b, Order::Release);
	b.peer_.store(&a, Order::Release);
	a.node.link_changed(a);
	b.node.link_changed(b);
	return ok();
}

void Fabric::disconnect(Port &p, Port *only_peer)
{
	/* The mutex stays held until the held packets are gone: no reconnect in between. */
	MutexGuard g(lock);
	Port *q = p.peer_.load(Order::Relaxed); /* peers change only under the mutex we hold */
	if (!q || (only_peer && q != only_peer))
		return;
	p.peer_.store(nullptr, Order::Release);
	q->peer_.store(nullptr, Order::Release);
	Port *ends[] = {&p, q};
	for (Port *x : ends) {
		x->set_link(verbs::PhysState::Polling, verbs::PortState::Down);
		PortCounters::bump(x->counters.link_downed);
		x->node.link_changed(*x);
	}
	weft_synchronize_rcu_expedited(); /* as in remove() */
	for (Port *x : ends)
		x->faults_.purge();
}

namespace {

struct Hop {
	Node *node;
	uint8_t first_port; /* the port of the origin switch this node is reached by */
};

/* Breadth-first from @sw: program its LFT with the first hop to every LID. */
Result<void> route_switch(Switch &sw, size_t node_count)
{
	auto queue = WEFT_TRY(Array<Hop>::make(Gfp::Sleep, node_count));
	size_t head = 0, tail = 0;
	queue[tail++] = Hop{&sw, 0};
	auto seen = [&](Node *n) {
		for (size_t i = 0; i < tail; i++)
			if (queue[i].node == n)
				return true;
		return false;
	};
	while (head < tail) {
		Hop h = queue[head++];
		uint8_t first = h.node->is_switch() ? 0 : 1;
		for (uint8_t i = first; i <= h.node->port_count(); i++) {
			Port *p = h.node->port(i);
			if (!p)
				continue;
			if (p->lid.load(Order::Relaxed) && (!h.node->is_switch() || i == 0)) {
				for (uint32_t l = 0; l < (1u << p->lmc.load(Order::Relaxed)); l++)
					sw.set_lft(static_cast<uint16_t>(p->lid.load(Order::Relaxed) + l), h.first_port);
			}
			Port *q = p->peer();
			/* Only switches relay; an HCA is a leaf. */
			if (!q || (h.node != &sw && !h.node->is_switch()) || seen(&q->node))
				continue;
			if (tail < node_count)
				queue[tail++] = Hop{&q->node, h.node == &sw ? i : h.first_port};
		}
	}
	return ok();
}

} // namespace

void Fabric::autoconfigure()
{
	MutexGuard g(lock);
	uint16_t next_lid = 1;
	size_t count = 0;
	for (Node &n : nodes) {
		count++;
		/* IBA 18.2.1: a switch has one LID, its management port 0's. */
		uint8_t last = n.is_switch() ? 0 : n.port_count();
		for (uint8_t i = n.is_switch() ? 0 : 1; i <= last; i++) {
			Port *p = n.port(i);
			if (p && (i == 0 || p->peer()))
				p->lid.store(next_lid++, Order::Relaxed);
		}
	}
	for (Node &n : nodes) {
		if (!n.is_switch())
			continue;
		auto r = route_switch(static_cast<Switch &>(n), count);
		if (!r)
			log.err("autoconfigure: routing failed (errno %d)", r.error().code());
	}
	for (Node &n : nodes) {
		for (uint8_t i = n.is_switch() ? 0 : 1; i <= n.port_count(); i++) {
			Port *p = n.port(i);
			if (!p || (i != 0 && !p->peer()))
				continue;
			p->sm_lid = 0;
			/* Only a port that becomes active is news (IBA 11.6.3.3). */
			bool was_active = p->state.load(Order::Relaxed) == verbs::PortState::Active;
			p->set_link(p->phys.load(Order::Relaxed), verbs::PortState::Active);
			if (!was_active)
				n.link_changed(*p);
		}
	}
	log.info("autoconfigure: %u LIDs assigned, ports ACTIVE", next_lid - 1);
}

void Fabric::flood_multicast(uint16_t mlid)
{
	MutexGuard g(lock);
	for (Node &n : nodes) {
		if (!n.is_switch())
			continue;
		uint64_t mask = 0;
		for (uint8_t i = 1; i <= n.port_count(); i++)
			if (n.port(i) && n.port(i)->peer())
				mask |= 1ull << i;
		static_cast<Switch &>(n).set_mft(mlid, mask);
	}
}

} // namespace weft::hca

void weft_hca_fabric_init(void)
{
	weft::hca::fabric = new (weft::hca::fabric_storage) weft::hca::Fabric();
	/* The largest packet: headers (at most 120 bytes with a GRH), 4 KiB payload, pad, CRCs. */
	weft::hca::packet_cache = weft_kmem_cache_create("weft_packet", sizeof(weft::hca::PacketBuf) + 4096 + 128, 1);
	weft::hca::fabric->engine_wq = weft_alloc_highpri_workqueue("weft_hca_engine");
}

void weft_hca_fabric_exit(void)
{
	/* Every QP is gone by now (topology and configfs nodes removed first). */
	if (weft::hca::fabric->engine_wq)
		weft_destroy_workqueue(weft::hca::fabric->engine_wq);
	weft::hca::fabric->~Fabric();
	weft::hca::fabric = nullptr;
	weft_kmem_cache_destroy(weft::hca::packet_cache);
	weft::hca::packet_cache = nullptr;
}
