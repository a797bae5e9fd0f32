// SPDX-License-Identifier: GPL-2.0
/*
 * The MAD layer as a verbs client: every port of every CA gets its SMI
 * and GSI (port_mad.h) when the device appears, and loses them when it
 * goes.  Switches run their SMI in the switch itself (IBA 18.2.4.1).
 */
#include <weft/log.h>
#include <weft/mad/port.h>

#include "mad_module.h"
#include "port_mad.h"

namespace weft::mad {

namespace {

const Logger log("weft_mad");

struct Ports {
	List<PortMad, &PortMad::node> list;
};
using PortsLock = Protected<Ports, Mutex>;

PortsLock *ports;
alignas(PortsLock) unsigned char ports_storage[sizeof(PortsLock)];

class MadClient final : public verbs::Client {
public:
	MadClient() : verbs::Client("weft_mad") {}

	Result<void> add(verbs::Device &dev) override
	{
		if (dev.node_type() != verbs::NodeType::Ca)
			return ok();
		for (uint8_t p = 1; p <= dev.num_ports(); p++) {
			auto *pm = new (Gfp::Sleep) PortMad(dev, p);
			if (!pm)
				return Error(err::ENOMEM);
			auto started = pm->start();
			if (!started) {
				log.warn("%s/%u: no MAD interface (errno %d)", dev.name(), p,
					 started.error().code());
				delete pm;
				continue;
			}
			ports->lock()->list.push_back(*pm);
		}
		return ok();
	}

	void remove(verbs::Device &dev) override
	{
		for (;;) {
			PortMad *found = nullptr;
			{
				auto l = ports->lock();
				for (PortMad &pm : l->list)
					if (&pm.device == &dev)
						found = &pm;
				if (found)
					l->list.remove(*found);
			}
			if (!found)
				return;
			delete found; /* two-phase stop in its destructor */
		}
	}
};

MadClient *client;
alignas(MadClient) unsigned char client_storage[sizeof(MadClient)];

} // namespace

MadPort *find_port(verbs::Device &dev, uint8_t port)
{
	auto l = ports->lock();
	for (PortMad &pm : l->list)
		if (&pm.device == &dev && pm.port == port)
			return &pm;
	return nullptr;
}

} // namespace weft::mad

using namespace weft::mad;

int weft_mad_client_init(void)
{
	ports = new (ports_storage) PortsLock(WEFT_LOCK_CLASS("weft_mad_ports"));
	sa_groups_init();
	sa_watchers_init();
	client = new (client_storage) MadClient();
	auto r = weft::verbs::register_client(*client);
	if (!r) {
		client->~MadClient();
		sa_watchers_exit();
		sa_groups_exit();
		ports->~PortsLock();
		return r.to_errno();
	}
	return 0;
}

void weft_mad_client_exit(void)
{
	weft::verbs::unregister_client(*client);
	client->~MadClient();
	sa_watchers_exit();
	sa_groups_exit();
	ports->~PortsLock();
}
