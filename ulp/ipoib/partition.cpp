// SPDX-License-Identifier: GPL-2.0
/*
 * An interface's partition (IBA 10.9, RFC 4391 §4): the index of its P_Key
 * in the port's table, which the SM may change at any time (a P_Key change
 * event flushes the interface and sync_work looks it up again), and the
 * life of a P_Key child after it was unlinked under rtnl.
 */
#include <weft/log.h>

#include "interface.h"
#include "pkey.h"

namespace weft::ipoib {

namespace {
const Logger log("weft_ipoib");

/* IBA 14.2.5.7: a P_Key table has at most 65535 entries; ports here have far fewer. */
constexpr uint16_t max_table = 128;
} // namespace

Result<uint16_t> Interface::lookup_pkey_index() const
{
	verbs::PortAttr a;
	WEFT_TRY(dev_.query_port(port_, a));
	uint16_t table[max_table];
	const uint16_t n = a.pkey_tbl_len < max_table ? a.pkey_tbl_len : max_table;
	for (uint16_t i = 0; i < n; i++) {
		auto k = dev_.query_pkey(port_, i);
		table[i] = k ? *k : 0;
	}
	return pkey_index_in(table, n, pkey_);
}

/*
 * Before joining (sync_work): the P_Key is in the port's table, and the UD
 * QP uses its index.  While it is not, the interface stays without carrier;
 * the P_Key change event of the SM adding it brings sync_work back.
 */
bool Interface::pkey_ready()
{
	auto idx = lookup_pkey_index();
	if (!idx) {
		if (!pkey_missing_)
			log.info("%s: P_Key 0x%04x not in the port's table: no carrier until the SM adds it",
				 weft_ipoib_name(nd_), pkey_);
		pkey_missing_ = true;
		return false;
	}
	if (pkey_missing_)
		log.info("%s: P_Key 0x%04x at index %u", weft_ipoib_name(nd_), pkey_, *idx);
	pkey_missing_ = false;
	if (*idx == pkey_index_.load(Order::Acquire))
		return true;
	if (qp_rts_.load(Order::Acquire)) {
		/* IBA 11.2.5.2: a UD QP takes a new P_Key index in SQD, then returns to RTS. */
		namespace qa = verbs::qp_attr;
		verbs::QpAttr at;
		at.state = verbs::QpState::Sqd;
		auto r = ctx_->modify_qp(qp_, at, qa::state);
		at.pkey_index = *idx;
		if (r)
			r = ctx_->modify_qp(qp_, at, qa::state | qa::pkey_index);
		at.state = verbs::QpState::Rts;
		if (r)
			r = ctx_->modify_qp(qp_, at, qa::state);
		if (!r) {
			log.warn("%s: P_Key index %u -> %u failed (errno %d)", weft_ipoib_name(nd_),
				 pkey_index_.load(Order::Acquire), *idx, r.error().code());
			return false;
		}
	}
	log.info("%s: P_Key 0x%04x now at index %u", weft_ipoib_name(nd_), pkey_, *idx);
	pkey_index_.store(*idx, Order::Release);
	return true;
}

/* Carrier, unless the netdev is going: a child's may be unregistered under us (unlink()). */
void Interface::carrier(bool on)
{
	SpinGuardBh g(lock_);
	if (!dying_.load(Order::Acquire))
		weft_ipoib_carrier(nd_, on);
}

void Interface::info(weft_ipoib_info &out) const
{
	out.pkey = pkey_;
	out.umcast = umcast_.load(Order::Acquire);
	out.child = child_;
	out.parent = child_ ? parent_nd_ : nullptr;
}

void Interface::set_umcast(bool on)
{
	umcast_.store(on, Order::Release);
}

/*
 * Phase one of a child's teardown (rtnl held, off its Hca's list): no new
 * work and no carrier change from here on; the caller unregisters the
 * netdev (no more xmit, poll or callbacks once that is done).
 */
void Interface::unlink()
{
	SpinGuardBh g(lock_);
	dying_.store(true, Order::Release);
}

/* Phase two, once the netdev has no user (rtnl not held): drain, then free. */
void Interface::release_unlinked()
{
	sync_work_.cancel_sync();
	resolve_work_.cancel_sync();
	release_all();
	/* The netdev is freed by its destructor's caller. */
	delete this;
}

} // namespace weft::ipoib

using weft::ipoib::Interface;

void weft_ipoib_get_info(void *ctx, struct weft_ipoib_info *out)
{
	static_cast<Interface *>(ctx)->info(*out);
}

void weft_ipoib_set_umcast(void *ctx, bool on)
{
	static_cast<Interface *>(ctx)->set_umcast(on);
}
