/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit support for the RDMA CM suites that need a device of their own: a
 * private two-port soft HCA beside the default subnet, its port 1 cabled
 * to its port 2 (autoconfigure() in place of an SM), registered with
 * verbs so that the RDMA CM, the IB CM and the MAD layer take it up, and
 * removable while Ids use it.  Ids are put in the state address and route
 * resolution leave them in by hand: no SA or IPoIB is involved.
 */
#ifndef WEFT_RDMA_CM_TESTS_RIG_H
#define WEFT_RDMA_CM_TESTS_RIG_H

#include <weft/test.h>

#include "../../../drivers/hca/hca.h"
#include "../rcm.h"

namespace weft::rdma_cm::testing {

struct Rig {
	hca::Hca *h = nullptr;
	bool registered = false;

	Result<void> up()
	{
		h = WEFT_TRY(hca::Hca::create(2));
		hca::Fabric::get().add(*h);
		WEFT_TRY(verbs::register_device(*h));
		registered = true;
		WEFT_TRY(hca::Fabric::get().connect(*h->port(1), *h->port(2)));
		hca::Fabric::get().autoconfigure();
		return ok();
	}

	/* Device removal: every verbs client (the RDMA CM's detach_ids among them) lets go. */
	void unregister()
	{
		if (exchange(registered, false))
			verbs::unregister_device(*h);
	}

	~Rig()
	{
		if (!h)
			return;
		unregister();
		hca::Fabric::get().remove(*h);
		h->put();
	}

	uint16_t lid(uint8_t port) const { return h->port(port)->lid.load(Order::Relaxed); }

	verbs::Gid gid(uint8_t port) const
	{
		auto g = h->query_gid(port, 0);
		return g ? g.value() : verbs::Gid{};
	}

	/* The path from @from to @to as an SA would answer (IBA 15.2.5.16). */
	iba::PathRecord path(uint8_t from, uint8_t to) const
	{
		iba::PathRecord pr{};
		__builtin_memcpy(pr.sgid, gid(from).raw, 16);
		__builtin_memcpy(pr.dgid, gid(to).raw, 16);
		pr.slid.set(lid(from));
		pr.dlid.set(lid(to));
		pr.pkey.set(0xffff);
		iba::PathRecord::Value::set(pr.mtu, static_cast<uint8_t>(iba::Mtu::M2048));
		iba::PathRecord::Value::set(pr.pkt_life, 2);
		return pr;
	}
};

inline SockAddr ip4(uint8_t last, uint16_t port)
{
	SockAddr a;
	a.family = af_inet;
	a.ip[0] = 10;
	a.ip[1] = 99;
	a.ip[3] = last;
	a.port = port;
	return a;
}

/* Put @id where resolve_route() leaves it: on @r's port 1, routed to port 2. */
inline bool place(Rig &r, Id &id, uint16_t dport)
{
	verbs::Gid sgid = r.gid(1), dgid = r.gid(2);
	MutexGuard g(rcm->lock);
	uint8_t port = 0;
	RcmDevice *d = find_by_gid_locked(sgid, port);
	if (!d || port != 1)
		return false;
	attach_dev_locked(id, *d, port);
	id.src = ip4(1, 0);
	id.dst = ip4(2, dport);
	id.sgid = sgid;
	id.dgid = dgid;
	id.pkey = 0xffff;
	id.route = r.path(1, 2);
	id.has_route = true;
	id.state = IdState::RouteResolved;
	return true;
}

/* A new Id, routed (place()) to 10.99.0.2:@dport; the owner destroys it. */
inline Result<Id *> routed_id(Rig &r, PortSpace ps, verbs::QpType t, Handler &h, uint16_t dport)
{
	Net *net = init_net();
	auto made = create_id(net, ps, t, h, nullptr);
	put_net(net);
	if (!made)
		return made.error();
	Id *id = made.value();
	if (!place(r, *id, dport)) {
		destroy(id);
		return Error(err::ENODEV);
	}
	return id;
}

} // namespace weft::rdma_cm::testing

#endif
