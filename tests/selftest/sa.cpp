// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: the kernel SA client (include/weft/mad/sa.h) against a real
 * SA (OpenSM's), from weft0 port 1 at load: the path to weft1, resolved
 * twice (the second from the cache), and a join and leave of the IPoIB
 * IPv4 broadcast group of the default partition (RFC 4391 MGID
 * ff12:401b:ffff::ffff:ffff).  Prints one SA-RESULT line; the load fails
 * on any error.
 *
 * Or, with hold=<device> group=<IPv4 multicast address as a number>: a
 * full membership of that address's IPoIB group in the default partition
 * (RFC 4391 §4: ff12:401b:ffff::, then its low 28 bits) on the device's
 * port 1, held until unload, as another consumer of the port (IPoIB's
 * umcast, tests/integration/ipoib_umcast.sh).  The group must exist.
 *
 * Or, with watch=<device>: a GID watcher (mad::sa::watch_gids) until
 * unload, counting the GID in/out of service events of the device's port
 * 1 in its parameters gid_in and gid_out and printing each (SA-WATCH), as
 * a kernel consumer of the SA client's subscriptions
 * (tests/integration/sa_inform.sh).
 */
#include <weft/log.h>
#include <weft/mad/sa.h>

using namespace weft;

extern "C" int weft_selftest_sa_run(void);
extern "C" int weft_selftest_sa_hold(const char *dev, uint32_t group);
extern "C" void weft_selftest_sa_release(void);
extern "C" int weft_selftest_sa_watch(const char *dev);
extern "C" unsigned int weft_selftest_sa_gid_in, weft_selftest_sa_gid_out;

namespace {

const Logger log("weft_selftest_sa");

Result<void> run(verbs::Device &d0, verbs::Device &d1)
{
	auto gid1 = WEFT_TRY(d1.query_gid(1, 0));
	verbs::PortAttr a1;
	WEFT_TRY(d1.query_port(1, a1));
	auto path = WEFT_TRY(mad::sa::resolve_path(d0, 1, gid1, 0xffff));
	auto again = WEFT_TRY(mad::sa::resolve_path(d0, 1, gid1, 0xffff));
	iba::McMemberRecord want{};
	const uint8_t mgid[16] = {0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
	__builtin_memcpy(want.mgid, mgid, sizeof(mgid));
	iba::McMemberRecord::JoinState::set(want.scope_state, iba::join::full);
	mad::sa::Membership *m = WEFT_TRY(mad::sa::join(d0, 1, want, 0));
	const iba::McMemberRecord &g = mad::sa::record(*m);
	log.info("SA-RESULT path dlid %u slid %u (weft1 lid %u) cached dlid %u group mlid 0x%x qkey 0x%x pkey 0x%x",
		 path.dlid.get(), path.slid.get(), a1.lid, again.dlid.get(), g.mlid.get(), g.qkey.get(),
		 g.pkey.get());
	const bool right = path.dlid.get() == a1.lid && again.dlid.get() == a1.lid && g.mlid.get() >= 0xc000;
	mad::sa::leave(m);
	if (!right)
		return Error(err::EPROTO);
	return ok();
}

} // namespace

namespace {

verbs::Device *held_dev; /* a reference of ours, from leak() */
mad::sa::Membership *held;

} // namespace

int weft_selftest_sa_hold(const char *dev, uint32_t group)
{
	Ref<verbs::Device> d = verbs::find_device(dev);
	if (!d)
		return -err::ENODEV;
	iba::McMemberRecord want{};
	/* RFC 4391 §4: ff12, the IPv4 signature 401b, P_Key ffff, ..., the address's low 28 bits. */
	reinterpret_cast<be16 *>(&want.mgid[0])->set(0xff12);
	reinterpret_cast<be16 *>(&want.mgid[2])->set(0x401b);
	reinterpret_cast<be16 *>(&want.mgid[4])->set(0xffff);
	reinterpret_cast<be32 *>(&want.mgid[12])->set(group & 0x0fffffff);
	iba::McMemberRecord::JoinState::set(want.scope_state, iba::join::full);
	/* A join of a group that exists (the test has it made first): identity only. */
	auto m = mad::sa::join(*d, 1, want, 0);
	if (!m) {
		log.info("SA-HOLD failed errno %d", m.error().code());
		return -m.error().code();
	}
	held = m.value();
	held_dev = d.leak();
	log.info("SA-HOLD %s port 1 group 0x%08x: MLID 0x%x", dev, group, mad::sa::record(*held).mlid.get());
	return 0;
}

unsigned int weft_selftest_sa_gid_in, weft_selftest_sa_gid_out;

namespace {

struct Watch final : mad::sa::GidWatcher {
	verbs::Device *dev = nullptr; /* a reference of ours, from leak() */

	void gid_event(verbs::Device &d, uint8_t port, const verbs::Gid &gid, bool in_service) override
	{
		if (&d != dev || port != 1)
			return;
		log.info("SA-WATCH %s port %u: GID %016llx:%016llx %s service", d.name(), port,
			 static_cast<unsigned long long>(gid.subnet_prefix()),
			 static_cast<unsigned long long>(gid.interface_id()), in_service ? "in" : "out of");
		__atomic_fetch_add(in_service ? &weft_selftest_sa_gid_in : &weft_selftest_sa_gid_out, 1,
				   __ATOMIC_RELAXED);
	}
};
Watch *watch; /* while watching */

} // namespace

int weft_selftest_sa_watch(const char *dev)
{
	Ref<verbs::Device> d = verbs::find_device(dev);
	if (!d)
		return -err::ENODEV;
	Watch *w = new (Gfp::Sleep) Watch;
	if (!w)
		return -err::ENOMEM;
	w->dev = d.leak();
	mad::sa::watch_gids(*w);
	watch = w;
	return 0;
}

void weft_selftest_sa_release(void)
{
	if (Watch *w = exchange(watch, nullptr)) {
		mad::sa::unwatch_gids(*w);
		if (auto st = mad::sa::inform_stats(*w->dev, 1))
			log.info("SA-WATCH stats subscribed %d subscriptions %u gid_in %u gid_out %u other %u lost %u",
				 st.value().subscribed, st.value().subscriptions, st.value().gid_in,
				 st.value().gid_out, st.value().other, st.value().lost);
		Ref<verbs::Device>::adopt(exchange(w->dev, nullptr)).reset();
		delete w;
	}
	if (held)
		mad::sa::leave(held);
	held = nullptr;
	Ref<verbs::Device>::adopt(exchange(held_dev, nullptr)).reset();
}

int weft_selftest_sa_run(void)
{
	Ref<verbs::Device> d0 = verbs::find_device("weft0"), d1 = verbs::find_device("weft1");
	if (!d0 || !d1)
		return -err::ENODEV;
	auto r = run(*d0, *d1);
	if (!r)
		log.info("SA-RESULT failed errno %d", r.error().code());
	return r.to_errno();
}
