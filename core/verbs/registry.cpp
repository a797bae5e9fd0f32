// SPDX-License-Identifier: GPL-2.0
/*
 * Device and client registry.  One mutex orders everything that changes
 * the set of devices or clients, so a client sees each device exactly once
 * in add() and once in remove(), whichever of the two registered first.
 */
#include <weft/log.h>
#include <weft/verbs/verbs.h>

#include "sysfs.h"
#include "verbs_module.h"

namespace weft::verbs {

namespace {

const Logger log("weft_verbs");

/* Names weft0..weft8191 (and weftsw0..): as many as in-tree ib_umad has ports. */
constexpr size_t max_devices = 8192;

struct RegistryState {
	List<Device, &Device::node> devices;
	List<Client, &Client::node> clients;
	/* Scratch for Registry::name(): indices in use for one name format. */
	uint64_t taken[max_devices / 64];
};

using RegistryLock = Protected<RegistryState, Mutex>;

/* Module-lifetime state, constructed in place at module init (no static ctor). */
RegistryLock *registry;
alignas(RegistryLock) unsigned char registry_storage[sizeof(RegistryLock)];

RegistryLock &reg()
{
	return *registry;
}

/*
 * The index in @name if it is @prefix followed by a decimal number written
 * as format() writes one (no sign, no leading zero), else -1.
 */
long name_index(const char *name, const char *prefix, size_t plen)
{
	if (__builtin_strncmp(name, prefix, plen) != 0)
		return -1;
	const char *d = name + plen;
	if (!*d || (d[0] == '0' && d[1]))
		return -1;
	long v = 0;
	for (; *d; d++) {
		if (*d < '0' || *d > '9' || v >= long(max_devices))
			return -1;
		v = v * 10 + (*d - '0');
	}
	return v;
}

void registry_init()
{
	registry = new (registry_storage) RegistryLock(WEFT_LOCK_CLASS("weft_verbs_registry"));
}

void registry_exit()
{
	registry->~RegistryLock();
	registry = nullptr;
}

} // namespace

class Registry {
public:
	/*
	 * Pick the lowest free index for the device's name format ("<prefix>%d")
	 * in one pass over the devices: fabrics of thousands of nodes register
	 * each in time linear in the number registered.
	 */
	static Result<void> name(RegistryState &r, Device &dev)
	{
		const char *fmt = dev.name_fmt_;
		size_t plen = __builtin_strlen(fmt);
		if (plen < 2 || __builtin_strcmp(fmt + plen - 2, "%d") != 0)
			return Error(err::EINVAL);
		plen -= 2;
		__builtin_memset(r.taken, 0, sizeof(r.taken));
		for (Device &d : r.devices) {
			long i = name_index(d.name(), fmt, plen);
			if (i >= 0)
				r.taken[i / 64] |= 1ull << (i % 64);
		}
		for (size_t w = 0; w < max_devices / 64; w++) {
			if (r.taken[w] == ~0ull)
				continue;
			size_t i = w * 64 + static_cast<size_t>(__builtin_ctzll(~r.taken[w]));
			format(dev.name_, sizeof(dev.name_), fmt, static_cast<int>(i));
			return ok();
		}
		return Error(err::ENOSPC);
	}
	static void set_registered(Device &dev, bool v) { dev.registered_ = v; }
	static weft_ib_sysfs *&sysfs(Device &dev) { return dev.sysfs_; }
	static Context *take_context(Device &dev)
	{
		return dev.contexts_.with([](auto &l) { return l.pop_front(); });
	}
};

Result<void> register_device(Device &dev)
{
	auto r = reg().lock();
	WEFT_TRY(Registry::name(*r, dev));
	if (!dev.mad_replies_dropped_.size())
		dev.mad_replies_dropped_ =
			WEFT_TRY(Array<Atomic<uint64_t>>::make(Gfp::Sleep, size_t(dev.num_ports()) + 1));
	if (dev.sysfs_visible_)
		Registry::sysfs(dev) = WEFT_TRY(sysfs_add(dev));
	dev.get(); /* the registry's reference */
	r->devices.push_back(dev);
	Registry::set_registered(dev, true);
	log.info("%s: registered (%u port%s)", dev.name(), dev.num_ports(),
		 dev.num_ports() == 1 ? "" : "s");
	for (Client &c : r->clients) {
		auto added = c.add(dev);
		if (!added)
			log.warn("%s: client %s failed to add it (errno %d)", dev.name(), c.name(),
				 added.error().code());
	}
	return ok();
}

void unregister_device(Device &dev)
{
	{
		auto r = reg().lock();
		if (!dev.node.linked())
			return;
		sysfs_del(exchange(Registry::sysfs(dev), nullptr));
		/* Newest client first: a client may use what an older one provides (umad on MAD). */
		for (Client *c = r->clients.back(); c; c = r->clients.prev(*c))
			c->remove(dev);
		r->devices.remove(dev);
		Registry::set_registered(dev, false);
	}
	/* Clients have let go; whatever is still open was leaked by its owner. */
	while (Context *ctx = Registry::take_context(dev)) {
		log.err("%s: context of %s still open at removal; closing it", dev.name(),
			ctx->owner);
		ctx->close(false);
	}
	log.info("%s: unregistered", dev.name());
	dev.put();
}

Result<void> register_client(Client &c)
{
	auto r = reg().lock();
	r->clients.push_back(c);
	for (Device &d : r->devices) {
		auto added = c.add(d);
		if (!added)
			log.warn("%s: client %s failed to add it (errno %d)", d.name(), c.name(),
				 added.error().code());
	}
	return ok();
}

void unregister_client(Client &c)
{
	auto r = reg().lock();
	for (Device &d : r->devices)
		c.remove(d);
	r->clients.remove(c);
}

void assert_registry_locked()
{
	(void)reg().assume_locked();
}

Ref<Device> find_device(const char *name)
{
	auto r = reg().lock();
	for (Device &d : r->devices)
		if (__builtin_strcmp(d.name(), name) == 0)
			return Ref<Device>::share(&d);
	return Ref<Device>();
}

} // namespace weft::verbs

/* Called from module init/exit (module.c) only. */
void weft_verbs_registry_init(void)
{
	weft::verbs::registry_init();
}

void weft_verbs_registry_exit(void)
{
	weft::verbs::registry_exit();
}
