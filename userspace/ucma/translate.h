/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pure translation between the rdma_cm ABI's layouts (abi.h) and the RDMA
 * CM's types (include/weft/rdma_cm/rdma_cm.h): socket addresses in and
 * out, the connection and UD parameters of events, the QP attributes of
 * INIT_QP_ATTR and the path records of QUERY_ROUTE / QUERY PATH.  No
 * state, no user memory: the KUnit suite (tests/translate_test.cpp) runs
 * them directly.
 */
#ifndef WEFT_UCMA_TRANSLATE_H
#define WEFT_UCMA_TRANSLATE_H

#include <weft/rdma_cm/rdma_cm.h>

#include "abi.h"

namespace weft::ucma {

/*
 * The size of the socket address at @sa by its family (in-tree
 * rdma_addr_size()): 16 (AF_INET), 28 (AF_INET6), 48 (AF_IB), 0 for any
 * other family.
 */
size_t addr_size(uint16_t family);

/*
 * A socket address from the ABI (@len bytes at @sa, already copied in):
 * AF_INET or AF_INET6.  EAFNOSUPPORT for AF_IB (Weft's RDMA CM has no
 * AF_IB: librdmacm's probe at init binds one and, on any error, uses IP
 * addresses only), EINVAL for a short buffer or another family.
 */
Result<rdma_cm::SockAddr> sockaddr_in(const void *sa, size_t len);

/*
 * Write @a as a sockaddr_in / sockaddr_in6 into @out (@room bytes, all
 * zeroed first); the bytes used, 0 for an address with no family.
 */
size_t sockaddr_out(const rdma_cm::SockAddr &a, void *out, size_t room);

/*
 * The AF_IB view of one end (QUERY GID, in-tree ucma_query_gid()): @gid,
 * @pkey and the service ID of the port space and port (IBA A11.2.2).
 */
void sockaddr_ib_out(const verbs::Gid &gid, uint16_t pkey, rdma_cm::PortSpace ps,
		     uint16_t port, abi::SockaddrIb &out);
uint64_t service_id(rdma_cm::PortSpace ps, uint16_t port);

/* The ABI's connection parameters, as in-tree ucma_copy_conn_param(). */
rdma_cm::ConnParam conn_param_in(const abi::ConnParam &p);
/* An event's parameters, as ucma_copy_conn_event() / ucma_copy_ud_event(). */
void conn_param_out(const rdma_cm::ConnParam &p, abi::ConnParam &out);
void ud_param_out(const rdma_cm::UdParam &p, abi::UdParam &out);
void ah_attr_out(const verbs::AhAttr &a, abi::AhAttr &out);

/* INIT_QP_ATTR's response (in-tree ib_copy_qp_attr_to_user()). */
void qp_attr_out(const verbs::QpAttr &a, uint32_t mask, abi::QpAttr &out);

/* A PathRecord unpacked (ib_copy_path_rec_to_user()). */
void path_rec_out(const iba::PathRecord &pr, abi::UserPathRec &out);

} // namespace weft::ucma

#endif
