// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: a CM client, as a kernel ULP would write one, run at load
 * against weft_selftest_cm_server.  The path to the destination device's
 * port GID comes from the SA (OpenSM's).  Depending on its parameters:
 *   reject_check  connect to a service nobody listens on: REJ and its reason;
 *   pdata         a REQ to the service with this private data (hex), which the
 *                 listener must reject: the reason, and bytes 4-7 of the REJ's
 *                 private data (an SRP_LOGIN_REJ's reason, SRP 5.2.3);
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
			   ConstBytes pdata = ConstBytes())
	{
		c = Conn();
		c.qp = WEFT_TRY(res_.rc_qp(2));
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

/* IBA 12.7.2: up to 92 bytes of REQ private data, given as hex digits. */
Result<void> Client::pdata_check(const char *hex)
{
	uint8_t pd[92];
	size_t n = 0;
	for (; hex[0] && hex[1]; hex += 2) {
		auto nib = [](char h) -> int {
			return h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : -1;
		};
		int hi = nib(hex[0]), lo = nib(hex[1]);
		if (hi < 0 || lo < 0 || n == sizeof(pd))
			return Error(err::EINVAL);
		pd[n++] = static_cast<uint8_t>(hi << 4 | lo);
	}
	if (*hex)
		return Error(err::EINVAL);
	auto c = WEFT_TRY(make_own<Conn>(Gfp::Sleep));
	auto r = start(*c, path_, service_, 15, ConstBytes(pd, n));
	bool rejected = r && wait(c->failed, 10000) && c->reason;
	weft_cm_client_reject_reason = c->reason;
	weft_cm_client_reject_word = c->rej_word;
	release(*c);
	WEFT_TRY(r);
	return rejected ? Result<void>(ok()) : Error(err::EPROTO);
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
