// SPDX-License-Identifier: GPL-2.0
/*
 * weft_ipoib as a verbs client: every port of every CA gets an IPoIB
 * interface for the default partition (RFC 4391 §4: P_Key 0xffff) when
 * its device appears, and loses it when the device goes.  Port events
 * (IBA 11.6.3.3) are handed to the interfaces of their port.  P_Key child
 * interfaces (create_child, ip link add ... type ipoib) join the same list.
 *
 * Locking: an Hca's mutex guards its list, its closing flag and each
 * interface's `listed`.  Lock order: rtnl, then the mutex; nothing takes
 * rtnl with the mutex held.  Children are added and unlinked with rtnl
 * held (shim_link.c, shim_sysfs.c); a child unlinked that way finishes its
 * teardown later, from its netdev's destructor, and counts in `releasing`
 * until then.  remove() closes the list (no new child), destroys children,
 * waits for `releasing` to drop to 0, then destroys the port interfaces:
 * a child never outlives its parent or its device.
 */
#include <weft/atomic.h>
#include <weft/log.h>
#include <weft/wait.h>

#include "interface.h"
#include "ipoib_module.h"
#include "pkey.h"

namespace weft::ipoib {

namespace {

const Logger log("weft_ipoib");

/* One CA: its event handler and its interfaces. */
struct Hca final : verbs::EventHandler {
	Hca(verbs::Device &d, const Params &p)
		: dev(d), params(p), ifcs(WEFT_LOCK_CLASS("weft_ipoib_hca")),
		  released(WEFT_LOCK_CLASS("weft_ipoib_released"))
	{
	}
	verbs::Device &dev;
	const Params &params;
	ListNode hnode;
	struct Ifcs {
		List<Interface, &Interface::node> list;
		bool closing = false;
	};
	Protected<Ifcs, Mutex> ifcs;
	Atomic<uint32_t> releasing{0}; /* written under the mutex, read by remove()'s wait */
	WaitQueue released;

	void handle(const verbs::Event &e) override
	{
		auto l = ifcs.lock();
		for (Interface &i : l->list)
			if (i.port() == e.port)
				i.port_event(e.type);
	}

	void add(Ifcs &l, Interface &i)
	{
		i.owner = this;
		i.listed = true;
		l.list.push_back(i);
	}

	/* Off the list for good: children first when @children. */
	Interface *take(bool children)
	{
		auto l = ifcs.lock();
		for (Interface &i : l->list)
			if (i.is_child() || !children) {
				l->list.remove(i);
				i.listed = false;
				return &i;
			}
		return nullptr;
	}
};

Hca *hca_of(Interface &i)
{
	return static_cast<Hca *>(i.owner);
}

/*
 * Phase one of a child's teardown (rtnl and the Hca's mutex held): off the
 * list, no new work.  The caller then unregisters the netdev (without the
 * mutex: rtnl keeps the child alive), whose destructor does the rest.
 */
bool take_child(Hca &h, Hca::Ifcs &l, Interface &c)
{
	if (!c.is_child() || !c.listed)
		return false;
	l.list.remove(c);
	c.listed = false;
	h.releasing.fetch_add(1, Order::Release);
	c.unlink();
	return true;
}

class IpoibClient final : public verbs::Client {
public:
	IpoibClient(const Params &p) : verbs::Client("weft_ipoib"), params_(p) {}

