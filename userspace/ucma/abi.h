/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rdma_cm write() ABI, version 4 (the in-tree <rdma/rdma_user_cm.h>
 * UAPI as librdmacm 44 uses it), written out as C++ layouts.  Sizes are
 * checked here against ucma_kapi.h, and the shim checks those against the
 * UAPI headers.  Integers are host order (x86-64), except where the ABI
 * says big-endian (GUIDs, P_Keys, socket ports and addresses).
 */
#ifndef WEFT_UCMA_ABI_H
#define WEFT_UCMA_ABI_H

#include <weft/wire.h>

#include "ucma_kapi.h"

namespace weft::ucma::abi {

/* Every write(): a command, the request's bytes after this header, the response's room. */
struct CmdHdr {
	uint32_t cmd;
	uint16_t in;
	uint16_t out;
};

/* The command numbers (RDMA_USER_CM_CMD_*). */
namespace cmd {
inline constexpr uint32_t create_id = 0, destroy_id = 1, bind_ip = 2, resolve_ip = 3,
			  resolve_route = 4, query_route = 5, connect = 6, listen = 7,
			  accept = 8, reject = 9, disconnect = 10, init_qp_attr = 11,
			  get_event = 12, get_option = 13, set_option = 14, notify = 15,
			  join_ip_mcast = 16, leave_mcast = 17, migrate_id = 18, query = 19,
			  bind = 20, resolve_addr = 21, join_mcast = 22, count = 23;
}

inline constexpr size_t max_private_data = 256; /* RDMA_MAX_PRIVATE_DATA */

/* struct sockaddr_in, sockaddr_in6, sockaddr_ib, __kernel_sockaddr_storage. */
struct SockaddrIn {
	uint16_t family;
	be16 port;
	uint8_t addr[4];
	uint8_t zero[8];
};
struct SockaddrIn6 {
	uint16_t family;
	be16 port;
	be32 flowinfo;
	uint8_t addr[16];
	uint32_t scope_id;
};
struct SockaddrIb {
	uint16_t family;
	be16 pkey;
	be32 flowinfo;
	uint8_t gid[16];
	be64 sid;
	be64 sid_mask;
	uint64_t scope_id;
};
struct alignas(8) SockaddrStorage {
	uint16_t family;
	uint8_t data[126];
};

struct CreateId {
	uint64_t uid;
	uint64_t response;
	uint16_t ps;
	uint8_t qp_type;
	uint8_t reserved[5];
};
/* CREATE_ID, JOIN_*MCAST. */
struct IdResp {
	uint32_t id;
};
/* DESTROY_ID, LEAVE_MCAST. */
struct DestroyId {
	uint64_t response;
	uint32_t id;
	uint32_t reserved;
};
/* DESTROY_ID, LEAVE_MCAST, MIGRATE_ID. */
struct EventsResp {
	uint32_t events_reported;
};
struct BindIp {
	uint64_t response;
	SockaddrIn6 addr;
	uint32_t id;
};
struct Bind {
	uint32_t id;
	uint16_t addr_size;
	uint16_t reserved;
	SockaddrStorage addr;
};
struct ResolveIp {
	SockaddrIn6 src_addr;
	SockaddrIn6 dst_addr;
	uint32_t id;
	uint32_t timeout_ms;
};
struct ResolveAddr {
	uint32_t id;
	uint32_t timeout_ms;
	uint16_t src_size;
	uint16_t dst_size;
	uint32_t reserved;
	SockaddrStorage src_addr;
	SockaddrStorage dst_addr;
};
struct ResolveRoute {
	uint32_t id;
	uint32_t timeout_ms;
};

/* QUERY options (RDMA_USER_CM_QUERY_*). */
namespace query {
inline constexpr uint32_t addr = 0, path = 1, gid = 2;
}
/* QUERY_ROUTE and QUERY. */
struct Query {
	uint64_t response;
	uint32_t id;
	uint32_t option;
};

/* struct ib_user_path_rec: a PathRecord unpacked, as ib_copy_path_rec_to_user() fills it. */
struct UserPathRec {
	uint8_t dgid[16];
	uint8_t sgid[16];
	be16 dlid;
	be16 slid;
	uint32_t raw_traffic;
	be32 flow_label;
	uint32_t reversible;
	uint32_t mtu;
	be16 pkey;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t numb_path;
	uint8_t sl;
	uint8_t mtu_selector;
	uint8_t rate_selector;
	uint8_t rate;
	uint8_t packet_life_time_selector;
	uint8_t packet_life_time;
	uint8_t preference;
};
struct QueryRouteResp {
	be64 node_guid;
	UserPathRec ib_route[2];
	SockaddrIn6 src_addr;
	SockaddrIn6 dst_addr;
	uint32_t num_paths;
	uint8_t port_num;
	uint8_t reserved[3];
	uint32_t ibdev_index;
	uint32_t reserved1;
};
/* QUERY ADDR and GID. */
struct QueryAddrResp {
	be64 node_guid;
	uint8_t port_num;
	uint8_t reserved;
	be16 pkey;
	uint16_t src_size;
	uint16_t dst_size;
	SockaddrStorage src_addr;
	SockaddrStorage dst_addr;
	uint32_t ibdev_index;
	uint32_t reserved1;
};
/* struct ib_path_rec_data: a PathRecord in its SA wire format, with flags. */
struct PathRecData {
	uint32_t flags;
	uint32_t reserved;
	uint8_t path_rec[64];
};
struct QueryPathResp {
	uint32_t num_paths;
	uint32_t reserved;
	/* PathRecData path_data[] follows */
};
/* IB_PATH_GMP | IB_PATH_PRIMARY | IB_PATH_BIDIRECTIONAL. */
inline constexpr uint32_t path_flags_primary = 0x01 | 0x02 | 0x08 | 0x20;

struct ConnParam {
	uint32_t qp_num;
	uint32_t qkey;
	uint8_t private_data[max_private_data];
	uint8_t private_data_len;
	uint8_t srq;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t valid;
};

/* struct ib_uverbs_ah_attr (its global route first). */
struct AhAttr {
	uint8_t dgid[16];
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t reserved0;
	uint16_t dlid;
	uint8_t sl;
	uint8_t src_path_bits;
	uint8_t static_rate;
	uint8_t is_global;
	uint8_t port_num;
	uint8_t reserved;
};

struct UdParam {
	uint32_t qp_num;
	uint32_t qkey;
	AhAttr ah_attr;
	uint8_t private_data[max_private_data];
	uint8_t private_data_len;
	uint8_t reserved[7];
};
struct Ece {
	uint32_t vendor_id;
	uint32_t attr_mod;
};
struct Connect {
	ConnParam conn_param;
	uint32_t id;
	uint32_t reserved;
	Ece ece;
};
struct Listen {
	uint32_t id;
	uint32_t backlog;
};
struct Accept {
	uint64_t uid;
	ConnParam conn_param;
	uint32_t id;
	uint32_t reserved;
	Ece ece;
};
struct Reject {
	uint32_t id;
	uint8_t private_data_len;
	uint8_t reason;
	uint8_t reserved[2];
	uint8_t private_data[max_private_data];
};
struct Disconnect {
	uint32_t id;
};
struct InitQpAttr {
	uint64_t response;
	uint32_t id;
	uint32_t qp_state;
};
/* struct ib_uverbs_qp_attr. */
struct QpAttr {
	uint32_t qp_attr_mask;
	uint32_t qp_state;
	uint32_t cur_qp_state;
	uint32_t path_mtu;
	uint32_t path_mig_state;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint32_t qp_access_flags;
	AhAttr ah_attr;
	AhAttr alt_ah_attr;
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
	uint16_t pkey_index;
	uint16_t alt_pkey_index;
	uint8_t en_sqd_async_notify;
	uint8_t sq_draining;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t port_num;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t alt_port_num;
	uint8_t alt_timeout;
	uint8_t reserved[5];
};
struct Notify {
	uint32_t id;
	uint32_t event;
};
struct JoinIpMcast {
	uint64_t response;
	uint64_t uid;
	SockaddrIn6 addr;
	uint32_t id;
};
/* JOIN_MCAST join_flags (RDMA_MC_JOIN_FLAG_*). */
inline constexpr uint16_t join_full_member = 0, join_sendonly_full_member = 1;
struct JoinMcast {
	uint64_t response;
	uint64_t uid;
	uint32_t id;
	uint16_t addr_size;
	uint16_t join_flags;
	SockaddrStorage addr;
};
struct GetEvent {
	uint64_t response;
};
struct EventResp {
	uint64_t uid;
	uint32_t id;
	uint32_t event;
	uint32_t status;
	/* Not 8-byte aligned in the ABI: a union of the two. */
	union {
		ConnParam conn;
		UdParam ud;
	} param;
	uint32_t reserved;
	Ece ece;
};
/* GET_EVENT's minimum: old 32-bit user space sends no padding and no ECE. */
inline constexpr size_t event_resp_min = WEFT_UCMA_OFF_EVENT_RESP_RESERVED;

/* SET_OPTION levels and names (RDMA_OPTION_*). */
namespace opt {
inline constexpr uint32_t level_id = 0, level_ib = 1;
inline constexpr uint32_t tos = 0, reuseaddr = 1, afonly = 2, ack_timeout = 3;
inline constexpr uint32_t ib_path = 1;
} // namespace opt
struct SetOption {
	uint64_t optval;
	uint32_t id;
	uint32_t level;
	uint32_t optname;
	uint32_t optlen;
};
struct MigrateId {
	uint64_t response;
	uint32_t id;
	uint32_t fd;
};

#define WEFT_UCMA_CHECK_SIZE(T, N) static_assert(sizeof(T) == WEFT_UCMA_SZ_##N, #T)
WEFT_UCMA_CHECK_SIZE(CmdHdr, CMD_HDR);
WEFT_UCMA_CHECK_SIZE(CreateId, CREATE_ID);
WEFT_UCMA_CHECK_SIZE(IdResp, ID_RESP);
WEFT_UCMA_CHECK_SIZE(DestroyId, DESTROY_ID);
WEFT_UCMA_CHECK_SIZE(BindIp, BIND_IP);
WEFT_UCMA_CHECK_SIZE(Bind, BIND);
WEFT_UCMA_CHECK_SIZE(ResolveIp, RESOLVE_IP);
WEFT_UCMA_CHECK_SIZE(ResolveAddr, RESOLVE_ADDR);
WEFT_UCMA_CHECK_SIZE(ResolveRoute, RESOLVE_ROUTE);
WEFT_UCMA_CHECK_SIZE(Query, QUERY);
WEFT_UCMA_CHECK_SIZE(UserPathRec, USER_PATH_REC);
WEFT_UCMA_CHECK_SIZE(QueryRouteResp, QUERY_ROUTE_RESP);
WEFT_UCMA_CHECK_SIZE(QueryAddrResp, QUERY_ADDR_RESP);
WEFT_UCMA_CHECK_SIZE(QueryPathResp, QUERY_PATH_RESP);
WEFT_UCMA_CHECK_SIZE(PathRecData, PATH_REC_DATA);
WEFT_UCMA_CHECK_SIZE(ConnParam, CONN_PARAM);
WEFT_UCMA_CHECK_SIZE(AhAttr, AH_ATTR);
WEFT_UCMA_CHECK_SIZE(UdParam, UD_PARAM);
WEFT_UCMA_CHECK_SIZE(Connect, CONNECT);
WEFT_UCMA_CHECK_SIZE(Listen, LISTEN);
WEFT_UCMA_CHECK_SIZE(Accept, ACCEPT);
WEFT_UCMA_CHECK_SIZE(Reject, REJECT);
WEFT_UCMA_CHECK_SIZE(Disconnect, DISCONNECT);
WEFT_UCMA_CHECK_SIZE(InitQpAttr, INIT_QP_ATTR);
WEFT_UCMA_CHECK_SIZE(QpAttr, QP_ATTR);
WEFT_UCMA_CHECK_SIZE(Notify, NOTIFY);
WEFT_UCMA_CHECK_SIZE(JoinIpMcast, JOIN_IP_MCAST);
WEFT_UCMA_CHECK_SIZE(JoinMcast, JOIN_MCAST);
WEFT_UCMA_CHECK_SIZE(GetEvent, GET_EVENT);
WEFT_UCMA_CHECK_SIZE(EventResp, EVENT_RESP);
WEFT_UCMA_CHECK_SIZE(SetOption, SET_OPTION);
WEFT_UCMA_CHECK_SIZE(MigrateId, MIGRATE_ID);
WEFT_UCMA_CHECK_SIZE(SockaddrIn, SOCKADDR_IN);
WEFT_UCMA_CHECK_SIZE(SockaddrIn6, SOCKADDR_IN6);
WEFT_UCMA_CHECK_SIZE(SockaddrIb, SOCKADDR_IB);
WEFT_UCMA_CHECK_SIZE(SockaddrStorage, SOCKADDR_STORAGE);
#undef WEFT_UCMA_CHECK_SIZE
static_assert(__builtin_offsetof(QueryRouteResp, ibdev_index) ==
	      WEFT_UCMA_OFF_QUERY_ROUTE_IBDEV_INDEX);
static_assert(__builtin_offsetof(QueryAddrResp, ibdev_index) ==
	      WEFT_UCMA_OFF_QUERY_ADDR_IBDEV_INDEX);
static_assert(__builtin_offsetof(Connect, ece) == WEFT_UCMA_OFF_CONNECT_ECE);
static_assert(__builtin_offsetof(Accept, ece) == WEFT_UCMA_OFF_ACCEPT_ECE);
static_assert(__builtin_offsetof(EventResp, param) == WEFT_UCMA_OFF_EVENT_RESP_PARAM);
static_assert(__builtin_offsetof(EventResp, reserved) == WEFT_UCMA_OFF_EVENT_RESP_RESERVED);
static_assert(__builtin_offsetof(QpAttr, ah_attr) == 40 && __builtin_offsetof(AhAttr, dlid) == 24);

} // namespace weft::ucma::abi

#endif
