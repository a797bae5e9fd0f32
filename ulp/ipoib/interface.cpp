// SPDX-License-Identifier: GPL-2.0
/* An IPoIB interface's life cycle and its netdev callbacks (interface.h). */
#include <weft/log.h>

#include "cm.h"
#include "interface.h"
#include "ipoib_module.h"

namespace weft::ipoib {

namespace {
const Logger log("weft_ipoib");
} // namespace

Interface::Interface(verbs::Device &dev, uint8_t port, uint16_t pkey, const Params &p)
	: dev_(dev), port_(port), pkey_(pkey), params_(p), lock_(WEFT_LOCK_CLASS("weft_ipoib_dest")),
	  sync_work_(sync_work, WEFT_LOCK_CLASS("weft_ipoib_sync")),
	  resolve_work_(resolve_work, WEFT_LOCK_CLASS("weft_ipoib_resolve"))
{
}

Interface::~Interface() = default;

int Interface::comp_vector() const
{
	return static_cast<int>((port_ - 1u) % dev_.attr().num_comp_vectors);
}

Result<void> Interface::setup_verbs()
{
	ctx_ = WEFT_TRY(verbs::Context::open(dev_, "weft_ipoib"));
	pd_ = WEFT_TRY(ctx_->alloc_pd());
	mr_ = WEFT_TRY(ctx_->get_dma_mr(pd_, verbs::access::local_write));
	const uint32_t ncqe = params_.send_queue_size + params_.recv_queue_size;
	/*
	 * cq_event only schedules NAPI: an Atomic handler costs no work item.
	 * On the port's completion vector, NAPI runs on that vector's CPU.
	 */
	cq_ = WEFT_TRY(ctx_->create_cq(ncqe, cq_event, this, verbs::Cq::HandlerContext::Atomic, comp_vector()));
	(void)cq_->req_notify(false);
	verbs::QpInitAttr init;
	init.type = verbs::QpType::Ud;
	init.send_cq = cq_;
	init.recv_cq = cq_;
	init.cap.max_send_wr = params_.send_queue_size;
	init.cap.max_recv_wr = params_.recv_queue_size;
	init.cap.max_send_sge = tx_sge;
	init.cap.max_recv_sge = 1;
	init.sq_sig_all = true;
	init.port = port_;
	qp_ = WEFT_TRY(ctx_->create_qp(pd_, init));
	tx_ = WEFT_TRY(Array<TxSlot>::make(Gfp::Sleep, params_.send_queue_size));
	rx_ = WEFT_TRY(Array<RxSlot>::make(Gfp::Sleep, params_.recv_queue_size));
	/* IBA 11.4.1.2: room for the GRH, then a whole IB MTU (the largest the port has). */
	verbs::PortAttr a;
	WEFT_TRY(dev_.query_port(port_, a));
	rx_buf_size_ = static_cast<uint32_t>(grh_len + iba::mtu_bytes(a.max_mtu));
	return ok();
}

void Interface::teardown_verbs()
{
	if (!ctx_)
		return;
	/* No completion comes after the QP is gone: every buffer is ours again. */
	bool gone = !qp_ || ctx_->destroy_qp(qp_);
	qp_ = nullptr;
	if (gone)
		free_rings();
	gone = gone && (!cq_ || ctx_->destroy_cq(cq_)) && (!mr_ || ctx_->dereg_mr(mr_)) &&
	       (!pd_ || ctx_->dealloc_pd(pd_));
	if (!gone)
		log.err("%s/%u: verbs objects still in use at teardown", dev_.name(), port_);
	ctx_->close();
	ctx_ = nullptr;
	pd_ = nullptr;
	mr_ = nullptr;
	cq_ = nullptr;
}

/* RFC 4755: connected mode offered (the C flag in @addr) if its resources could be made. */
void Interface::start_cm(HwAddr &addr)
{
	if (!weft_ipoib_cm_enable)
		return;
	const CmParams p{weft_ipoib_cm_srq_size, params_.send_queue_size, weft_ipoib_cm_max_conns, true};
	auto cm = Cm::create(*this, p);
	if (!cm) {
		log.warn("%s/%u: no connected mode (%d)", dev_.name(), port_, cm.error().code());
		return;
	}
	cm_ = *cm;
	cmp::set_flag(addr);
}

Result<Interface *> Interface::create(verbs::Device &dev, uint8_t port, uint16_t pkey, const Params &p,
				     weft_ipoib_child_spec *child)
{
	auto *ifc = new (Gfp::Sleep) Interface(dev, port, pkey, p);
	if (!ifc)
		return Error(err::ENOMEM);
	if (child) {
		ifc->child_ = true;
		ifc->legacy_ = child->legacy;
		ifc->parent_nd_ = child->parent;
	}
	auto r = [&]() -> Result<void> {
		/* Looked up again before every join (partition.cpp): the SM may not have set it yet. */
		auto idx = ifc->lookup_pkey_index();
		ifc->pkey_index_.store(idx ? *idx : 0, Order::Relaxed);
		WEFT_TRY(ifc->setup_verbs());
		auto gid = WEFT_TRY(dev.query_gid(port, 0));
		ifc->gid_ = gid;
		HwAddr addr = HwAddr::make(ifc->qp_->qpn, gid);
		ifc->start_cm(addr);
		const HwAddr bcast = broadcast_addr(pkey);
		verbs::PortAttr a;
		WEFT_TRY(dev.query_port(port, a));
		/* The IPoIB default of a 2048-byte IB MTU until the broadcast group says otherwise. */
		const uint32_t mtu = ud_mtu(min_mtu_code(static_cast<uint8_t>(iba::Mtu::M2048),
							  static_cast<uint8_t>(a.max_mtu)));
		int e = 0;
		const uint8_t *ha = reinterpret_cast<const uint8_t *>(&addr);
		const uint8_t *hb = reinterpret_cast<const uint8_t *>(&bcast);
		if (child)
			ifc->nd_ = weft_ipoib_child_netdev_create(ifc, child, port, ha, hb, mtu, p.send_queue_size * 2, &e);
		else
			ifc->nd_ = weft_ipoib_netdev_create(ifc, port, ha, hb, mtu, p.send_queue_size * 2, &e);
		if (!ifc->nd_)
			return Error(-e);
		/* There without connected mode too: it then refuses "connected", as in-tree. */
		if (weft_ipoib_mode_attr_add(ifc->nd_))
			log.warn("%s: no mode file", weft_ipoib_name(ifc->nd_));
		return ok();
	}();
	if (!r) {
		if (ifc->cm_)
			ifc->cm_->destroy();
		ifc->teardown_verbs();
		delete ifc;
		return r.error();
	}
	log.info("%s: %s port %u P_Key 0x%04x%s, datagram mode%s", weft_ipoib_name(ifc->nd_), dev.name(), port,
		 pkey, child ? " (a child)" : "", ifc->cm_ ? ", connected mode offered" : "");
	return ifc;
}

void Interface::destroy()
{
	log.info("%s: going (%s port %u)", weft_ipoib_name(nd_), dev_.name(), port_);
	/* No work queued from here on, none running: nothing touches the netdev's state. */
	dying_.store(true, Order::Release);
	sync_work_.cancel_sync();
	resolve_work_.cancel_sync();
	/* Closes it if up: no xmit, no poll after this. */
	weft_ipoib_netdev_unregister(nd_);
	release_all();
	weft_ipoib_netdev_free(nd_);
	delete this;
}

/* Teardown once nothing runs: every entry released (detach, AH, leave), then the verbs objects. */
void Interface::release_all()
{
	if (cm_)
		cm_->destroy();
	cm_ = nullptr;
	DestList all;
	{
		SpinGuardBh g(lock_);
		dests_.take_all(all);
	}
	while (Dest *d = all.pop_front())
		release(*d);
	teardown_verbs();
	log.info("%s: gone", weft_ipoib_name(nd_));
}

int Interface::open()
{
	admin_up_.store(true, Order::Release);
	sync_work_.modify(0);
	if (cm_)
		cm_->listen();
	return 0;
}

void Interface::stop()
{
	admin_up_.store(false, Order::Release);
	if (!dying_.load(Order::Acquire))
		sync_work_.modify(0);
}

void Interface::port_event(verbs::EventType t)
{
	using verbs::EventType;
	switch (t) {
	case EventType::PortActive:
	case EventType::PortErr:
	case EventType::LidChange:
	case EventType::PkeyChange:
	case EventType::SmChange:
	case EventType::ClientReregister:
	case EventType::GidChange:
		/* The SM may have moved LIDs, routes or groups: everything is looked up again. */
		flush_pending_.store(true, Order::Release);
		if (!dying_.load(Order::Acquire))
			sync_work_.modify(0);
		break;
	default:
		break;
	}
}

void Interface::rx_mode_changed()
{
	if (!dying_.load(Order::Acquire))
		sync_work_.modify(0);
}

void Interface::get_stats(weft_ipoib_stats &out) const
{
	stats_.read(out);
}

/* Counter by counter: each is exact, the set is not a snapshot. */
void Interface::Stats::read(weft_ipoib_stats &out) const
{
	uint64_t *dst = reinterpret_cast<uint64_t *>(&out);
	for (size_t i = 0; i < n; i++)
		dst[i] = v_[i].load(Order::Relaxed);
}

void Interface::link_info(weft_ipoib_link &out)
{
	verbs::PortAttr a;
	out = weft_ipoib_link{};
	if (dev_.query_port(port_, a) && a.state == verbs::PortState::Active)
		out.speed_mbps = link_mbps(a.active_width, a.active_speed);
	format(out.ibdev, sizeof(out.ibdev), "%s", dev_.name());
	out.port = port_;
	out.fw_ver = dev_.attr().fw_ver;
}

/*
 * As in-tree: the event of a completion waits up to @usecs for @frames
 * more (verbs Cq::moderate), on the datagram CQ and connected mode's.
 * Both carry send completions too, which then free skbs later.
 */
int Interface::set_coalesce(uint32_t usecs, uint32_t frames)
{
	if (usecs > 0xffff || frames > 0xffff)
		return -err::EINVAL;
	coal_usecs_ = static_cast<uint16_t>(usecs);
	coal_frames_ = static_cast<uint16_t>(frames);
	cq_->moderate(coal_frames_, coal_usecs_);
	if (cm_)
		cm_->moderate(coal_frames_, coal_usecs_);
	return 0;
}

void Interface::get_coalesce(uint32_t &usecs, uint32_t &frames) const
{
	usecs = coal_usecs_;
	frames = coal_frames_;
}

} // namespace weft::ipoib