	Result<void> add(verbs::Device &dev) override
	{
		if (dev.node_type() != verbs::NodeType::Ca)
			return ok();
		auto *h = new (Gfp::Sleep) Hca(dev, params_);
		if (!h)
			return Error(err::ENOMEM);
		for (uint8_t p = 1; p <= dev.num_ports(); p++) {
			auto ifc = Interface::create(dev, p, default_pkey, params_);
			if (!ifc) {
				log.warn("%s/%u: no IPoIB interface (errno %d)", dev.name(), p, ifc.error().code());
				continue;
			}
			auto l = h->ifcs.lock();
			h->add(*l, **ifc);
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
		h->ifcs.lock()->closing = true;
		/* No event reaches an interface once the handler is off the device. */
		dev.remove_event_handler(*h);
		while (Interface *c = h->take(true))
			c->destroy();
		/* Children unlinked under rtnl before: wait until their destructors ran. */
		(void)h->released.wait([h] { return h->releasing.load(Order::Acquire) == 0; });
		/* The last one woke us under the mutex: let it leave before the Hca goes. */
		{
			auto l = h->ifcs.lock();
		}
		while (Interface *i = h->take(false))
			i->destroy();
		delete h;
	}

private:
	Params params_;
	/* add() and remove() are serialised by the registry. */
	List<Hca, &Hca::hnode> hcas_;
};

IpoibClient *client;
alignas(IpoibClient) unsigned char client_storage[sizeof(IpoibClient)];

Interface *ifc(void *ctx)
{
	return static_cast<Interface *>(ctx);
}

} // namespace

} // namespace weft::ipoib

using namespace weft;
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

int weft_ipoib_child_add(void *parent_ctx, long value, struct weft_ipoib_child_spec *spec)
{
	Interface &parent = *ifc(parent_ctx);
	auto pkey = child_pkey(value);
	if (!pkey)
		return pkey.to_errno();
	if (parent.is_child())
		return -err::EINVAL; /* as Linux: no child of a child */
	Hca &h = *hca_of(parent);
	auto l = h.ifcs.lock();
	if (l->closing || !parent.listed)
		return -err::ENODEV;
	/* create_child and delete_child name a child by its P_Key: one each (Linux's rule). */
	if (spec->legacy) {
		if (parent.pkey() == *pkey)
			return -err::ENOTUNIQ;
		for (Interface &i : l->list)
			if (i.legacy() && i.pkey() == *pkey && i.port() == parent.port())
				return -err::ENOTUNIQ;
	}
	char name[16];
	if (!spec->dev) {
		child_name(name, sizeof(name), weft_ipoib_name(parent.netdev()), static_cast<uint16_t>(value));
		spec->name = name;
	}
	spec->parent = parent.netdev();
	auto c = Interface::create(parent.device(), parent.port(), *pkey, h.params, spec);
	if (!c)
		return c.to_errno();
	h.add(*l, **c);
	return 0;
}

int weft_ipoib_child_del(void *parent_ctx, long value)
{
	Interface &parent = *ifc(parent_ctx);
	if (value < 0 || value > 0xffff)
		return -err::EINVAL;
	const uint16_t pkey = static_cast<uint16_t>(value | pkey_full_bit);
	Hca &h = *hca_of(parent);
	Interface *c = nullptr;
	{
		auto l = h.ifcs.lock();
		for (Interface &i : l->list)
			if (i.legacy() && i.pkey() == pkey && i.port() == parent.port()) {
				c = &i;
				break;
			}
		if (!c || !take_child(h, *l, *c))
			return -err::ENODEV;
	}
	weft_ipoib_child_netdev_unlink(c->netdev(), nullptr);
	return 0;
}

bool weft_ipoib_child_unlink(void *ctx, void *head)
{
	Interface &c = *ifc(ctx);
	if (!c.is_child())
		return false; /* a port's own interface goes with its port, as in Linux */
	Hca &h = *hca_of(c);
	if (!take_child(h, *h.ifcs.lock(), c))
		return false;
	weft_ipoib_child_netdev_unlink(c.netdev(), head);
	return true;
}

void weft_ipoib_child_released(void *ctx)
{
	Interface &c = *ifc(ctx);
	Hca &h = *hca_of(c);
	c.release_unlinked();
	auto l = h.ifcs.lock();
	h.releasing.fetch_sub(1, Order::Release);
	h.released.wake_all();
}
