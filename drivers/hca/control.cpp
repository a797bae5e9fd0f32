// SPDX-License-Identifier: GPL-2.0
/*
 * The run-time topology control plane behind /sys/kernel/config/weft/
 * (control.h, Documentation/fabric.md): HCAs, switches and cables made,
 * configured and removed from user space, and the cables' fault knobs.
 * Every call comes from the configfs shim in process context; one mutex
 * orders them (control plane only: the data path never takes it).
 */
#include <weft/log.h>
#include <weft/verbs/verbs.h>

#include "capture.h"
#include "control.h"
#include "control_parse.h"
#include "hca.h"
#include "switch.h"

namespace weft::hca {

namespace {

const Logger log("weft_hca");

Mutex *ctl_lock;
alignas(Mutex) unsigned char ctl_lock_storage[sizeof(Mutex)];

constexpr uint8_t default_hca_ports = 1;
constexpr uint8_t default_switch_ports = 8;

/* An entry of hcas/ or switches/: a node once enabled. */
struct NodeItem {
	bool is_switch;
	uint8_t ports;
	Node *node = nullptr;
	verbs::Device *dev = nullptr; /* the creation reference, until rmdir */

	explicit NodeItem(bool sw) : is_switch(sw), ports(sw ? default_switch_ports : default_hca_ports) {}
};

/* An entry of cables/: two port ends, a link state, the fault knobs of both directions. */
struct CableItem {
	/* Keeps the nodes' memory (and so the ports) alive while named here. */
	Ref<verbs::Device> dev[2];
	Port *end[2] = {};
	char spec[2][ctl::end_name_max + 4] = {}; /* "<name>:<port>" whole */

	bool up() const { return end[0] && end[1] && end[0]->peer() == end[1]; }
};

using ctl::parse_u32;
using ctl::Text;

/* Output into a configfs page: appends, never overflows, always terminated. */
struct Out {
	char *buf;
	size_t size;
	size_t len = 0;

