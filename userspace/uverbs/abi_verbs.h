/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The object commands of the uverbs write() ABI, version 6 (the in-tree
 * <rdma/ib_user_verbs.h> structures libibverbs 44 sends), as C++ layouts.
 * Sizes are checked against uverbs_kapi.h here and against the UAPI
 * header in shim_uverbs.c.  Host-order integers; GIDs are raw bytes.
 */
#ifndef WEFT_UVERBS_ABI_VERBS_H
#define WEFT_UVERBS_ABI_VERBS_H

#include "abi.h"

namespace weft::uverbs::abi {

namespace cmd {
inline constexpr uint32_t alloc_pd = 3;
inline constexpr uint32_t dealloc_pd = 4;
inline constexpr uint32_t create_ah = 5;
inline constexpr uint32_t destroy_ah = 8;
inline constexpr uint32_t reg_mr = 9;
inline constexpr uint32_t dereg_mr = 13;
inline constexpr uint32_t alloc_mw = 14;
inline constexpr uint32_t dealloc_mw = 16; /* 15 is BIND_MW: not offered (librxe binds by WQE) */
inline constexpr uint32_t create_comp_channel = 17;
inline constexpr uint32_t create_cq = 18;
inline constexpr uint32_t resize_cq = 19;
inline constexpr uint32_t destroy_cq = 20;
inline constexpr uint32_t req_notify_cq = 23;
inline constexpr uint32_t create_qp = 24;
inline constexpr uint32_t query_qp = 25;
inline constexpr uint32_t modify_qp = 26;
inline constexpr uint32_t destroy_qp = 27;
inline constexpr uint32_t post_send = 28;
inline constexpr uint32_t attach_mcast = 30;
inline constexpr uint32_t detach_mcast = 31;
inline constexpr uint32_t create_srq = 32;
inline constexpr uint32_t modify_srq = 33;
inline constexpr uint32_t query_srq = 34;
inline constexpr uint32_t destroy_srq = 35;
} // namespace cmd

struct AllocPd {
	uint64_t response;
};
struct AllocPdResp {
	uint32_t pd_handle;
};
struct DeallocPd {
	uint32_t pd_handle;
};

struct RegMr {
	uint64_t response;
	uint64_t start;
	uint64_t length;
	uint64_t hca_va;
	uint32_t pd_handle;
	uint32_t access_flags;
};
struct RegMrResp {
	uint32_t mr_handle, lkey, rkey;
};
struct DeregMr {
	uint32_t mr_handle;
};

struct AllocMw {
	uint64_t response;
	uint32_t pd_handle;
	uint8_t mw_type; /* enum ib_mw_type */
	uint8_t reserved[3];
};
struct AllocMwResp {
	uint32_t mw_handle, rkey;
};
struct DeallocMw {
	uint32_t mw_handle;
};
static_assert(sizeof(AllocMw) == WEFT_UVERBS_SZ_ALLOC_MW);
static_assert(sizeof(AllocMwResp) == WEFT_UVERBS_SZ_ALLOC_MW_RESP);

struct CreateCompChannel {
	uint64_t response;
};
struct CreateCompChannelResp {
	uint32_t fd;
};

struct CreateCq {
	uint64_t response;
	uint64_t user_handle;
	uint32_t cqe;
	uint32_t comp_vector;
	int32_t comp_channel;
	uint32_t reserved;
};
struct CreateCqResp {
	uint32_t cq_handle;
	uint32_t cqe;
};
struct ResizeCq {
	uint64_t response;
	uint32_t cq_handle;
	uint32_t cqe;
};
struct ResizeCqResp {
	uint32_t cqe;
	uint32_t reserved;
};
struct DestroyCq {
	uint64_t response;
	uint32_t cq_handle;
	uint32_t reserved;
};
struct DestroyCqResp {
	uint32_t comp_events_reported;
	uint32_t async_events_reported;
};
struct ReqNotifyCq {
	uint32_t cq_handle;
	uint32_t solicited_only;
};
/* What a completion channel's read() returns, one per event. */
struct CompEventDesc {
	uint64_t cq_handle;
};

struct CreateQp {
	uint64_t response;
	uint64_t user_handle;
	uint32_t pd_handle, send_cq_handle, recv_cq_handle, srq_handle;
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline_data;
	uint8_t sq_sig_all, qp_type, is_srq, reserved;
};
struct CreateQpResp {
	uint32_t qp_handle, qpn;
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline_data;
	uint32_t reserved;
};

/* struct ib_uverbs_qp_dest: an address vector in Modify/Query QP. */
struct QpDest {
	uint8_t dgid[16];
	uint32_t flow_label;
	uint16_t dlid;
	uint16_t reserved;
	uint8_t sgid_index, hop_limit, traffic_class, sl, src_path_bits, static_rate, is_global,
		port_num;
};

struct QueryQp {
	uint64_t response;
	uint32_t qp_handle;
	uint32_t attr_mask;
};
struct QueryQpResp {
	QpDest dest, alt_dest;
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline_data;
	uint32_t qkey, rq_psn, sq_psn, dest_qp_num, qp_access_flags;
	uint16_t pkey_index, alt_pkey_index;
	uint8_t qp_state, cur_qp_state, path_mtu, path_mig_state, sq_draining, max_rd_atomic,
		max_dest_rd_atomic, min_rnr_timer, port_num, timeout, retry_cnt, rnr_retry,
		alt_port_num, alt_timeout, sq_sig_all;
	uint8_t reserved[5];
};

struct ModifyQp {
	QpDest dest, alt_dest;
	uint32_t qp_handle, attr_mask;
	uint32_t qkey, rq_psn, sq_psn, dest_qp_num, qp_access_flags;
	uint16_t pkey_index, alt_pkey_index;
	uint8_t qp_state, cur_qp_state, path_mtu, path_mig_state, en_sqd_async_notify,
		max_rd_atomic, max_dest_rd_atomic, min_rnr_timer, port_num, timeout, retry_cnt,
		rnr_retry, alt_port_num, alt_timeout;
	uint8_t reserved[2];
};

struct DestroyQp {
	uint64_t response;
	uint32_t qp_handle;
	uint32_t reserved;
};
struct DestroyQpResp {
	uint32_t events_reported;
};

struct PostSend {
	uint64_t response;
	uint32_t qp_handle, wr_count, sge_count, wqe_size;
};
struct PostSendResp {
	uint32_t bad_wr;
};

/* struct ib_uverbs_ah_attr. */
struct AhAttr {
	uint8_t dgid[16];
	uint32_t flow_label;
	uint8_t sgid_index, hop_limit, traffic_class, reserved0;
	uint16_t dlid;
	uint8_t sl, src_path_bits, static_rate, is_global, port_num, reserved;
};
struct CreateAh {
	uint64_t response;
	uint64_t user_handle;
	uint32_t pd_handle;
	uint32_t reserved;
	AhAttr attr;
};
struct CreateAhResp {
	uint32_t ah_handle;
};
struct DestroyAh {
	uint32_t ah_handle;
};

struct Mcast {
	uint8_t gid[16];
	uint32_t qp_handle;
	uint16_t mlid;
	uint16_t reserved;
};

struct CreateSrq {
	uint64_t response;
	uint64_t user_handle;
	uint32_t pd_handle, max_wr, max_sge, srq_limit;
};
struct CreateSrqResp {
	uint32_t srq_handle, max_wr, max_sge, srqn;
};
struct ModifySrq {
	uint32_t srq_handle, attr_mask, max_wr, srq_limit;
};
struct QuerySrq {
	uint64_t response;
	uint32_t srq_handle;
	uint32_t reserved;
};
struct QuerySrqResp {
	uint32_t max_wr, max_sge, srq_limit, reserved;
};
struct DestroySrq {
	uint64_t response;
	uint32_t srq_handle;
	uint32_t reserved;
};
struct DestroySrqResp {
	uint32_t events_reported;
};

/* The extended creates (the request has no response address: the ex header carries it). */
struct ExCreateCq {
	uint64_t user_handle;
	uint32_t cqe, comp_vector;
	int32_t comp_channel;
	uint32_t comp_mask, flags, reserved;
};
struct ExCreateCqResp {
	CreateCqResp base;
	uint32_t comp_mask, response_length;
};
struct ExCreateQp {
	uint64_t user_handle;
	uint32_t pd_handle, send_cq_handle, recv_cq_handle, srq_handle;
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline_data;
	uint8_t sq_sig_all, qp_type, is_srq, reserved;
	uint32_t comp_mask, create_flags, rwq_ind_tbl_handle, source_qpn;
};
struct ExCreateQpResp {
	CreateQpResp base;
	uint32_t comp_mask, response_length;
};

/* enum ib_srq_attr_mask. */
inline constexpr uint32_t srq_max_wr = 1, srq_limit = 2;

#define WEFT_UVERBS_CHECK_SIZE(T, N) static_assert(sizeof(T) == WEFT_UVERBS_SZ_##N)
WEFT_UVERBS_CHECK_SIZE(AllocPd, ALLOC_PD);
WEFT_UVERBS_CHECK_SIZE(AllocPdResp, ALLOC_PD_RESP);
WEFT_UVERBS_CHECK_SIZE(RegMr, REG_MR);
WEFT_UVERBS_CHECK_SIZE(RegMrResp, REG_MR_RESP);
WEFT_UVERBS_CHECK_SIZE(CreateCq, CREATE_CQ);
WEFT_UVERBS_CHECK_SIZE(CreateCqResp, CREATE_CQ_RESP);
WEFT_UVERBS_CHECK_SIZE(DestroyCq, DESTROY_CQ);
WEFT_UVERBS_CHECK_SIZE(ResizeCq, RESIZE_CQ);
WEFT_UVERBS_CHECK_SIZE(ResizeCqResp, RESIZE_CQ_RESP);
WEFT_UVERBS_CHECK_SIZE(CreateQp, CREATE_QP);
WEFT_UVERBS_CHECK_SIZE(CreateQpResp, CREATE_QP_RESP);
WEFT_UVERBS_CHECK_SIZE(QpDest, QP_DEST);
WEFT_UVERBS_CHECK_SIZE(QueryQpResp, QUERY_QP_RESP);
WEFT_UVERBS_CHECK_SIZE(ModifyQp, MODIFY_QP);
WEFT_UVERBS_CHECK_SIZE(PostSend, POST_SEND);
WEFT_UVERBS_CHECK_SIZE(AhAttr, AH_ATTR);
WEFT_UVERBS_CHECK_SIZE(CreateAh, CREATE_AH);
WEFT_UVERBS_CHECK_SIZE(Mcast, MCAST);
WEFT_UVERBS_CHECK_SIZE(CreateSrq, CREATE_SRQ);
WEFT_UVERBS_CHECK_SIZE(CreateSrqResp, CREATE_SRQ_RESP);
WEFT_UVERBS_CHECK_SIZE(ModifySrq, MODIFY_SRQ);
WEFT_UVERBS_CHECK_SIZE(ExCreateCq, EX_CREATE_CQ);
WEFT_UVERBS_CHECK_SIZE(ExCreateCqResp, EX_CREATE_CQ_RESP);
WEFT_UVERBS_CHECK_SIZE(ExCreateQp, EX_CREATE_QP);
WEFT_UVERBS_CHECK_SIZE(ExCreateQpResp, EX_CREATE_QP_RESP);
static_assert(__builtin_offsetof(ModifyQp, qp_handle) == 64);
static_assert(__builtin_offsetof(QueryQpResp, qp_state) == 108);
static_assert(__builtin_offsetof(AhAttr, dlid) == 24);

} // namespace weft::uverbs::abi

#endif
