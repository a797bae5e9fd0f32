// SPDX-License-Identifier: GPL-2.0
/*
 * The slow path of an IPoIB interface: carrier, the broadcast group, IP
 * multicast membership and destination resolution, all in work items
 * because the SA client blocks (RFC 4391 §5-§9).
 */
#include <weft/log.h>
#include <weft/mad/sa.h>

#include "cm.h"
#include "interface.h"
#include "ipoib_module.h"

namespace weft::ipoib {

namespace {
const Logger log("weft_ipoib");

/* Retry a failed broadcast join (no SM yet, group not created yet) this often. */
constexpr unsigned long rejoin_ms = 1000;
/* Most multicast addresses followed; more are left to the broadcast group. */
constexpr size_t max_members = 64;

/* IBA 15.2.5.17 MCMemberRecord sub-fields this file reads or sets. */
using Selector = BitField<be8, 6, 2>; /* MTUSelector, RateSelector */
using MtuValue = BitField<be8, 0, 6>;
using FlowLabel = BitField<be32, 8, 20>;
using HopLimit = BitField<be32, 0, 8>;
constexpr uint8_t select_exactly = 2;

struct McCollect {
	verbs::Gid gids[max_members];
	size_t n;
	verbs::Gid bcast;
};
} // namespace

void Interface::sync_work(DelayedWork &w)
{
	container_of(&w, &Interface::sync_work_)->sync();
}

void Interface::resolve_work(Work &w)
{
	Interface *ifc = container_of(&w, &Interface::resolve_work_);
	DestTable::Claim c;
	for (;;) {
		if (ifc->dying_.load(Order::Acquire))
			return;
		{
			SpinGuardBh g(ifc->lock_);
			if (!ifc->dests_.claim(c))
				return;
		}
		auto r = ifc->resolve(c);
		Pending out[Dest::queue_max];
		uint32_t n = 0;
		bool installed;
		verbs::Ah *ah = r ? r->ah : nullptr;
		{
			SpinGuardBh g(ifc->lock_);
			installed = ifc->dests_.complete(c, r ? &r.value() : nullptr, ifc->now_ms(), out, n);
			if (installed && ah)
				for (uint32_t i = 0; i < n; i++)
					ah->get(); /* one per send below */
		}
		if (!installed) {
			if (r)
				ifc->release(r.value(), c.gid);
			continue;
		}
		if (ah)
			ifc->send_pending(out, n, ah);
		else
			ifc->drop_pending(out, n);
	}
}

/*
 * RFC 4391 §5: the interface is up for IP once the port is active and it
 * is a member of the broadcast group; carrier says exactly that.
 */
void Interface::sync()
{
	if (dying_.load(Order::Acquire))
		return;
	verbs::PortAttr a;
	const bool active = dev_.query_port(port_, a) && a.state == verbs::PortState::Active;
	const bool want = admin_up_.load(Order::Acquire) && active;
	if (flush_pending_.exchange(false, Order::AcqRel) || !want)
		flush();
	if (!want)
		return;
	if (!pkey_ready()) {
		/* Carrier off until the SM puts the P_Key in the table (its event brings us back). */
		if (bcast_joined_)
			flush();
		return;
	}
	lid_.store(a.lid, Order::Release);
	refresh_gid();
	if (!bcast_joined_) {
		auto r = join_broadcast();
		if (!r) {
			count(&weft_ipoib_stats::mcast_failures);
			WEFT_LOG_RATELIMITED(log, Level::Info, "%s: broadcast group join failed (errno %d), retrying",
					     weft_ipoib_name(nd_), r.error().code());
			sync_work_.modify(rejoin_ms);
			return;
		}
		bcast_joined_ = true;
		carrier(true);
	}
	sync_members();
	resolve_work_.queue();
	age_dests();
}

/* dest_idle_secs in ms (0: never), a parameter writable at run time. */
uint64_t Interface::dest_idle_ms()
{
	return static_cast<uint64_t>(__atomic_load_n(&weft_ipoib_dest_idle_secs, __ATOMIC_RELAXED)) * 1000;
}

/*
 * Destinations nobody sent to for dest_idle_secs go (address handle,
 * send-only join; connected mode's connections in its own work), so that
 * the tables hold those in use.  This work comes back every half period,
 * at most 5 s (the parameter may change), while the interface is up.
 */
void Interface::age_dests()
{
	constexpr uint64_t max_period_ms = 5000;
	const uint64_t idle_ms = dest_idle_ms();
	if (idle_ms) {
		DestList idle;
		size_t n;
		{
			SpinGuardBh g(lock_);
			n = dests_.take_idle(now_ms(), idle_ms, idle);
		}
		while (Dest *d = idle.pop_front())
			release(*d);
		if (n)
			count(&weft_ipoib_stats::dests_aged, n);
		if (cm_)
			cm_->age();
	}
	if (!dying_.load(Order::Acquire))
		sync_work_.queue(idle_ms && idle_ms / 2 < max_period_ms ? idle_ms / 2 : max_period_ms);
}

/*
 * RFC 4391 §9.1.1: the hardware address carries the port GID.  An SM with
 * another subnet prefix changes it (GidChange, which flushed everything):
 * dev_addr follows, so ARP and ND answer with the GID the port now has.
 */
void Interface::refresh_gid()
{
	auto gid = dev_.query_gid(port_, 0);
	if (!gid || gid.value() == gid_)
		return;
	gid_ = gid.value();
	weft_ipoib_set_dev_gid(nd_, gid_.raw);
	log.info("%s: port GID now %016llx:%016llx", weft_ipoib_name(nd_),
		 static_cast<unsigned long long>(gid_.subnet_prefix()),
		 static_cast<unsigned long long>(gid_.interface_id()));
}

/* Carrier off and every destination forgotten (their AHs, joins, waiting packets). */
void Interface::flush()
{
	carrier(false);
	bcast_joined_ = false;
	DestList all;
	{
		SpinGuardBh g(lock_);
		dests_.take_all(all);
		bcast_rec_ = iba::McMemberRecord{};
	}
	while (Dest *d = all.pop_front())
		release(*d);
	if (cm_)
		cm_->flush();
}

Result<void> Interface::qp_ready(uint32_t qkey)
{
	if (qp_rts_.load(Order::Acquire)) {
		if (qkey == qkey_.load(Order::Acquire))
			return ok();
		/* IBA 11.2.5.2: the Q_Key of a UD QP may change in RTS. */
		verbs::QpAttr at;
		at.state = verbs::QpState::Rts;
		at.qkey = qkey;
		WEFT_TRY(ctx_->modify_qp(qp_, at, verbs::qp_attr::state | verbs::qp_attr::qkey));
		qkey_.store(qkey, Order::Release);
		return ok();
	}
	namespace qa = verbs::qp_attr;
	verbs::QpAttr at;
	auto up = [&]() -> Result<void> {
		at.state = verbs::QpState::Init;
		at.port_num = port_;
		at.pkey_index = pkey_index_.load(Order::Relaxed);
		at.qkey = qkey;
		WEFT_TRY(ctx_->modify_qp(qp_, at, qa::state | qa::pkey_index | qa::port | qa::qkey));
		for (uint32_t i = 0; i < rx_.size(); i++)
			WEFT_TRY(post_recv(i));
		at.state = verbs::QpState::Rtr;
		WEFT_TRY(ctx_->modify_qp(qp_, at, qa::state));
		at.state = verbs::QpState::Rts;
		at.sq_psn = 0;
		return ctx_->modify_qp(qp_, at, qa::state | qa::sq_psn);
	}();
	if (!up) {
		/*
		 * IBA 10.3.1: Reset takes back the buffers posted so far without
		 * completions, so the next try posts each ring slot once: one
		 * posted twice would be placed into after its skb went up.
		 */
		verbs::QpAttr reset;
		reset.state = verbs::QpState::Reset;
		(void)ctx_->modify_qp(qp_, reset, qa::state);
		return up.error();
	}
	qkey_.store(qkey, Order::Release);
	qp_rts_.store(true, Order::Release);
	return ok();
}

/*
 * RFC 4391 §5: join the partition's broadcast group (the SM created it);
 * its Q_Key becomes the QP's, its MTU caps the interface's.
 */
Result<void> Interface::join_broadcast()
{
	const verbs::Gid mgid = broadcast_mgid(pkey_);
	iba::McMemberRecord rec;
	/*
	 * As in-tree: ask the (perhaps new) SA whether it takes send-only
	 * joins; one that does not, or does not answer, gets full-member ones.
	 */
	auto cpi = mad::sa::class_port_info(dev_, port_);
	const bool so = cpi && (iba::ClassPortInfo::CapabilityMask2::get(cpi->cap2_resp_time) &
				iba::sa_cap2::send_only_full_member);
	sa_send_only_full_.store(so, Order::Release);
	Resolved res = WEFT_TRY(join(mgid, false, &rec));
	auto done = [&]() -> Result<void> {
		WEFT_TRY(qp_ready(rec.qkey.get()));
		WEFT_TRY(ctx_->attach_mcast(qp_, mgid, res.mlid));
		res.attached = true;
		SpinGuardBh g(lock_);
		return dests_.install(mgid, res, true);
	}();
	if (!done) {
		release(res, mgid);
		return done.error();
	}
	{
		SpinGuardBh g(lock_);
		bcast_rec_ = rec;
	}
	verbs::PortAttr a;
	WEFT_TRY(dev_.query_port(port_, a));
	const uint8_t code = min_mtu_code(MtuValue::get(rec.mtu),
					  static_cast<uint8_t>(a.active_mtu));
	if (code) {
		mcast_mtu_.store(ud_mtu(code), Order::Release);
		/* In connected mode the MTU stays (shim_mode.c decides under rtnl). */
		weft_ipoib_set_ud_mtu(nd_, ud_mtu(code), !mtu_set_);
		mtu_set_ = true;
	}
	log.info("%s: joined broadcast group, MLID 0x%x Q_Key 0x%x MTU %u", weft_ipoib_name(nd_),
		 res.mlid, rec.qkey.get(), ud_mtu(code));
	return ok();
}

/* ndo_set_rx_mode's list, read here because joining sleeps. */
void Interface::sync_members()
{
	auto *c = new (Gfp::Sleep) McCollect;
	if (!c)
		return;
	c->n = 0;
	c->bcast = broadcast_mgid(pkey_);
	weft_ipoib_mc_list(nd_, [](void *arg, const uint8_t *addr) {
		auto *mc = static_cast<McCollect *>(arg);
		const HwAddr *a = reinterpret_cast<const HwAddr *>(addr);
		const verbs::Gid g = a->gid_value();
		if (a->multicast() && !(g == mc->bcast) && mc->n < max_members)
			mc->gids[mc->n++] = g;
	}, c);
	if (umcast_.load(Order::Acquire))
		c->n = drop_joined_elsewhere(c->gids, c->n);
	DestList gone;
	{
		SpinGuardBh g(lock_);
		dests_.set_members(c->gids, c->n, gone);
	}
	delete c;
	while (Dest *d = gone.pop_front())
		release(*d);
}

/*
 * umcast, as in-tree IPOIB_FLAG_UMCAST: a group the stack listens to that
 * we have not joined to listen, but another consumer of the port has
 * (a full membership through the SA client), is left to that consumer:
 * not joined, not attached to our QP, its traffic not taken here.
 */
size_t Interface::drop_joined_elsewhere(verbs::Gid *mgids, size_t n)
{
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		bool ours;
		{
			SpinGuardBh g(lock_);
			Dest *d = dests_.find(mgids[i]);
			ours = d && d->member;
		}
		if (!ours && mad::sa::joined(dev_, port_, mgids[i], iba::join::full)) {
			count(&weft_ipoib_stats::mcast_umcast_skipped);
			continue;
		}
		mgids[kept++] = mgids[i];
	}
	return kept;
}

