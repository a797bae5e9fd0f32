// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: an RDMA CM client run at load, as a kernel ULP writes one,
 * against weft_selftest_rcm_server, in the namespace it is loaded in.
 * Each connection goes the whole way: resolve_addr (route and ARP/ND
 * through the ib interface), resolve_route (OpenSM's SA), an RC QP on the
 * resolved device, connect with private data, Established with the
 * server's private data, one message echoed, disconnect, Disconnected.
 * Depending on its parameters:
 *   checks       REJ with the server's private data; a port nobody listens
 *                on; EADDRINUSE; ADDR_ERROR for @unreachable;
 *   expect_route_error  no SM: ROUTE_ERROR is all it checks;
 *   cycles, concurrent  that many connections, one after another or at once;
 *   hold         that many kept up until unload, counting the peer's disconnects.
 * The load fails if anything did not happen as it should.  Like the
 * server, it is not a verbs client: the HCAs stay while it is loaded.
 */
#include <weft/log.h>
#include <weft/rdma_cm/rdma_cm.h>
#include <weft/wait.h>

#include "cm_selftest.h"
#include "rcm_selftest.h"

using namespace weft;

namespace {

const Logger log("weft_selftest_rcm_client");

struct Conn {
	rdma_cm::Id *id = nullptr;
	verbs::Qp *qp = nullptr;
	uint64_t tx = 0, rx = 0;
	/* Set by the handler: the last event and its status. */
	int addr = 0, route = 0, established = 0, disconnected = 0, failed = 0;
	int status = 0;
	bool pdata_ok = false;
	uint32_t ud_qpn = 0, ud_qkey = 0;
};

class Client final : public rdma_cm::Handler {
public:
	Client() : waitq_(WEFT_LOCK_CLASS("weft_rcm_client")) {}

	int event(const rdma_cm::Event &e) override
	{
		auto *c = static_cast<Conn *>(rdma_cm::context(*e.id));
		if (!c)
			return 0;
		using T = rdma_cm::EventType;
		switch (e.type) {
		case T::AddrResolved: set(c->addr); break;
		case T::RouteResolved: set(c->route); break;
		case T::Established:
			c->pdata_ok = has(e.conn.private_data, "weft-rcm-accept");
			c->ud_qpn = e.ud.qp_num;
			c->ud_qkey = e.ud.qkey;
			set(c->established);
			break;
		case T::Disconnected:
			set(c->disconnected);
			if (__atomic_load_n(&holding_, __ATOMIC_RELAXED))
				__atomic_fetch_add(&weft_rcm_test.peer_disconnects, 1, __ATOMIC_RELAXED);
			break;
		case T::Rejected:
			c->pdata_ok = has(e.conn.private_data, "go-away");
			c->status = e.status;
			set(c->failed);
			break;
		case T::AddrError:
		case T::RouteError:
		case T::Unreachable:
		case T::ConnectError:
			c->status = e.status;
			set(c->failed);
			break;
		default: break;
		}
		waitq_.wake_all();
		return 0;
	}

	Result<void> run(const weft_rcm_test_params &p);
	void drop_held();

private:
	static void set(int &f) { __atomic_store_n(&f, 1, __ATOMIC_RELEASE); }
	static bool has(ConstBytes pd, const char *s)
	{
		size_t n = __builtin_strlen(s);
		return pd.size() >= n && !__builtin_memcmp(pd.data(), s, n);
	}

	/* False on timeout or when the step failed (c.failed). */
	bool wait(Conn &c, const int &flag, long ms = 30000)
	{
		auto done = [&] {
			return __atomic_load_n(&flag, __ATOMIC_ACQUIRE) || __atomic_load_n(&c.failed, __ATOMIC_ACQUIRE);
		};
		(void)waitq_.wait(done, Timeout::msecs(ms));
		return __atomic_load_n(&flag, __ATOMIC_ACQUIRE) != 0;
	}

	Result<void> new_id(Conn &c, bool ud = false)
	{
		c = Conn();
		rdma_cm::Net *net = rdma_cm::current_net();
		auto id = ud ? rdma_cm::create_id(net, rdma_cm::PortSpace::Udp, verbs::QpType::Ud, *this, &c)
			     : rdma_cm::create_id(net, rdma_cm::PortSpace::Tcp, verbs::QpType::Rc, *this, &c);
		rdma_cm::put_net(net);
		c.id = WEFT_TRY(move(id));
		return ok();
	}

	/* Resolve, QP, connect with @pdata; Established or the failure's status. */
	Result<void> connect(Conn &c, const rdma_cm::SockAddr &to, const char *pdata)
	{
		WEFT_TRY(new_id(c));
		WEFT_TRY(rdma_cm::resolve_addr(*c.id, nullptr, to, 5000));
		if (!wait(c, c.addr))
			return Error(err::EHOSTUNREACH);
		WEFT_TRY(rdma_cm::resolve_route(*c.id, 5000));
		if (!wait(c, c.route))
			return Error(err::ENETUNREACH);
		if (!res_.dev) {
			rdma_cm::Info i = rdma_cm::info(*c.id);
			WEFT_TRY(res_.open(*i.dev, nullptr, nullptr));
		}
		c.qp = WEFT_TRY(res_.rc_qp(4));
		WEFT_TRY(rdma_cm::attach_qp(*c.id, *c.qp));
		rdma_cm::ConnParam cp;
		cp.private_data = ConstBytes(reinterpret_cast<const uint8_t *>(pdata), __builtin_strlen(pdata) + 1);
		/* Unequal, so the server can tell its view from the wire's. */
		cp.responder_resources = 2;
		cp.initiator_depth = 6;
		WEFT_TRY(rdma_cm::connect(*c.id, cp));
		if (!wait(c, c.established))
			return Error(c.failed ? err::ECONNREFUSED : err::ETIMEDOUT);
		return ok();
	}

	void release(Conn &c)
	{
		if (c.id)
			rdma_cm::destroy(c.id);
		if (c.qp)
			(void)res_.ctx->destroy_qp(c.qp);
		c.id = nullptr;
		c.qp = nullptr;
	}

	Result<void> echo(Conn &c, uint64_t v)
	{
		c.tx = v;
		c.rx = 0;
		WEFT_TRY(res_.recv(*c.qp, &c.rx, 1));
		WEFT_TRY(res_.send(*c.qp, &c.tx, 2));
		return ok();
	}

	Result<void> reap(int n)
	{
		verbs::Wc wc;
		int spins = 0;
		for (int i = 0; i < n;) {
			if (res_.cq->poll(Span<verbs::Wc>(&wc, 1)) == 1) {
				if (wc.status != verbs::WcStatus::Success)
					return Error(err::EIO);
				i++;
				continue;
			}
			if (++spins > 30000)
				return Error(err::ETIMEDOUT);
			weft_msleep(1);
		}
		return ok();
	}

	Result<void> disconnect(Conn &c)
	{
		WEFT_TRY(rdma_cm::disconnect(*c.id));
		return wait(c, c.disconnected) ? Result<void>(ok()) : Error(err::ETIMEDOUT);
	}

	Result<void> checks(const weft_rcm_test_params &p, const rdma_cm::SockAddr &to);
	Result<void> sidr(const rdma_cm::SockAddr &to);
	Result<void> cycles(unsigned int n, const rdma_cm::SockAddr &to);
	Result<void> concurrent(unsigned int n, const rdma_cm::SockAddr &to);
	Result<void> hold(unsigned int n, const rdma_cm::SockAddr &to);

	WaitQueue waitq_;
	selftest::CmResources res_;
	Conn *held_ = nullptr;
	unsigned int nheld_ = 0;
	bool holding_ = false;
};

Result<void> Client::checks(const weft_rcm_test_params &p, const rdma_cm::SockAddr &to)
{
	auto c = WEFT_TRY(make_own<Conn>(Gfp::Sleep));
	/* REJ from the server's owner, with its private data (in-tree: status is the reason, 28). */
	auto r = connect(*c, to, "reject me");
	weft_rcm_test.reject_status = c->status;
	weft_rcm_test.reject_pdata_ok = c->pdata_ok;
	release(*c);
	if (r || c->status != 28 || !c->pdata_ok)
		return Error(err::EPROTO);
	/* A port nobody listens on: the IB CM's REJ "invalid service ID" (8). */
	rdma_cm::SockAddr none = to;
	none.port++;
	r = connect(*c, none, "hello");
	weft_rcm_test.no_listener_status = c->status;
	release(*c);
	if (r || c->status != 8)
		return Error(err::EPROTO);
	/* Two Ids on one port of one address: the second is refused. */
	WEFT_TRY(new_id(*c));
	rdma_cm::SockAddr any;
	any.family = to.family;
	any.port = static_cast<uint16_t>(p.port + 100);
	Conn d;
	auto b1 = rdma_cm::bind(*c->id, any);
	auto b2 = new_id(d);
	Result<void> b3 = b2 ? rdma_cm::bind(*d.id, any) : b2;
	weft_rcm_test.inuse_errno = b3 ? 0 : b3.error().code();
	release(d);
	release(*c);
	if (!b1 || b3 || b3.error().code() != err::EADDRINUSE)
		return Error(err::EPROTO);
	/* Nobody answers ARP/ND for it: ADDR_ERROR within the timeout. */
	if (p.unreachable[0]) {
		rdma_cm::SockAddr u;
		WEFT_TRY(from_errno(weft_rcm_test_parse_ip(p.unreachable, &u.family, u.ip)));
		u.port = to.port;
		WEFT_TRY(new_id(*c));
		WEFT_TRY(rdma_cm::resolve_addr(*c->id, nullptr, u, 2000));
		bool resolved = wait(*c, c->addr, 60000);
		weft_rcm_test.addr_error = c->status;
		release(*c);
		if (resolved || !c->failed || c->status >= 0)
			return Error(err::EPROTO);
	}
	return ok();
}

/* IBA 12.11 through the RDMA CM: the server's UD QP found by port, with its Q_Key. */
Result<void> Client::sidr(const rdma_cm::SockAddr &to)
{
	auto c = WEFT_TRY(make_own<Conn>(Gfp::Sleep));
	auto r = new_id(*c, true);
	if (r)
		r = rdma_cm::resolve_addr(*c->id, nullptr, to, 5000);
	if (r && !wait(*c, c->addr))
		r = Error(err::EHOSTUNREACH);
	if (r)
		r = rdma_cm::resolve_route(*c->id, 5000);
	if (r && !wait(*c, c->route))
		r = Error(err::ENETUNREACH);
	if (r && !res_.dev)
		r = res_.open(*rdma_cm::info(*c->id).dev, nullptr, nullptr);
	if (r) {
		auto qp = res_.ud_qp(4);
		if (qp) {
			c->qp = qp.value();
			r = rdma_cm::attach_qp(*c->id, *c->qp);
		} else {
			r = qp.error();
		}
	}
	if (r) {
		static const char hi[] = "sidr";
		rdma_cm::ConnParam cp;
		cp.private_data = ConstBytes(reinterpret_cast<const uint8_t *>(hi), sizeof(hi));
		r = rdma_cm::connect(*c->id, cp);
	}
	if (r && !wait(*c, c->established))
		r = Error(err::ETIMEDOUT);
	weft_rcm_test.ud_qpn = c->ud_qpn;
	weft_rcm_test.ud_qkey = c->ud_qkey;
	release(*c);
	WEFT_TRY(r);
	return c->ud_qpn > 1 && c->ud_qkey == 0x01234567 ? Result<void>(ok()) : Error(err::EPROTO);
}

Result<void> Client::cycles(unsigned int n, const rdma_cm::SockAddr &to)
{
	auto c = WEFT_TRY(make_own<Conn>(Gfp::Sleep));
	for (unsigned int i = 0; i < n; i++) {
		const char *stage = "connect";
		auto r = connect(*c, to, "hello");
		if (r && (stage = "private data") && !c->pdata_ok)
			r = Error(err::EBADMSG);
		if (r && (stage = "echo"))
			r = echo(*c, 0x5ca1ab1e000ull + i);
		if (r && (stage = "completions"))
			r = reap(2);
		if (r && (stage = "echoed value") && c->rx != 0x5ca1ab1e000ull + i)
			r = Error(err::EBADMSG);
		if (r && (stage = "disconnect"))
			r = disconnect(*c);
		release(*c);
		if (!r) {
			log.err("cycle %u: %s: errno %d (event status %d)", i, stage, r.error().code(), c->status);
			return r;
		}
		weft_rcm_test.established_pdata_ok = 1;
		weft_rcm_test.cycles_done = i + 1;
	}
	return ok();
}

Result<void> Client::concurrent(unsigned int n, const rdma_cm::SockAddr &to)
{
	Array<Conn> cs = WEFT_TRY(Array<Conn>::make(Gfp::Sleep, n));
	Result<void> r = ok();
	unsigned int up = 0;
	for (; up < n && r; up++)
		r = connect(cs[up], to, "hello");
	for (unsigned int i = 0; i < up && r; i++)
		r = echo(cs[i], 0xc0c0000ull + i);
	if (r)
		r = reap(2 * int(n));
	for (unsigned int i = 0; i < up && r; i++)
		if (cs[i].rx != 0xc0c0000ull + i)
			r = Error(err::EBADMSG);
	if (r)
		weft_rcm_test.concurrent_done = n;
	for (unsigned int i = 0; i < up && r; i++)
		r = disconnect(cs[i]);
	for (unsigned int i = 0; i < up; i++)
		release(cs[i]);
	return r;
}

Result<void> Client::hold(unsigned int n, const rdma_cm::SockAddr &to)
{
	held_ = new (Gfp::Sleep) Conn[n];
	if (!held_)
		return Error(err::ENOMEM);
	nheld_ = n;
	for (unsigned int i = 0; i < n; i++) {
		WEFT_TRY(connect(held_[i], to, "hello"));
		weft_rcm_test.held = i + 1;
	}
	__atomic_store_n(&holding_, true, __ATOMIC_RELAXED);
	return ok();
}

void Client::drop_held()
{
	__atomic_store_n(&holding_, false, __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < nheld_; i++)
		release(held_[i]);
	delete[] held_;
	held_ = nullptr;
	nheld_ = 0;
	res_.close();
}

Result<void> Client::run(const weft_rcm_test_params &p)
{
	rdma_cm::SockAddr to;
	WEFT_TRY(from_errno(weft_rcm_test_parse_ip(p.dst, &to.family, to.ip)));
	to.port = static_cast<uint16_t>(p.port);
	if (p.expect_route_error) {
		auto c = WEFT_TRY(make_own<Conn>(Gfp::Sleep));
		WEFT_TRY(new_id(*c));
		WEFT_TRY(rdma_cm::resolve_addr(*c->id, nullptr, to, 5000));
		bool ok1 = wait(*c, c->addr);
		bool routed = ok1 && rdma_cm::resolve_route(*c->id, 2000) && wait(*c, c->route, 60000);
		weft_rcm_test.route_error = c->status;
		release(*c);
		return ok1 && !routed && c->status < 0 ? Result<void>(ok()) : Error(err::EPROTO);
	}
	if (p.checks)
		WEFT_TRY(checks(p, to));
	if (p.ud)
		WEFT_TRY(sidr(to));
	if (p.cycles)
		WEFT_TRY(cycles(p.cycles, to));
	if (p.concurrent)
		WEFT_TRY(concurrent(p.concurrent, to));
	if (p.hold)
		WEFT_TRY(hold(p.hold, to));
	return ok();
}

Client *client;
alignas(Client) unsigned char client_storage[sizeof(Client)];

} // namespace

int weft_rcm_test_client_run(const struct weft_rcm_test_params *p)
{
	client = new (client_storage) Client();
	uint64_t t0 = weft_ktime_ns();
	auto r = client->run(*p);
	log.info("RCM-RESULT %s: reject %d (pdata %u), no listener %d, in use %d, addr error %d, route error %d, "
		 "SIDR QPN 0x%x Q_Key 0x%x, %u cycles, %u concurrent, %u held, %llu ms",
		 r ? "ok" : "FAILED", weft_rcm_test.reject_status, weft_rcm_test.reject_pdata_ok,
		 weft_rcm_test.no_listener_status, weft_rcm_test.inuse_errno, weft_rcm_test.addr_error,
		 weft_rcm_test.route_error, weft_rcm_test.ud_qpn, weft_rcm_test.ud_qkey, weft_rcm_test.cycles_done, weft_rcm_test.concurrent_done,
		 weft_rcm_test.held, static_cast<unsigned long long>((weft_ktime_ns() - t0) / 1000000));
	if (!r) {
		client->drop_held();
		client->~Client();
		return r.to_errno();
	}
	return 0;
}

void weft_rcm_test_client_stop(void)
{
	client->drop_held();
	client->~Client();
}
