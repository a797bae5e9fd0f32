// SPDX-License-Identifier: GPL-2.0
/*
 * The DM agents' host until the SRP target has its own verbs client: one
 * Agent (dm.h) on every port of every CA, attached from the client's
 * add() (weft_mad's ports exist then: it registered first) and detached in
 * its remove(), which the registry runs before weft_mad's.
 */
#include <weft/alloc.h>
#include <weft/list.h>
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
	HostClient() : verbs::Client("weft_srpt") {}

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
			auto a = Agent::attach(dev, p, ioc);
			if (!a) {
				log.warn("%s/%u: no DM agent (errno %d)", dev.name(), p, a.error().code());
				continue;
			}
			h->agents[p - 1] = *a;
		}
		hcas_.push_back(*h);
		return ok();
	}

	void remove(verbs::Device &dev) override
	{
		for (Hca &h : hcas_) {
			if (h.dev != &dev)
				continue;
			hcas_.remove(h);
			for (size_t i = 0; i < h.agents.size(); i++)
				if (h.agents[i])
					h.agents[i]->detach();
			delete &h;
			return;
		}
	}

private:
	/* add() and remove() are serialised by the registry. */
	List<Hca, &Hca::node> hcas_;
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

void weft_srpt_dm_host_stop(void)
{
	if (!client)
		return;
	weft::verbs::unregister_client(*client);
	client->~HostClient();
	client = nullptr;
}