using weft::ipoib::Interface;

static Interface *ifc(void *ctx)
{
	return static_cast<Interface *>(ctx);
}

int weft_ipoib_open(void *ctx)
{
	return ifc(ctx)->open();
}

void weft_ipoib_stop(void *ctx)
{
	ifc(ctx)->stop();
}

int weft_ipoib_xmit(void *ctx, void *skb, const uint8_t *daddr)
{
	return ifc(ctx)->xmit(skb, *reinterpret_cast<const weft::ipoib::HwAddr *>(daddr));
}

int weft_ipoib_poll(void *ctx, int budget)
{
	return ifc(ctx)->poll(budget);
}

void weft_ipoib_rx_mode(void *ctx)
{
	ifc(ctx)->rx_mode_changed();
}

bool weft_ipoib_csum_offload(void *ctx)
{
	return ifc(ctx)->device().attr().csum_offload;
}

bool weft_ipoib_lso_offload(void *ctx)
{
	/* Linux's GSO packets are up to 64 KiB, headers included. */
	return ifc(ctx)->device().attr().max_lso >= 64 * 1024 - 128;
}

void weft_ipoib_get_stats(void *ctx, struct weft_ipoib_stats *out)
{
	ifc(ctx)->get_stats(*out);
}

void weft_ipoib_link_info(void *ctx, struct weft_ipoib_link *out)
{
	ifc(ctx)->link_info(*out);
}

void weft_ipoib_get_coalesce(void *ctx, uint32_t *usecs, uint32_t *frames)
{
	ifc(ctx)->get_coalesce(*usecs, *frames);
}

int weft_ipoib_set_coalesce(void *ctx, uint32_t usecs, uint32_t frames)
{
	return ifc(ctx)->set_coalesce(usecs, frames);
}
