// SPDX-License-Identifier: GPL-2.0
/*
 * The devices the RDMA CM binds Ids to (a verbs client): a port is found
 * by its GID (what IPoIB's hardware address carries, RFC 4391 §9.1.1),
 * wildcard listeners follow devices as they come, and a device going away
 * tells each of its Ids (DEVICE_REMOVAL) before they lose it.
 */
#include "rcm.h"

namespace weft::rdma_cm {

namespace {

/* Every wildcard listener gets the new device too. */
void listen_new_device_locked(RcmDevice &d)
{
	for (Id &id : rcm->binds) {
		if (id.state != IdState::Listen || id.dev)
			continue;
		auto r = listen_on_locked(d, service_id(id.ps, id.src.port));
		if (!r)
			log.warn("%s: no listener for port %u: errno %d", d.dev->name(), id.src.port,
				 r.error().code());
	}
}

/*
 * In-tree meaning of DEVICE_REMOVAL: the owner releases what it holds on
 * the device and destroys the Id (returning non-zero, or from another
 * context, as ucma does); the removal waits for that, so the IB CM Id and
 * the owner's QP are gone before the device is.  An owner that does not
 * is waited for generously, then its IB CM Id is taken from under it:
 * retired (cm_use.cpp), so a call the owner is making on it finishes
 * first and later ones find none.  The wait only spares a slow owner its
 * connection; nothing is unsafe when it ends early.
 */
void detach_ids(RcmDevice &d)
{
	for (;;) {
		Ref<Id> id;
		{
			MutexGuard g(rcm->lock);
			Id *x = d.ids.pop_front();
			if (!x)
				return;
			id = Ref<Id>::share(x);
		}
		Event e{};
		e.type = EventType::DeviceRemoval;
		deliver(*id, e);
		Id *i = id.get();
		auto waited = rcm->freed.wait(
			[i] { return i->torn_down.load(Order::Acquire); },
			Timeout::msecs(owner_wait_ms.load(Order::Relaxed)));
		if (!waited)
			log.warn("%s removed: an Id's owner did not destroy it; its connection is dropped",
				 d.dev->name());
		{
			MutexGuard g(rcm->lock);
			id->state = IdState::DeviceGone; /* no call starts a connection or join now */
		}
		leave_all(*id);
		drop_cm_id(*id); /* waits for calls using the IB CM Id */
		MutexGuard g(rcm->lock);
		id->dev.reset();
		id->qp = nullptr;
	}
}

class Client final : public verbs::Client {
public:
	Client() : verbs::Client("weft_rdma_cm") {}

	Result<void> add(verbs::Device &dev) override
	{
		if (dev.node_type() != verbs::NodeType::Ca)
			return ok();
		auto *d = new (Gfp::Sleep) RcmDevice(dev);
		if (!d)
			return Error(err::ENOMEM);
		MutexGuard g(rcm->lock);
		rcm->devices.push_back(*d);
		listen_new_device_locked(*d);
		return ok();
	}

	void remove(verbs::Device &dev) override
	{
		Ref<RcmDevice> d;
		List<CmListener, &CmListener::node> unused;
		{
			MutexGuard g(rcm->lock);
			for (RcmDevice &x : rcm->devices)
				if (x.dev.get() == &dev)
					d = Ref<RcmDevice>::adopt(&x); /* the list's reference */
			if (!d)
				return;
			rcm->devices.remove(*d);
			d->gone = true;
			for (;;) {
				CmListener *found = nullptr;
				for (CmListener &l : rcm->listeners)
					if (l.dev.get() == d.get()) {
						found = &l;
						break;
					}
				if (!found)
					break;
				rcm->listeners.remove(*found);
				unused.push_back(*found);
			}
		}
		free_listeners(unused);
		detach_ids(*d);
	}
};

Client *client;

} // namespace

constinit Atomic<uint32_t> owner_wait_ms{30000};

RcmDevice *find_by_gid_locked(const verbs::Gid &gid, uint8_t &port)
{
	for (RcmDevice &d : rcm->devices) {
		if (d.gone)
			continue;
		for (uint8_t p = 1; p <= d.dev->num_ports(); p++) {
			auto g = d.dev->query_gid(p, 0);
			if (g && g.value() == gid) {
				port = p;
				return &d;
			}
		}
	}
	return nullptr;
}

void attach_dev_locked(Id &id, RcmDevice &d, uint8_t port)
{
	if (id.dev.get() != &d) {
		if (id.dev && id.dev_node.linked())
			id.dev->ids.remove(id);
		id.dev = Ref<RcmDevice>::share(&d);
		d.ids.push_back(id);
	}
	id.port = port;
}

Result<void> devices_init()
{
	client = new (Gfp::Sleep) Client();
	if (!client)
		return Error(err::ENOMEM);
	auto r = verbs::register_client(*client);
	if (!r) {
		delete client;
		client = nullptr;
	}
	return r;
}

void devices_exit()
{
	verbs::unregister_client(*client);
	delete client;
	client = nullptr;
}

} // namespace weft::rdma_cm
