// SPDX-License-Identifier: GPL-2.0
/*
 * The DM agents' host: one Agent (dm.h) on every port of every CA,
 * attached from the client's add() (weft_mad's ports exist then: it
 * registered first) and detached in its remove(), which the registry runs
 * before weft_mad's.  Slot 1 (the SRP target's IOC) is present while LIO
 * has an enabled target port for the CA port: the target tells the host
 * (weft_srpt_dm_set_present) when that changes, and a CA that appears
 * asks the target once its agents are attached.
 */
#include <weft/alloc.h>
#include <weft/list.h>
#include <weft/lock.h>
#include <weft/log.h>
#include <weft/util.h>

#include "dm.h"
#include "dm_host.h"

namespace weft::srp::dm {

namespace {

const Logger log("weft_srpt");

/* The agents of one CA: agents[p - 1] on port p, null where attach failed. */
struct Hca {
	verbs::Device *dev = nullptr;
	Array<Agent *> agents;
	ListNode node;
};

class HostClient final : public verbs::Client {
public:
	HostClient() : verbs::Client("weft_srpt"), hcas_(WEFT_LOCK_CLASS("weft_srpt_dm_hcas")) {}

	Result<void> add(verbs::Device &dev) override
	{
		if (dev.node_type() != verbs::NodeType::Ca)
			return ok();
		auto agents = Array<Agent *>::make(Gfp::Sleep, dev.num_ports());
		auto *h = agents ? new (Gfp::Sleep) Hca : nullptr;
		if (!h)
			return Error(err::ENOMEM);
		h->dev = &dev;
		h->agents = move(*agents);
		const Ioc ioc = Ioc::defaults(dev);
		for (uint8_t p = 1; p <= dev.num_ports(); p++) {
			/* Slot 1 absent until LIO enables a target port here. */
			auto a = Agent::attach(dev, p, ioc, false);
			if (!a) {
				log.warn("%s/%u: no DM agent (errno %d)", dev.name(), p, a.error().code());
				continue;
			}
			h->agents[p - 1] = *a;
		}
		hcas_.lock()->push_back(*h);
		weft_srpt_tports_changed(); /* a target port of this CA's may be enabled already */
		return ok();
	}

	void remove(verbs::Device &dev) override
	{
		Hca *gone = nullptr;
		{
			auto l = hcas_.lock();
			for (Hca &h : *l)
				if (h.dev == &dev)
					gone = &h;
			if (gone)
				l->remove(*gone);
		}
		if (!gone)
			return;
		for (size_t i = 0; i < gone->agents.size(); i++)
			if (gone->agents[i])
				gone->agents[i]->detach();
		delete gone;
	}

	void set_present(const verbs::Device &dev, uint8_t port, bool on)
	{
		auto l = hcas_.lock();
		for (Hca &h : *l)
			if (h.dev == &dev && port >= 1 && port <= h.agents.size() && h.agents[port - 1])
				h.agents[port - 1]->set_present(on);
	}

private:
	/* add() and remove() are serialised by the registry; the lock is for set_present(). */
	Protected<List<Hca, &Hca::node>, Mutex> hcas_;
};

HostClient *client; /* null while stopped */
alignas(HostClient) unsigned char client_storage[sizeof(HostClient)];

} // namespace

} // namespace weft::srp::dm

using namespace weft::srp::dm;

int weft_srpt_dm_host_start(void)
{
	if (client)
		return -weft::err::EBUSY;
	auto *c = new (client_storage) HostClient();
	auto r = weft::verbs::register_client(*c);
	if (!r) {
		c->~HostClient();
		return r.to_errno();
	}
	client = c;
	return 0;
}

void weft_srpt_dm_set_present(void *dev, uint8_t port, bool present)
{
	if (client)
		client->set_present(*static_cast<weft::verbs::Device *>(dev), port, present);
}

void weft_srpt_dm_host_stop(void)
{
	if (!client)
		return;
	weft::verbs::unregister_client(*client);
	client->~HostClient();
	client = nullptr;
}
