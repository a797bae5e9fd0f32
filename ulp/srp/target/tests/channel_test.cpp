// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: a target channel's teardown against its own login and its QP's
 * events (srpt.h, Lifetimes).  A test initiator on weft1 logs in to the
 * target on weft0 with a plain CM Id and SRP_LOGIN_REQ private data;
 * the target's test hooks hold the windows open:
 *  - a shutdown while login() runs (what LIO's close_session or TPG
 *    disable, or a SINGLE CHANNEL login of the same nexus, does) must not
 *    start the release, which frees what the login still uses, before
 *    the login returns;
 *  - a CommEst the HCA raised earlier, delivered to the channel's QP
 *    event handler after release() destroyed the CM Id and before the QP
 *    goes, must not reach cm::established() for the destroyed Id.
 * The second needs a login LIO accepts: an enabled target port for
 * weft0 with an ACL for the test's initiator port, made in configfs.
 */
#include <weft/atomic.h>
#include <weft/cm/cm.h>
#include <weft/log.h>
#include <weft/test.h>
#include <weft/verbs/test_pair.h>
#include <weft/wait.h>

#include "../srpt.h"
#include "lio_config.h"

using namespace weft;
using namespace weft::srp::wire;
using weft::srpt::test_hooks;
using weft::test::Test;
using weft::verbs::testing::Side;

namespace {

/* The test's initiator port identifier (SRP 5.2.1: any 128 bits), and its ACL name. */
constexpr uint8_t i_port[16] = {0x57, 0x46, 0x54, 0x00, 0x00, 0x00, 0x00, 0x01,
				0x57, 0x46, 0x54, 0x00, 0x00, 0x00, 0x00, 0x02};
constexpr const char *acl = "0x57465400000000015746540000000002";

/* The initiator's CM Id: counts what it hears. */
struct Peer final : cm::Handler {
	Atomic<int> counts[16] = {};
	int event(const cm::Event &e) override
	{
		counts[int(e.type)].fetch_add(1, Order::Release);
		return 0;
	}
	/* Handlers run from work items: wait for the event, generously. */
	bool wait(cm::EventType type) const
	{
		for (int i = 0; i < 30000 && !counts[int(type)].load(Order::Acquire); i++)
			weft_msleep(1);
		return counts[int(type)].load(Order::Acquire) > 0;
	}
};

/* weft1 -> weft0 port 1 as an SA would answer (IBA 15.2.5.16). */
iba::PathRecord path(Side &a, verbs::Device &b)
{
	iba::PathRecord pr{};
	verbs::PortAttr pa;
	(void)b.query_port(1, pa);
	auto sg = a.dev->query_gid(1, 0), dg = b.query_gid(1, 0);
	if (sg)
		__builtin_memcpy(pr.sgid, sg.value().raw, 16);
	if (dg)
		__builtin_memcpy(pr.dgid, dg.value().raw, 16);
	pr.slid.set(a.lid);
	pr.dlid.set(pa.lid);
	pr.pkey.set(0xffff);
	iba::PathRecord::Value::set(pr.mtu, static_cast<uint8_t>(iba::Mtu::M2048));
	iba::PathRecord::Value::set(pr.pkt_life, 2);
	return pr;
}

/* SRP 5.2.1: a SINGLE CHANNEL login to the target port of @b (ID_EXT = IOC GUID = node GUID). */
LoginReq login_req(verbs::Device &b)
{
	LoginReq r{};
	r.opcode = op::login_req;
	r.tag[7] = 1;
	r.req_it_iu_len.set(256);
	r.req_buf_fmt.set(buf_fmt::direct | buf_fmt::indirect);
	r.req_flags = multichan::single;
	be64 id[2];
	id[0].set(b.attr().node_guid);
	id[1].set(b.attr().node_guid);
	__builtin_memcpy(r.target_port_id, id, 16);
	__builtin_memcpy(r.initiator_port_id, i_port, 16);
	return r;
}

/* weft0's port 1 as an enabled LIO target port with the test's ACL, removed when destroyed. */
struct LioPort {
	char wwn[40] = {};
	bool made = false;