	template <typename... A> void put(const char *fmt, A... args)
	{
		if (len + 1 < size)
			len += format(buf + len, size - len, fmt, args...);
	}
};

const char *state_name(verbs::PortState s)
{
	switch (s) {
	case verbs::PortState::Down: return "DOWN";
	case verbs::PortState::Init: return "INIT";
	case verbs::PortState::Armed: return "ARMED";
	case verbs::PortState::Active: return "ACTIVE";
	default: return "?";
	}
}

/* --- nodes --------------------------------------------------------------- */

template <typename T> Result<void> enable_node(NodeItem &it)
{
	T *n = WEFT_TRY(T::create(it.ports));
	Fabric::get().add(*n);
	auto r = verbs::register_device(*n);
	if (!r) {
		Fabric::get().remove(*n);
		n->put();
		return r;
	}
	/* Its ports' capture files under weft/<name>/, as the default subnet's. */
	Capture::add_node(*n, n->name());
	it.node = n;
	it.dev = n;
	log.info("configfs: %s %s with %u ports", it.is_switch ? "switch" : "HCA", n->name(), it.ports);
	return ok();
}

/* Two-phase: off the verbs registry (clients, contexts), off the fabric (cables, RCU), then the reference. */
void disable_node(NodeItem &it)
{
	if (!it.dev)
		return;
	Capture::remove_node(*it.node);
	verbs::unregister_device(*it.dev);
	Fabric::get().remove(*it.node);
	it.dev->put();
	it.dev = nullptr;
	it.node = nullptr;
}

long node_show(NodeItem &it, weft_ctl_attr attr, Out &o)
{
	switch (attr) {
	case WEFT_CTL_PORTS:
		o.put("%u\n", it.ports);
		return 0;
	case WEFT_CTL_ENABLE:
		o.put("%d\n", it.dev ? 1 : 0);
		return 0;
	case WEFT_CTL_DEVICE:
		if (it.dev)
			o.put("%s\n", it.dev->name());
		return 0;
	default:
		return -err::EINVAL;
	}
}

Result<void> node_store(NodeItem &it, weft_ctl_attr attr, Text in)
{
	switch (attr) {
	case WEFT_CTL_PORTS: {
		const uint8_t n = WEFT_TRY(ctl::parse_ports(in, it.is_switch, Hca::max_ports));
		if (it.dev)
			return Error(err::EBUSY);
		it.ports = n;
		return ok();
	}
	case WEFT_CTL_ENABLE: {
		uint32_t v = WEFT_TRY(parse_u32(in, 1));
		/* Only rmdir takes a node away: its name may be in use by cables and tests. */
		if (it.dev)
			return Error(err::EBUSY);
		if (v == 0)
			return ok();
		return it.is_switch ? enable_node<Switch>(it) : enable_node<Hca>(it);
	}
	default:
		return Error(err::EINVAL);
	}
}

/* --- cables -------------------------------------------------------------- */

/* "<device>:<port>" of a node on the fabric now, external port. */
Result<void> set_end(CableItem &c, int i, Text in)
{
	if (c.up())
		return Error(err::EBUSY);
	const ctl::End e = WEFT_TRY(ctl::parse_end(in));
	const uint8_t port = e.port;
	const char *buf = e.name;

	Ref<verbs::Device> dev;
	Port *p = nullptr;
	{
		Fabric &f = Fabric::get();
		MutexGuard g(f.lock);
		Node *n = f.find(buf);
		if (!n)
			return Error(err::ENODEV);
		/* Port 0 of a switch is its management port: no cable plugs in there. */
		if (port == 0 || port > n->port_count())
			return Error(err::EINVAL);
		p = n->port(static_cast<uint8_t>(port));
		dev = Ref<verbs::Device>::share(n->device());
	}
	if (p == c.end[1 - i])
		return Error(err::EINVAL);
	/* The knobs belong to the cable: the port it leaves keeps none. */
	if (c.end[i])
		c.end[i]->faults().clear();
	c.end[i] = p;
	c.dev[i] = move(dev);
	format(c.spec[i], sizeof(c.spec[i]), "%s:%u", buf, port);
	return ok();
}

Result<void> set_up(CableItem &c, Text in)
{
	uint32_t v = WEFT_TRY(parse_u32(in, 1));
	if (!c.end[0] || !c.end[1])
		return Error(err::EINVAL);
	if (v == 0) {
		Fabric::get().disconnect(*c.end[0], c.end[1]);
		return ok();
	}
	if (c.up())
		return ok();
	return Fabric::get().connect(*c.end[0], *c.end[1]);
}

/* A fault knob (ctl::parse_fault): validated whole before anything changes. */
Result<void> set_fault(CableItem &c, FaultKind k, Text in)
{
	if (!c.end[0] || !c.end[1])
		return Error(err::EINVAL);
	const ctl::FaultSpec f = WEFT_TRY(ctl::parse_fault(in, k == FaultKind::Delay || k == FaultKind::Reorder));
	/* Everything validated: apply to each chosen direction. */
	for (int i = 0; i < 2; i++) {
		if (!f.dir[i])
			continue;
		Faults &knobs = c.end[i]->faults();
		if (f.has_ms)
			WEFT_TRY(knobs.set_hold_ms(k, f.ms));
		if (f.has_ppm)
			WEFT_TRY(knobs.set_probability(k, f.ppm));
		if (f.has_count)
			knobs.set_count(k, f.count);
	}
	return ok();
}

void show_fault(CableItem &c, FaultKind k, Out &o)
{
	static constexpr const char *dirs[2] = {"ab", "ba"};
	for (int i = 0; i < 2; i++) {
		if (!c.end[i] || !c.end[1 - i])
			continue;
		Faults &f = c.end[i]->faults();
		o.put("%s ppm=%u count=%u", dirs[i], f.probability(k), f.count(k));
		if (k == FaultKind::Delay || k == FaultKind::Reorder)
			o.put(" ms=%u held=%u", f.hold_ms(k), f.held());
		o.put(" injected=%llu\n", static_cast<unsigned long long>(f.injected(k)));
	}
}

FaultKind fault_of(weft_ctl_attr attr)
{
	return static_cast<FaultKind>(attr - WEFT_CTL_DROP);
}

long cable_show(CableItem &c, weft_ctl_attr attr, Out &o)
{
	switch (attr) {
	case WEFT_CTL_A:
	case WEFT_CTL_B:
		if (c.end[attr - WEFT_CTL_A])
			o.put("%s\n", c.spec[attr - WEFT_CTL_A]);
		return 0;
	case WEFT_CTL_UP:
		o.put("%d\n", c.up() ? 1 : 0);
		return 0;
	case WEFT_CTL_DROP:
	case WEFT_CTL_CORRUPT:
	case WEFT_CTL_DUPLICATE:
	case WEFT_CTL_REORDER:
	case WEFT_CTL_DELAY:
		show_fault(c, fault_of(attr), o);
		return 0;
	default:
		return -err::EINVAL;
	}
}

Result<void> cable_store(CableItem &c, weft_ctl_attr attr, Text in)
{
	switch (attr) {
	case WEFT_CTL_A:
	case WEFT_CTL_B:
		return set_end(c, attr - WEFT_CTL_A, in);
	case WEFT_CTL_UP:
		return set_up(c, in);
	case WEFT_CTL_DROP:
	case WEFT_CTL_CORRUPT:
	case WEFT_CTL_DUPLICATE:
	case WEFT_CTL_REORDER:
	case WEFT_CTL_DELAY:
		return set_fault(c, fault_of(attr), in);
	default:
		return Error(err::EINVAL);
	}
}

void drop_cable(CableItem &c)
{
	if (c.end[0] && c.end[1])
		Fabric::get().disconnect(*c.end[0], c.end[1]);
	for (int i = 0; i < 2; i++) {
		if (c.end[i])
			c.end[i]->faults().clear();
		c.end[i] = nullptr;
		c.dev[i].reset();
	}
}

/* --- the root ------------------------------------------------------------ */

const char *node_name(Node &n)
{
	return n.device() ? n.device()->name() : "?";
}

/*
 * One line per external port: "<dev>:<port> <peer or -> <state> lid=<lid>".
 * With no buffer (size 0) only the length is counted; else whole lines
 * only, so a fabric that grew since the length was taken is cut at a line.
 */
void show_topology(Out &o)
{
	Fabric &f = Fabric::get();
	MutexGuard g(f.lock);
	for (Node &n : f.nodes) {
		for (uint8_t i = 1; i <= n.port_count(); i++) {
			Port *p = n.port(i);
			if (!p)
				continue;
			char peer[32] = "-";
			if (Port *q = p->peer())
				format(peer, sizeof(peer), "%s:%u", node_name(q->node), q->num);
			char line[96];
			size_t len = format(line, sizeof(line), "%s:%u %s %s lid=%u\n", node_name(n), i,
					    peer, state_name(p->state.load(Order::Relaxed)),
					    p->lid.load(Order::Relaxed));
			if (len >= sizeof(line))
				len = sizeof(line) - 1;
			if (o.size && o.len + len > o.size)
				return;
			if (o.size)
				__builtin_memcpy(o.buf + o.len, line, len);
			o.len += len;
		}
	}
}

Result<void> fabric_store(weft_ctl_attr attr, Text in)
{
	if (attr != WEFT_CTL_AUTOCONF || WEFT_TRY(parse_u32(in, 1)) != 1)
		return Error(err::EINVAL);
	Fabric::get().autoconfigure();
	return ok();
}

} // namespace

} // namespace weft::hca

