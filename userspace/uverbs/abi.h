/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The uverbs write() ABI, version 6 (the in-tree <rdma/ib_user_verbs.h>
 * UAPI as libibverbs 44 uses it), written out as C++ layouts.  Sizes are
 * checked here against uverbs_kapi.h, and the shim checks those against
 * the UAPI header.  Integers are host order (x86-64: little-endian),
 * except the GUIDs, which the ABI carries big-endian (__be64).
 */
#ifndef WEFT_UVERBS_ABI_H
#define WEFT_UVERBS_ABI_H

#include <weft/wire.h>

#include "uverbs_kapi.h"

namespace weft::uverbs::abi {

/* Every write() starts with this; the words count 4 bytes, header included. */
struct CmdHdr {
	uint32_t command;
	uint16_t in_words;
	uint16_t out_words;
};
static_assert(sizeof(CmdHdr) == WEFT_UVERBS_SZ_CMD_HDR);

/* Extended commands add this; their words count 8 bytes, headers excluded. */
struct ExCmdHdr {
	uint64_t response;
	uint16_t provider_in_words;
	uint16_t provider_out_words;
	uint32_t cmd_hdr_reserved;
};
static_assert(sizeof(ExCmdHdr) == WEFT_UVERBS_SZ_EX_CMD_HDR);

/* IB_USER_VERBS_CMD_FLAG_EXTENDED and IB_USER_VERBS_CMD_COMMAND_MASK. */
inline constexpr uint32_t cmd_flag_extended = 0x80000000u;
inline constexpr uint32_t cmd_command_mask = 0xffu;

/* enum ib_uverbs_write_cmds (the extended ones share the numbers). */
namespace cmd {
inline constexpr uint32_t get_context = 0;
inline constexpr uint32_t query_device = 1;
inline constexpr uint32_t query_port = 2;
} // namespace cmd

/* Requests of commands with a response start with the response's address. */
struct GetContext {
	uint64_t response;
};
static_assert(sizeof(GetContext) == WEFT_UVERBS_SZ_GET_CONTEXT);

struct GetContextResp {
	uint32_t async_fd;
	uint32_t num_comp_vectors;
};
static_assert(sizeof(GetContextResp) == WEFT_UVERBS_SZ_GET_CONTEXT_RESP);

struct QueryDevice {
	uint64_t response;
};
static_assert(sizeof(QueryDevice) == WEFT_UVERBS_SZ_QUERY_DEVICE);

struct QueryDeviceResp {
	uint64_t fw_ver;
	be64 node_guid;
	be64 sys_image_guid;
	uint64_t max_mr_size;
	uint64_t page_size_cap;
	uint32_t vendor_id, vendor_part_id, hw_ver;
	uint32_t max_qp, max_qp_wr;
	uint32_t device_cap_flags;
	uint32_t max_sge, max_sge_rd;
	uint32_t max_cq, max_cqe;
	uint32_t max_mr, max_pd;
	uint32_t max_qp_rd_atom, max_ee_rd_atom, max_res_rd_atom;
	uint32_t max_qp_init_rd_atom, max_ee_init_rd_atom;
	uint32_t atomic_cap;
	uint32_t max_ee, max_rdd, max_mw;
	uint32_t max_raw_ipv6_qp, max_raw_ethy_qp;
	uint32_t max_mcast_grp, max_mcast_qp_attach, max_total_mcast_qp_attach;
	uint32_t max_ah;
	uint32_t max_fmr, max_map_per_fmr;
	uint32_t max_srq, max_srq_wr, max_srq_sge;
	uint16_t max_pkeys;
	uint8_t local_ca_ack_delay;
	uint8_t phys_port_cnt;
	uint8_t reserved[4];
};
static_assert(sizeof(QueryDeviceResp) == WEFT_UVERBS_SZ_QUERY_DEVICE_RESP);
static_assert(__builtin_offsetof(QueryDeviceResp, vendor_id) == 40);
static_assert(__builtin_offsetof(QueryDeviceResp, max_pkeys) == 168);

struct QueryPort {
	uint64_t response;
	uint8_t port_num;
	uint8_t reserved[7];
};
static_assert(sizeof(QueryPort) == WEFT_UVERBS_SZ_QUERY_PORT);

struct QueryPortResp {
	uint32_t port_cap_flags;
	uint32_t max_msg_sz;
	uint32_t bad_pkey_cntr;
	uint32_t qkey_viol_cntr;
	uint32_t gid_tbl_len;
	uint16_t pkey_tbl_len;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t state;
	uint8_t max_mtu;
	uint8_t active_mtu;
	uint8_t lmc;
	uint8_t max_vl_num;
	uint8_t sm_sl;
	uint8_t subnet_timeout;
	uint8_t init_type_reply;
	uint8_t active_width;
	uint8_t active_speed;
	uint8_t phys_state;
	uint8_t link_layer;
	uint8_t flags;
	uint8_t reserved;
};
static_assert(sizeof(QueryPortResp) == WEFT_UVERBS_SZ_QUERY_PORT_RESP);
static_assert(__builtin_offsetof(QueryPortResp, lid) == 22);
static_assert(__builtin_offsetof(QueryPortResp, link_layer) == 37);

struct ExQueryDevice {
	uint32_t comp_mask;
	uint32_t reserved;
};
static_assert(sizeof(ExQueryDevice) == WEFT_UVERBS_SZ_EX_QUERY_DEVICE);

struct ExQueryDeviceResp {
	QueryDeviceResp base;
	uint32_t comp_mask;
	uint32_t response_length;
	struct {
		uint64_t general_caps;
		uint32_t rc_odp_caps, uc_odp_caps, ud_odp_caps;
		uint32_t reserved;
	} odp_caps;
	uint64_t timestamp_mask;
	uint64_t hca_core_clock; /* kHz */
	uint64_t device_cap_flags_ex;
	struct {
		uint32_t supported_qpts;
		uint32_t max_rwq_indirection_tables;
		uint32_t max_rwq_indirection_table_size;
		uint32_t reserved;
	} rss_caps;
	uint32_t max_wq_type_rq;
	uint32_t raw_packet_caps;
	struct {
		uint32_t max_rndv_hdr_size, max_num_tags, flags, max_ops, max_sge, reserved;
	} tm_caps;
	struct {
		uint16_t max_cq_moderation_count;
		uint16_t max_cq_moderation_period;
		uint32_t reserved;
	} cq_moderation_caps;
	uint64_t max_dm_size;
	uint32_t xrc_odp_caps;
	uint32_t reserved;
};
static_assert(sizeof(ExQueryDeviceResp) == WEFT_UVERBS_SZ_EX_QUERY_DEVICE_RESP);
static_assert(__builtin_offsetof(ExQueryDeviceResp, response_length) == 180);
static_assert(__builtin_offsetof(ExQueryDeviceResp, device_cap_flags_ex) == 224);

/* What the async event file's read() returns, one per event. */
struct AsyncEventDesc {
	uint64_t element; /* port number, or the object's user handle */
	uint32_t event_type; /* enum ib_event_type */
	uint32_t reserved;
};
static_assert(sizeof(AsyncEventDesc) == WEFT_UVERBS_SZ_ASYNC_EVENT_DESC);

/* enum ib_uverbs_device_cap_flags (the ones Weft reports). */
namespace device_cap {
inline constexpr uint64_t bad_pkey_cntr = 1u << 1;
inline constexpr uint64_t bad_qkey_cntr = 1u << 2;
inline constexpr uint64_t port_active_event = 1u << 10;
inline constexpr uint64_t sys_image_guid = 1u << 11;
inline constexpr uint64_t rc_rnr_nak_gen = 1u << 12;
inline constexpr uint64_t n_notify_cq = 1u << 14;
inline constexpr uint64_t mem_window = 1u << 17;
inline constexpr uint64_t mem_window_type_2b = 1u << 24;
} // namespace device_cap

/* enum ib_atomic_cap. */
inline constexpr uint32_t atomic_none = 0;
inline constexpr uint32_t atomic_hca = 1;

/* enum ib_link_layer (IB_LINK_LAYER_INFINIBAND). */
inline constexpr uint8_t link_layer_infiniband = 1;

} // namespace weft::uverbs::abi

#endif
