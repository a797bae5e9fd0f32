// SPDX-License-Identifier: GPL-2.0
/*
 * The default subnet built at module load: N single-port HCAs behind one
 * switch (module parameters in module.c).  Run-time topology changes go
 * through configfs (control.cpp); these nodes are visible there by name.
 */
#include <weft/log.h>

#include "capture.h"
#include "hca.h"
#include "hca_module.h"
#include "switch.h"

namespace weft::hca {

namespace {
const Logger log("weft_hca");

constexpr size_t max_nodes = 17;
verbs::Device *devices[max_nodes];
Node *nodes[max_nodes];
size_t count;

Result<void> add_node(Node &n, verbs::Device &d)
{
	Fabric::get().add(n);
	nodes[count] = &n;
	devices[count] = &d;
	count++;
	WEFT_TRY(verbs::register_device(d));
	/* Named now: its ports' capture files go under weft/<name>/. */
	Capture::add_node(n, d.name());
	return ok();
}

Result<void> build(unsigned int hcas, unsigned int switch_ports)
{
	if (hcas < 1 || hcas + 1 > max_nodes || switch_ports < hcas)
		return Error(err::EINVAL);
	Switch *sw = WEFT_TRY(Switch::create(static_cast<uint8_t>(switch_ports)));
	WEFT_TRY(add_node(*sw, *sw));
	for (unsigned int i = 0; i < hcas; i++) {
		Hca *h = WEFT_TRY(Hca::create(1));
		WEFT_TRY(add_node(*h, *h));
		WEFT_TRY(Fabric::get().connect(*h->port(1), *sw->port(static_cast<uint8_t>(i + 1))));
	}
	return ok();
}

} // namespace

} // namespace weft::hca

using namespace weft::hca;

void weft_hca_topology_destroy(void)
{
	/* Reverse order: HCAs first, then the switch they hang off. */
	while (count) {
		count--;
		Capture::remove_node(*nodes[count]);
		weft::verbs::unregister_device(*devices[count]);
		Fabric::get().remove(*nodes[count]);
		devices[count]->put();
	}
}

int weft_hca_topology_create(unsigned int hcas, unsigned int switch_ports, bool autoconf)
{
	auto r = build(hcas, switch_ports);
	if (!r) {
		weft_hca_topology_destroy();
		return r.to_errno();
	}
	if (autoconf)
		Fabric::get().autoconfigure();
	return 0;
}
