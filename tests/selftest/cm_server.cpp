// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: a CM echo server, as a kernel ULP would write one.  It
 * listens on a service ID on one device (weft1 by default); every REQ
 * gets its own RC QP, accepted with REP; every message received on a
 * connection is sent back on it.  Connections the peer ends (DREQ, REJ,
 * timeout) are torn down by a work item; unloading destroys the listener
 * and every connection (the peers get DREQs).  Its counters are module
 * parameters (cm_server_mod.c) that tests/integration/cm.sh reads.
 */
#include <weft/cm/cm.h>
#include <weft/log.h>

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

class Server final : public cm::Handler {
public:
	Server() : lock_(WEFT_LOCK_CLASS("weft_cm_server")), reaper_(reap, WEFT_LOCK_CLASS("weft_cm_server_reap")) {}

	Result<void> start(const char *dev, uint64_t service)
	{
		WEFT_TRY(res_.open(dev, on_cq, this));
		listener_ = WEFT_TRY(cm::create_id(*res_.dev, *this, nullptr));
		WEFT_TRY(cm::listen(*listener_, service));
		return ok();
	}

	void stop()
	{
		if (listener_)
			cm::destroy(listener_);
		listener_ = nullptr;
		while (Conn *c = take(false))
			finish(*c);
		reaper_.cancel_sync();
		while (Conn *c = take(false))
			finish(*c);
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
		if (c) {
			MutexGuard g(lock_);
			c->dead = true;
		}
		reaper_.queue();
		return 0;
	}

private:
	static void bump(unsigned int &n) { __atomic_fetch_add(&n, 1, __ATOMIC_RELAXED); }

	int accept(cm::Id &id)
	{
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
		/* In RTR now, where receives may be posted (IBA 10.3.1); a SEND before them gets RNR. */
		for (int i = 0; i < 2; i++)
			(void)res_.recv(*c->qp, &c->rx[i], i);
		{
			MutexGuard g(lock_);
			conns_.push_back(*c);
		}
		bump(weft_cm_server_accepted);
		bump(weft_cm_server_active);
		return 0;
	}

	/* The first (dead, when @dead_only) connection, off the list. */
	Conn *take(bool dead_only)
	{
		MutexGuard g(lock_);
		for (Conn &c : conns_)
			if (c.dead || !dead_only) {
				conns_.remove(c);
				return &c;
			}
		return nullptr;
	}

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
		verbs::Wc wc[8];
		do {
			size_t n;
			while ((n = cq.poll(Span<verbs::Wc>(wc, 8))))
				for (size_t i = 0; i < n; i++)
					s->completed(wc[i]);
		} while (cq.req_notify(false));
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

	selftest::CmResources res_;
	cm::Id *listener_ = nullptr;
	Mutex lock_;
	List<Conn, &Conn::node> conns_; /* under lock_ */
	Work reaper_;
};

Server *server;
alignas(Server) unsigned char server_storage[sizeof(Server)];

} // namespace

int weft_selftest_cm_server_start(const char *dev, unsigned long long service)
{
	server = new (server_storage) Server();
	auto r = server->start(dev, service);
	if (!r) {
		log.err("cannot serve 0x%llx on %s: errno %d", service, dev, r.error().code());
		server->stop();
		server->~Server();
		return r.to_errno();
	}
	log.info("serving 0x%llx on %s", service, dev);
	return 0;
}

void weft_selftest_cm_server_stop(void)
{
	server->stop();
	server->~Server();
}
