// SPDX-License-Identifier: GPL-2.0
/* The soft HCA device: ports, QP numbers, packet demultiplexing. */
#include <weft/log.h>

#include "crc.h"
#include "lso.h"
#include "hca.h"
#include "hca_module.h"
#include "pma.h"
#include "qp.h"
#include "sma.h"
#include "switch.h"

namespace weft::hca {

namespace {
const Logger log("weft_hca");

constexpr uint32_t hca_max_qp = 1024;

/*
 * HCAs made so far: each one's completion vectors start on the next CPU,
 * so that two in-host HCAs talking to each other interrupt different
 * CPUs, as two hosts would.  Or all on the CPU the administrator chose
 * (comp_vector_cpu), as one pins a real HCA's interrupts away from the
 * CPUs running the application.
 */
constinit Atomic<uint32_t> hcas_made;

verbs::DeviceAttr hca_attr()
{
	verbs::DeviceAttr a;
	a.num_comp_vectors = weft_online_cpus();
	const uint32_t nth = hcas_made.fetch_add(1, Order::Relaxed);
	a.comp_vector_base = weft_hca_comp_vector_cpu >= 0 ? uint32_t(weft_hca_comp_vector_cpu) : nth;
	a.vendor_id = 0x0051ef;
	a.vendor_part_id = 0x4341;
	a.hw_ver = 1;
	a.fw_ver = 1ull << 32; /* 1.0.0 */
	a.max_mr_size = 1ull << 32;
	a.page_size_cap = 4096;
	a.max_qp = hca_max_qp;
	/* 2^14 - 1: a user QP of any size allowed has a ring (2^k slots, one kept empty) that fits. */
	a.max_qp_wr = 16383;
	a.max_send_sge = a.max_recv_sge = max_sge;
	a.max_cq = 1024;
	a.max_cqe = 65535;
	a.max_mr = 4096;
	a.max_mw = 4096;
	a.max_pd = 1024;
	a.max_ah = 4096;
	a.max_mcast_grp = McastTable::max_groups;
	a.max_mcast_qp_attach = McastTable::max_attach;
	a.max_srq = 256;
	a.max_fast_reg_page_list_len = 512;
	a.max_srq_wr = 16383; /* as max_qp_wr: a user SRQ's ring of 2^14 slots holds 2^14 - 1 */
	a.max_srq_sge = max_sge;
	a.max_qp_rd_atom = a.max_qp_init_rd_atom = 16;
	a.max_res_rd_atom = 16 * hca_max_qp;
	a.max_pkeys = Port::pkey_table_len;
	a.local_ca_ack_delay = 15;
	a.atomic_cap = true;
	a.csum_offload = true;
	a.max_lso = lso::max_payload;
	return a;
}
} // namespace

Hca::Hca(uint8_t ports)
	: verbs::Device(verbs::NodeType::Ca, ports, hca_attr()), nports_(ports),
	  qps_lock_(WEFT_LOCK_CLASS("weft_hca_qps")), events_lock_(WEFT_LOCK_CLASS("weft_hca_events")),
	  events_work_(deliver_events, WEFT_LOCK_CLASS("weft_hca_events_work"))
{
	name_fmt_ = "weft%d";
}

Hca::~Hca() = default;

Result<Hca *> Hca::create(uint8_t ports)
{
	if (ports < 1 || ports > max_ports)
		return Error(err::EINVAL);
	auto table = WEFT_TRY(Array<SoftQp *>::make(Gfp::Sleep, hca_max_qp));
	auto *h = new (Gfp::Sleep) Hca(ports);
	if (!h)
		return Error(err::ENOMEM);
	h->qps_ = move(table);
	Fabric &f = Fabric::get();
	h->node_guid = f.next_guid();
	h->set_guids(h->node_guid, h->node_guid);
	static constexpr char desc[] = "Weft soft HCA";
	(void)h->set_node_desc(desc, sizeof(desc) - 1);
	/* IBA 14.2.5.3: each CA port has its own GUID. */
	for (uint8_t i = 0; i < ports; i++) {
		h->ports_[i].guid = f.next_guid();
		h->ports_[i].mgmt.caps = sma::default_ca_caps();
	}
	return h;
}

void Hca::queue_event(verbs::EventType t, uint8_t port)
{
	{
		SpinGuardBh g(events_lock_);
		if (npending_ == max_pending_events) {
			log.warn("%s: port event queue full, event %u lost", name(), static_cast<unsigned>(t));
			return;
		}
		pending_[npending_++] = verbs::Event{t, this, port};
	}
	events_work_.queue();
}

void Hca::deliver_events(Work &w)
{
	Hca *h = container_of(&w, &Hca::events_work_);
	for (;;) {
		verbs::Event e;
		{
			SpinGuardBh g(h->events_lock_);
			if (!h->npending_)
				return;
			e = h->pending_[0];
			h->npending_--;
			for (uint8_t i = 0; i < h->npending_; i++)
				h->pending_[i] = h->pending_[i + 1];
		}
		h->dispatch_event(e);
	}
}

/* IBA 11.6.3.3: what the SMA changed, as the port's consumers hear of it. */
void Hca::port_changed(Port &p, uint8_t what, verbs::PortState was)
{
	using verbs::EventType;
	const bool active = p.state.load(Order::Relaxed) == verbs::PortState::Active, was_active = was == verbs::PortState::Active;
	if ((what & port_change::state) && was_active && !active)
		queue_event(EventType::PortErr, p.num);
	if (what & port_change::lid)
		queue_event(EventType::LidChange, p.num);
	if (what & port_change::pkey)
		queue_event(EventType::PkeyChange, p.num);
	if (what & port_change::gid)
		queue_event(EventType::GidChange, p.num);
	if (what & port_change::sm)
		queue_event(EventType::SmChange, p.num);
	if ((what & port_change::state) && active && !was_active)
		queue_event(EventType::PortActive, p.num);
	if (what & port_change::client_rereg)
		queue_event(EventType::ClientReregister, p.num);
}

verbs::MadOutcome Hca::process_mad(const verbs::MadIn &in, const uint8_t *mad, uint8_t *out)
{
	if (!port(in.port))
		return verbs::MadOutcome::NotMine;
	if (reinterpret_cast<const iba::MadHeader *>(mad)->mgmt_class.get() == iba::mgmt_class::perf) {
		const auto &req = *reinterpret_cast<const iba::PmaMad *>(mad);
		auto &resp = *reinterpret_cast<iba::PmaMad *>(out);
		if (pma::redirected())
			return pma::redirect(*port(in.port), req, resp);
		return pma::process(*this, in, req, resp);
	}
	return sma::process(*this, in, *reinterpret_cast<const iba::Smp *>(mad), *reinterpret_cast<iba::Smp *>(out));
}

Result<void> Hca::modify_port(uint8_t num, uint32_t set_caps, uint32_t clear_caps)
{
	Port *p = port(num);
	if (!p)
		return Error(err::EINVAL);
	SpinGuardBh g(mgmt_lock);
	const uint32_t was = p->mgmt.caps;
	p->mgmt.caps = (p->mgmt.caps | set_caps) & ~clear_caps;
	if (p->mgmt.caps != was)
		traps_.capability_changed_locked(*p);
	return ok();
}

void Hca::link_changed(Port &p)
{
	verbs::EventType t = p.state.load(Order::Relaxed) == verbs::PortState::Active ? verbs::EventType::PortActive
								  : verbs::EventType::PortErr;
	if (p.state.load(Order::Relaxed) == verbs::PortState::Init)
		return; /* neither usable nor a loss of an active port */
	dispatch_event(verbs::Event{t, this, p.num});
}

Ref<SoftQp> Hca::lookup_qp(uint32_t qpn, uint8_t port)
{
	SpinGuardBh g(qps_lock_);
	SoftQp *qp = nullptr;
	if (qpn <= 1) {
		if (port >= 1 && port <= nports_)
			qp = special_[port - 1][qpn];
	} else if (qpn < qps_.size()) {
		qp = qps_[qpn];
	}
	if (!qp || !qp->get_unless_zero())
		return Ref<SoftQp>();
	return Ref<SoftQp>::adopt(qp);
}

void Hca::remove_qp(SoftQp &qp)
{
	SpinGuardBh g(qps_lock_);
	if (qp.qpn <= 1) {
		if (special_[qp.port() - 1][qp.qpn] == &qp)
			special_[qp.port() - 1][qp.qpn] = nullptr;
	} else if (qp.qpn < qps_.size() && qps_[qp.qpn] == &qp) {
		qps_[qp.qpn] = nullptr;
	}
}

Result<verbs::Qp *> Hca::create_qp(verbs::Pd &pd, const verbs::QpInitAttr &init)
{
	const verbs::QpCap &c = init.cap;
	/*
	 * The queues' indices run free and wrap at 2^32: slot = index % size
	 * stays continuous across the wrap only for a power-of-two size.
	 */
	auto sq = WEFT_TRY(Array<SendWqe>::make(Gfp::Sleep, size_t(1) << log2_ceil(c.max_send_wr)));
	auto rq = WEFT_TRY(Array<RecvWqe>::make(Gfp::Sleep, size_t(1) << log2_ceil(c.max_recv_wr)));
	auto hist = WEFT_TRY(Array<AtomicRecord>::make(Gfp::Sleep, attr().max_qp_rd_atom));
	bool special = init.type == verbs::QpType::Smi || init.type == verbs::QpType::Gsi;
	SpinGuardBh g(qps_lock_);
	uint32_t qpn = 0;
	if (special) {
		qpn = init.type == verbs::QpType::Smi ? 0 : 1;
		if (special_[init.port - 1][qpn])
			return Error(err::EBUSY);
	} else {
		for (uint32_t i = 0; i < qps_.size() - 2 && !qpn; i++) {
			uint32_t n = 2 + (next_qpn_ - 2 + i) % uint32_t(qps_.size() - 2);
			if (!qps_[n])
				qpn = n;
		}
		if (!qpn)
			return Error(err::ENOMEM);
		next_qpn_ = qpn + 1;
	}
	auto *qp = new (Gfp::Atomic) SoftQp(*this, pd, init, qpn, move(sq), move(rq), move(hist));
	if (!qp)
		return Error(err::ENOMEM);
	if (special)
		special_[init.port - 1][qpn] = qp;
	else
		qps_[qpn] = qp;
	return static_cast<verbs::Qp *>(qp);
}

/*
 * IBA 9.6 packet acceptance at a CA port: the port must be ACTIVE (VL15
 * excepted), the packet well formed with good CRCs (IBA 7.8), addressed to
 * this port's LID range, and for a QP that exists.
 */
void Hca::receive(Port &in, Own<PacketBuf> pkt)
{
	auto parsed = parse(pkt->bytes());
	if (!parsed) {
		PortCounters::bump(in.counters.rcv_errors);
		/* Mangled on the link (IBA 7.8.2): a local physical error too. */
		if (pkt->sealed) {
			auto good = check_vcrc(pkt->bytes());
			if (good && !good.value())
				local_phy_error(in);
		}
		return;
	}
	const Packet &p = parsed.value();
	bool vl15 = iba::Lrh::Vl::get(p.lrh->vl_lver) == 15;
	/* IBA 7.6.5: VL15 carries SMPs, which are QP0's alone, and QP0 takes nothing else. */
	if (vl15 != (iba::Bth::DestQp::get(p.bth->dqp) == 0)) {
		PortCounters::bump(in.counters.rcv_errors);
		return;
	}
	if (!vl15 && in.state.load(Order::Relaxed) != verbs::PortState::Active) {
		PortCounters::bump(in.counters.rcv_errors);
		return;
	}
	if (pkt->sealed) {
		/* IBA 7.8.1, 9.6.1.1: a bad ICRC or VCRC is a silent, counted drop. */
		auto crc = check_crcs(pkt->bytes());
		if (!crc || crc.value() != CrcCheck::Ok) {
			PortCounters::bump(in.counters.rcv_errors);
			if (crc && crc.value() == CrcCheck::BadVcrc)
				local_phy_error(in);
			return;
		}
	}
	uint16_t dlid = p.lrh->dlid.get();
	uint16_t mask = static_cast<uint16_t>(~((1u << in.lmc.load(Order::Relaxed)) - 1));
	bool mine = (dlid & mask) == (in.lid.load(Order::Relaxed) & mask) || (vl15 && dlid == permissive_lid);
	if (dlid >= multicast_lid_base && dlid != permissive_lid) {
		PortCounters::bump(in.counters.multicast_rcv);
		if (!mcast_[in.num - 1].deliver(p, *pkt))
			PortCounters::bump(in.counters.no_dest_qp);
		return;
	}
	if (!mine) {
		PortCounters::bump(in.counters.rcv_errors);
		return;
	}
	PortCounters::bump(in.counters.unicast_rcv, pkt->burst);
	pkt->view = p;
	pkt->parsed = true;
	if (iba::Bth::DestQp::get(p.bth->dqp) == pma::redirect_qpn)
		return pma_qp_receive(in, p);
	Ref<SoftQp> qp = lookup_qp(iba::Bth::DestQp::get(p.bth->dqp), in.num);
	/* IBA 10.3.1: a QP in Reset has no port and takes nothing; else only from its own. */
	if (!qp || qp->port() != in.num) {
		PortCounters::bump(in.counters.no_dest_qp);
		return;
	}
	qp->enqueue(move(pkt));
}

Result<void> Hca::query_port(uint8_t port, verbs::PortAttr &out)
{
	Port *p = this->port(port);
	if (!p)
		return Error(err::EINVAL);
	out = verbs::PortAttr();
	out.state = p->state.load(Order::Relaxed);
	out.phys_state = p->phys.load(Order::Relaxed);
	out.lid = p->lid.load(Order::Relaxed);
	out.sm_lid = p->sm_lid;
	out.lmc = p->lmc.load(Order::Relaxed);
	out.sm_sl = p->sm_sl;
	out.port_cap_flags = p->mgmt.caps;
	out.subnet_timeout = p->mgmt.subnet_timeout;
	out.max_mtu = iba::Mtu::M4096;
	out.active_mtu = static_cast<iba::Mtu>(p->mgmt.neighbor_mtu);
	out.gid_tbl_len = 1;
	out.pkey_tbl_len = Port::pkey_table_len;
	out.max_msg_sz = uint32_t(max_msg_sz);
	out.max_vl_num = 1;
	out.active_width = 2;  /* 4X */
	out.active_speed = 32; /* EDR */
	out.bad_pkey_cntr = static_cast<uint32_t>(p->counters.bad_pkey.load(Order::Relaxed));
	out.qkey_viol_cntr = static_cast<uint32_t>(p->counters.bad_qkey.load(Order::Relaxed));
	return ok();
}

Result<verbs::Gid> Hca::query_gid(uint8_t port, uint32_t index)
{
	Port *p = this->port(port);
	if (!p || index != 0)
		return Error(err::EINVAL);
	return p->gid();
}

Result<uint16_t> Hca::query_pkey(uint8_t port, uint16_t index)
{
	Port *p = this->port(port);
	if (!p || index >= Port::pkey_table_len)
		return Error(err::EINVAL);
	return p->pkeys[index].load(Order::Relaxed);
}

Result<void> Hca::query_counters(uint8_t port, verbs::PortCounterValues &out)
{
	Port *p = this->port(port);
	if (!p)
		return Error(err::EINVAL);
	out = p->counters.read();
	return ok();
}

} // namespace weft::hca