	Result<void> make(verbs::Device &b)
	{
		const verbs::Gid gid = WEFT_TRY(b.query_gid(1, 0));
		format(wwn, sizeof(wwn), "0x%016llx%016llx",
		       static_cast<unsigned long long>(gid.subnet_prefix()),
		       static_cast<unsigned long long>(gid.interface_id()));
		char cmd[512];
		format(cmd, sizeof(cmd),
		       "c=/sys/kernel/config; grep -q \" $c configfs\" /proc/mounts || "
		       "mount -t configfs none $c || exit 1; t=$c/target/srpt/%s/tpgt_1; "
		       "mkdir -p $t/acls/%s && echo 1 >$t/enable",
		       wwn, acl);
		made = true;
		return weft_srpt_test_sh(cmd) ? Error(err::EIO) : Result<void>(ok());
	}
	/* Disabling waits for the port's sessions to end; the fabric's directory holds weft_srpt. */
	~LioPort()
	{
		if (!made)
			return;
		char cmd[512];
		format(cmd, sizeof(cmd),
		       "c=/sys/kernel/config/target/srpt; t=$c/%s/tpgt_1; echo 0 >$t/enable; "
		       "rmdir $t/acls/%s $t $c/%s $c",
		       wwn, acl, wwn);
		(void)weft_srpt_test_sh(cmd);
	}
};

/* The initiator's side of a login: its QP on weft1, its CM Id, destroyed however the test ends. */
struct Initiator {
	Peer peer;
	Side side;
	cm::Id *id = nullptr;
	~Initiator() { cm::destroy(id); }

