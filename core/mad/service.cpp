// SPDX-License-Identifier: GPL-2.0
/*
 * The MAD service (IBA 13.4-13.5).  One lock guards the agents and the
 * outstanding requests; callbacks and the transport run without it.  An
 * agent's `active_` counts its callbacks in progress, so unregistration can
 * cancel what is outstanding and then wait for the last callback.
 */
#include <weft/iba/pma.h> /* ClassPortInfo, shared by every GS class */
#include <weft/mad/service.h>

#include "rmpp.h"

namespace weft::mad {

namespace {

uint64_t now_ms()
{
	return weft_ktime_ns() / 1000000;
}

bool is_response(uint8_t method)
{
	return method & 0x80;
}

/* IBA 13.4.5: the requests that must be answered (with GetResp; Report with ReportResp). */
bool wants_answer(uint8_t method)
{
	return method == iba::method::get || method == iba::method::set || method == iba::method::report;
}

} // namespace

SendReq::~SendReq()
{
	delete rx_;
}

MadService::MadService(MadTransport &t)
	: transport_(t), lock_(WEFT_LOCK_CLASS("weft_mad_service")),
	  idle_(WEFT_LOCK_CLASS("weft_mad_idle")), timer_(tick, WEFT_LOCK_CLASS("weft_mad_timer")),
	  rmpp_lock_(WEFT_LOCK_CLASS("weft_mad_rmpp")),
	  rmpp_timer_(rmpp_tick, WEFT_LOCK_CLASS("weft_mad_rmpp_timer")),
	  rmpp_recv_timer_(rmpp_recv_tick, WEFT_LOCK_CLASS("weft_mad_rmpp_recv_timer"))
{
}

MadService::~MadService()
{
	timer_.cancel_sync();
	rmpp_timer_.cancel_sync();
	rmpp_recv_timer_.cancel_sync();
	MutexGuard g(rmpp_lock_);
	while (RmppSend *s = rmpp_sends_.pop_front()) {
		delete s->sender;
		delete s;
	}
	while (RmppRecv *r = rmpp_recvs_.front())
		rmpp_recv_free_locked(*r);
}

Result<void> MadService::register_agent(Agent &a)
{
	/* An agent without methods only sends requests (and gets their responses). */
	bool responses = a.methods_[4] | a.methods_[5] | a.methods_[6] | a.methods_[7];
	if (responses || a.registered_)
		return Error(err::EINVAL);
	SpinGuardBh g(lock_);
	for (Agent &o : agents_) {
		if (o.mgmt_class != a.mgmt_class || o.class_version != a.class_version || o.oui != a.oui)
			continue;
		for (int i = 0; i < 8; i++)
			if (o.methods_[i] & a.methods_[i])
				return Error(err::EBUSY);
	}
	a.id_ = next_id_++;
	a.active_ = 0;
	a.registered_ = true;
	agents_.push_back(a);
	return ok();
}

void MadService::put_agent(Agent &a)
{
	bool wake;
	{
		SpinGuardBh g(lock_);
		wake = --a.active_ == 0 && !a.registered_;
	}
	if (wake)
		idle_.wake_all();
}

void MadService::unregister_agent(Agent &a)
{
	List<SendReq, &SendReq::node> cancelled;
	{
		SpinGuardBh g(lock_);
		if (!a.registered_)
			return;
		a.registered_ = false;
		agents_.remove(a);
		/* Phase one: nothing new reaches the agent; its requests come off the list. */
		for (auto it = outstanding_.begin(); it != outstanding_.end();) {
			SendReq &r = *it;
			++it;
			if (r.agent_ == &a && end_locked(r, err::ECANCELED)) {
				a.active_--; /* counted below, by the wait for active_ */
				cancelled.push_back(r);
			}
		}
	}
	while (SendReq *r = cancelled.pop_front())
		a.handler.send_done(a, *r);
	/* Phase two: wait out callbacks that started before. */
	(void)idle_.wait([&] {
		SpinGuardBh g(lock_);
		return a.active_ == 0;
	});
}

Result<void> MadService::send(Agent &a, SendReq &r)
{
	const bool segmented = a.rmpp && (r.long_msg.size() || rmpp::active(r.mad.bytes));
	if (r.long_msg.size() && !segmented)
		return Error(err::EINVAL); /* IBA 13.6: only RMPP carries more than one MAD */
	if (segmented && r.long_msg.size())
		__builtin_memcpy(r.mad.bytes, r.long_msg.data(), min(r.long_msg.size(), iba::mad_size));
	const bool expect = r.timeout_ms && !is_response(r.mad.hdr().method.get());
	delete exchange(r.rx_, nullptr);
	r.long_response = Array<uint8_t>();
	r.long_len = 0;
	{
		SpinGuardBh g(lock_);
		if (!a.registered_)
			return Error(err::EINVAL);
		if (expect) {
			/* IBA 13.4.6.4: the TID is the requester's; its high half names the agent. */
			uint64_t tid = r.mad.hdr().tid.get();
			r.mad.hdr().tid.set((uint64_t(a.id_) << 32) | (tid & 0xffffffffu));
			r.agent_ = &a;
			r.tries_left_ = r.retries;
			r.deadline_ = now_ms() + r.timeout_ms;
			r.status = 0;
			r.redirects_ = 0;
			r.segmented_ = segmented;
			/*
			 * Until the transmit returns, the request is the sender's:
			 * whatever ends it meanwhile (a response, cancellation)
			 * leaves the callback to the end of this call, and the
			 * agent counts the call as a callback in progress.
			 */
			r.sending_ = true;
			r.ended_ = false;
			a.active_++;
			outstanding_.push_back(r);
			arm_timer_locked();
		}
	}
	auto sent = segmented ? rmpp_send(a, r) : transport_.transmit(r.mad, r.to);
	if (!expect)
		return sent;
	bool ended;
	{
		SpinGuardBh g(lock_);
		r.sending_ = false;
		ended = r.ended_;
		if (!ended && !sent) {
			outstanding_.remove(r);
		} else if (!ended) {
			arm_timer_locked(); /* the timer passed it over while it was being sent */
			sent = ok();
		}
	}
	if (ended) {
		a.handler.send_done(a, r);
		sent = ok();
	}
	put_agent(a);
	return sent;
}

/*
 * End an outstanding request (off the list, under the lock): now, or if
 * its sender is still in send(), when that returns.  True: call send_done.
 */
bool MadService::end_locked(SendReq &r, int status)
{
	lock_.assert_held();
	outstanding_.remove(r);
	r.status = status;
	if (r.sending_) {
		r.ended_ = true;
		return false;
	}
	r.agent_->active_++;
	return true;
}

/* Run @w at @first (ms, monotonic), or never for ~0. */
void MadService::arm_at(DelayedWork &w, uint64_t first)
{
	if (first == ~0ull)
		return;
	uint64_t now = now_ms();
	w.modify(first > now ? static_cast<unsigned long>(first - now) : 0);
}

void MadService::arm_timer_locked()
{
	lock_.assert_held();
	uint64_t first = ~0ull;
	for (SendReq &r : outstanding_)
		first = min(first, r.deadline_);
	arm_at(timer_, first);
}

/* IBA 13.4.6.4: resend with the same TID until the retries run out, then fail. */
void MadService::tick(DelayedWork &w)
{
	MadService *s = container_of(&w, &MadService::timer_);
	for (;;) {
		Mad copy;
		MadAddr to;
		SendReq *failed = nullptr;
		bool resend = false;
		{
			SpinGuardBh g(s->lock_);
			uint64_t now = now_ms();
			for (SendReq &r : s->outstanding_) {
				if (r.deadline_ > now || r.sending_)
					continue;
				if (r.tries_left_) {
					r.tries_left_--;
					r.deadline_ = now + r.timeout_ms;
					/*
					 * A segmented request is not sent again (in-tree
					 * alike): the RMPP sender resends unACKed windows
					 * on its own clock (IBA 13.6.5.1), and one
					 * delivered whole needs only its answer.  Its
					 * first MAD alone would be a repeat to ACK.
					 */
					if (r.segmented_)
						continue;
					/* A copy: a response may complete (and free) r while this sends. */
					copy = r.mad;
					to = r.to;
					resend = true;
				} else {
					s->end_locked(r, err::ETIMEDOUT);
					failed = &r;
				}
				break;
			}
			if (!resend && !failed) {
				s->arm_timer_locked();
				return;
			}
		}
		if (resend) {
			(void)s->transport_.transmit(copy, to); /* a failed resend is one more lost try */
			continue;
		}
		Agent &a = *failed->agent_;
		a.handler.send_done(a, *failed);
		s->put_agent(a);
	}
}

/*
 * IBA 13.5.3.3: an agent that answers "redirect" names, in ClassPortInfo,
 * the LID, QP and Q_Key to ask instead.  The request goes there, as it
 * was, with its tries and timeout restarted; its owner sees only the
 * final answer.  By LID only (RedirectLID 0 would need a GRH), and at
 * most max_redirects times, so two agents cannot bounce it forever.
 */
bool MadService::follow_redirect_locked(SendReq &r, const Mad &m, Mad &copy, MadAddr &to)
{
	lock_.assert_held();
	constexpr uint8_t max_redirects = 3;
	if ((m.hdr().status.get() & 0x7fff) != iba::mad_status::redirect || r.sending_ || r.redirects_ >= max_redirects)
		return false;
	if (r.segmented_)
		return false; /* its segments are gone: the owner gets the redirect as the answer */
	const size_t off = iba::class_data_offset(m.hdr().mgmt_class.get());
	const auto &cpi = *reinterpret_cast<const iba::ClassPortInfo *>(m.bytes + off);
	if (off + sizeof(cpi) > iba::mad_size || !cpi.redirect_lid.get())
		return false;
	r.to.lid = cpi.redirect_lid.get();
	r.to.qpn = iba::ClassPortInfo::Qp::get(cpi.redirect_qp);
	r.to.qkey = cpi.redirect_qkey.get();
	r.to.sl = static_cast<uint8_t>(iba::ClassPortInfo::Sl::get(cpi.redirect_tc_sl_fl));
	r.redirects_++;
	r.tries_left_ = r.retries;
	r.deadline_ = now_ms() + r.timeout_ms;
	arm_timer_locked();
	copy = r.mad;
	to = r.to;
	return true;
}

/*
 * Besides TID and class, a response must come back the way its request
 * left (in-tree's ib_find_send_mad does the same): with a GRH if the
 * request had one, addressed to the GID it was sent from, and without one
 * if it had none.  Directed-route SMPs are not checked: their LIDs may be
 * permissive and they carry no GRH (IBA 14.2.2).
 */
bool MadService::came_back(const SendReq &r, const Mad &m, const MadAddr &from)
{
	if (m.hdr().mgmt_class.get() == iba::mgmt_class::subn_directed_route)
		return true;
	if (r.to.global != from.global)
		return false;
	return !from.global || from.grh.sgid_index == r.to.grh.sgid_index;
}

void MadService::deliver_response(const Mad &m, const MadAddr &from)
{
	const uint64_t tid = m.hdr().tid.get();
	SendReq *match = nullptr;
	Mad copy;
	MadAddr to;
	bool resend = false;
	{
		SpinGuardBh g(lock_);
		for (SendReq &r : outstanding_) {
			if (r.mad.hdr().tid.get() == tid && r.agent_->id_ == uint32_t(tid >> 32) &&
			    r.mad.hdr().mgmt_class.get() == m.hdr().mgmt_class.get() && came_back(r, m, from)) {
				match = &r;
				break;
			}
		}
		if (!match) {
			/* Late (timed out already), duplicate, or never asked for. */
			drop();
			return;
		}
		if (follow_redirect_locked(*match, m, copy, to)) {
			resend = true;
		} else {
			match->response = m;
			match->from = from;
			if (!end_locked(*match, 0))
				return; /* answered before its send() returned: that finishes it */
		}
	}
	if (resend) {
		(void)transport_.transmit(copy, to); /* lost: the timer sends it again */
		return;
	}
	Agent &a = *match->agent_;
	a.handler.send_done(a, *match);
	put_agent(a);
}

namespace {

/* IBA 13.4.9: a vendor MAD of classes 0x30-0x4f names its OUI after the RMPP header. */
uint32_t vendor_oui(const Mad &m)
{
	if (!iba::vendor_range2(m.hdr().mgmt_class.get()))
		return 0;
	const auto &v = *reinterpret_cast<const iba::VendorHeader *>(m.bytes);
	return iba::VendorHeader::Oui::get(v.oui_word);
}

} // namespace

Agent *MadService::find_agent_locked(const Mad &m, bool &class_known)
{
	lock_.assert_held();
	const iba::MadHeader &h = m.hdr();
	const uint32_t oui = vendor_oui(m);
	for (Agent &a : agents_) {
		if (a.mgmt_class != h.mgmt_class.get() || a.oui != oui)
			continue;
		class_known = true;
		if (a.class_version == h.class_version.get() && a.serves(h.method.get()))
			return &a;
	}
	return nullptr;
}

void MadService::deliver_request(const Mad &m, const MadAddr &from)
{
	const iba::MadHeader &h = m.hdr();
	Agent *a;
	bool class_known = false;
	{
		SpinGuardBh g(lock_);
		a = find_agent_locked(m, class_known);
		if (a)
			a->active_++;
	}
	if (a) {
		a->handler.recv(*a, m, from);
		put_agent(*a);
		return;
	}
	if (!wants_answer(h.method.get())) {
		dropped_.fetch_add(1, Order::Relaxed);
		return;
	}
	/*
	 * IBA 13.4.7: nobody serves it; answer with the reason.  A class
	 * served in another version is a bad version, anything else an
	 * unsupported method.
	 */
	bool version_served = false;
	{
		SpinGuardBh g(lock_);
		for (Agent &o : agents_)
			version_served |= o.mgmt_class == h.mgmt_class.get() && o.class_version == h.class_version.get();
	}
	Mad reply = m;
	iba::MadHeader &r = reply.hdr();
	uint8_t method = h.method.get() == iba::method::report ? iba::method::report_resp : iba::method::get_resp;
	r.method.set(method);
	r.status.set(class_known && !version_served ? iba::mad_status::bad_version : iba::mad_status::method_unsupported);
	(void)transport_.transmit(reply, from);
}

void MadService::receive(const Mad &m, const MadAddr &from)
{
	/* IBA 13.4.2: base version 1 is the only one; anything else is not a MAD we can answer. */
	if (m.hdr().base_version.get() != 1) {
		dropped_.fetch_add(1, Order::Relaxed);
		return;
	}
	if (rmpp_receive(m, from))
		return;
	if (is_response(m.hdr().method.get()))
		deliver_response(m, from);
	else
		deliver_request(m, from);
}

} // namespace weft::mad
