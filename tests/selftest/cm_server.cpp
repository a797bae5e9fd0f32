// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: a CM echo server, as a kernel ULP would write one.  It is a
 * verbs client: when the device it serves (weft1 by default) comes, add()
 * opens a context there and listens on a service ID; every REQ gets its
 * own RC QP, accepted with REP; every message received on a connection is
 * sent back on it.  Connections the peer ends (DREQ, REJ, timeout) are
 * torn down by a work item.
 *
 * remove() of that device (rmmod of the HCA driver, rmdir of the HCA in
 * configfs) runs before the CM's own remove(): the registry removes the
 * newest client first, and a ULP registers after the CM it uses (in-tree,
 * ib_cm's ULPs destroy their cm_ids in their client remove on the same
 * grounds).  It releases everything, two-phase:
 *   1. stop new work: Requests are refused, nothing is reaped or echoed;
 *   2. destroy the listener, which waits for Request handlers running;
 *   3. stop the reaper;
 *   4. each connection: its CM Id first (the CM tells the peer, with a
 *      DREQ, while the port can still send; the QP goes to Error; no
 *      handler call comes after), then its QP, which must outlive the Id
 *      (cm.md);
 *   5. close the context.
 * Connections still up at 4 count as lost (module parameter "lost").
 * When the device comes back, add() listens again, as a real server
 * serves whatever HCA it is configured for, whenever it appears.
 * Unloading releases the same way (unregister_client()), without counting.
 * Counters are module parameters (cm_server_mod.c) that
 * tests/integration/cm.sh and remove_live.sh read.
 */
#include <weft/cm/cm.h>
#include <weft/log.h>
#include <weft/verbs/drain.h>

#include "cm_selftest.h"

using namespace weft;

namespace {

const Logger log("weft_selftest_cm_server");

struct Conn {
	ListNode node;
	cm::Id *id = nullptr;
	verbs::Qp *qp = nullptr;
	uint64_t rx[2] = {};
	uint64_t tx = 0;
	bool dead = false;
};

class Server final : public cm::Handler, public verbs::Client {
public:
	Server(const char *dev, uint64_t service) :
		verbs::Client("weft_selftest_cm_server"), dev_name_(dev), service_(service),
		lock_(WEFT_LOCK_CLASS("weft_cm_server")), reaper_(reap, WEFT_LOCK_CLASS("weft_cm_server_reap"))
	{
	}

	/* add() and remove() are serialised by the registry, which is all res_ and listener_ need. */
	Result<void> add(verbs::Device &dev) override
	{
		if (res_.dev || __builtin_strcmp(dev.name(), dev_name_))
			return ok();
		auto r = serve(dev);
		if (!r) {
			log.err("cannot serve 0x%llx on %s: errno %d", static_cast<unsigned long long>(service_),
				dev.name(), r.error().code());
			(void)teardown();
			return r;
		}
		log.info("serving 0x%llx on %s", static_cast<unsigned long long>(service_), dev.name());
		return ok();
	}

	void remove(verbs::Device &dev) override
	{
		if (&dev != res_.dev.get())
			return;
		unsigned int lost = teardown();
		if (__atomic_load_n(&unloading, __ATOMIC_RELAXED))
			return;
		__atomic_fetch_add(&weft_cm_server_lost, lost, __ATOMIC_RELAXED);
		log.info("%s removed: %u connection%s lost; listening again when it comes back", dev.name(),
			 lost, lost == 1 ? "" : "s");
	}

	int event(const cm::Event &e) override
	{
		auto *c = static_cast<Conn *>(cm::context(*e.id));
		switch (e.type) {
		case cm::EventType::Request: return accept(*e.id);
		case cm::EventType::Established: bump(weft_cm_server_established); return 0;
		case cm::EventType::Disconnected: bump(weft_cm_server_disconnected); break;
		case cm::EventType::Rejected:
		case cm::EventType::Unreachable: break;
		default: return 0;
		}
		MutexGuard g(lock_);
		if (c)
			c->dead = true;
		/* Under lock_: once teardown() has set stopping_, the reaper is not queued again. */
		if (!stopping_)
			reaper_.queue();
		return 0;
	}

	bool unloading = false; /* set before unregister_client(): removals then are not losses */

private:
	static void bump(unsigned int &n) { __atomic_fetch_add(&n, 1, __ATOMIC_RELAXED); }

	Result<void> serve(verbs::Device &dev)
	{
		{
			MutexGuard g(lock_);
			stopping_ = false;
		}
		WEFT_TRY(res_.open(dev, on_cq, this));
		listener_ = WEFT_TRY(cm::create_id(dev, *this, nullptr));
		WEFT_TRY(cm::listen(*listener_, service_));
		__atomic_store_n(&weft_cm_server_listening, 1, __ATOMIC_RELAXED);
		return ok();
	}

	/* Release everything on the device served (the steps of the header comment); the connections lost. */
	unsigned int teardown()
	{
		{
			MutexGuard g(lock_);
			stopping_ = true;
		}
		__atomic_store_n(&weft_cm_server_listening, 0, __ATOMIC_RELAXED);
		if (listener_)
			cm::destroy(listener_);
		listener_ = nullptr;
		reaper_.cancel_sync();
		unsigned int lost = 0;
		bool dead;
		while (Conn *c = take(false, &dead)) {
			lost += dead ? 0 : 1;
			finish(*c);
		}
		res_.close();
		return lost;
	}

