// SPDX-License-Identifier: GPL-2.0
/*
 * A portal with iSER enabled (iscsit_setup_np): an RDMA CM listener in the
 * TCP port space (IBA A11: service ID 0x0000000001060CBC for port 3260)
 * in the namespace of the task that wrote enable_iser, as LIO's TCP
 * portals bind in the writer's.  Connections wait here, established,
 * until LIO's login thread takes one (iscsit_accept_np).  Also the
 * module's entry points for the shim (isert_kapi.h).
 */
#include <weft/log.h>

#include "isert.h"

namespace weft::isert {

namespace {
const Logger log("weft_isert");

/* Released Conns whose own work item ran the release: freed from here. */
struct Reaper {
	Reaper() : lock(WEFT_LOCK_CLASS("weft_isert_reap")), work(reap, WEFT_LOCK_CLASS("weft_isert_reaper")) {}
	static void reap(Work &w);
	SpinLock lock;
	List<Conn, &Conn::np_node> dead;
	Work work;
};
Reaper *reaper;
alignas(Reaper) unsigned char reaper_storage[sizeof(Reaper)];
alignas(WaitQueue) unsigned char gone_storage[sizeof(WaitQueue)];

void Reaper::reap(Work &w)
{
	Reaper *r = container_of(&w, &Reaper::work);
	for (;;) {
		Conn *c;
		{
			SpinGuardBh g(r->lock);
			c = r->dead.front();
			if (c)
				r->dead.remove(*c);
		}
		if (!c)
			return;
		delete c;
	}
}
} // namespace

WaitQueue *conns_gone;

void reap(Conn &c)
{
	{
		SpinGuardBh g(reaper->lock);
		reaper->dead.push_back(c);
	}
	reaper->work.queue();
}

Np::Np(iscsi_np *l)
	: lio(l), lock_(WEFT_LOCK_CLASS("weft_isert_np")), wq_(WEFT_LOCK_CLASS("weft_isert_np_wq")),
	  drop_listener_(drop_listener, WEFT_LOCK_CLASS("weft_isert_np_drop"))
{
}

void Np::drop_listener(Work &w)
{
	Np *n = container_of(&w, &Np::drop_listener_);
	rdma_cm::Id *id;
	{
		MutexGuard g(n->lock_);
		id = exchange(n->gone_id_, nullptr);
	}
	if (id)
		rdma_cm::destroy(id);
}

Result<void> Np::listen(const weft_isert_addr &a)
{
	rdma_cm::SockAddr sa;
	sa.family = a.family;
	sa.port = a.port;
	__builtin_memcpy(sa.ip, a.ip, 16);
	sa.scope_id = a.scope_id;
	rdma_cm::Net *net = rdma_cm::current_net();
	auto id = rdma_cm::create_id(net, rdma_cm::PortSpace::Tcp, verbs::QpType::Rc, *this, nullptr);
	rdma_cm::put_net(net);
	rdma_cm::Id *lid = WEFT_TRY(move(id));
	auto r = rdma_cm::set_afonly(*lid, true);
	if (r)
		r = rdma_cm::bind(*lid, sa);
	if (r)
		r = rdma_cm::listen(*lid, 0);
	if (!r) {
		rdma_cm::destroy(lid);
		return r;
	}
	MutexGuard g(lock_);
	id_ = lid;
	return ok();
}

int Np::event(const rdma_cm::Event &e)
{
	if (e.type == rdma_cm::EventType::ConnectRequest)
		return request(e);
	if (e.type == rdma_cm::EventType::DeviceRemoval) {
		/*
		 * The listener was bound to the device's address: it goes (in-tree
		 * too), destroyed from a work item (the removal waits for that;
		 * not by our return value, which leaves the Id counted).
		 */
		MutexGuard g(lock_);
		if (e.id == id_) {
			gone_id_ = id_;
			id_ = nullptr;
			drop_listener_.queue();
			log.info("portal's device removed: no longer listening");
		}
	}
	return 0;
}

/* IBA A11/A12: a new connection; REJ "consumer defined" when the portal is off or anything fails. */
int Np::request(const rdma_cm::Event &e)
{
	auto reject = [&e] {
		stats.rejected.fetch_add(1, Order::Relaxed);
		(void)rdma_cm::reject(*e.id, {});
		return 1;
	};
	if (!weft_isert_np_enabled(lio))
		return reject();
	auto *c = new (Gfp::Sleep) Conn(*this);
	if (!c)
		return reject();
	{
		MutexGuard g(lock_);
		if (closing_) {
			delete c;
			return reject();
		}
		connecting_.push_back(*c);
		c->on_np = true;
	}
	auto r = c->start(e);
	if (!r) {
		WEFT_LOG_RATELIMITED(log, Level::Info, "connection refused: errno %d", r.error().code());
		bool mine = drop(*c);
		(void)rdma_cm::reject(*e.id, {});
		stats.rejected.fetch_add(1, Order::Relaxed);
		if (mine) {
			/* The Id is destroyed by our return value, not by the release. */
			c->forget_id();
			c->release();
			delete c;
		}
		return 1;
	}
	stats.accepted.fetch_add(1, Order::Relaxed);
	return 0;
}

void Np::established(Conn &c)
{
	{
		MutexGuard g(lock_);
		if (!c.on_np)
			return;
		connecting_.remove(c);
		pending_.push_back(c);
		c.established_ = true;
		waiting_.fetch_add(1, Order::Release);
	}
	wq_.wake_all();
}

/* Off the Np's lists (under lock_). */
void Np::take(Conn &c)
{
	if (!c.np_node.linked())
		return;
	if (c.established_) {
		pending_.remove(c);
		waiting_.fetch_sub(1, Order::Release);
	} else {
		connecting_.remove(c);
	}
}

bool Np::drop(Conn &c)
{
	MutexGuard g(lock_);
	if (!c.on_np)
		return false;
	c.on_np = false;
	take(c);
	return true;
}

int Np::accept(iscsit_conn *conn, Conn *&out, weft_isert_addr &peer, weft_isert_addr &local)
{
	for (;;) {
		auto r = wq_.wait(
			[this] { return waiting_.load(Order::Acquire) || stop_.load(Order::Acquire); },
			Timeout::forever(), true);
		if (!r || weft_isert_np_stopping(lio))
			return -err::ENODEV;
		MutexGuard g(lock_);
		if (closing_)
			return -err::ENODEV;
		Conn *c = pending_.front();
		if (!c)
			continue;
		take(*c);
		c->on_np = false;
		c->bind(conn, peer, local);
		out = c;
		return 0;
	}
}

/* iscsit_free_np: no more requests, and every connection LIO never took goes. */
void Np::free()
{
	rdma_cm::Id *id;
	{
		MutexGuard g(lock_);
		closing_ = true;
		stop_.store(true, Order::Release);
		id = id_;
		id_ = nullptr;
	}
	wq_.wake_all();
	if (id)
		rdma_cm::destroy(id);
	drop_listener_.flush();
	for (;;) {
		Conn *c;
		{
			MutexGuard g(lock_);
			c = connecting_.front();
			if (!c)
				c = pending_.front();
			if (c) {
				take(*c);
				c->on_np = false;
			}
		}
		if (!c)
			break;
		c->release();
		delete c;
	}
}

} // namespace weft::isert