Result<Resolved> Interface::resolve(const DestTable::Claim &c)
{
	if (c.gid.raw[0] == 0xff)
		return join(c.gid, c.member, nullptr);
	count(&weft_ipoib_stats::path_queries);
	auto path = mad::sa::resolve_path(dev_, port_, c.gid, pkey_);
	if (!path) {
		count(&weft_ipoib_stats::path_failures);
		return path.error();
	}
	verbs::AhAttr av;
	av.dlid = path->dlid.get();
	av.sl = static_cast<uint8_t>(iba::PathRecord::Sl::get(path->qos_sl));
	av.static_rate = 0;
	av.port = port_;
	Resolved res;
	auto ah = ctx_->create_ah(pd_, av);
	if (!ah) {
		count(&weft_ipoib_stats::path_failures);
		return ah.error();
	}
	res.ah = *ah;
	return res;
}

/*
 * IBA 15.2.5.17: a join, as a full member to listen (@attach) and to the
 * broadcast group, else (a group we only send to) as a SendOnlyFullMember
 * where the SA takes that, so that the group's traffic is not routed to
 * this port for nothing.  Groups other than the broadcast group may not
 * exist yet, so the request carries what the SA needs to create one,
 * copied from the broadcast group (RFC 4391 §5 has every IP multicast
 * group of a partition share its parameters).
 */