	int accept(cm::Id &id)
	{
		{
			/* Stop new work; one that got past this is waited for by the listener's destroy(). */
			MutexGuard g(lock_);
			if (stopping_)
				return -1;
		}
		auto *c = new (Gfp::Sleep) Conn();
		if (!c)
			return -1;
		auto qp = res_.rc_qp(4);
		if (!qp) {
			delete c;
			return -1;
		}
		c->qp = qp.value();
		c->id = &id;
		cm::set_handler(id, *this, c);
		cm::AcceptParam a;
		a.qp = c->qp;
		if (!cm::accept(id, a)) {
			(void)res_.ctx->destroy_qp(c->qp);
			delete c;
			return -1;
		}
		/*
		 * Listed before its receives are posted: the client's first SEND
		 * may complete at once, and completed() must find its connection
		 * (the soak lost an echo to that window).  No event of this Id
		 * runs before this handler returns, and teardown() waits for it
		 * in the listener's destroy(), so nothing frees it meanwhile.
		 */
		{
			MutexGuard g(lock_);
			conns_.push_back(*c);
		}
		/* In RTR now, where receives may be posted (IBA 10.3.1); a SEND before them gets RNR. */
		for (int i = 0; i < 2; i++)
			(void)res_.recv(*c->qp, &c->rx[i], i);
		bump(weft_cm_server_accepted);
		bump(weft_cm_server_active);
		return 0;
	}

	/* The first (dead, when @dead_only) connection, off the list; whether it was dead in @dead. */
	Conn *take(bool dead_only, bool *dead = nullptr)
	{
		MutexGuard g(lock_);
		for (Conn &c : conns_)
			if (c.dead || !dead_only) {
				conns_.remove(c);
				if (dead)
					*dead = c.dead;
				return &c;
			}
		return nullptr;
	}

	/* The Id before the QP: destroy() moves the QP to Error and must find it alive. */
	void finish(Conn &c)
	{
		cm::destroy(c.id);
		(void)res_.ctx->destroy_qp(c.qp);
		delete &c;
		__atomic_fetch_sub(&weft_cm_server_active, 1, __ATOMIC_RELAXED);
	}

	static void reap(Work &w)
	{
		Server *s = container_of(&w, &Server::reaper_);
		while (Conn *c = s->take(true))
			s->finish(*c);
	}

	/* Echo what arrives, on the connection it arrived on. */
	static void on_cq(verbs::Cq &cq, void *arg)
	{
		auto *s = static_cast<Server *>(arg);
		/* In the (Sleepable) handler itself: every completion, however many come. */
		while (!verbs::drain_cq(cq, 512, [s](const verbs::Wc &wc) { s->completed(wc); }))
			;
	}

	void completed(const verbs::Wc &wc)
	{
		if (wc.status != verbs::WcStatus::Success) {
			if (wc.status != verbs::WcStatus::WrFlushErr)
				log.warn("QP %06x: completion status %u", wc.qp_num, unsigned(wc.status));
			return;
		}
		if (wc.opcode != verbs::WcOpcode::Recv)
			return;
		MutexGuard g(lock_);
		if (stopping_)
			return;
		for (Conn &c : conns_) {
			if (c.qp->qpn != wc.qp_num || c.dead)
				continue;
			c.tx = c.rx[wc.wr_id & 1];
			auto sent = res_.send(*c.qp, &c.tx, 0x100);
			auto again = res_.recv(*c.qp, &c.rx[wc.wr_id & 1], wc.wr_id & 1);
			if (sent && again)
				bump(weft_cm_server_echoed);
			else
				log.warn("QP %06x: echo errno %d, receive errno %d", wc.qp_num,
					 sent ? 0 : sent.error().code(), again ? 0 : again.error().code());
			return;
		}
		log.warn("completion for QP %06x, which has no connection", wc.qp_num);
	}

	const char *const dev_name_;
	const uint64_t service_;
	selftest::CmResources res_; /* open while serving */
	cm::Id *listener_ = nullptr;
	Mutex lock_;
	List<Conn, &Conn::node> conns_; /* under lock_ */
	bool stopping_ = true;		/* under lock_: no new connection, reaping or echo */
	Work reaper_;
};

Server *server;
alignas(Server) unsigned char server_storage[sizeof(Server)];

} // namespace

int weft_selftest_cm_server_start(const char *dev, unsigned long long service)
{
	server = new (server_storage) Server(dev, service);
	auto r = verbs::register_client(*server);
	/* The device must be there at load: the tests count on a server that serves. */
	if (r && !__atomic_load_n(&weft_cm_server_listening, __ATOMIC_RELAXED)) {
		__atomic_store_n(&server->unloading, true, __ATOMIC_RELAXED);
		verbs::unregister_client(*server);
		r = Error(err::ENODEV);
	}
	if (!r) {
		log.err("cannot serve 0x%llx on %s: errno %d", service, dev, r.error().code());
		server->~Server();
		return r.to_errno();
	}
	return 0;
}

void weft_selftest_cm_server_stop(void)
{
	__atomic_store_n(&server->unloading, true, __ATOMIC_RELAXED);
	verbs::unregister_client(*server);
	server->~Server();
}