using namespace weft;
using namespace weft::isert;

int weft_isert_init(void)
{
	conns_gone = new (gone_storage) WaitQueue(WEFT_LOCK_CLASS("weft_isert_gone"));
	reaper = new (reaper_storage) Reaper();
	return 0;
}

void weft_isert_exit(void)
{
	/* LIO holds the module while a portal exists: only released Conns can be left. */
	(void)conns_gone->wait([] { return !stats.conns.load(Order::Relaxed); });
	reaper->work.cancel_sync();
	reaper->~Reaper();
	conns_gone->~WaitQueue();
	conns_gone = nullptr;
}

int weft_isert_np_setup(struct iscsi_np *np, const struct weft_isert_addr *addr, void **np_ctx)
{
	auto *n = new (Gfp::Sleep) Np(np);
	if (!n)
		return -err::ENOMEM;
	auto r = n->listen(*addr);
	if (!r) {
		delete n;
		return r.to_errno();
	}
	*np_ctx = n;
	return 0;
}

int weft_isert_np_accept(void *np_ctx, struct iscsit_conn *conn, void **conn_ctx,
			 struct weft_isert_addr *peer, struct weft_isert_addr *local)
{
	Conn *c = nullptr;
	int r = static_cast<Np *>(np_ctx)->accept(conn, c, *peer, *local);
	if (!r)
		*conn_ctx = c;
	return r;
}

void weft_isert_np_free(void *np_ctx)
{
	auto *n = static_cast<Np *>(np_ctx);
	n->free();
	delete n;
}

int weft_isert_login_first(void *c, uint8_t bhs[WEFT_ISERT_BHS_LEN], uint8_t *data, uint32_t max,
			   uint32_t *data_len)
{
	return static_cast<Conn *>(c)->login_first(bhs, data, max, *data_len);
}

int weft_isert_login_wait(void *c)
{
	return static_cast<Conn *>(c)->login_wait();
}

int weft_isert_login_tx(void *c, const uint8_t bhs[WEFT_ISERT_BHS_LEN], const void *data,
			uint32_t len, bool failed, bool complete)
{
	return static_cast<Conn *>(c)->login_tx(bhs, data, len, failed, complete);
}

void weft_isert_full_feature(void *c)
{
	static_cast<Conn *>(c)->full_feature();
}

int weft_isert_send(void *c, struct weft_isert_io *io)
{
	return static_cast<Conn *>(c)->send(*io);
}

int weft_isert_rdma(void *c, struct weft_isert_io *io, bool write, const struct weft_isert_seg *segs,
		    uint32_t nsegs, uint32_t offset, uint32_t len)
{
	return static_cast<Conn *>(c)->rdma(*io, write, segs, nsegs, offset, len);
}

void weft_isert_ctrl_hold(void *c, int delta)
{
	static_cast<Conn *>(c)->ctrl_hold(delta);
}

void weft_isert_logout_posted(void *c)
{
	static_cast<Conn *>(c)->logout_posted();
}

bool weft_isert_wait_conn(void *c)
{
	return static_cast<Conn *>(c)->wait_conn();
}

void weft_isert_wait_ctrl(void *c)
{
	static_cast<Conn *>(c)->wait_ctrl();
}

void weft_isert_free_conn(void *c)
{
	auto *conn = static_cast<Conn *>(c);
	conn->release();
	delete conn;
}

void weft_isert_get_stats(struct weft_isert_stats *s)
{
	s->accepted = stats.accepted.load(Order::Relaxed);
	s->rejected = stats.rejected.load(Order::Relaxed);
	s->dropped = stats.dropped.load(Order::Relaxed);
	s->conns = stats.conns.load(Order::Relaxed);
}
