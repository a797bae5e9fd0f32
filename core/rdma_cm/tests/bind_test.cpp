// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the RDMA CM's port spaces (bind.cpp) and what Ids accept before
 * any device is involved: which bindings of one port conflict (the same
 * address, a wildcard over either family unless both are afonly, unless
 * both share with reuseaddr and neither listens), ephemeral ports, the
 * port spaces kept apart, and the errnos of bad arguments; and the
 * multicast MGID mapping (mcast.cpp) against RFC 4391's layout.
 */
#include <weft/test.h>

#include "../rcm.h"

using namespace weft;
using namespace weft::rdma_cm;
using weft::test::Test;

namespace {

struct Quiet final : Handler {
	int event(const Event &) override { return 0; }
};

/* Ids in the initial namespace, destroyed at the end of the case. */
struct Ids {
	Quiet h;
	Net *net = init_net();
	Id *ids[8] = {};
	size_t n = 0;

	~Ids()
	{
		for (size_t i = 0; i < n; i++)
			destroy(ids[i]);
		put_net(net);
	}
	Id *make(PortSpace ps = PortSpace::Tcp, verbs::QpType t = verbs::QpType::Rc)
	{
		auto r = create_id(net, ps, t, h, nullptr);
		if (!r)
			return nullptr;
		ids[n++] = r.value();
		return r.value();
	}
};

SockAddr any4(uint16_t port)
{
	SockAddr a;
	a.family = af_inet;
	a.port = port;
	return a;
}

SockAddr any6(uint16_t port)
{
	SockAddr a;
	a.family = af_inet6;
	a.port = port;
	return a;
}

void create_checks_port_space(Test &t)
{
	Ids ids;
	Quiet h;
	WEFT_EXPECT_ERR(t, create_id(ids.net, PortSpace::Tcp, verbs::QpType::Ud, h, nullptr), err::EINVAL);
	WEFT_EXPECT_ERR(t, create_id(ids.net, PortSpace::Udp, verbs::QpType::Rc, h, nullptr), err::EINVAL);
	WEFT_EXPECT_ERR(t, create_id(ids.net, static_cast<PortSpace>(0x0123), verbs::QpType::Rc, h, nullptr),
			err::EINVAL);
	WEFT_EXPECT_ERR(t, create_id(nullptr, PortSpace::Tcp, verbs::QpType::Rc, h, nullptr), err::EINVAL);
	WEFT_EXPECT_TRUE(t, ids.make(PortSpace::Udp, verbs::QpType::Ud) != nullptr);
	WEFT_EXPECT_TRUE(t, ids.make(PortSpace::Ib, verbs::QpType::Rc) != nullptr);
}

void same_port_conflicts(Test &t)
{
	Ids ids;
	Id *a = ids.make(), *b = ids.make(), *c = ids.make(), *d = ids.make();
	WEFT_ASSERT_TRUE(t, a && b && c && d);
	WEFT_EXPECT_OK(t, bind(*a, any4(7001)));
	WEFT_EXPECT_ERR(t, bind(*b, any4(7001)), err::EADDRINUSE);
	/* A wildcard covers the other family too... */
	WEFT_EXPECT_ERR(t, bind(*b, any6(7001)), err::EADDRINUSE);
	/* ...unless both are afonly. */
	WEFT_EXPECT_OK(t, bind(*c, any4(7002)));
	WEFT_EXPECT_OK(t, bind(*b, any6(7003)));
	WEFT_EXPECT_OK(t, bind(*d, any4(7004)));
	Id *e = ids.make(), *f = ids.make();
	WEFT_ASSERT_TRUE(t, e && f);
	WEFT_EXPECT_OK(t, set_afonly(*e, true));
	WEFT_EXPECT_OK(t, set_afonly(*f, true));
	WEFT_EXPECT_OK(t, bind(*e, any4(7005)));
	WEFT_EXPECT_OK(t, bind(*f, any6(7005)));
	/* Bound once: afonly and a second bind are refused. */
	WEFT_EXPECT_ERR(t, set_afonly(*e, false), err::EINVAL);
	WEFT_EXPECT_ERR(t, bind(*e, any4(7006)), err::EINVAL);
}

void reuseaddr_shares_until_listen(Test &t)
{
	Ids ids;
	Id *a = ids.make(), *b = ids.make(), *c = ids.make();
	WEFT_ASSERT_TRUE(t, a && b && c);
	WEFT_EXPECT_OK(t, set_reuseaddr(*a, true));
	WEFT_EXPECT_OK(t, set_reuseaddr(*b, true));
	WEFT_EXPECT_OK(t, set_reuseaddr(*c, true));
	WEFT_EXPECT_OK(t, bind(*a, any4(7010)));
	WEFT_EXPECT_OK(t, bind(*b, any4(7010)));
	/* A listener keeps its port to itself. */
	WEFT_EXPECT_OK(t, listen(*a, 8));
	WEFT_EXPECT_ERR(t, bind(*c, any4(7010)), err::EADDRINUSE);
}

void port_spaces_apart(Test &t)
{
	Ids ids;
	Id *tcp = ids.make(), *udp = ids.make(PortSpace::Udp, verbs::QpType::Ud);
	WEFT_ASSERT_TRUE(t, tcp && udp);
	WEFT_EXPECT_OK(t, bind(*tcp, any4(7020)));
	WEFT_EXPECT_OK(t, bind(*udp, any4(7020)));
}

void ephemeral_ports(Test &t)
{
	Ids ids;
	Id *a = ids.make(), *b = ids.make();
	WEFT_ASSERT_TRUE(t, a && b);
	WEFT_EXPECT_OK(t, bind(*a, any4(0)));
	WEFT_EXPECT_OK(t, bind(*b, any4(0)));
	uint16_t pa = info(*a).src.port, pb = info(*b).src.port;
	WEFT_EXPECT_GE(t, pa, 32768);
	WEFT_EXPECT_LE(t, pa, 60999);
	WEFT_EXPECT_GE(t, pb, 32768);
	WEFT_EXPECT_NE(t, pa, pb);
}

void bad_arguments(Test &t)
{
	Ids ids;
	Id *a = ids.make();
	WEFT_ASSERT_TRUE(t, a != nullptr);
	SockAddr none;
	WEFT_EXPECT_ERR(t, bind(*a, none), err::EAFNOSUPPORT);
	WEFT_EXPECT_ERR(t, resolve_addr(*a, nullptr, none, 100), err::EAFNOSUPPORT);
	/* 192.0.2.1 (TEST-NET-1) is no address of this host. */
	SockAddr far = any4(7030);
	far.ip[0] = 192, far.ip[2] = 2, far.ip[3] = 1;
	WEFT_EXPECT_ERR(t, bind(*a, far), err::EADDRNOTAVAIL);
	/* Nothing resolved: no route, no connect, no QP attributes past Init. */
	WEFT_EXPECT_ERR(t, resolve_route(*a, 100), err::EINVAL);
	ConnParam cp;
	cp.qp_num = 0x123;
	WEFT_EXPECT_ERR(t, connect(*a, cp), err::EINVAL);
	verbs::QpAttr qa;
	uint32_t mask = 0;
	WEFT_EXPECT_ERR(t, init_qp_attr(*a, verbs::QpState::Rtr, qa, mask), err::EINVAL);
	WEFT_EXPECT_ERR(t, set_ack_timeout(*a, 32), err::EINVAL);
	/* Multicast is for UD Ids only. */
	WEFT_EXPECT_ERR(t, join_multicast(*a, far, iba::join::full, nullptr), err::EINVAL);
}

void mgid_mapping(Test &t)
{
	/* RFC 4391 §4: ff1<scope>:401b:<P_Key>::<low 28 bits>; the RDMA CM's UDP groups sign 0x01. */
	SockAddr g = any4(0);
	g.ip[0] = 224, g.ip[1] = 1, g.ip[2] = 2, g.ip[3] = 3;
	static const uint8_t udp4[16] = {0xff, 0x12, 0x40, 0x01, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0x00, 0x01, 0x02, 0x03};
	WEFT_EXPECT_TRUE(t, !__builtin_memcmp(mcast_mgid(g, PortSpace::Udp, 0x7fff).raw, udp4, 16));
	g.ip[0] = 239;
	verbs::Gid m = mcast_mgid(g, PortSpace::Ipoib, 0x8001);
	static const uint8_t ipoib4[16] = {0xff, 0x12, 0x40, 0x1b, 0x80, 0x01, 0, 0, 0, 0, 0, 0, 0x0f, 0x01, 0x02, 0x03};
	WEFT_EXPECT_TRUE(t, !__builtin_memcmp(m.raw, ipoib4, 16));
	SockAddr g6 = any6(0);
	static const uint8_t a6[16] = {0xff, 0x0e, 0, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa};
	__builtin_memcpy(g6.ip, a6, 16);
	static const uint8_t udp6[16] = {0xff, 0x12, 0x60, 0x01, 0xff, 0xff, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa};
	WEFT_EXPECT_TRUE(t, !__builtin_memcmp(mcast_mgid(g6, PortSpace::Udp, 0xffff).raw, udp6, 16));
}

void ids_all_freed(Test &t)
{
	uint32_t before = stats().ids;
	{
		Ids ids;
		for (int i = 0; i < 4; i++)
			WEFT_EXPECT_TRUE(t, ids.make() != nullptr);
		WEFT_EXPECT_EQ(t, stats().ids, before + 4);
		WEFT_EXPECT_OK(t, listen(*ids.ids[0], 4));
	}
	WEFT_EXPECT_EQ(t, stats().ids, before);
	WEFT_EXPECT_EQ(t, stats().listeners, 0u);
}

/* rdma_cm.h: a handler's non-zero answer destroys the Id, owner's reference and all. */
struct Done final : Handler {
	int calls = 0;
	int event(const Event &) override { return ++calls; }
};

void nonzero_answer_frees_the_id(Test &t)
{
	uint32_t before = stats().ids;
	Done h;
	Net *net = init_net();
	auto r = create_id(net, PortSpace::Tcp, verbs::QpType::Rc, h, nullptr);
	WEFT_ASSERT_OK(t, r);
	WEFT_EXPECT_EQ(t, stats().ids, before + 1);
	Event e{};
	e.type = EventType::AddrChange;
	deliver(*r.value(), e); /* the Id may be gone once the reaper ran: not touched after */
	rcm->reaper.flush();
	WEFT_EXPECT_EQ(t, h.calls, 1);
	WEFT_EXPECT_EQ(t, stats().ids, before);
	put_net(net);
}

} // namespace

WEFT_TEST_SUITE(weft_rdma_cm_bind, WEFT_CASE(create_checks_port_space), WEFT_CASE(same_port_conflicts),
		WEFT_CASE(reuseaddr_shares_until_listen), WEFT_CASE(port_spaces_apart), WEFT_CASE(ephemeral_ports),
		WEFT_CASE(bad_arguments), WEFT_CASE(mgid_mapping), WEFT_CASE(ids_all_freed),
		WEFT_CASE(nonzero_answer_frees_the_id));
