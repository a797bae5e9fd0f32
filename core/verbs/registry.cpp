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

constexpr size_t max_devices = 256;

struct RegistryState {
	List<Device, &Device::node> devices;
	List<Client, &Client::node> clients;
};

using RegistryLock = Protected<RegistryState, Mutex>;

/* Module-lifetime state, constructed in place at module init (no static ctor). */
RegistryLock *registry;
alignas(RegistryLock) unsigned char registry_storage[sizeof(RegistryLock)];

RegistryLock &reg()
{
	return *registry;
}

bool name_taken(RegistryState &r, const char *name)
{
	for (Device &d : r.devices)
		if (__builtin_strcmp(d.name(), name) == 0)
			return true;
	return false;
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
	/* Pick the lowest free index for the device's name format. */
	static Result<void> name(RegistryState &r, Device &dev)
	{
		for (size_t i = 0; i < max_devices; i++) {
			format(dev.name_, sizeof(dev.name_), dev.name_fmt_, static_cast<int>(i));
			if (!name_taken(r, dev.name_))
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
