// SPDX-License-Identifier: GPL-2.0
/*
 * weft_ipoib as a verbs client: every port of every CA gets an IPoIB
 * interface for the default partition (RFC 4391 §4: P_Key 0xffff) when
 * its device appears, and loses it when the device goes.  Port events
 * (IBA 11.6.3.3) are handed to the interfaces of their port.
 */
#include <weft/log.h>

#include "interface.h"
#include "ipoib_module.h"

namespace weft::ipoib {

namespace {

const Logger log("weft_ipoib");
constexpr uint16_t default_pkey = 0xffff;

/* One CA: its event handler and its interfaces. */
struct Hca final : verbs::EventHandler {
	explicit Hca(verbs::Device &d) : dev(d), ifcs(WEFT_LOCK_CLASS("weft_ipoib_hca")) {}
	verbs::Device &dev;
	ListNode hnode;
	struct Ifcs {
		List<Interface, &Interface::node> list;
	};
	Protected<Ifcs, Mutex> ifcs;

	void handle(const verbs::Event &e) override
	{
		auto l = ifcs.lock();
		for (Interface &i : l->list)
			if (i.port() == e.port)
				i.port_event(e.type);
	}
};

class IpoibClient final : public verbs::Client {
public:
	IpoibClient(const Params &p) : verbs::Client("weft_ipoib"), params_(p) {}

	Result<void> add(verbs::Device &dev) override
	{
		if (dev.node_type() != verbs::NodeType::Ca)
			return ok();
		auto *h = new (Gfp::Sleep) Hca(dev);
		if (!h)
			return Error(err::ENOMEM);
		for (uint8_t p = 1; p <= dev.num_ports(); p++) {
			auto ifc = Interface::create(dev, p, default_pkey, params_);
			if (!ifc) {
				log.warn("%s/%u: no IPoIB interface (errno %d)", dev.name(), p, ifc.error().code());
				continue;
			}
			h->ifcs.lock()->list.push_back(**ifc);
		}
		dev.add_event_handler(*h);
		hcas_.push_back(*h);
		return ok();
	}

	void remove(verbs::Device &dev) override
	{
		Hca *h = nullptr;
		for (Hca &x : hcas_)
			if (&x.dev == &dev)
				h = &x;
		if (!h)
			return;
		hcas_.remove(*h);
		/* No event reaches an interface once the handler is off the device. */
		dev.remove_event_handler(*h);
		for (;;) {
			Interface *i = h->ifcs.lock()->list.pop_front();
			if (!i)
				break;
			i->destroy();
		}
		delete h;
	}

private:
	Params params_;
	/* add() and remove() are serialised by the registry. */
	List<Hca, &Hca::hnode> hcas_;
};

IpoibClient *client;
alignas(IpoibClient) unsigned char client_storage[sizeof(IpoibClient)];

} // namespace

} // namespace weft::ipoib

using namespace weft::ipoib;

int weft_ipoib_client_register(uint32_t send_queue_size, uint32_t recv_queue_size)
{
	client = new (client_storage) IpoibClient(Params{send_queue_size, recv_queue_size});
	auto r = weft::verbs::register_client(*client);
	if (!r) {
		client->~IpoibClient();
		return r.to_errno();
	}
	return 0;
}

void weft_ipoib_client_unregister(void)
{
	weft::verbs::unregister_client(*client);
	client->~IpoibClient();
}
