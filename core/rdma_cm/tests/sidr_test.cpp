// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: SIDR (IBA 12.11) through the RDMA CM on a two-port HCA, the
 * request arriving on port 2.  The new Id the listener's owner gets is
 * on the port the SIDR_REQ came in on, with that port's GID, as a REQ's
 * is (conn.cpp CmListener::event): its owner's UD QP and address handles
 * use that port.  The answer reaches the requester as Established.
 */
#include "rig.h"

using namespace weft;
using namespace weft::rdma_cm;
using namespace weft::rdma_cm::testing;
using weft::test::Test;

namespace {

constexpr uint16_t sidr_port = 4792;
constexpr uint32_t answer_qpn = 0x4321;

struct Side final : Handler {
	Atomic<int> counts[16];
	Id *passive = nullptr;
	Info req{};	     /* the new Id, as the ConnectRequest found it */
	int accept_errno = 0;
	uint32_t peer_qpn = 0; /* Established (active): the SIDR_REP's QPN */
	uint8_t ah_port = 0;

	int event(const Event &e) override
	{
		if (e.type == EventType::ConnectRequest) {
			passive = e.id;
			req = info(*e.id);
			ConnParam p;
			p.qp_num = answer_qpn;
			auto r = accept(*e.id, p);
			accept_errno = r ? 0 : r.error().code();
		} else if (e.type == EventType::Established) {
			peer_qpn = e.ud.qp_num;
			ah_port = e.ud.ah.port;
		}
		counts[int(e.type)].fetch_add(1, Order::Release);
		return 0;
	}
	int seen(EventType t) const { return counts[int(t)].load(Order::Acquire); }
	bool wait(EventType t, int ms = 30000) const
	{
		for (int i = 0; i < ms && !seen(t); i++)
			weft_msleep(1);
		return seen(t) > 0;
	}
};

void sidr_request_on_port_2(Test &t)
{
	auto own = make_own<Rig>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, own);
	Rig &rig = *own.value();
	WEFT_ASSERT_OK(t, rig.up());
	Side a, b;
	Net *net = init_net();
	auto made = create_id(net, PortSpace::Udp, verbs::QpType::Ud, b, nullptr);
	put_net(net);
	WEFT_ASSERT_OK(t, made);
	Id *lis = made.value();
	auto act = routed_id(rig, PortSpace::Udp, verbs::QpType::Ud, a, sidr_port);
	if (!act) {
		destroy(lis);
		WEFT_ASSERT_OK(t, act);
	}
	SockAddr any;
	any.family = af_inet;
	any.port = sidr_port;
	WEFT_EXPECT_OK(t, bind(*lis, any));
	WEFT_EXPECT_OK(t, listen(*lis, 4));
	ConnParam p;
	p.qp_num = 0x1234; /* no QP attached: the SIDR_REQ's sender needs none */
	WEFT_EXPECT_OK(t, connect(*act.value(), p));
	WEFT_EXPECT_TRUE(t, b.wait(EventType::ConnectRequest));
	WEFT_EXPECT_TRUE(t, a.wait(EventType::Established));

	WEFT_EXPECT_EQ(t, b.req.port, uint8_t(2));
	WEFT_EXPECT_TRUE(t, b.req.sgid == rig.gid(2));
	WEFT_EXPECT_TRUE(t, b.req.dev == static_cast<verbs::Device *>(rig.h));
	WEFT_EXPECT_EQ(t, b.accept_errno, 0);
	WEFT_EXPECT_EQ(t, a.peer_qpn, answer_qpn);
	WEFT_EXPECT_EQ(t, a.ah_port, uint8_t(1));
	if (b.passive)
		destroy(b.passive);
	destroy(act.value());
	destroy(lis);
}

} // namespace

WEFT_TEST_SUITE(weft_rdma_cm_sidr, WEFT_CASE(sidr_request_on_port_2));
