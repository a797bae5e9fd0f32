/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The MAD interface of one CA port (IBA Vol 1 13.5): its subnet
 * management interface on QP0 (classes 0x01 and 0x81, directed-route
 * processing and the local SMA included) and its general services
 * interface on QP1 (every other class), each a MadService with agents.
 *
 * weft_mad creates one per port of every CA device it sees (a verbs
 * client).  A verbs client registered after weft_mad (umad, the SA
 * client, ...) may use a device's ports from its own add() until its own
 * remove() returns: the registry removes newer clients first.
 */
#ifndef WEFT_MAD_PORT_H
#define WEFT_MAD_PORT_H

#include <weft/mad/service.h>
#include <weft/verbs/verbs.h>

namespace weft::mad {

class MadPort {
public:
	verbs::Device &device;
	const uint8_t port;

	/* QP0: subnet management (IBA 14.2); QP1: everything else (IBA 13.5.1). */
	virtual MadService &smi() = 0;
	virtual MadService &gsi() = 0;

protected:
	MadPort(verbs::Device &d, uint8_t p) : device(d), port(p) {}
	~MadPort() = default;
};

/* The MAD interface of @dev's @port, or nullptr (not a CA port, not started). */
MadPort *find_port(verbs::Device &dev, uint8_t port);

} // namespace weft::mad

#endif
