// SPDX-License-Identifier: GPL-2.0
/*
 * The CM on each CA port: an agent of the CM class (IBA 12.6: class 0x07,
 * version 2, every message a Send) on the port's GSI.  Arriving MADs are
 * queued and handled by a work item of the port, so that the GSI's own
 * work (which also carries the SA's answers a handler may wait for) never
 * waits for the CM.  weft_cm is a verbs client that creates these ports.
 */
#include "cm_module.h"
#include "cm_priv.h"
#include "wire.h"

namespace weft::cm {

CmPort::CmPort(mad::MadPort &mp) :
	dev(mp.device), num(mp.port), gsi(mp.gsi()), agent(*this, iba::mgmt_class::cm, iba::cm::class_version),
	rx_lock_(WEFT_LOCK_CLASS("weft_cm_rx")), work_(rx_work, WEFT_LOCK_CLASS("weft_cm_rx_work"))
{
	agent.add_method(iba::method::send);
}

CmPort::~CmPort()
{
	while (Rx *r = rx_.pop_front())
		delete r;
}

Result<void> CmPort::start()
{
	WEFT_TRY(gsi.register_agent(agent));
	registered_ = true;
	return ok();
}

void CmPort::stop()
{
	{
		SpinGuardBh g(rx_lock_);
		stopping_ = true;
	}
	if (registered_)
		gsi.unregister_agent(agent); /* no recv() after this */
	registered_ = false;
	work_.cancel_sync();
	{
		MutexGuard g(cm->lock);
		cm->ports.remove(*this);
	}
	detach_port(*this);
}

void CmPort::recv(mad::Agent &, const mad::Mad &m, const mad::MadAddr &from)
{
	auto *r = new (Gfp::Sleep) Rx();
	if (!r) {
		MutexGuard g(cm->lock);
		cm->stats.dropped++;
		return;
	}
	r->mad = m;
	r->from = from;
	{
		SpinGuardBh g(rx_lock_);
		if (stopping_) {
			delete r;
			return;
		}
		rx_.push_back(*r);
	}
	work_.queue();
}

namespace {

void dispatch(CmPort &p, const mad::Mad &m, const mad::MadAddr &from)
{
	using wire::Kind;
	switch (wire::kind_of(m)) {
	case Kind::Req: return on_req(p, m, from);
	case Kind::Mra: return on_mra(p, m, from);
	case Kind::Rej: return on_rej(p, m, from);
	case Kind::Rep: return on_rep(p, m, from);
	case Kind::Rtu: return on_rtu(p, m, from);
	case Kind::Dreq: return on_dreq(p, m, from);
	case Kind::Drep: return on_drep(p, m, from);
	case Kind::Lap: return on_lap(p, m, from);
	case Kind::SidrReq: return on_sidr_req(p, m, from);
	case Kind::SidrRep: return on_sidr_rep(p, m, from);
	case Kind::Apr:
	case Kind::Other:
		break;
	}
	MutexGuard g(cm->lock);
	cm->stats.dropped++; /* APR (Weft sends no LAP), or nothing IBA 12.6 defines */
}

} // namespace

void CmPort::rx_work(Work &w)
{
	CmPort *p = container_of(&w, &CmPort::work_);
	for (;;) {
		Rx *r;
		{
			SpinGuardBh g(p->rx_lock_);
			r = p->rx_.pop_front();
		}
		if (!r)
			return;
		{
			MutexGuard g(cm->lock);
			cm->stats.received++;
		}
		dispatch(*p, r->mad, r->from);
		delete r;
	}
}

void detach_port(CmPort &p)
{
	/*
	 * Only the CM's verbs-client remove() (a device going, or weft_cm's
	 * own unregister_client) detaches a port, so the Disconnected and
	 * Unreachable calls below run under the registry mutex: a handler may
	 * not call into the registry (cm.md), and no add() or remove() of any
	 * client runs meanwhile.  ULPs that are verbs clients were removed
	 * first (newest client first) and destroyed their Ids then; these
	 * calls reach only owners that are not.
	 */
	verbs::assert_registry_locked();
	/*
	 * One Id per round: its timer is cancelled and its events delivered
	 * with the CM lock dropped, then the table is searched again.
	 */
	for (;;) {
		Ref<Id> found;
		{
			MutexGuard g(cm->lock);
			for (Id &id : cm->ids)
				if (id.port == &p) {
					found = Ref<Id>::share(&id);
					break;
				}
			if (!found)
				return;
			Id &id = *found;
			if (!id.ulp_gone && id.state != State::Idle && id.state != State::Listen) {
				bool up = id.state == State::Established || id.state == State::DreqSent ||
					  id.state == State::TimeWait;
				queue_locked(id, up ? EventType::Disconnected : EventType::Unreachable, QpMove::Error);
			}
			id.port = nullptr;
			arm_locked(id, 0);
			to_idle_locked(id);
		}
		found->timer.cancel_sync();
		{
			MutexGuard g(cm->lock);
			if (found->timer_ref) {
				found->timer_ref = false;
				found->put();
			}
		}
		deliver(*found);
	}
}

namespace {

class CmClient final : public verbs::Client {
public:
	CmClient() : verbs::Client("weft_cm") {}

