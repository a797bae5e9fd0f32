// SPDX-License-Identifier: GPL-2.0
/* The soft IB switch: forwarding (IBA 18.2.4). */

#include "crc.h"
#include "hca_module.h"
#include "sma.h"
#include "switch.h"

namespace weft::hca {

namespace {

verbs::DeviceAttr switch_attr()
{
	verbs::DeviceAttr a;
	a.vendor_id = 0x0051ef; /* Weft's made-up OUI-like vendor id */
	a.vendor_part_id = 0x5357;
	a.max_pd = 1;
	a.max_cq = 4;
	a.max_cqe = 256;
	a.max_qp = 2;
	a.max_qp_wr = 256;
	a.max_send_sge = a.max_recv_sge = 1;
	a.max_mr = 4;
	a.max_mr_size = ~0ull;
	a.max_pkeys = 1;
	return a;
}
} // namespace

Switch::Switch(uint8_t ports, Array<Atomic<uint8_t>> lft, Array<Atomic<uint64_t>> mft, Port *port_array)
	: verbs::Device(verbs::NodeType::Switch, 1, switch_attr()), nports_(ports),
	  ports_(port_array), lft_(move(lft)), mft_(move(mft)),
	  trap_work_(trap_tick, WEFT_LOCK_CLASS("weft_hca_switch_trap"))
{
	name_fmt_ = "weftsw%d";
	sysfs_visible_ = __atomic_load_n(&weft_hca_switch_sysfs, __ATOMIC_RELAXED);
}

Switch::~Switch()
{
	/* Off the fabric already, so nothing queues it again. */
	trap_work_.cancel_sync();
	traps_.stop();
	for (int i = nports_; i >= 0; i--)
		ports_[i].~Port();
	weft_kfree(ports_);
}

Result<Switch *> Switch::create(uint8_t ports)
{
	if (ports == 0 || ports > 63) /* MFT port masks are 64 bits, port 0 included */
		return Error(err::EINVAL);
	auto lft = WEFT_TRY(Array<Atomic<uint8_t>>::make(Gfp::Sleep, unicast_lid_top + 1));
	auto mft = WEFT_TRY(Array<Atomic<uint64_t>>::make(Gfp::Sleep, permissive_lid - multicast_lid_base));
	for (Atomic<uint8_t> &e : lft)
		e.store(no_port, Order::Relaxed);
	auto *mem = static_cast<Port *>(weft_kmalloc(sizeof(Port) * (ports + 1), gfp_flags(Gfp::Sleep)));
	if (!mem)
		return Error(err::ENOMEM);
	auto *sw = new (Gfp::Sleep) Switch(ports, move(lft), move(mft), mem);
	if (!sw) {
		weft_kfree(mem);
		return Error(err::ENOMEM);
	}
	for (uint8_t i = 0; i <= ports; i++)
		new (&mem[i]) Port(*sw, i);
	Fabric &f = Fabric::get();
	sw->node_guid = f.next_guid();
	sw->set_guids(sw->node_guid, sw->node_guid);
	static constexpr char desc[] = "Weft soft switch";
	(void)sw->set_node_desc(desc, sizeof(desc) - 1);
	for (uint8_t i = 0; i <= ports; i++)
		mem[i].guid = sw->node_guid; /* IBA 14.2.5.6: switch ports share the GUID */
	/*
	 * IBA 18.2.1: management port 0 is internal and always up.  A base
	 * port 0 (SwitchInfo.EnhancedPort0 clear) has no link and no port
	 * state machine: it reads LinkUp/Active from the start and a Set's
	 * state fields leave it so (sma_port.cpp).  OpenSM never drives it
	 * ("for switch port 0, the state bits are ignored"); ibsim models
	 * the same.
	 */
	mem[0].state.store(verbs::PortState::Active, Order::Relaxed);
	mem[0].phys.store(verbs::PhysState::LinkUp, Order::Relaxed);
	mem[0].mgmt.caps = sma::default_switch_caps();
	return sw;
}

void Switch::set_lft(uint16_t dlid, uint8_t out)
{
	if (dlid > unicast_lid_top)
		return;
	lft_[dlid].store(out, Order::Relaxed);
	if (out != no_port && dlid > lft_top())
		set_lft_top(dlid);
}

uint8_t Switch::lft_entry(uint16_t dlid) const
{
	return dlid <= unicast_lid_top ? lft_[dlid].load(Order::Relaxed) : no_port;
}

uint8_t Switch::lft(uint16_t dlid) const
{
	return dlid <= lft_top() ? lft_entry(dlid) : no_port;
}

/*
 * IBA 14.2.5.4: any external port's state change sets PortStateChange;
 * IBA 14.2.5.1: and the switch tells the SM with trap 128 (any context).
 * With no SM or no LID yet there is nobody to tell, and the SM's sweep
 * reads PortStateChange anyway (a CA's notices alike, trap.cpp).  Kept,
 * such a notice went out as soon as the sweep had set the LIDs, before
 * it had set the routes, and it and the SM's TrapRepress met switches
 * with no LFT entry for them (PortRcvSwitchRelayErrors, scale.md).
 */
void Switch::link_changed(Port &p)
{
	if (p.num == 0)
		return;
	{
		SpinGuardBh g(mgmt_lock);
		mgmt.port_state_change = true;
		if (!ports_[0].sm_lid || !ports_[0].lid.load(Order::Relaxed))
			return;
		mgmt.trap_pending = true;
		mgmt.trap_tries = 0;
	}
	trap_work_.modify(0);
}

void Switch::port_changed(Port &p, uint8_t what, verbs::PortState)
{
	/*
	 * A link going down or retraining is news for the SM; its own Armed
	 * and Active steps are not (it would sweep again for each of them).
	 */
	const auto st = p.state.load(Order::Relaxed);
	if ((what & port_change::state) && (st == verbs::PortState::Down || st == verbs::PortState::Init))
		link_changed(p);
}

Result<void> Switch::modify_port(uint8_t num, uint32_t set_caps, uint32_t clear_caps)
{
	/* IBA 14.2.5.6: CapabilityMask is one of the subnet-wide fields only port 0 holds. */
	if (num != 0)
		return Error(err::EINVAL);
	Port &p = ports_[0];
	SpinGuardBh g(mgmt_lock);
	const uint32_t was = p.mgmt.caps;
	p.mgmt.caps = (p.mgmt.caps | set_caps) & ~clear_caps;
	if (p.mgmt.caps != was)
		traps_.capability_changed_locked(p);
	return ok();
}

verbs::MadOutcome Switch::process_mad(const verbs::MadIn &in, const uint8_t *mad, uint8_t *out)
{
	if (in.port > nports_)
		return verbs::MadOutcome::Consumed;
	return sma::process(*this, in, *reinterpret_cast<const iba::Smp *>(mad), *reinterpret_cast<iba::Smp *>(out));
}

void Switch::set_mft(uint16_t mlid, uint64_t mask)
{
	if (mlid >= multicast_lid_base && mlid < permissive_lid)
		mft_[mlid - multicast_lid_base].store(mask, Order::Relaxed);
}

uint64_t Switch::mft(uint16_t mlid) const
{
	if (mlid < multicast_lid_base || mlid >= permissive_lid)
		return 0;
	return mft_[mlid - multicast_lid_base].load(Order::Relaxed);
}

/*
 * IBA 18.2.4.1: a switch forwards only on ACTIVE ports, except that
 * subnet management packets on VL15 pass any port whose link is up.
 */
void Switch::forward(Port &out, Own<PacketBuf> pkt, bool vl15)
{
	bool up = vl15 ? out.phys.load(Order::Relaxed) == verbs::PhysState::LinkUp
		       : out.state.load(Order::Relaxed) == verbs::PortState::Active;
	if (!up) {
		PortCounters::bump(vl15 ? out.counters.vl15_dropped : out.counters.xmit_discards);
		return;
	}
	out.transmit(move(pkt));
}

void Switch::receive(Port &in, Own<PacketBuf> pkt)
{
	if (pkt->len < sizeof(iba::Lrh)) {
		PortCounters::bump(in.counters.rcv_errors);
		return;
	}
	if (pkt->sealed) {
		/* IBA 7.8.2: every link checks the VCRC; a switch drops a bad packet. */
		auto good = check_vcrc(pkt->bytes());
		if (!good || !good.value()) {
			PortCounters::bump(in.counters.rcv_errors);
			if (good)
				local_phy_error(in);
			return;
		}
	}
	const auto *lrh = reinterpret_cast<const iba::Lrh *>(pkt->data());
	uint16_t dlid = lrh->dlid.get();
	bool vl15 = iba::Lrh::Vl::get(lrh->vl_lver) == 15;
	if (!vl15 && in.state.load(Order::Relaxed) != verbs::PortState::Active) {
		PortCounters::bump(in.counters.rcv_errors);
		return;
	}
	if (vl15 && for_smi(dlid))
		return smi_receive(in, move(pkt));
	if (!vl15 && for_port0(dlid)) {
		PortCounters::bump(in.counters.unicast_rcv);
		return gsi_receive(in, move(pkt));
	}
	if (dlid >= multicast_lid_base && dlid < permissive_lid) {
		PortCounters::bump(in.counters.multicast_rcv);
		/* IBA 18.2.4.3.3: every port in the mask but the one it came in on. */
		uint64_t mask = mft(dlid) & ~(1ull << in.num);
		for (uint8_t p = 1; p <= nports_; p++) {
			if (!(mask & (1ull << p)))
				continue;
			auto copy = pkt->clone(Gfp::Atomic);
			if (!copy) {
				PortCounters::bump(ports_[p].counters.xmit_discards);
				continue;
			}
			PortCounters::bump(ports_[p].counters.multicast_xmit);
			forward(ports_[p], copy.take(), vl15);
		}
		return;
	}
	PortCounters::bump(in.counters.unicast_rcv);
	uint8_t out = lft(dlid);
	if (out == 0 || out > nports_) {
		/*
		 * IBA 16.1.3.5: a packet the switch relay cannot forward (no
		 * LFT entry; port 0 takes only its own LIDs, above) counts in
		 * the arrival port's PortRcvSwitchRelayErrors.
		 */
		PortCounters::bump(in.counters.switch_relay_errors);
		return;
	}
	PortCounters::bump(ports_[out].counters.unicast_xmit);
	forward(ports_[out], move(pkt), vl15);
}

Result<void> Switch::query_port(uint8_t port, verbs::PortAttr &out)
{
	if (port != 0)
		return Error(err::EINVAL);
	Port &p = ports_[0];
	out = verbs::PortAttr();
	out.state = p.state.load(Order::Relaxed);
	out.phys_state = p.phys.load(Order::Relaxed);
	out.lid = p.lid.load(Order::Relaxed);
	out.sm_lid = p.sm_lid;
	out.lmc = p.lmc.load(Order::Relaxed);
	out.sm_sl = p.sm_sl;
	out.port_cap_flags = p.mgmt.caps;
	out.subnet_timeout = p.mgmt.subnet_timeout;
	out.gid_tbl_len = 1;
	out.pkey_tbl_len = 1;
	out.active_mtu = out.max_mtu = iba::Mtu::M4096;
	out.active_width = 2; /* 4X */
	out.active_speed = 32; /* EDR */
	return ok();
}

Result<verbs::Gid> Switch::query_gid(uint8_t port, uint32_t index)
{
	if (port != 0 || index != 0)
		return Error(err::EINVAL);
	return ports_[0].gid();
}

Result<uint16_t> Switch::query_pkey(uint8_t port, uint16_t index)
{
	if (port != 0 || index != 0)
		return Error(err::EINVAL);
	return ports_[0].pkeys[0].load(Order::Relaxed);
}

Result<verbs::Qp *> Switch::create_qp(verbs::Pd &, const verbs::QpInitAttr &)
{
	/* The switch's QP0 is its firmware SMI (switch_smi.cpp): no consumer QPs. */
	return Error(err::EOPNOTSUPP);
}

} // namespace weft::hca
