// SPDX-License-Identifier: GPL-2.0
/*
 * ABI <-> RDMA CM translation (translate.h).  Facts from the in-tree 6.1
 * ucma.c and uverbs_marshall.c; layouts from <rdma/rdma_user_cm.h>.
 */
#include "translate.h"

namespace weft::ucma {

namespace {

void copy(void *dst, const void *src, size_t n)
{
	__builtin_memcpy(dst, src, n);
}

template <typename T> void zero(T &v)
{
	__builtin_memset(static_cast<void *>(&v), 0, sizeof(v));
}

} // namespace

size_t addr_size(uint16_t family)
{
	switch (family) {
	case WEFT_UCMA_AF_INET:
		return sizeof(abi::SockaddrIn);
	case WEFT_UCMA_AF_INET6:
		return sizeof(abi::SockaddrIn6);
	case WEFT_UCMA_AF_IB:
		return sizeof(abi::SockaddrIb);
	default:
		return 0;
	}
}

Result<rdma_cm::SockAddr> sockaddr_in(const void *sa, size_t len)
{
	uint16_t family;
	if (len < sizeof(family))
		return Error(err::EINVAL);
	copy(&family, sa, sizeof(family));
	const size_t need = addr_size(family);
	if (!need || len < need)
		return Error(err::EINVAL);
	rdma_cm::SockAddr a;
	if (family == WEFT_UCMA_AF_IB)
		return Error(err::EAFNOSUPPORT);
	if (family == WEFT_UCMA_AF_INET) {
		abi::SockaddrIn in;
		copy(&in, sa, sizeof(in));
		a.family = rdma_cm::af_inet;
		a.port = in.port.get();
		copy(a.ip, in.addr, sizeof(in.addr));
		return a;
	}
	abi::SockaddrIn6 in6;
	copy(&in6, sa, sizeof(in6));
	a.family = rdma_cm::af_inet6;
	a.port = in6.port.get();
	copy(a.ip, in6.addr, sizeof(in6.addr));
	a.scope_id = in6.scope_id;
	return a;
}

size_t sockaddr_out(const rdma_cm::SockAddr &a, void *out, size_t room)
{
	__builtin_memset(out, 0, room);
	if (a.family == rdma_cm::af_inet && room >= sizeof(abi::SockaddrIn)) {
		abi::SockaddrIn in;
		zero(in);
		in.family = WEFT_UCMA_AF_INET;
		in.port.set(a.port);
		copy(in.addr, a.ip, sizeof(in.addr));
		copy(out, &in, sizeof(in));
		return sizeof(in);
	}
	if (a.family == rdma_cm::af_inet6 && room >= sizeof(abi::SockaddrIn6)) {
		abi::SockaddrIn6 in6;
		zero(in6);
		in6.family = WEFT_UCMA_AF_INET6;
		in6.port.set(a.port);
		copy(in6.addr, a.ip, sizeof(in6.addr));
		in6.scope_id = a.scope_id;
		copy(out, &in6, sizeof(in6));
		return sizeof(in6);
	}
	return 0;
}

/* IBA A11.2.2: the port space in bits 16..31 of the service ID, the IP port below. */
uint64_t service_id(rdma_cm::PortSpace ps, uint16_t port)
{
	return (uint64_t(static_cast<uint16_t>(ps)) << 16) | port;
}

void sockaddr_ib_out(const verbs::Gid &gid, uint16_t pkey, rdma_cm::PortSpace ps, uint16_t port,
		     abi::SockaddrIb &out)
{
	zero(out);
	out.family = WEFT_UCMA_AF_IB;
	out.pkey.set(pkey);
	copy(out.gid, gid.raw, sizeof(out.gid));
	out.sid.set(service_id(ps, port));
}

rdma_cm::ConnParam conn_param_in(const abi::ConnParam &p)
{
	rdma_cm::ConnParam c;
	/* The length is a u8 (at most 255), within the 256-byte array. */
	c.private_data = ConstBytes(p.private_data, p.private_data_len);
	c.responder_resources = p.responder_resources;
	c.initiator_depth = p.initiator_depth;
	c.flow_control = p.flow_control;
	c.retry_count = p.retry_count;
	c.rnr_retry_count = p.rnr_retry_count;
	c.srq = p.srq != 0;
	c.qp_num = p.qp_num & 0xffffff; /* a QPN is 24 bits (IBA 9.2) */
	return c;
}

/* Private data beyond the ABI's 256 bytes cannot be reported; the RDMA CM never hands more. */
static uint8_t private_out(ConstBytes pd, uint8_t *dst)
{
	const size_t n = min(pd.size(), abi::max_private_data - 1);
	if (n)
		copy(dst, pd.data(), n);
	return static_cast<uint8_t>(n);
}

void conn_param_out(const rdma_cm::ConnParam &p, abi::ConnParam &out)
{
	zero(out);
	out.private_data_len = private_out(p.private_data, out.private_data);
	out.responder_resources = p.responder_resources;
	out.initiator_depth = p.initiator_depth;
	out.flow_control = p.flow_control;
	out.retry_count = p.retry_count;
	out.rnr_retry_count = p.rnr_retry_count;
	out.srq = p.srq;
	out.qp_num = p.qp_num;
}

void ah_attr_out(const verbs::AhAttr &a, abi::AhAttr &out)
{
	zero(out);
	copy(out.dgid, a.dgid.raw, sizeof(out.dgid));
	out.flow_label = a.flow_label;
	out.sgid_index = a.sgid_index;
	out.hop_limit = a.hop_limit;
	out.traffic_class = a.traffic_class;
	out.dlid = a.dlid;
	out.sl = a.sl;
	out.src_path_bits = a.src_path_bits;
	out.static_rate = a.static_rate;
	out.is_global = a.global;
	out.port_num = a.port;
}

void ud_param_out(const rdma_cm::UdParam &p, abi::UdParam &out)
{
	zero(out);
	out.private_data_len = private_out(p.private_data, out.private_data);
	ah_attr_out(p.ah, out.ah_attr);
	out.qp_num = p.qp_num;
	out.qkey = p.qkey;
}

void qp_attr_out(const verbs::QpAttr &a, uint32_t mask, abi::QpAttr &out)
{
	zero(out);
	out.qp_attr_mask = mask;
	out.qp_state = static_cast<uint32_t>(a.state);
	out.cur_qp_state = static_cast<uint32_t>(a.cur_state);
	out.path_mtu = static_cast<uint32_t>(a.path_mtu);
	out.path_mig_state = static_cast<uint32_t>(a.path_mig_state);
	out.qkey = a.qkey;
	out.rq_psn = a.rq_psn;
	out.sq_psn = a.sq_psn;
	out.dest_qp_num = a.dest_qp_num;
	out.qp_access_flags = a.qp_access_flags;
	ah_attr_out(a.ah_attr, out.ah_attr);
	ah_attr_out(a.alt_ah_attr, out.alt_ah_attr);
	out.max_send_wr = a.cap.max_send_wr;
	out.max_recv_wr = a.cap.max_recv_wr;
	out.max_send_sge = a.cap.max_send_sge;
	out.max_recv_sge = a.cap.max_recv_sge;
	out.max_inline_data = a.cap.max_inline_data;
	out.pkey_index = a.pkey_index;
	out.alt_pkey_index = a.alt_pkey_index;
	out.en_sqd_async_notify = a.en_sqd_async_notify;
	out.sq_draining = a.sq_draining;
	out.max_rd_atomic = a.max_rd_atomic;
	out.max_dest_rd_atomic = a.max_dest_rd_atomic;
	out.min_rnr_timer = a.min_rnr_timer;
	out.port_num = a.port_num;
	out.timeout = a.timeout;
	out.retry_cnt = a.retry_cnt;
	out.rnr_retry = a.rnr_retry;
	out.alt_port_num = a.alt_port_num;
	out.alt_timeout = a.alt_timeout;
}

/* IBA 15.2.5.16 PathRecord fields, one per member; selectors "exactly" (2) as the SA answers. */
void path_rec_out(const iba::PathRecord &pr, abi::UserPathRec &out)
{
	using PR = iba::PathRecord;
	zero(out);
	copy(out.dgid, pr.dgid, sizeof(out.dgid));
	copy(out.sgid, pr.sgid, sizeof(out.sgid));
	out.dlid = pr.dlid;
	out.slid = pr.slid;
	out.raw_traffic = pr.hop_flow_raw.bits<31, 1>();
	out.flow_label.set(PR::FlowLabel::get(pr.hop_flow_raw));
	out.hop_limit = static_cast<uint8_t>(PR::HopLimit::get(pr.hop_flow_raw));
	out.traffic_class = pr.tclass.get();
	out.reversible = PR::Reversible::get(pr.num_path);
	out.numb_path = PR::NumbPath::get(pr.num_path);
	out.pkey = pr.pkey;
	out.sl = static_cast<uint8_t>(PR::Sl::get(pr.qos_sl));
	out.mtu_selector = pr.mtu.bits<6, 2>();
	out.mtu = PR::Value::get(pr.mtu);
	out.rate_selector = pr.rate.bits<6, 2>();
	out.rate = PR::Value::get(pr.rate);
	out.packet_life_time_selector = pr.pkt_life.bits<6, 2>();
	out.packet_life_time = PR::Value::get(pr.pkt_life);
	out.preference = pr.preference.get();
}

} // namespace weft::ucma
