// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the pure translations of weft_ucma (userspace/ucma/translate.h)
 * between the rdma_cm ABI's layouts and the RDMA CM's types: socket
 * addresses in (AF_INET, AF_INET6; AF_IB refused with EAFNOSUPPORT, which
 * turns librdmacm's AF_IB probe off; short or unknown ones EINVAL) and out,
 * the AF_IB view QUERY GID gives, connection and UD parameters, the
 * ib_uverbs_qp_attr of INIT_QP_ATTR and the ib_user_path_rec of
 * QUERY_ROUTE.  The layouts' sizes are checked against the UAPI headers at
 * build time (shim_ucma.c); here, the bytes land where librdmacm reads them.
 */
#include <weft/test.h>

#include "../translate.h"

using namespace weft;
using namespace weft::ucma;
using weft::test::Test;

namespace {

/* A sockaddr laid out by hand, as user space would: family, port (BE), address. */
template <size_t N> void raw_in(uint8_t (&b)[N], uint16_t family, uint16_t port)
{
	__builtin_memset(b, 0, N);
	b[0] = uint8_t(family);
	b[1] = uint8_t(family >> 8);
	b[2] = uint8_t(port >> 8);
	b[3] = uint8_t(port);
}

void sockaddr_in4(Test &t)
{
	uint8_t b[16];
	raw_in(b, WEFT_UCMA_AF_INET, 7174);
	b[4] = 10, b[5] = 78, b[6] = 0, b[7] = 1;
	auto r = sockaddr_in(b, sizeof(b));
	WEFT_ASSERT_OK(t, r);
	WEFT_EXPECT_EQ(t, r->family, rdma_cm::af_inet);
	WEFT_EXPECT_EQ(t, r->port, uint16_t(7174));
	WEFT_EXPECT_EQ(t, r->ip[0], uint8_t(10));
	WEFT_EXPECT_EQ(t, r->ip[3], uint8_t(1));
	/* An IPv4 address in a sockaddr_in6 slot (BIND_IP, RESOLVE_IP) reads the same. */
	uint8_t slot[28];
	raw_in(slot, WEFT_UCMA_AF_INET, 1);
	WEFT_EXPECT_OK(t, sockaddr_in(slot, sizeof(slot)));
}

void sockaddr_in6_scope(Test &t)
{
	uint8_t b[28];
	raw_in(b, WEFT_UCMA_AF_INET6, 0x1234);
	b[8] = 0xfe, b[9] = 0x80, b[23] = 7;
	b[24] = 3; /* scope id 3, host order */
	auto r = sockaddr_in(b, sizeof(b));
	WEFT_ASSERT_OK(t, r);
	WEFT_EXPECT_EQ(t, r->family, rdma_cm::af_inet6);
	WEFT_EXPECT_EQ(t, r->port, uint16_t(0x1234));
	WEFT_EXPECT_EQ(t, r->ip[0], uint8_t(0xfe));
	WEFT_EXPECT_EQ(t, r->ip[15], uint8_t(7));
	WEFT_EXPECT_EQ(t, r->scope_id, 3u);
}

void sockaddr_refused(Test &t)
{
	uint8_t b[48];
	raw_in(b, WEFT_UCMA_AF_IB, 0);
	/* librdmacm's probe binds an AF_IB address; any error turns AF_IB off. */
	WEFT_EXPECT_ERR(t, sockaddr_in(b, sizeof(b)), err::EAFNOSUPPORT);
	raw_in(b, WEFT_UCMA_AF_INET6, 0);
	WEFT_EXPECT_ERR(t, sockaddr_in(b, 27), err::EINVAL);
	raw_in(b, 1 /* AF_UNIX */, 0);
	WEFT_EXPECT_ERR(t, sockaddr_in(b, sizeof(b)), err::EINVAL);
	WEFT_EXPECT_ERR(t, sockaddr_in(b, 1), err::EINVAL);
	WEFT_EXPECT_EQ(t, addr_size(WEFT_UCMA_AF_INET), size_t(16));
	WEFT_EXPECT_EQ(t, addr_size(WEFT_UCMA_AF_INET6), size_t(28));
	WEFT_EXPECT_EQ(t, addr_size(WEFT_UCMA_AF_IB), size_t(48));
	WEFT_EXPECT_EQ(t, addr_size(0), size_t(0));
}

void sockaddr_round_trip(Test &t)
{
	rdma_cm::SockAddr a;
	a.family = rdma_cm::af_inet;
	a.port = 18515;
	a.ip[0] = 192, a.ip[3] = 9;
	abi::SockaddrStorage ss;
	__builtin_memset(&ss, 0xaa, sizeof(ss));
	WEFT_EXPECT_EQ(t, sockaddr_out(a, &ss, sizeof(ss)), size_t(16));
	const auto *p = reinterpret_cast<const uint8_t *>(&ss);
	WEFT_EXPECT_EQ(t, p[0], uint8_t(WEFT_UCMA_AF_INET));
	WEFT_EXPECT_EQ(t, p[2], uint8_t(18515 >> 8));
	WEFT_EXPECT_EQ(t, p[3], uint8_t(18515 & 0xff));
	WEFT_EXPECT_EQ(t, p[4], uint8_t(192));
	WEFT_EXPECT_EQ(t, p[16], uint8_t(0)); /* the rest zeroed */
	auto back = sockaddr_in(&ss, 16);
	WEFT_ASSERT_OK(t, back);
	WEFT_EXPECT_TRUE(t, rdma_cm::same_ip(*back, a));
	WEFT_EXPECT_EQ(t, back->port, a.port);
	/* No family: nothing written but zeros (QUERY before bind). */
	WEFT_EXPECT_EQ(t, sockaddr_out(rdma_cm::SockAddr{}, &ss, sizeof(ss)), size_t(0));
	WEFT_EXPECT_EQ(t, p[0], uint8_t(0));
	/* An IPv6 address does not fit a sockaddr_in's room. */
	a.family = rdma_cm::af_inet6;
	WEFT_EXPECT_EQ(t, sockaddr_out(a, &ss, 16), size_t(0));
	WEFT_EXPECT_EQ(t, sockaddr_out(a, &ss, 28), size_t(28));
}

void sockaddr_ib_view(Test &t)
{
	verbs::Gid g{};
	g.raw[0] = 0xfe, g.raw[1] = 0x80, g.raw[15] = 0x42;
	abi::SockaddrIb s;
	sockaddr_ib_out(g, 0xffff, rdma_cm::PortSpace::Tcp, 7174, s);
	WEFT_EXPECT_EQ(t, s.family, uint16_t(WEFT_UCMA_AF_IB));
	WEFT_EXPECT_EQ(t, s.pkey.get(), uint16_t(0xffff));
	WEFT_EXPECT_EQ(t, s.gid[15], uint8_t(0x42));
	/* IBA A11.2: 0x0000000001060000 + port for RDMA_PS_TCP. */
	WEFT_EXPECT_EQ(t, s.sid.get(), 0x0000000001061c06ull);
	WEFT_EXPECT_EQ(t, service_id(rdma_cm::PortSpace::Udp, 1), 0x0000000001110001ull);
}

void conn_params(Test &t)
{
	abi::ConnParam in;
	__builtin_memset(&in, 0, sizeof(in));
	in.qp_num = 0xff123456; /* the top byte is not a QPN's */
	in.private_data_len = 5;
	__builtin_memcpy(in.private_data, "hello", 5);
	in.responder_resources = 4, in.initiator_depth = 3, in.flow_control = 1;
	in.retry_count = 6, in.rnr_retry_count = 7, in.srq = 1, in.valid = 1;
	const rdma_cm::ConnParam p = conn_param_in(in);
	WEFT_EXPECT_EQ(t, p.qp_num, 0x123456u);
	WEFT_EXPECT_EQ(t, p.private_data.size(), size_t(5));
	WEFT_EXPECT_EQ(t, p.private_data[4], uint8_t('o'));
	WEFT_EXPECT_EQ(t, p.responder_resources, uint8_t(4));
	WEFT_EXPECT_EQ(t, p.initiator_depth, uint8_t(3));
	WEFT_EXPECT_EQ(t, p.retry_count, uint8_t(6));
	WEFT_EXPECT_TRUE(t, p.srq);

	abi::EventResp ev;
	conn_param_out(p, ev.param.conn);
	WEFT_EXPECT_EQ(t, ev.param.conn.qp_num, 0x123456u);
	WEFT_EXPECT_EQ(t, ev.param.conn.private_data_len, uint8_t(5));
	WEFT_EXPECT_EQ(t, ev.param.conn.private_data[0], uint8_t('h'));
	WEFT_EXPECT_EQ(t, ev.param.conn.rnr_retry_count, uint8_t(7));
	WEFT_EXPECT_EQ(t, ev.param.conn.valid, uint8_t(0));
	/* librdmacm reads the union at byte 20 of the event. */
	WEFT_EXPECT_EQ(t, reinterpret_cast<uint8_t *>(&ev.param) - reinterpret_cast<uint8_t *>(&ev),
		       long(WEFT_UCMA_OFF_EVENT_RESP_PARAM));
	/* More private data than the ABI's u8 length can say is cut at 255. */
	static uint8_t big[300];
	rdma_cm::ConnParam q;
	q.private_data = ConstBytes(big, sizeof(big));
	conn_param_out(q, ev.param.conn);
	WEFT_EXPECT_EQ(t, ev.param.conn.private_data_len, uint8_t(255));
}

void ud_params(Test &t)
{
	rdma_cm::UdParam u;
	static const uint8_t pd[] = {1, 2, 3};
	u.private_data = ConstBytes(pd, sizeof(pd));
	u.qp_num = 0x4242, u.qkey = 0x01234567;
	u.ah.dlid = 0x17, u.ah.sl = 2, u.ah.port = 1, u.ah.global = true;
	u.ah.dgid.raw[0] = 0xff, u.ah.hop_limit = 64, u.ah.flow_label = 0xabcde;
	abi::UdParam out;
	ud_param_out(u, out);
	WEFT_EXPECT_EQ(t, out.qp_num, 0x4242u);
	WEFT_EXPECT_EQ(t, out.qkey, 0x01234567u);
	WEFT_EXPECT_EQ(t, out.private_data_len, uint8_t(3));
	WEFT_EXPECT_EQ(t, out.private_data[2], uint8_t(3));
	WEFT_EXPECT_EQ(t, out.ah_attr.dlid, uint16_t(0x17));
	WEFT_EXPECT_EQ(t, out.ah_attr.sl, uint8_t(2));
	WEFT_EXPECT_EQ(t, out.ah_attr.port_num, uint8_t(1));
	WEFT_EXPECT_EQ(t, out.ah_attr.is_global, uint8_t(1));
	WEFT_EXPECT_EQ(t, out.ah_attr.dgid[0], uint8_t(0xff));
	WEFT_EXPECT_EQ(t, out.ah_attr.hop_limit, uint8_t(64));
	WEFT_EXPECT_EQ(t, out.ah_attr.flow_label, 0xabcdeu);
	/* struct ib_uverbs_ah_attr: the GRH's 24 bytes, then dlid. */
	const auto *b = reinterpret_cast<const uint8_t *>(&out.ah_attr);
	WEFT_EXPECT_EQ(t, b[24], uint8_t(0x17));
	WEFT_EXPECT_EQ(t, b[29], uint8_t(1)); /* is_global */
}

void qp_attr_layout(Test &t)
{
	verbs::QpAttr a;
	a.state = verbs::QpState::Rtr;
	a.path_mtu = iba::Mtu::M2048;
	a.rq_psn = 0x123456, a.dest_qp_num = 0x99;
	a.qp_access_flags = verbs::access::remote_write;
	a.ah_attr.dlid = 5, a.ah_attr.port = 1;
	a.max_dest_rd_atomic = 4, a.min_rnr_timer = 12, a.port_num = 1, a.pkey_index = 2;
	a.timeout = 14, a.retry_cnt = 7, a.rnr_retry = 7, a.max_rd_atomic = 3;
	const uint32_t mask = verbs::qp_attr::state | verbs::qp_attr::av |
			      verbs::qp_attr::path_mtu | verbs::qp_attr::dest_qpn |
			      verbs::qp_attr::rq_psn | verbs::qp_attr::max_dest_rd_atomic |
			      verbs::qp_attr::min_rnr_timer;
	abi::QpAttr out;
	qp_attr_out(a, mask, out);
	const auto *b = reinterpret_cast<const uint8_t *>(&out);
	auto u32_at = [&](size_t off) {
		uint32_t v;
		__builtin_memcpy(&v, b + off, 4);
		return v;
	};
	/* struct ib_uverbs_qp_attr offsets as libibverbs' ibv_copy_qp_attr_from_kern reads them. */
	WEFT_EXPECT_EQ(t, u32_at(0), mask);
	WEFT_EXPECT_EQ(t, u32_at(4), 2u);	   /* qp_state: RTR */
	WEFT_EXPECT_EQ(t, u32_at(12), 4u);	   /* path_mtu: IBV_MTU_2048 */
	WEFT_EXPECT_EQ(t, u32_at(24), 0x123456u); /* rq_psn */
	WEFT_EXPECT_EQ(t, u32_at(32), 0x99u);	   /* dest_qp_num */
	WEFT_EXPECT_EQ(t, u32_at(36), uint32_t(verbs::access::remote_write));
	WEFT_EXPECT_EQ(t, b[40 + 24], uint8_t(5)); /* ah_attr.dlid */
	WEFT_EXPECT_EQ(t, b[40 + 30], uint8_t(1)); /* ah_attr.port_num */
	WEFT_EXPECT_EQ(t, b[124], uint8_t(2));	   /* pkey_index */
	WEFT_EXPECT_EQ(t, b[130], uint8_t(3));	   /* max_rd_atomic */
	WEFT_EXPECT_EQ(t, b[131], uint8_t(4));	   /* max_dest_rd_atomic */
	WEFT_EXPECT_EQ(t, b[132], uint8_t(12));   /* min_rnr_timer */
	WEFT_EXPECT_EQ(t, b[133], uint8_t(1));	   /* port_num */
	WEFT_EXPECT_EQ(t, b[134], uint8_t(14));   /* timeout */
	WEFT_EXPECT_EQ(t, b[135], uint8_t(7));	   /* retry_cnt */
	WEFT_EXPECT_EQ(t, b[136], uint8_t(7));	   /* rnr_retry */
}

void path_record(Test &t)
{
	iba::PathRecord pr{};
	pr.dgid[15] = 2, pr.sgid[15] = 1;
	pr.dlid.set(0x12), pr.slid.set(0x34);
	iba::PathRecord::FlowLabel::set(pr.hop_flow_raw, 0x54321);
	iba::PathRecord::HopLimit::set(pr.hop_flow_raw, 0x40);
	pr.tclass.set(0x20);
	iba::PathRecord::Reversible::set(pr.num_path, 1);
	iba::PathRecord::NumbPath::set(pr.num_path, 1);
	pr.pkey.set(0xffff);
	iba::PathRecord::Sl::set(pr.qos_sl, 3);
	pr.mtu.set(0x80 | 4);	   /* exactly 2048 */
	pr.rate.set(0x80 | 7);	   /* exactly 40 Gb/s */
	pr.pkt_life.set(0x80 | 18);
	abi::UserPathRec out;
	path_rec_out(pr, out);
	WEFT_EXPECT_EQ(t, out.dgid[15], uint8_t(2));
	WEFT_EXPECT_EQ(t, out.sgid[15], uint8_t(1));
	WEFT_EXPECT_EQ(t, out.dlid.get(), uint16_t(0x12));
	WEFT_EXPECT_EQ(t, out.slid.get(), uint16_t(0x34));
	WEFT_EXPECT_EQ(t, out.flow_label.get(), 0x54321u);
	WEFT_EXPECT_EQ(t, out.hop_limit, uint8_t(0x40));
	WEFT_EXPECT_EQ(t, out.traffic_class, uint8_t(0x20));
	WEFT_EXPECT_EQ(t, out.reversible, 1u);
	WEFT_EXPECT_EQ(t, out.numb_path, uint8_t(1));
	WEFT_EXPECT_EQ(t, out.pkey.get(), uint16_t(0xffff));
	WEFT_EXPECT_EQ(t, out.sl, uint8_t(3));
	WEFT_EXPECT_EQ(t, out.mtu_selector, uint8_t(2));
	WEFT_EXPECT_EQ(t, out.mtu, 4u);
	WEFT_EXPECT_EQ(t, out.rate_selector, uint8_t(2));
	WEFT_EXPECT_EQ(t, out.rate, uint8_t(7));
	WEFT_EXPECT_EQ(t, out.packet_life_time, uint8_t(18));
	WEFT_EXPECT_EQ(t, out.raw_traffic, 0u);
}

} // namespace

WEFT_TEST_SUITE(weft_ucma_translate, WEFT_CASE(sockaddr_in4), WEFT_CASE(sockaddr_in6_scope),
		WEFT_CASE(sockaddr_refused), WEFT_CASE(sockaddr_round_trip),
		WEFT_CASE(sockaddr_ib_view), WEFT_CASE(conn_params), WEFT_CASE(ud_params),
		WEFT_CASE(qp_attr_layout), WEFT_CASE(path_record));
