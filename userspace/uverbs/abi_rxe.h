/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user queues of the stock rxe provider (the in-tree UAPI
 * <rdma/rdma_user_rxe.h>, librxe of rdma-core 44): a ring is a 384-byte
 * header (element size, index mask, producer and consumer indices on
 * their own cache lines) and 2^k elements, mmap'ed by the process at the
 * offset a create response names.  The process produces send and receive
 * WQEs and consumes completions; the kernel the other way round.
 *
 * Everything in a ring is writable by the process at any time: the kernel
 * keeps its own copy of the mask and of its own index, reads each WQE
 * once into kernel memory, and checks it before use.
 */
#ifndef WEFT_UVERBS_ABI_RXE_H
#define WEFT_UVERBS_ABI_RXE_H

#include <weft/atomic.h>

#include "uverbs_kapi.h"

namespace weft::uverbs::rxe {

struct QueueHdr {
	uint32_t log2_elem_size;
	uint32_t index_mask;
	uint32_t pad_1[30];
	Atomic<uint32_t> producer_index;
	uint32_t pad_2[31];
	Atomic<uint32_t> consumer_index;
	uint32_t pad_3[31];
};
static_assert(sizeof(QueueHdr) == 384);
static_assert(__builtin_offsetof(QueueHdr, consumer_index) == 256);

/* struct mminfo: where a ring is mapped (mmap offset) and its size. */
struct MmInfo {
	uint64_t offset;
	uint32_t size;
	uint32_t pad;
};

struct Sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/* struct rxe_send_wr: the process's work request (IBV_WR_* opcodes). */
struct SendWr {
	uint64_t wr_id;
	uint32_t reserved;
	uint32_t opcode;
	uint32_t send_flags;
	uint32_t ex; /* imm_data (big-endian) or invalidate_rkey */
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey, reserved;
		} rdma;
		struct {
			uint64_t remote_addr, compare_add, swap;
			uint32_t rkey, reserved;
		} atomic;
		struct {
			uint32_t remote_qpn, remote_qkey;
			uint16_t pkey_index, reserved;
			uint32_t ah_num;
			uint32_t pad[4];
			uint8_t av[88]; /* struct rxe_av: old kernels only (ah_num 0) */
		} ud;
		/* IBV_WR_BIND_MW (librxe's wr_bind_mw(), convert_send_wr()). */
		struct {
			uint64_t addr, length;
			uint32_t mr_lkey, mw_rkey, rkey, access;
		} mw;
	} wr;
};

struct DmaInfo {
	uint32_t length, resid, cur_sge, num_sge, sge_offset, reserved;
	/* Followed by Sge[num_sge] or the inline data. */
};

struct SendWqe {
	SendWr wr;
	uint32_t status, state;
	uint64_t iova;
	uint32_t mask, first_psn, last_psn, ack_length, ssn, has_rd_atomic;
	DmaInfo dma;
};

struct RecvWqe {
	uint64_t wr_id;
	uint32_t reserved, padding;
	DmaInfo dma;
};

/* struct ib_uverbs_wc: a completion as the process polls it. */
struct Wc {
	uint64_t wr_id;
	uint32_t status, opcode, vendor_err, byte_len;
	uint32_t ex; /* imm_data (big-endian) or invalidate_rkey */
	uint32_t qp_num, src_qp, wc_flags;
	uint16_t pkey_index, slid;
	uint8_t sl, dlid_path_bits, port_num, reserved;
};

struct CreateCqResp {
	MmInfo mi;
};
/* rxe_resize_cq_resp: the new ring's place. */
/* urxe_modify_srq's driver data: where the resized ring's MmInfo goes. */
struct ModifySrqCmd {
	uint64_t mmap_info_addr;
};
struct ResizeCqResp {
	MmInfo mi;
};
struct CreateQpResp {
	MmInfo rq_mi, sq_mi;
};
struct CreateSrqResp {
	MmInfo mi;
	uint32_t srq_num, reserved;
};
struct CreateAhResp {
	uint32_t ah_num, reserved;
};

static_assert(sizeof(SendWr) == WEFT_UVERBS_SZ_RXE_SEND_WR);
static_assert(sizeof(SendWqe) == WEFT_UVERBS_SZ_RXE_SEND_WQE);
static_assert(sizeof(RecvWqe) == WEFT_UVERBS_SZ_RXE_RECV_WQE);
static_assert(sizeof(Wc) == WEFT_UVERBS_SZ_WC);
static_assert(sizeof(CreateSrqResp) == 24);

/* enum ibv_wr_opcode, as librxe writes it into SendWr::opcode. */
namespace wr {
inline constexpr uint32_t rdma_write = 0, rdma_write_imm = 1, send = 2, send_imm = 3,
			  rdma_read = 4, atomic_cmp_swp = 5, atomic_fetch_add = 6, local_inv = 7,
			  bind_mw = 8, send_inv = 9;
} // namespace wr

/* enum ib_uverbs_wc_opcode and the wc_flags bits (IBV_WC_*). */
namespace wc {
inline constexpr uint32_t send = 0, rdma_write = 1, rdma_read = 2, comp_swap = 3, fetch_add = 4,
			  bind_mw = 5, local_inv = 6, recv = 128, recv_rdma_imm = 129;
inline constexpr uint32_t flag_grh = 1, flag_imm = 2, flag_csum_ok = 4, flag_inv = 8;
} // namespace wc

} // namespace weft::uverbs::rxe

#endif