using namespace weft;
using namespace weft::hca;

void weft_ctl_init(void)
{
	ctl_lock = new (ctl_lock_storage) Mutex(WEFT_LOCK_CLASS("weft_hca_control"));
}

void weft_ctl_exit(void)
{
	ctl_lock->~Mutex();
	ctl_lock = nullptr;
}

void *weft_ctl_make(enum weft_ctl_kind kind, int *errp)
{
	void *obj = nullptr;
	if (kind == WEFT_CTL_HCA || kind == WEFT_CTL_SWITCH)
		obj = new (Gfp::Sleep) NodeItem(kind == WEFT_CTL_SWITCH);
	else if (kind == WEFT_CTL_CABLE)
		obj = new (Gfp::Sleep) CableItem();
	*errp = obj ? 0 : -err::ENOMEM;
	return obj;
}

void weft_ctl_drop(enum weft_ctl_kind kind, void *obj)
{
	MutexGuard g(*ctl_lock);
	if (kind == WEFT_CTL_CABLE)
		drop_cable(*static_cast<CableItem *>(obj));
	else
		disable_node(*static_cast<NodeItem *>(obj));
}

void weft_ctl_free(enum weft_ctl_kind kind, void *obj)
{
	if (kind == WEFT_CTL_CABLE)
		delete static_cast<CableItem *>(obj);
	else
		delete static_cast<NodeItem *>(obj);
}

long weft_ctl_show(enum weft_ctl_kind kind, void *obj, enum weft_ctl_attr attr, char *buf, size_t size)
{
	Out o{buf, size};
	long r = 0;
	if (kind == WEFT_CTL_FABRIC)
		return -err::EINVAL;
	MutexGuard g(*ctl_lock);
	if (kind == WEFT_CTL_CABLE)
		r = cable_show(*static_cast<CableItem *>(obj), attr, o);
	else
		r = node_show(*static_cast<NodeItem *>(obj), attr, o);
	return r ? r : static_cast<long>(o.len);
}

long weft_ctl_topology(char *buf, size_t size)
{
	Out o{buf, size};
	show_topology(o);
	return static_cast<long>(o.len); /* configfs refuses more than its max (EFBIG) */
}

long weft_ctl_store(enum weft_ctl_kind kind, void *obj, enum weft_ctl_attr attr, const char *buf, size_t len)
{
	Text in(buf, len);
	Result<void> r = ok();
	MutexGuard g(*ctl_lock);
	if (kind == WEFT_CTL_FABRIC)
		r = fabric_store(attr, in);
	else if (kind == WEFT_CTL_CABLE)
		r = cable_store(*static_cast<CableItem *>(obj), attr, in);
	else
		r = node_store(*static_cast<NodeItem *>(obj), attr, in);
	return r ? static_cast<long>(len) : r.to_errno();
}
