// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: an echo server on the RDMA CM, as a kernel ULP writes one.
 * It listens in the namespace it was loaded in, on its address (or the
 * wildcard) and port; each ConnectRequest gets an RC QP on the request's
 * device, attached to the new Id and accepted with private data
 * "weft-rcm-accept"; a request whose private data starts with "reject"
 * is refused with "go-away".  What arrives is sent back.  Connections the
 * peer ends are torn down by a work item: the Id first (the QP goes to
 * Error), then the QP.  A second listener on the same port of the UDP port
 * space answers SIDR requests with a UD QP of its own (kept until unload).  Unload releases everything the same way; it is
 * not a verbs client, so the HCAs must stay while it is loaded (the test
 * unloads it first).
 */
#include <weft/log.h>
#include <weft/rdma_cm/rdma_cm.h>
#include <weft/verbs/drain.h>

#include "cm_selftest.h"
#include "rcm_selftest.h"

using namespace weft;

namespace {

const Logger log("weft_selftest_rcm_server");

struct Conn {
	ListNode node;
	rdma_cm::Id *id = nullptr;
	verbs::Qp *qp = nullptr;
	uint64_t rx[2] = {};
	uint64_t tx = 0;
	bool dead = false;
};

void bump(unsigned int &n)
{
	__atomic_fetch_add(&n, 1, __ATOMIC_RELAXED);
}

class Server final : public rdma_cm::Handler {
public:
	Server() :
		lock_(WEFT_LOCK_CLASS("weft_rcm_server")), res_lock_(WEFT_LOCK_CLASS("weft_rcm_server_res")),
		reaper_(reap, WEFT_LOCK_CLASS("weft_rcm_server_reap"))
	{
	}

	Result<void> start(const weft_rcm_test_params &p)
	{
		rdma_cm::SockAddr a;
		a.port = static_cast<uint16_t>(p.port);
		if (!p.addr[0] || !__builtin_strcmp(p.addr, "any"))
			a.family = rdma_cm::af_inet;
		else
			WEFT_TRY(from_errno(weft_rcm_test_parse_ip(p.addr, &a.family, a.ip)));
		rdma_cm::Net *net = rdma_cm::current_net();
		auto id = rdma_cm::create_id(net, rdma_cm::PortSpace::Tcp, verbs::QpType::Rc, *this, nullptr);
		rdma_cm::put_net(net);
		listener_ = WEFT_TRY(move(id));
		WEFT_TRY(rdma_cm::bind(*listener_, a));
		WEFT_TRY(rdma_cm::listen(*listener_, 64));
		net = rdma_cm::current_net();
		auto ud = rdma_cm::create_id(net, rdma_cm::PortSpace::Udp, verbs::QpType::Ud, *this, nullptr);
		rdma_cm::put_net(net);
		ud_listener_ = WEFT_TRY(move(ud));
		WEFT_TRY(rdma_cm::bind(*ud_listener_, a));
		WEFT_TRY(rdma_cm::listen(*ud_listener_, 64));
		{
			MutexGuard g(lock_);
			stopping_ = false;
		}
		__atomic_store_n(&weft_rcm_test.listening, 1, __ATOMIC_RELAXED);
		return ok();
	}

	void stop()
	{
		{
			MutexGuard g(lock_);
			stopping_ = true;
		}
		__atomic_store_n(&weft_rcm_test.listening, 0, __ATOMIC_RELAXED);
		if (listener_)
			rdma_cm::destroy(listener_);
		listener_ = nullptr;
		if (ud_listener_)
			rdma_cm::destroy(ud_listener_);
		ud_listener_ = nullptr;
		reaper_.cancel_sync();
		while (Conn *c = take(false))
			finish(*c);
		res_.close();
	}

	int event(const rdma_cm::Event &e) override
	{
		if (e.type == rdma_cm::EventType::ConnectRequest)
			return request(e);
		auto *c = static_cast<Conn *>(rdma_cm::context(*e.id));
		switch (e.type) {
		case rdma_cm::EventType::Established: bump(weft_rcm_test.established); return 0;
		case rdma_cm::EventType::AddrChange: bump(weft_rcm_test.addr_changes); return 0;
		case rdma_cm::EventType::Disconnected: bump(weft_rcm_test.disconnected); break;
		case rdma_cm::EventType::Rejected:
		case rdma_cm::EventType::Unreachable:
		case rdma_cm::EventType::DeviceRemoval: break;
		default: return 0;
		}
		MutexGuard g(lock_);
		if (c)
			c->dead = true;
		if (!stopping_)
			reaper_.queue();
		return 0;
	}

private:
	int request(const rdma_cm::Event &e)
	{
		if (e.listen_id == ud_listener_)
			return ud_request(*e.id);
		__atomic_store_n(&weft_rcm_test.req_responder_resources, e.conn.responder_resources, __ATOMIC_RELAXED);
		__atomic_store_n(&weft_rcm_test.req_initiator_depth, e.conn.initiator_depth, __ATOMIC_RELAXED);
		ConstBytes pd = e.conn.private_data;
		if (pd.size() >= 6 && !__builtin_memcmp(pd.data(), "reject", 6)) {
			static const char no[] = "go-away";
			(void)rdma_cm::reject(*e.id, ConstBytes(reinterpret_cast<const uint8_t *>(no), sizeof(no)));
			bump(weft_rcm_test.rejected);
			return 1; /* done with it */
		}
		auto *c = new (Gfp::Sleep) Conn();
		if (!c)
			return 1;
		auto r = setup(*e.id, *c);
		if (!r) {
			log.warn("request refused: errno %d", r.error().code());
			if (c->qp)
				(void)res_.ctx->destroy_qp(c->qp);
			delete c;
			return 1;
		}
		bump(weft_rcm_test.accepted);
		bump(weft_rcm_test.active);
		return 0;
	}

