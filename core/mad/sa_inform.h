/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SA client's event subscriptions (IBA 13.4.8.3, 15.2.5.12): the
 * InformInfo that subscribes a port's GSI to the SA's GID in/out of
 * service notices (traps 64/65), the Report that brings one, the
 * ReportResp that acknowledges it, and when a port (re)subscribes.  No
 * kernel object in it: KUnit and the host take it as it is.
 */
#ifndef WEFT_MAD_SA_INFORM_H
#define WEFT_MAD_SA_INFORM_H

#include <weft/iba/sa.h>
#include <weft/mad/service.h>
#include <weft/verbs/types.h>

namespace weft::mad::inform {

/* SubnAdmSet(InformInfo): every port's generic notice @trap, reported to QP1 (IBA 15.2.5.12). */
iba::InformInfo subscription(uint16_t trap, bool subscribe);

/* What a Report of trap 64 or 65 says. */
struct GidNotice {
	verbs::Gid gid;
	bool in_service;
};
/*
 * IBA 13.4.8.3, 14.2.5.1: @m a SubnAdmReport(Notice) of a generic trap
 * 64 or 65.  EPROTO: another class, method or attribute; EOPNOTSUPP: a
 * notice of another trap (answered all the same).
 */
Result<GidNotice> parse_report(const Mad &m);

/* IBA 13.4.8.3: the ReportResp to @req, its TID and Notice echoed. */
void report_response(const Mad &req, Mad &out);

/*
 * When to subscribe: after the port becomes ACTIVE under an SM, after an
 * SM change or a client reregistration (IBA 14.4.11: the SM has forgotten
 * its subscriptions), not while the port is down.  A failed subscription
 * is tried again, a few times.
 */
class Subscription {
public:
	enum class State : uint8_t { Idle, Wanted, Subscribed };
	static constexpr uint8_t max_tries = 5;

	/* The port is usable (ACTIVE, SM LID known) after an event that asks for a new subscription, or not. */
	void port_event(bool usable, bool renew)
	{
		if (!usable)
			st_ = State::Idle;
		else if (renew || st_ == State::Idle)
			st_ = State::Wanted;
		tries_ = 0;
	}
	/* A subscription should be sent now. */
	bool due() const { return st_ == State::Wanted && tries_ < max_tries; }
	void result(bool ok)
	{
		if (ok)
			st_ = State::Subscribed;
		else
			tries_++;
	}
	State state() const { return st_; }

private:
	State st_ = State::Idle;
	uint8_t tries_ = 0;
};

} // namespace weft::mad::inform

#endif