	Result<void> login(verbs::Device &b)
	{
		WEFT_TRY(side.open("weft1", verbs::QpType::Rc, verbs::access::local_write));
		id = WEFT_TRY(cm::create_id(*side.dev, peer, nullptr));
		const LoginReq req = login_req(b);
		cm::ConnectParam p;
		p.qp = side.qp;
		p.path = path(side, b);
		p.service_id = b.attr().node_guid;
		p.private_data = ConstBytes(reinterpret_cast<const uint8_t *>(&req), sizeof(req));
		/* Time-wait of seconds (IBA 12.9.8.1): a destroyed Id stays allocated meanwhile. */
		p.ack_timeout = 20;
		/* 4 s for the REP (IBA 12.7.27): no REQ resent while a hook holds the login. */
		p.remote_cm_response_timeout = 20;
		return cm::connect(*id, p);
	}
};

/* What the hooks saw. */
struct Window {
	Completion released;
	Completion id_gone;
	Atomic<srpt::Channel *> in_login{nullptr}; /* the channel the hook holds in login() */
	Atomic<int> logins{0}, releases{0}, released_in_login{0}, comm_est_calls{0};
	Atomic<int> running{0}; /* hook calls not returned yet: the Window outlives them */
	void settle() const
	{
		while (running.load(Order::Acquire))
			weft_msleep(10);
	}
	uint64_t comm_est_before = 0, comm_est_after = 0;
};

/* LIO, or another login of the nexus, shuts the channel down in the middle of its login. */
void shutdown_in_login(srpt::Channel &ch, void *arg)
{
	auto *w = static_cast<Window *>(arg);
	w->running.fetch_add(1, Order::AcqRel);
	if (w->logins.fetch_add(1, Order::AcqRel) == 0) {
		w->in_login.store(&ch, Order::Release);
		ch.shutdown();
		/* Long enough for a queued release to run, and the reaper to free the channel. */
		weft_msleep(500);
		w->in_login.store(nullptr, Order::Release);
	}
	w->running.fetch_sub(1, Order::AcqRel);
}

void release_started(srpt::Channel &ch, void *arg)
{
	auto *w = static_cast<Window *>(arg);
	w->running.fetch_add(1, Order::AcqRel);
	if (w->in_login.load(Order::Acquire) == &ch)
		w->released_in_login.fetch_add(1, Order::Relaxed);
	if (w->releases.fetch_add(1, Order::AcqRel) == 0)
		w->released.complete();
	w->running.fetch_sub(1, Order::AcqRel);
}

/* As the HCA's engine delivers a CommEst it raised before the Id went. */
void late_comm_est(verbs::EventHandler &events, verbs::Qp &qp, void *arg)
{
	auto *w = static_cast<Window *>(arg);
	w->running.fetch_add(1, Order::AcqRel);
	w->comm_est_before = cm::stats().comm_est;
	events.handle(verbs::Event{verbs::EventType::CommEst, &qp.dev, qp.port(), &qp});
	w->comm_est_after = cm::stats().comm_est;
	w->comm_est_calls.fetch_add(1, Order::Relaxed);
	w->id_gone.complete();
	w->running.fetch_sub(1, Order::AcqRel);
}

struct HookGuard {
	explicit HookGuard(Window &w) { test_hooks.arg.store(&w, Order::Release); }
	~HookGuard()
	{
		test_hooks.login_started.store(nullptr, Order::Release);
		test_hooks.release_started.store(nullptr, Order::Release);
		test_hooks.id_destroyed.store(nullptr, Order::Release);
	}
};

void shutdown_during_login_waits(Test &t)
{
	Ref<verbs::Device> b = verbs::find_device("weft0");
	WEFT_ASSERT_TRUE(t, b);
	auto win = make_own<Window>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, win);
	Window &w = *win.value();
	auto ini = make_own<Initiator>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, ini);
	{
		HookGuard hooks(w);
		test_hooks.login_started.store(&shutdown_in_login, Order::Release);
		test_hooks.release_started.store(&release_started, Order::Release);
		/* No LIO target port: the login, shut down or not, ends in an SRP_LOGIN_REJ. */
		WEFT_ASSERT_OK(t, ini.value()->login(*b));
		WEFT_EXPECT_TRUE(t, ini.value()->peer.wait(cm::EventType::Rejected));
		WEFT_ASSERT_OK(t, w.released.wait(Timeout::msecs(30000)));
		/* The hooks are unset when this block ends; calls already in them finish first. */
		for (int i = 0; i < 100 && w.in_login.load(Order::Acquire); i++)
			weft_msleep(10);
	}
	w.settle();
	WEFT_EXPECT_EQ(t, w.logins.load(Order::Relaxed), 1);
	WEFT_EXPECT_EQ(t, w.releases.load(Order::Relaxed), 1);
	/* Released once the login returned, not while it ran. */
	WEFT_EXPECT_EQ(t, w.released_in_login.load(Order::Relaxed), 0);
}

void comm_est_after_id_destroyed(Test &t)
{
	Ref<verbs::Device> b = verbs::find_device("weft0");
	WEFT_ASSERT_TRUE(t, b);
	LioPort lio;
	WEFT_ASSERT_OK(t, lio.make(*b));
	auto win = make_own<Window>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, win);
	Window &w = *win.value();
	auto ini = make_own<Initiator>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, ini);
	Initiator &i = *ini.value();
	WEFT_ASSERT_OK(t, i.login(*b));
	WEFT_ASSERT_TRUE(t, i.peer.wait(cm::EventType::Established));
	{
		HookGuard hooks(w);
		test_hooks.id_destroyed.store(&late_comm_est, Order::Release);
		/* The initiator's DREQ: the target's channel is released. */
		WEFT_ASSERT_OK(t, cm::disconnect(*i.id));
		WEFT_EXPECT_TRUE(t, i.peer.wait(cm::EventType::Disconnected));
		WEFT_ASSERT_OK(t, w.id_gone.wait(Timeout::msecs(30000)));
	}
	w.settle();
	WEFT_EXPECT_EQ(t, w.comm_est_calls.load(Order::Relaxed), 1);
	/* No cm::established() for the destroyed Id. */
	WEFT_EXPECT_EQ(t, w.comm_est_after, w.comm_est_before);
}

} // namespace

WEFT_TEST_SUITE(weft_srpt_channel, WEFT_CASE(shutdown_during_login_waits),
		WEFT_CASE(comm_est_after_id_destroyed));
