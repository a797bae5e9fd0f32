// SPDX-License-Identifier: GPL-2.0
/*
 * The switch's subnet management interface (IBA 14.2.2, 18.2.4.1): VL15
 * packets for its management port (its LID, or the permissive LID of the
 * directed-route part) reach QP0 here, in firmware.  Directed-route SMPs
 * take their hop with dr_step and go on, or reach the SMA and return;
 * LID-routed ones are answered back to their SLID through the LFT.
 * Atomic context throughout.  SMI drops are counted in port 0's
 * VL15Dropped; malformed packets in the arrival port's PortRcvErrors.
 */
#include <weft/iba/smp_attrs.h>
#include <weft/iba/dr.h>

#include "crc.h"
#include "sma.h"
#include "switch.h"
#include "trap.h"

namespace weft::hca {

namespace {

/* IBA 14.2.1: an SMP is the whole payload of a UD SEND to QP0: LRH, BTH, DETH, 256 bytes. */
constexpr size_t smp_offset = sizeof(iba::Lrh) + sizeof(iba::Bth) + sizeof(iba::Deth);

iba::Smp &smp_of(PacketBuf &pkt)
{
	return *reinterpret_cast<iba::Smp *>(pkt.data() + smp_offset);
}

iba::Lrh &lrh_of(PacketBuf &pkt)
{
	return *reinterpret_cast<iba::Lrh *>(pkt.data());
}

/* Well formed for QP0 (IBA 14.2.1, 9.6): a UD SEND ONLY of exactly one MAD. */
bool is_smp(const Packet &p)
{
	return p.deth && p.bth->opcode.get() == iba::opcode(iba::Transport::Ud, iba::op::SendOnly) &&
	       iba::Bth::DestQp::get(p.bth->dqp) == 0 && p.payload.size() == iba::mad_size && !p.grh;
}

} // namespace

bool Switch::for_smi(uint16_t dlid) const
{
	const Port &mp = ports_[0];
	const uint16_t lid = mp.lid.load(Order::Relaxed);
	const uint16_t mask = static_cast<uint16_t>(~((1u << mp.lmc.load(Order::Relaxed)) - 1));
	return dlid == permissive_lid || (lid && (dlid & mask) == (lid & mask));
}

bool Switch::port0_parse(Port &in, PacketBuf &pkt, Packet &out)
{
	if (pkt.sealed) {
		/* IBA 7.8.1: the packet ends here, so its ICRC is checked too. */
		auto crc = check_crcs(pkt.bytes());
		if (!crc || crc.value() != CrcCheck::Ok) {
			PortCounters::bump(in.counters.rcv_errors);
			return false;
		}
	}
	auto parsed = pkt.materialize() ? parse(pkt.bytes()) : Result<Packet>(Error(err::EFAULT));
	if (!parsed) {
		PortCounters::bump(in.counters.rcv_errors);
		return false;
	}
	out = parsed.value();
	return true;
}

void Switch::smi_receive(Port &in, Own<PacketBuf> pkt)
{
	Packet p;
	if (!port0_parse(in, *pkt, p))
		return;
	if (!is_smp(p)) {
		PortCounters::bump(in.counters.rcv_errors);
		return;
	}
	const auto &req = *reinterpret_cast<const iba::Smp *>(p.payload.data());
	const uint16_t dlid = p.lrh->dlid.get();
	if (req.mgmt_class.get() == iba::mgmt_class::subn_directed_route) {
		auto copy = smp_packet(p.payload.data(), dlid, p.lrh->slid.get());
		if (!copy) {
			PortCounters::bump(ports_[0].counters.vl15_dropped);
			return;
		}
		return smi_dr(in, copy.take(), in.num);
	}
	if (req.mgmt_class.get() == iba::mgmt_class::subn_lid_routed && dlid != permissive_lid)
		return smi_answer(in, *p.lrh, p.payload.data());
	PortCounters::bump(ports_[0].counters.vl15_dropped);
}

/* One directed-route step here (IBA 14.2.2): @from is the arrival port, 0 for our own response. */
void Switch::smi_dr(Port &in, Own<PacketBuf> pkt, uint8_t from)
{
	iba::Smp &smp = smp_of(*pkt);
	const iba::DrStep st = iba::dr_step(smp, iba::DrNode{true, nports_}, from);
	switch (st.action) {
	case iba::DrAction::Forward:
		/* IBA 14.2.2: the directed part travels with the permissive DLID. */
		lrh_of(*pkt).dlid.set(permissive_lid);
		return smi_send(move(pkt), st.port);
	case iba::DrAction::LidRoute: {
		const bool back = iba::Smp::Direction::get(smp.status);
		const uint16_t lid = ports_[0].lid.load(Order::Relaxed);
		lrh_of(*pkt).slid.set(lid ? lid : permissive_lid);
		return smi_route(move(pkt), back ? smp.dr_slid.get() : smp.dr_dlid.get());
	}
	case iba::DrAction::ToSma:
		if (from)
			return smi_answer(in, lrh_of(*pkt), reinterpret_cast<const uint8_t *>(&smp));
		break;
	default:
		break;
	}
	PortCounters::bump(ports_[0].counters.vl15_dropped);
}

/* The SMA's answer to @req, sent back the way the SMI says. */
void Switch::smi_answer(Port &in, const iba::Lrh &lrh, const uint8_t *req)
{
	const uint16_t lid = ports_[0].lid.load(Order::Relaxed);
	auto resp = smp_packet(req, lrh.slid.get(), lid ? lid : permissive_lid);
	if (!resp) {
		PortCounters::bump(ports_[0].counters.vl15_dropped);
		return;
	}
	verbs::MadIn mi;
	mi.port = in.num;
	mi.slid = lrh.slid.get();
	mi.sl = iba::Lrh::Sl::get(lrh.sl_lnh);
	const auto &r = *reinterpret_cast<const iba::Smp *>(req);
	const verbs::MadOutcome o = sma::process(*this, mi, r, smp_of(*resp.value()));
	if (o != verbs::MadOutcome::Reply) {
		/*
		 * Port 0 has no SM to take what the SMA leaves (a response, a
		 * trap), and IBA 13.4.2 knows no BaseVersion but 1: counted drops.
		 */
		if (o == verbs::MadOutcome::NotMine || r.base_version.get() != 1)
			PortCounters::bump(ports_[0].counters.vl15_dropped);
		return;
	}
	if (r.mgmt_class.get() == iba::mgmt_class::subn_directed_route)
		return smi_dr(in, resp.take(), 0);
	smi_route(resp.take(), lrh.slid.get());
}

void Switch::smi_send(Own<PacketBuf> pkt, uint8_t port)
{
	if (port == 0 || port > nports_) {
		PortCounters::bump(ports_[0].counters.vl15_dropped);
		return;
	}
	forward(ports_[port], move(pkt), true);
}

/* On by LID through the LFT (IBA 14.2.2.3). */
void Switch::smi_route(Own<PacketBuf> pkt, uint16_t dlid)
{
	lrh_of(*pkt).dlid.set(dlid);
	smi_send(move(pkt), lft(dlid));
}

/*
 * IBA 14.2.5.1: a notice stands until the SM represses it, so trap 128
 * is sent again every second, up to trap_repeats times.
 */
constexpr uint8_t trap_repeats = 8;
constexpr unsigned long trap_interval_ms = 1000;

void Switch::trap_tick(DelayedWork &w)
{
	Switch *sw = container_of(&w, &Switch::trap_work_);
	uint16_t sm_lid, lid;
	uint64_t m_key;
	uint32_t tid;
	{
		SpinGuardBh g(sw->mgmt_lock);
		if (!sw->mgmt.trap_pending || sw->mgmt.trap_tries >= trap_repeats)
			return;
		sw->mgmt.trap_tries++;
		/* IBA 13.4.6.4: repeats of one notice carry its TID; a new notice gets a new one. */
		if (sw->mgmt.trap_tries == 1)
			sw->mgmt.trap_tid = sw->traps_.new_tid_locked();
		sm_lid = sw->ports_[0].sm_lid;
		lid = sw->ports_[0].lid.load(Order::Relaxed);
		m_key = sw->ports_[0].mgmt.m_key;
		tid = sw->mgmt.trap_tid;
	}
	/* No SM or no LID yet: the SM's first sweep finds the change anyway. */
	if (sm_lid && lid)
		sw->send_trap_128(sm_lid, lid, m_key, tid);
	sw->trap_work_.modify(trap_interval_ms);
}

void Switch::trap_repressed_locked(Port &p, uint64_t tid)
{
	if (tid == mgmt.trap_tid)
		mgmt.trap_pending = false;
	traps_.repressed_locked(p, tid);
}

/* Port 0's notices leave like its SMP answers: through the LFT toward their DLID, the SM LID. */
void Switch::send_notice(Port &, Own<PacketBuf> pkt)
{
	const uint16_t dlid = lrh_of(*pkt).dlid.get();
	smi_route(move(pkt), dlid);
}

/* IBA 14.2.5.1, table 148: trap 128, "link state of a port of the switch at LIDADDR changed". */
void Switch::send_trap_128(uint16_t sm_lid, uint16_t lid, uint64_t m_key, uint32_t tid)
{
	iba::Smp smp;
	uint8_t lidaddr[2] = {static_cast<uint8_t>(lid >> 8), static_cast<uint8_t>(lid)};
	fill_trap(smp, tid, m_key, iba::notice::type_urgent, iba::notice::producer_switch,
		  iba::notice::trap_link_state_change, lid, lidaddr, sizeof(lidaddr));
	auto pkt = smp_packet(reinterpret_cast<const uint8_t *>(&smp), sm_lid, lid);
	if (!pkt) {
		PortCounters::bump(ports_[0].counters.vl15_dropped);
		return;
	}
	smi_route(pkt.take(), sm_lid);
}

} // namespace weft::hca
