// SPDX-License-Identifier: GPL-2.0
/*
 * Traps from a node's SMA (trap.h): the notice in an SMP, and the slots
 * that repeat it until the SM represses it.
 */
#include <weft/iba/dr.h>

#include <weft/rt/kapi.h>

#include "packet.h"
#include "trap.h"

namespace weft::hca {

Result<Own<PacketBuf>> smp_packet(const uint8_t *smp, uint16_t dlid, uint16_t slid)
{
	PacketSpec s;
	s.vl = 15;
	s.dlid = dlid;
	s.slid = slid;
	s.opcode = iba::opcode(iba::Transport::Ud, iba::op::SendOnly);
	s.dqp = 0;
	s.sqp = 0;
	s.qkey = 0;
	s.payload = ConstBytes(smp, iba::mad_size);
	const size_t len = WEFT_TRY(packet_length(s));
	auto pkt = WEFT_TRY(PacketBuf::alloc(Gfp::Atomic, static_cast<uint32_t>(len)));
	pkt->len = static_cast<uint32_t>(WEFT_TRY(build(Bytes(pkt->data(), len), s, false)));
	return pkt;
}

/*
 * IBA 14.2.5.6 LocalPhyErrors, 16.1.3.5 LocalLinkIntegrityErrors: when the
 * local physical errors of a port exceed its LocalPhyErrors threshold, a
 * local link integrity error is counted and the count starts over; IBA
 * 14.2.5.1 trap 129 (urgent) tells the SM: LIDADDR and PORTNO, sent by a
 * CA from that port, by a switch from its port 0 (the one with a LID).
 * On the soft wire a VCRC failure is the only physical error there is.
 */
void local_phy_error(Port &in)
{
	SpinGuardBh g(in.node.mgmt_lock);
	PortMgmt &m = in.mgmt;
	if (m.phy_errors < 0xff)
		m.phy_errors++;
	if (m.phy_errors <= m.local_phy_errors)
		return;
	m.phy_errors = 0;
	PortCounters::bump(in.counters.local_link_integrity);
	Port *from = in.node.is_switch() ? in.node.port(0) : &in;
	TrapSender *t = in.node.trap_sender();
	if (!from || !t)
		return;
	iba::notice_details::PortError d{};
	d.lid.set(from->lid.load(Order::Relaxed));
	d.port.set(in.num);
	t->raise_locked(*from, iba::notice::type_urgent, trap::link_integrity, reinterpret_cast<const uint8_t *>(&d),
			sizeof(d));
}

/*
 * IBA 14.2.5.1 table 150, traps 257/258: LID1/LID2 the packet's SLID and
 * DLID, the 32-bit key field (a P_Key in its low half, as in-tree qib
 * sends it), SL and source QP, destination QP (1), and the GIDs if it
 * had a GRH.  One outstanding notice stands for a flood of such packets.
 */
void gsi_key_violation(Port &to, uint16_t number, const Packet &p, uint32_t key)
{
	TrapSender *t = to.node.trap_sender();
	if (!t || !p.lrh || !p.deth)
		return;
	using KeyViolation = iba::notice_details::KeyViolation;
	KeyViolation d{};
	d.lid1.set(p.lrh->slid.get());
	d.lid2.set(p.lrh->dlid.get());
	d.key.set(key);
	KeyViolation::Sl::set(d.sl_qp1, iba::Lrh::Sl::get(p.lrh->sl_lnh));
	KeyViolation::Qp1::set(d.sl_qp1, iba::Deth::SrcQp::get(p.deth->sqp));
	d.qp2.set(iba::gsi_qpn);
	if (p.grh) {
		__builtin_memcpy(d.gid1, p.grh->sgid, sizeof(d.gid1));
		__builtin_memcpy(d.gid2, p.grh->dgid, sizeof(d.gid2));
	}
	t->raise(to, iba::notice::type_security, number, reinterpret_cast<const uint8_t *>(&d), sizeof(d));
}

void fill_trap(iba::Smp &smp, uint32_t tid, uint64_t m_key, uint8_t type, uint32_t producer,
	       uint16_t number, uint16_t issuer_lid, const uint8_t *details, size_t len)
{
	smp = iba::Smp{};
	smp.base_version.set(1);
	smp.mgmt_class.set(iba::mgmt_class::subn_lid_routed);
	smp.class_version.set(1);
	smp.method.set(iba::method::trap);
	smp.tid.set(tid);
	smp.attr_id.set(iba::smp_attr::notice);
	smp.m_key.set(m_key);
	auto &n = *reinterpret_cast<iba::Notice *>(smp.data);
	iba::Notice::IsGeneric::set(n.generic_type, 1);
	iba::Notice::Type::set(n.generic_type, type);
	n.producer_hi.set(static_cast<uint8_t>(producer >> 16));
	n.producer_lo.set(static_cast<uint16_t>(producer));
	n.trap_number.set(number);
	n.issuer_lid.set(issuer_lid);
	__builtin_memcpy(n.data_details, details, len < sizeof(n.data_details) ? len : sizeof(n.data_details));
}

namespace {

uint64_t now_ms()
{
	return weft_ktime_ns() / 1000000;
}

} // namespace

TrapSender::TrapSender(Node &node) : node_(node), work_(tick, WEFT_LOCK_CLASS("weft_hca_trap")) {}

void TrapSender::raise(Port &port, uint8_t type, uint16_t number, const uint8_t *details, size_t len)
{
	SpinGuardBh g(node_.mgmt_lock);
	raise_locked(port, type, number, details, len);
}

void TrapSender::raise_locked(Port &port, uint8_t type, uint16_t number, const uint8_t *details, size_t len)
{
	/*
	 * No SM or no LID yet: there is nobody to tell, and the SM's sweep
	 * reads the state anyway.  (Kept, the notice would go out once the
	 * sweep has set the LIDs, before it has set the routes back.)
	 */
	if (!port.sm_lid || !port.lid.load(Order::Relaxed))
		return;
	uint8_t d[sizeof(Slot::details)] = {};
	__builtin_memcpy(d, details, len < sizeof(d) ? len : sizeof(d));
	Slot *free = nullptr;
	for (Slot &s : slots_) {
		if (!s.port) {
			free = free ? free : &s;
			continue;
		}
		/* IBA 13.4.9: the SM has not repressed this one yet; its repeats stand for the new one. */
		if (s.port == &port && s.number == number && !__builtin_memcmp(s.details, d, sizeof(d)))
			return;
	}
	if (!free) {
		dropped_.fetch_add(1, Order::Relaxed);
		return;
	}
	*free = Slot{};
	free->port = &port;
	free->type = type;
	free->number = number;
	/* IBA 13.4.6.4: repeats of one notice carry its TID; a new notice gets a new one. */
	free->tid = new_tid_locked();
	free->due_ms = now_ms();
	__builtin_memcpy(free->details, d, sizeof(d));
	/* Only the new notice is due now: the others keep their own interval. */
	work_.modify(0);
}

void TrapSender::repressed_locked(Port &port, uint64_t tid)
{
	for (Slot &s : slots_) {
		if (s.port == &port && s.tid == tid) {
			s.port = nullptr;
			repressed_.fetch_add(1, Order::Relaxed);
		}
	}
}

void TrapSender::capability_changed_locked(Port &port)
{
	iba::notice_details::LocalChanges d{};
	d.lid.set(port.lid.load(Order::Relaxed));
	d.capability_mask.set(port.mgmt.caps);
	raise_locked(port, iba::notice::type_info, trap::capability_mask, reinterpret_cast<const uint8_t *>(&d),
		     sizeof(d));
}

long TrapSender::send_due()
{
	struct Due {
		Port *port;
		uint16_t sm_lid, lid;
		iba::Smp smp;
	};
	Due *due = new (Gfp::Sleep) Due[nslots];
	if (!due)
		return trap::interval_ms; /* try again at the next tick */
	uint8_t n = 0;
	long next = -1;
	{
		SpinGuardBh g(node_.mgmt_lock);
		const uint64_t now = now_ms();
		for (Slot &s : slots_) {
			if (!s.port)
				continue;
			if (s.due_ms > now) {
				const long wait = static_cast<long>(s.due_ms - now);
				next = next < 0 || wait < next ? wait : next;
				continue;
			}
			if (s.tries >= trap::repeats) {
				s.port = nullptr; /* no SM answered: its next sweep finds the state */
				continue;
			}
			s.tries++;
			s.due_ms = now + trap::interval_ms;
			next = next < 0 || static_cast<long>(trap::interval_ms) < next ? trap::interval_ms : next;
			Port &p = *s.port;
			const uint16_t lid = p.lid.load(Order::Relaxed);
			/* The SM took the LID away since: the try is spent. */
			if (!p.sm_lid || !lid)
				continue;
			Due &d = due[n++];
			d.port = &p;
			d.sm_lid = p.sm_lid;
			d.lid = lid;
			fill_trap(d.smp, s.tid, p.mgmt.m_key, s.type,
				  node_.is_switch() ? iba::notice::producer_switch : iba::notice::producer_ca,
				  s.number, lid, s.details, sizeof(s.details));
		}
	}
	for (uint8_t i = 0; i < n; i++) {
		auto pkt = smp_packet(reinterpret_cast<const uint8_t *>(&due[i].smp), due[i].sm_lid, due[i].lid);
		if (!pkt) {
			PortCounters::bump(due[i].port->counters.xmit_discards);
			continue;
		}
		node_.send_notice(*due[i].port, pkt.take());
		sent_.fetch_add(1, Order::Relaxed);
	}
	delete[] due;
	return next;
}

void TrapSender::tick(DelayedWork &w)
{
	TrapSender *t = container_of(&w, &TrapSender::work_);
	const long next = t->send_due();
	if (next >= 0)
		t->work_.modify(static_cast<unsigned long>(next));
}

} // namespace weft::hca