	/* SIDR: a UD QP for the requester, attached (so in RTS), its number and Q_Key in the SIDR_REP. */
	int ud_request(rdma_cm::Id &id)
	{
		auto *c = new (Gfp::Sleep) Conn();
		if (!c)
			return 1;
		auto r = open_res(id);
		if (r) {
			auto qp = res_.ud_qp(4);
			r = qp ? Result<void>(ok()) : Result<void>(qp.error());
			if (qp)
				c->qp = qp.value();
		}
		if (r)
			r = rdma_cm::attach_qp(id, *c->qp);
		if (r) {
			c->id = &id;
			rdma_cm::set_handler(id, *this, c);
			MutexGuard g(lock_);
			conns_.push_back(*c);
		}
		if (r) {
			rdma_cm::ConnParam cp;
			r = rdma_cm::accept(id, cp);
		}
		if (!r) {
			log.warn("SIDR request refused: errno %d", r.error().code());
			if (c->id) {
				MutexGuard g(lock_);
				conns_.remove(*c);
			}
			if (c->qp)
				(void)res_.ctx->destroy_qp(c->qp);
			delete c;
			return 1;
		}
		bump(weft_rcm_test.ud_accepted);
		return 0;
	}

	Result<void> open_res(rdma_cm::Id &id)
	{
		{
			MutexGuard g(lock_);
			if (stopping_)
				return Error(err::ESHUTDOWN);
		}
		/* Not under lock_: on_cq() takes lock_, and closing a context waits for on_cq(). */
		MutexGuard g(res_lock_);
		if (!res_.dev) {
			rdma_cm::Info i = rdma_cm::info(id);
			if (!i.dev)
				return Error(err::ENODEV);
			WEFT_TRY(res_.open(*i.dev, on_cq, this));
		}
		return ok();
	}

	Result<void> setup(rdma_cm::Id &id, Conn &c)
	{
		WEFT_TRY(open_res(id));
		c.qp = WEFT_TRY(res_.rc_qp(4));
		WEFT_TRY(rdma_cm::attach_qp(id, *c.qp));
		c.id = &id;
		rdma_cm::set_handler(id, *this, &c);
		{
			MutexGuard g(lock_);
			conns_.push_back(c);
		}
		for (int i = 0; i < 2; i++)
			WEFT_TRY(res_.recv(*c.qp, &c.rx[i], i));
		static const char yes[] = "weft-rcm-accept";
		rdma_cm::ConnParam cp;
		cp.private_data = ConstBytes(reinterpret_cast<const uint8_t *>(yes), sizeof(yes));
		cp.responder_resources = cp.initiator_depth = 4;
		auto r = rdma_cm::accept(id, cp);
		if (!r) {
			MutexGuard g(lock_);
			conns_.remove(c);
		}
		return r;
	}

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

	/* The Id before the QP: its destroy moves the QP to Error. */
	void finish(Conn &c)
	{
		bool ud = c.qp->type == verbs::QpType::Ud;
		rdma_cm::destroy(c.id);
		(void)res_.ctx->destroy_qp(c.qp);
		if (!ud)
			__atomic_fetch_sub(&weft_rcm_test.active, 1, __ATOMIC_RELAXED);
		delete &c;
	}

	static void reap(Work &w)
	{
		Server *s = container_of(&w, &Server::reaper_);
		while (Conn *c = s->take(true))
			s->finish(*c);
	}

	static void on_cq(verbs::Cq &cq, void *arg)
	{
		auto *s = static_cast<Server *>(arg);
		/* In the (Sleepable) handler itself: every completion, however many come. */
		while (!verbs::drain_cq(cq, 512, [s](const verbs::Wc &wc) { s->completed(wc); }))
			;
	}

	void completed(const verbs::Wc &wc)
	{
		if (wc.status != verbs::WcStatus::Success || wc.opcode != verbs::WcOpcode::Recv)
			return;
		MutexGuard g(lock_);
		if (stopping_)
			return;
		for (Conn &c : conns_) {
			if (c.qp->qpn != wc.qp_num || c.dead)
				continue;
			c.tx = c.rx[wc.wr_id & 1];
			if (res_.send(*c.qp, &c.tx, 0x100) && res_.recv(*c.qp, &c.rx[wc.wr_id & 1], wc.wr_id & 1))
				bump(weft_rcm_test.echoed);
			return;
		}
	}

	selftest::CmResources res_; /* opened on the first request's device, under res_lock_ */
	rdma_cm::Id *listener_ = nullptr;
	rdma_cm::Id *ud_listener_ = nullptr;
	Mutex lock_;
	Mutex res_lock_;
	List<Conn, &Conn::node> conns_; /* under lock_ */
	bool stopping_ = true;		/* under lock_ */
	Work reaper_;
};

Server *server;
alignas(Server) unsigned char server_storage[sizeof(Server)];

} // namespace

int weft_rcm_test_server_start(const struct weft_rcm_test_params *p)
{
	server = new (server_storage) Server();
	auto r = server->start(*p);
	if (!r) {
		log.err("cannot listen on %s port %u: errno %d", p->addr, p->port, r.error().code());
		server->stop();
		server->~Server();
		return r.to_errno();
	}
	return 0;
}

void weft_rcm_test_server_stop(void)
{
	server->stop();
	server->~Server();
}