Result<Resolved> Interface::join(const verbs::Gid &mgid, bool attach, iba::McMemberRecord *out)
{
	count(&weft_ipoib_stats::mcast_joins);
	iba::McMemberRecord want{};
	__builtin_memcpy(want.mgid, mgid.raw, 16);
	iba::McMemberRecord::JoinState::set(want.scope_state, iba::join::full);
	uint64_t mask = 0;
	if (!(mgid == broadcast_mgid(pkey_))) {
		const uint8_t state = !attach && sa_send_only_full_.load(Order::Acquire) ? iba::join::send_only_full
												 : iba::join::full;
		iba::McMemberRecord b;
		{
			SpinGuardBh g(lock_);
			b = bcast_rec_;
		}
		/* Not a member of the broadcast group (a flush since): no parameters to create one with. */
		if (!b.mlid.get())
			return Error(err::EAGAIN);
		want.qkey = b.qkey;
		want.mtu = b.mtu;
		want.tclass = b.tclass;
		want.pkey = b.pkey;
		want.rate = b.rate;
		want.sl_flow_hop = b.sl_flow_hop;
		want.scope_state = b.scope_state;
		iba::McMemberRecord::JoinState::set(want.scope_state, state);
		if (state == iba::join::send_only_full)
			count(&weft_ipoib_stats::mcast_send_only);
		namespace mc = iba::mcr_comp;
		mask = mc::qkey | mc::mtu_sel | mc::mtu | mc::tclass | mc::pkey | mc::rate_sel | mc::rate |
		       mc::sl | mc::flow | mc::hop | mc::scope;
		/* The broadcast group's MTU and rate exactly. */
		Selector::set(want.mtu, select_exactly);
		Selector::set(want.rate, select_exactly);
	}
	auto m = mad::sa::join(dev_, port_, want, mask);
	if (!m) {
		count(&weft_ipoib_stats::mcast_failures);
		return m.error();
	}
	const iba::McMemberRecord &rec = mad::sa::record(**m);
	Resolved res;
	res.membership = *m;
	res.mlid = rec.mlid.get();
	if (out)
		*out = rec;
	auto made = [&]() -> Result<void> {
		/* RFC 4391 §5: multicast goes with a GRH to the MGID. */
		verbs::AhAttr av;
		av.dlid = res.mlid;
		av.sl = static_cast<uint8_t>(iba::McMemberRecord::Sl::get(rec.sl_flow_hop));
		av.port = port_;
		av.global = true;
		av.dgid = mgid;
		av.hop_limit = static_cast<uint8_t>(HopLimit::get(rec.sl_flow_hop));
		av.traffic_class = rec.tclass.get();
		av.flow_label = FlowLabel::get(rec.sl_flow_hop);
		res.ah = WEFT_TRY(ctx_->create_ah(pd_, av));
		if (attach) {
			WEFT_TRY(ctx_->attach_mcast(qp_, mgid, res.mlid));
			res.attached = true;
		}
		return ok();
	}();
	if (!made) {
		count(&weft_ipoib_stats::mcast_failures);
		release(res, mgid);
		return made.error();
	}
	return res;
}

void Interface::release(Resolved &r, const verbs::Gid &gid)
{
	if (r.attached)
		(void)ctx_->detach_mcast(qp_, gid, r.mlid);
	if (r.ah)
		(void)ctx_->destroy_ah(r.ah); /* sends in flight hold their own reference */
	if (r.membership)
		mad::sa::leave(static_cast<mad::sa::Membership *>(r.membership));
	r = Resolved{};
}

void Interface::release(Dest &d)
{
	release(d.res, d.gid);
	drop_pending(d.queue, d.nqueued);
	d.nqueued = 0;
	delete &d;
}

void Interface::drop_pending(Pending *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		count(&weft_ipoib_stats::tx_dropped);
		count(&weft_ipoib_stats::tx_no_dest);
		weft_ipoib_skb_free(p[i].pkt, false);
	}
}

/* Packets that waited for @ah (each holding a reference on it). */
void Interface::send_pending(Pending *p, uint32_t n, verbs::Ah *ah)
{
	weft_ipoib_tx_lock(nd_);
	for (uint32_t i = 0; i < n; i++)
		post(p[i].pkt, ah, p[i].qpn);
	weft_ipoib_tx_unlock(nd_);
}

} // namespace weft::ipoib
