// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: a CM client, as a kernel ULP would write one, run at load
 * against weft_selftest_cm_server.  The path to the destination device's
 * port GID comes from the SA (OpenSM's).  Depending on its parameters:
 *   reject_check  connect to a service nobody listens on: REJ and its reason;
 *   pdata         a REQ to the service with this private data (hex), which the
 *                 listener must reject: the reason, and bytes 4-7 of the REJ's
 *                 private data (an SRP_LOGIN_REJ's reason, SRP 5.2.3);
 *   login, ius    a REQ to the service with the private data @login, which the
 *                 listener must accept (an SRP login), then each IU of @ius
 *                 (hex, comma-separated) sent on the connection, each followed
 *                 by @probe, a request that must be answered: what answered
 *                 each IU (iu_replies: SRP_RSP status and response code, or
 *                 "-" for nothing) and its probe;
 *   unreach_lid   connect to a LID nobody has: Unreachable, and how long it took;
 *   cycles        connect, echo one message, disconnect, that many times;
 *   concurrent    that many connections up at once, each echoing one message;
 *   hold          that many connections kept up until unload, counting the
 *                 disconnects their peer makes meanwhile.
 * The load fails if anything did not happen as it should.
 *
 * It is a verbs client: add() records its device and the destination's,
 * the run at load uses them, and remove() of either releases what the
 * client holds there.  remove() runs before the CM's (the registry removes
 * the newest client first; in-tree, ib_cm's ULPs rely on the same order)
 * and is two-phase: stop new work (a run in progress sees stop_ in every
 * wait and fails), wait for the run to end (run_lock_), then each held
 * connection: its CM Id first (a DREQ to the peer while the port can still
 * send, the QP to Error, no handler call after), then its QP, which must
 * outlive the Id (cm.md); then the context.  Held connections released so
 * count as lost (module parameter "lost").
 *
 * When the device comes back, the client does not reconnect: its held
 * connections were a one-shot job of the load, like an SRP initiator's
 * target logins, which an administrator (or a test) makes again by
 * reloading the module against the server, which listens again by then.
 * It logs the return and would serve a new run.
 */
#include <weft/cm/cm.h>
#include <weft/log.h>
#include <weft/mad/sa.h>
#include <weft/wait.h>

#include "../../ulp/srp/srp_wire.h"
#include "cm_selftest.h"

using namespace weft;

namespace {

const Logger log("weft_selftest_cm_client");

struct Conn {
	cm::Id *id = nullptr;
	verbs::Qp *qp = nullptr;
	uint64_t tx = 0, rx = 0;
	int established = 0, disconnected = 0, failed = 0; /* set by the handler */
	uint16_t reason = 0;
	uint32_t rej_word = 0;
};

class Client final : public cm::Handler, public verbs::Client {
public:
	explicit Client(const weft_cm_client_params &p) :
		verbs::Client("weft_selftest_cm_client"), dev_name_(p.dev), dest_name_(p.dest),
		waitq_(WEFT_LOCK_CLASS("weft_cm_client")), devs_lock_(WEFT_LOCK_CLASS("weft_cm_client_devs")),
		run_lock_(WEFT_LOCK_CLASS("weft_cm_client_run"))
	{
	}

	Result<void> add(verbs::Device &dev) override
	{
		bool ours = !__builtin_strcmp(dev.name(), dev_name_);
		bool dest = !__builtin_strcmp(dev.name(), dest_name_);
		MutexGuard g(devs_lock_);
		if (ours && !dev_) {
			dev_ = Ref<verbs::Device>::share(&dev);
			if (lost_before_)
				log.info("%s is back; the connections lost with it are not made again "
					 "(reload to connect)", dev.name());
		}
		if (dest && !dest_)
			dest_ = Ref<verbs::Device>::share(&dev);
		return ok();
	}

	void remove(verbs::Device &dev) override
	{
		{
			MutexGuard g(devs_lock_);
			if (&dev != dev_.get() && &dev != dest_.get())
				return;
		}
		/* 1. No new work: a run in progress fails at its next wait. */
		__atomic_store_n(&stop_, true, __ATOMIC_RELEASE);
		waitq_.wake_all();
		/* 2. Wait for the run; then release what is held on @dev. */
		MutexGuard run(run_lock_);
		if (&dev == res_.dev.get()) {
			unsigned int lost = nheld_;
			drop_held();
			res_.close();
			if (!__atomic_load_n(&unloading, __ATOMIC_RELAXED)) {
				__atomic_fetch_add(&weft_cm_client_lost, lost, __ATOMIC_RELAXED);
				lost_before_ = true;
				log.info("%s removed: %u held connection%s lost", dev.name(), lost,
					 lost == 1 ? "" : "s");
			}
		}
		{
			MutexGuard g(devs_lock_);
			if (&dev == dev_.get())
				dev_.reset();
			if (&dev == dest_.get())
				dest_.reset();
		}
		__atomic_store_n(&stop_, false, __ATOMIC_RELEASE);
	}

	int event(const cm::Event &e) override
	{
		auto *c = static_cast<Conn *>(cm::context(*e.id));
		switch (e.type) {
		case cm::EventType::Established: set(c->established); break;
		case cm::EventType::Disconnected:
			set(c->disconnected);
			if (__atomic_load_n(&holding_, __ATOMIC_RELAXED))
				__atomic_fetch_add(&weft_cm_client_peer_disconnects, 1, __ATOMIC_RELAXED);
			break;
		case cm::EventType::Rejected:
			c->reason = e.reason;
			if (e.private_data.size() >= 8) {
				be32 w;
				__builtin_memcpy(&w, e.private_data.data() + 4, 4);
				c->rej_word = w.get();
			}
			set(c->failed);
			break;
		case cm::EventType::Unreachable: set(c->failed); break;
		default: break;
		}
		waitq_.wake_all();
		return 0;
	}

	/* The whole run at load, under run_lock_, which remove() waits for. */
	Result<void> run(const weft_cm_client_params &p);

	bool unloading = false; /* set before unregister_client(): removals then are not losses */

	Result<void> open(const weft_cm_client_params &p)
	{
		Ref<verbs::Device> dev, dest;
		{
			MutexGuard g(devs_lock_);
			dev = Ref<verbs::Device>::share(dev_.get());
			dest = Ref<verbs::Device>::share(dest_.get());
		}
		if (!dev || !dest)
			return Error(err::ENODEV);
		WEFT_TRY(res_.open(*dev, nullptr, nullptr));
		auto dgid = WEFT_TRY(dest->query_gid(1, 0));
		path_ = WEFT_TRY(mad::sa::resolve_path(*res_.dev, 1, dgid, 0xffff));
		service_ = p.service;
		return ok();
	}

	/* Set up @c (QP and Id) and send the REQ. */
	Result<void> start(Conn &c, const iba::PathRecord &path, uint64_t service, uint8_t retries = 15,
			   ConstBytes pdata = ConstBytes(), uint32_t depth = 2)
	{
		c = Conn();
		c.qp = WEFT_TRY(res_.rc_qp(depth));
		c.id = WEFT_TRY(cm::create_id(*res_.dev, *this, &c));
		cm::ConnectParam cp;
		cp.qp = c.qp;
		cp.path = path;
		cp.service_id = service;
		cp.max_cm_retries = retries;
		cp.private_data = pdata;
		return cm::connect(*c.id, cp);
	}

	void release(Conn &c)
	{
		if (c.id)
			cm::destroy(c.id);
		if (c.qp)
			(void)res_.ctx->destroy_qp(c.qp);
		c.id = nullptr;
		c.qp = nullptr;
	}

	/* False on timeout, or when remove() wants the run to end. */
	bool wait(const int &flag, long ms = 15000)
	{
		auto set = [&] { return __atomic_load_n(&flag, __ATOMIC_ACQUIRE) != 0; };
		(void)waitq_.wait([&] { return set() || stopping(); }, Timeout::msecs(ms));
		return set() && !stopping();
	}

	bool stopping() const { return __atomic_load_n(&stop_, __ATOMIC_ACQUIRE); }

	/* One message there and back over an established connection. */
	Result<void> echo(Conn &c, uint64_t value)
	{
		c.tx = value;
		c.rx = 0;
		WEFT_TRY(res_.recv(*c.qp, &c.rx, 1));
		WEFT_TRY(res_.send(*c.qp, &c.tx, 2));
		return ok();
	}

	/* Wait for @n completions, all successful. */
	Result<void> reap(int n)
	{
		verbs::Wc wc;
		for (int i = 0; i < n;) {
			if (res_.cq->poll(Span<verbs::Wc>(&wc, 1)) == 1) {
				if (wc.status != verbs::WcStatus::Success) {
					log.err("completion of QP %06x: status %u", wc.qp_num, unsigned(wc.status));
					return Error(err::EIO);
				}
				i++;
				continue;
			}
			if (stopping())
				return Error(err::ENODEV);
			if (++spins_ > 15000)
				return Error(err::ETIMEDOUT);
			weft_msleep(1);
		}
		spins_ = 0;
		return ok();
	}

	Result<void> reject_check();
	Result<void> pdata_check(const char *hex);
	Result<void> iu_check(const weft_cm_client_params &p);
	Result<void> iu_exchange(Conn &c, ConstBytes iu, ConstBytes probe, char *token, size_t room);
	Result<void> next_wc(verbs::Wc &wc);
	Result<void> unreach_check(uint16_t lid);
	Result<void> cycles(unsigned int n);
	Result<void> concurrent(unsigned int n);
	Result<void> hold(unsigned int n);
	void drop_held();

private:
	static void set(int &f) { __atomic_store_n(&f, 1, __ATOMIC_RELEASE); }

	const char *const dev_name_, *const dest_name_;
	WaitQueue waitq_;
	Mutex devs_lock_;
	Ref<verbs::Device> dev_, dest_; /* under devs_lock_: present, from add() to remove() */
	bool stop_ = false;		/* remove() is waiting for the run (atomic) */
	bool lost_before_ = false;	/* under the registry's lock (add, remove) */
	/* The run, and what it leaves held, under run_lock_. */
	Mutex run_lock_;
	selftest::CmResources res_;
	iba::PathRecord path_{};
	uint64_t service_ = 0;
	Conn *held_ = nullptr;
	unsigned int nheld_ = 0;
	bool holding_ = false; /* atomic: the handler reads it */
	int spins_ = 0;
};

Result<void> Client::reject_check()
{
	auto c = WEFT_TRY(make_own<Conn>(Gfp::Sleep));
	uint64_t t0 = weft_ktime_ns();
	auto r = start(*c, path_, service_ + 1);
	bool got = r && wait(c->failed, 10000);
	weft_cm_client_reject_ms = static_cast<unsigned int>((weft_ktime_ns() - t0) / 1000000);
	weft_cm_client_reject_reason = c->reason;
	release(*c);
	WEFT_TRY(r);
	return got && c->reason == iba::cm::rej::invalid_service_id ? Result<void>(ok()) : Error(err::EPROTO);
}

/* Hex digits up to @end (or the string's end) into @out; the bytes, or EINVAL. */
Result<size_t> unhex(const char *hex, const char *end, uint8_t *out, size_t cap)
{
	size_t n = 0;
	for (; hex != end && hex[0] && hex[1] && hex + 1 != end; hex += 2) {
		auto nib = [](char h) -> int {
			return h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : -1;
		};
		int hi = nib(hex[0]), lo = nib(hex[1]);
		if (hi < 0 || lo < 0 || n == cap)
			return Error(err::EINVAL);
		out[n++] = static_cast<uint8_t>(hi << 4 | lo);
	}
	if (hex != end && *hex)
		return Error(err::EINVAL);
	return n;
}

/* IBA 12.7.2: up to 92 bytes of REQ private data, given as hex digits. */
Result<void> Client::pdata_check(const char *hex)
{
	uint8_t pd[92];
	const size_t n = WEFT_TRY(unhex(hex, nullptr, pd, sizeof(pd)));
	auto c = WEFT_TRY(make_own<Conn>(Gfp::Sleep));
	auto r = start(*c, path_, service_, 15, ConstBytes(pd, n));
	bool rejected = r && wait(c->failed, 10000) && c->reason;
	weft_cm_client_reject_reason = c->reason;
	weft_cm_client_reject_word = c->rej_word;
	release(*c);
	WEFT_TRY(r);
	return rejected ? Result<void>(ok()) : Error(err::EPROTO);
}

/* The next completion on the client's CQ, successful, within 15 s. */
Result<void> Client::next_wc(verbs::Wc &wc)
{
	for (int spins = 0; res_.cq->poll(Span<verbs::Wc>(&wc, 1)) != 1; spins++) {
		if (stopping())
			return Error(err::ENODEV);
		if (spins > 15000)
			return Error(err::ETIMEDOUT);
		weft_msleep(1);
	}
	if (wc.status != verbs::WcStatus::Success) {
		log.err("completion of QP %06x: status %u", wc.qp_num, unsigned(wc.status));
		return Error(err::EIO);
	}
	return ok();
}

namespace iu {
constexpr uint32_t nrecv = 8, rsp_room = 256;
constexpr uint64_t send_id = 1ull << 32;
} // namespace iu

/*
 * Send @m then @probe on @c and collect the answers until the probe's
 * (its tag): an SRP target answers requests in the order it received them
 * or not at all, so whatever answered @m came before.  @token gets
 * "<status>.<response code>" of @m's SRP_RSP ("--" without response data)
 * or "-", then "/<status>" of the probe's.
 */
Result<void> Client::iu_exchange(Conn &c, ConstBytes m, ConstBytes probe, char *token, size_t room)
{
	const ConstBytes both[2] = {m, probe};
	for (ConstBytes b : both) {
		verbs::Sge sg{reinterpret_cast<uint64_t>(b.data()), static_cast<uint32_t>(b.size()), res_.mr->lkey};
		verbs::SendWr w;
		w.wr_id = iu::send_id;
		w.sg = Span<const verbs::Sge>(&sg, 1);
		WEFT_TRY(c.qp->post_send(w));
	}
	token[0] = '-';
	token[1] = 0;
	for (;;) {
		verbs::Wc wc;
		WEFT_TRY(next_wc(wc));
		if (wc.wr_id == iu::send_id)
			continue;
		const uint8_t *r = reinterpret_cast<const uint8_t *>(wc.wr_id);
		if (wc.byte_len < sizeof(srp::wire::Rsp) || r[0] != srp::wire::op::rsp)
			return Error(err::EBADMSG);
		srp::wire::Rsp rsp;
		__builtin_memcpy(&rsp, r, sizeof(rsp));
		const bool has_code = (rsp.flags & srp::wire::rsp_flag::rspvalid) &&
				      wc.byte_len >= sizeof(rsp) + 4 && rsp.resp_data_len.get() >= 4;
		const bool is_probe = !__builtin_memcmp(rsp.tag, probe.data() + 8, 8);
		const size_t used = __builtin_strlen(token);
		if (is_probe)
			format(token + used, room - used, "/%02x", rsp.status);
		else if (has_code)
			format(token, room, "%02x.%02x", rsp.status, r[sizeof(rsp) + 3]);
		else
			format(token, room, "%02x.--", rsp.status);
		verbs::Sge sg{wc.wr_id, iu::rsp_room, res_.mr->lkey};
		verbs::RecvWr rw;
		rw.wr_id = wc.wr_id;
		rw.sg = Span<const verbs::Sge>(&sg, 1);
		WEFT_TRY(c.qp->post_recv(rw));
		if (is_probe)
			return ok();
	}
}

/* A login that must be accepted, then raw IUs on its connection (iu_exchange()). */
Result<void> Client::iu_check(const weft_cm_client_params &p)
{
	uint8_t pd[92];
	const size_t npd = WEFT_TRY(unhex(p.login, nullptr, pd, sizeof(pd)));
	auto buf = WEFT_TRY(Array<uint8_t>::make(Gfp::Sleep, iu::nrecv * iu::rsp_room + 2 * 1024));
	uint8_t *m = &buf[iu::nrecv * iu::rsp_room], *probe = m + 1024;
	const size_t nprobe = WEFT_TRY(unhex(p.probe ? p.probe : "", nullptr, probe, 1024));
	if (nprobe < 16)
		return Error(err::EINVAL);
	auto c = WEFT_TRY(make_own<Conn>(Gfp::Sleep));
	auto r = start(*c, path_, service_, 15, ConstBytes(pd, npd), 2 * iu::nrecv + 4);
	if (r && !wait(c->established))
		r = Error(c->failed ? err::ECONNREFUSED : err::ETIMEDOUT);
	for (uint32_t i = 0; i < iu::nrecv && r; i++) {
		verbs::Sge sg{reinterpret_cast<uint64_t>(&buf[i * iu::rsp_room]), iu::rsp_room, res_.mr->lkey};
		verbs::RecvWr rw;
		rw.wr_id = sg.addr;
		rw.sg = Span<const verbs::Sge>(&sg, 1);
		r = c->qp->post_recv(rw);
	}
	char *out = weft_cm_client_iu_replies;
	const size_t cap = sizeof(weft_cm_client_iu_replies);
	out[0] = 0;
	for (const char *s = p.ius; r && s && *s;) {
		const char *end = __builtin_strchr(s, ',');
		auto n = unhex(s, end, m, 1024);
		if (!n) {
			r = Error(n.error());
			break;
		}
		char token[16];
		r = iu_exchange(*c, ConstBytes(m, n.value()), ConstBytes(probe, nprobe), token, sizeof(token));
		const size_t used = __builtin_strlen(out);
		format(out + used, cap - used, "%s%s", used ? " " : "", r ? token : "error");
		s = end ? end + 1 : nullptr;
	}
	if (r)
		r = cm::disconnect(*c->id);
	if (r && !wait(c->disconnected))
		r = Error(err::ETIMEDOUT);
	release(*c);
	return r;
}

Result<void> Client::unreach_check(uint16_t lid)
{
	auto c = WEFT_TRY(make_own<Conn>(Gfp::Sleep));
	iba::PathRecord p = path_;
	p.dlid.set(lid);
	uint64_t t0 = weft_ktime_ns();
	auto r = start(*c, p, service_, 2);
	bool got = r && wait(c->failed, 60000);
	weft_cm_client_unreach_ms = static_cast<unsigned int>((weft_ktime_ns() - t0) / 1000000);
	bool right = got && !c->established && c->reason == 0;
	release(*c);
	WEFT_TRY(r);
	return right ? Result<void>(ok()) : Error(err::EPROTO);
}

Result<void> Client::cycles(unsigned int n)
{
	auto c = WEFT_TRY(make_own<Conn>(Gfp::Sleep));
	for (unsigned int i = 0; i < n; i++) {
		const char *stage = "connect";
		auto r = start(*c, path_, service_);
		if (r && !wait(c->established))
			r = Error(c->failed ? err::ECONNREFUSED : err::ETIMEDOUT);
		if (r && (stage = "echo"))
			r = echo(*c, 0xc1c1e000ull + i);
		if (r && (stage = "completions"))
			r = reap(2);
		if (r && (stage = "echoed value") && c->rx != 0xc1c1e000ull + i)
			r = Error(err::EBADMSG);
		if (r && (stage = "disconnect"))
			r = cm::disconnect(*c->id);
		if (r && !wait(c->disconnected))
			r = Error(err::ETIMEDOUT);
		release(*c);
		if (!r) {
			log.err("cycle %u: %s: errno %d", i, stage, r.error().code());
			return r;
		}
		weft_cm_client_cycles_done = i + 1;
	}
	return ok();
}

Result<void> Client::concurrent(unsigned int n)
{
	Array<Conn> cs = WEFT_TRY(Array<Conn>::make(Gfp::Sleep, n));
	Result<void> r = ok();
	unsigned int started = 0;
	for (; started < n && r; started++)
		r = start(cs[started], path_, service_);
	for (unsigned int i = 0; i < started && r; i++)
		if (!wait(cs[i].established))
			r = Error(err::ETIMEDOUT);
	for (unsigned int i = 0; i < started && r; i++)
		r = echo(cs[i], 0xc0c0000ull + i);
	if (r)
		r = reap(2 * int(n));
	for (unsigned int i = 0; i < started && r; i++)
		if (cs[i].rx != 0xc0c0000ull + i)
			r = Error(err::EBADMSG);
	if (r)
		weft_cm_client_concurrent_done = n;
	for (unsigned int i = 0; i < started && r; i++)
		r = cm::disconnect(*cs[i].id);
	for (unsigned int i = 0; i < started && r; i++)
		if (!wait(cs[i].disconnected))
			r = Error(err::ETIMEDOUT);
	for (unsigned int i = 0; i < started; i++)
		release(cs[i]);
	return r;
}

Result<void> Client::hold(unsigned int n)
{
	held_ = new (Gfp::Sleep) Conn[n];
	if (!held_)
		return Error(err::ENOMEM);
	nheld_ = n;
	for (unsigned int i = 0; i < n; i++) {
		WEFT_TRY(start(held_[i], path_, service_));
		if (!wait(held_[i].established))
			return Error(err::ETIMEDOUT);
		weft_cm_client_held = i + 1;
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
}

Client *client;
alignas(Client) unsigned char client_storage[sizeof(Client)];

Result<void> Client::run(const weft_cm_client_params &p)
{
	MutexGuard g(run_lock_);
	WEFT_TRY(open(p));
	if (p.reject_check)
		WEFT_TRY(reject_check());
	if (p.pdata)
		WEFT_TRY(pdata_check(p.pdata));
	if (p.login)
		WEFT_TRY(iu_check(p));
	if (p.unreach_lid)
		WEFT_TRY(unreach_check(static_cast<uint16_t>(p.unreach_lid)));
	if (p.cycles)
		WEFT_TRY(cycles(p.cycles));
	if (p.concurrent)
		WEFT_TRY(concurrent(p.concurrent));
	if (p.hold)
		WEFT_TRY(hold(p.hold));
	return ok();
}

} // namespace

int weft_selftest_cm_client_run(const struct weft_cm_client_params *p)
{
	client = new (client_storage) Client(*p);
	uint64_t t0 = weft_ktime_ns();
	auto r = verbs::register_client(*client);
	if (r)
		r = client->run(*p);
	log.info("CM-RESULT %s: reject reason %u in %u ms, unreachable in %u ms, %u cycles, %u concurrent, "
		 "%u held, %llu ms",
		 r ? "ok" : "FAILED", weft_cm_client_reject_reason, weft_cm_client_reject_ms,
		 weft_cm_client_unreach_ms, weft_cm_client_cycles_done, weft_cm_client_concurrent_done,
		 weft_cm_client_held, static_cast<unsigned long long>((weft_ktime_ns() - t0) / 1000000));
	if (!r) {
		weft_selftest_cm_client_stop();
		return r.to_errno();
	}
	return 0;
}

/* Unload: what is held is released by remove(), for each device, as on removal but not counted. */
void weft_selftest_cm_client_stop(void)
{
	__atomic_store_n(&client->unloading, true, __ATOMIC_RELAXED);
	verbs::unregister_client(*client);
	client->~Client();
}