	Result<void> add(verbs::Device &dev) override
	{
		if (dev.node_type() != verbs::NodeType::Ca)
			return ok();
		for (uint8_t n = 1; n <= dev.num_ports(); n++) {
			mad::MadPort *mp = mad::find_port(dev, n);
			if (!mp)
				continue;
			auto *p = new (Gfp::Sleep) CmPort(*mp);
			if (!p)
				return Error(err::ENOMEM);
			auto started = p->start();
			if (!started) {
				log.warn("%s/%u: no CM (errno %d)", dev.name(), n, started.error().code());
				delete p;
				continue;
			}
			MutexGuard g(cm->lock);
			cm->ports.push_back(*p);
		}
		return ok();
	}

	void remove(verbs::Device &dev) override
	{
		for (;;) {
			CmPort *found = nullptr;
			{
				MutexGuard g(cm->lock);
				for (CmPort &p : cm->ports)
					if (&p.dev == &dev)
						found = &p;
			}
			if (!found)
				break;
			found->stop();
			delete found;
		}
		/*
		 * The Ids detached above that nobody else holds are queued to
		 * the reaper; each holds a reference on @dev, whose release is
		 * the driver's code.  Free them before the driver goes on to
		 * unregister and perhaps unload.
		 */
		cm->reaper.flush();
	}
};

/* Module exit gives up on Ids only after this long without one freed. */
constexpr uint32_t exit_quiet_ms = 30000;

CmClient *client;
alignas(CmClient) unsigned char client_storage[sizeof(CmClient)];
alignas(Cm) unsigned char cm_storage[sizeof(Cm)];

} // namespace

} // namespace weft::cm

using namespace weft::cm;

int weft_cm_init(void)
{
	cm = new (cm_storage) Cm();
	client = new (client_storage) CmClient();
	auto r = weft::verbs::register_client(*client);
	if (!r) {
		client->~CmClient();
		cm->~Cm();
		return r.to_errno();
	}
	return 0;
}

unsigned int weft_cm_live_ids(void)
{
	return cm->live.load(weft::Order::Relaxed);
}

void weft_cm_exit(void)
{
	weft::verbs::unregister_client(*client);
	client->~CmClient();
	stop_all_timers();
	/*
	 * No port, timer or CommEst work is left: every Id is on its way to
	 * the reaper, freeing an Id may free another (a listener a Request
	 * held), and a reference still held elsewhere ends when its holder
	 * returns.  Each Id freed is progress; only a quiet spell with Ids
	 * left ends the wait: a ULP that never destroyed its Id (module
	 * references keep us loaded while one is), or a stuck reference.
	 */
	uint32_t left = drain_ids(0, exit_quiet_ms);
	if (left) {
		/* Loudly, and leaked rather than freed under whoever holds them. */
		report_left_ids(left);
		cm->reaper.cancel_sync();
		return;
	}
	cm->~Cm();
}
