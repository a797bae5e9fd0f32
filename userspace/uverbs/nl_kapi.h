/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between weft_uverbs' RDMA netlink commands (nldev.cpp) and the kernel
 * side of NETLINK_RDMA (shim_nldev.c).
 *
 * The shim owns the kernel socket of every network namespace, receives
 * requests, validates their attributes against the nldev policy and
 * starts dumps; C++ decides what each command answers and builds the
 * answer through the put functions below.  A request (struct weft_nl_req)
 * is valid only during the callback it is passed to.
 *
 * Numbers are those of the in-tree UAPI <rdma/rdma_netlink.h> (the shim
 * checks each against it at build time).
 */
#ifndef WEFT_UVERBS_NL_KAPI_H
#define WEFT_UVERBS_NL_KAPI_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

/* RDMA_NL_NLDEV commands (enum rdma_nldev_command). */
#define WEFT_NLDEV_CMD_GET 1
#define WEFT_NLDEV_CMD_PORT_GET 5
#define WEFT_NLDEV_CMD_SYS_GET 6
#define WEFT_NLDEV_CMD_RES_GET 9		/* the per-device summary */
#define WEFT_NLDEV_CMD_RES_QP_GET 10
#define WEFT_NLDEV_CMD_RES_CM_ID_GET 11
#define WEFT_NLDEV_CMD_RES_CQ_GET 12
#define WEFT_NLDEV_CMD_RES_MR_GET 13
#define WEFT_NLDEV_CMD_RES_PD_GET 14
#define WEFT_NLDEV_CMD_GET_CHARDEV 15
#define WEFT_NLDEV_NUM_OPS 25

/* Attributes (enum rdma_nldev_attr). */
#define WEFT_NLDEV_ATTR_DEV_INDEX 1		/* u32 */
#define WEFT_NLDEV_ATTR_DEV_NAME 2		/* string */
#define WEFT_NLDEV_ATTR_PORT_INDEX 3		/* u32 */
#define WEFT_NLDEV_ATTR_CAP_FLAGS 4		/* u64 */
#define WEFT_NLDEV_ATTR_FW_VERSION 5		/* string */
#define WEFT_NLDEV_ATTR_NODE_GUID 6		/* u64, host order */
#define WEFT_NLDEV_ATTR_SYS_IMAGE_GUID 7	/* u64, host order */
#define WEFT_NLDEV_ATTR_SUBNET_PREFIX 8		/* u64, host order */
#define WEFT_NLDEV_ATTR_LID 9			/* u32 */
#define WEFT_NLDEV_ATTR_SM_LID 10		/* u32 */
#define WEFT_NLDEV_ATTR_LMC 11			/* u8 */
#define WEFT_NLDEV_ATTR_PORT_STATE 12		/* u8 */
#define WEFT_NLDEV_ATTR_PORT_PHYS_STATE 13	/* u8 */
#define WEFT_NLDEV_ATTR_DEV_NODE_TYPE 14	/* u8 */
/* Resource tracking (RES_*): nests, and the entries' attributes. */
#define WEFT_NLDEV_ATTR_RES_SUMMARY 15		/* nest of SUMMARY_ENTRY */
#define WEFT_NLDEV_ATTR_RES_SUMMARY_ENTRY 16	/* nest */
#define WEFT_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME 17 /* string */
#define WEFT_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR 18 /* u64 */
#define WEFT_NLDEV_ATTR_RES_QP 19		/* nest of QP_ENTRY */
#define WEFT_NLDEV_ATTR_RES_QP_ENTRY 20		/* nest */
#define WEFT_NLDEV_ATTR_RES_LQPN 21		/* u32 */
#define WEFT_NLDEV_ATTR_RES_RQPN 22		/* u32 */
#define WEFT_NLDEV_ATTR_RES_RQ_PSN 23		/* u32 */
#define WEFT_NLDEV_ATTR_RES_SQ_PSN 24		/* u32 */
#define WEFT_NLDEV_ATTR_RES_PATH_MIG_STATE 25	/* u8 */
#define WEFT_NLDEV_ATTR_RES_TYPE 26		/* u8, enum ib_qp_type */
#define WEFT_NLDEV_ATTR_RES_STATE 27		/* u8, enum ib_qp_state */
#define WEFT_NLDEV_ATTR_RES_PID 28		/* u32 */
#define WEFT_NLDEV_ATTR_RES_KERN_NAME 29	/* string */
#define WEFT_NLDEV_ATTR_RES_CQ 35		/* nest of CQ_ENTRY */
#define WEFT_NLDEV_ATTR_RES_CQ_ENTRY 36		/* nest */
#define WEFT_NLDEV_ATTR_RES_CQE 37		/* u32 */
#define WEFT_NLDEV_ATTR_RES_USECNT 38		/* u64 */
#define WEFT_NLDEV_ATTR_RES_POLL_CTX 39		/* u8, enum ib_poll_context */
#define WEFT_NLDEV_ATTR_RES_MR 40		/* nest of MR_ENTRY */
#define WEFT_NLDEV_ATTR_RES_MR_ENTRY 41		/* nest */
#define WEFT_NLDEV_ATTR_RES_RKEY 42		/* u32 */
#define WEFT_NLDEV_ATTR_RES_LKEY 43		/* u32 */
#define WEFT_NLDEV_ATTR_RES_MRLEN 45		/* u64 */
#define WEFT_NLDEV_ATTR_RES_PD 46		/* nest of PD_ENTRY */
#define WEFT_NLDEV_ATTR_RES_PD_ENTRY 47		/* nest */
#define WEFT_NLDEV_ATTR_RES_LOCAL_DMA_LKEY 48	/* u32 */
#define WEFT_NLDEV_ATTR_RES_UNSAFE_GLOBAL_RKEY 49 /* u32 */
#define WEFT_NLDEV_ATTR_RES_PDN 60		/* u32 */
#define WEFT_NLDEV_ATTR_RES_CQN 61		/* u32 */
#define WEFT_NLDEV_ATTR_RES_MRN 62		/* u32 */
#define WEFT_NLDEV_ATTR_RES_CTXN 64		/* u32 */
#define WEFT_NLDEV_SYS_ATTR_NETNS_MODE 66	/* u8 */
#define WEFT_NLDEV_ATTR_DEV_PROTOCOL 67		/* string */
#define WEFT_NLDEV_ATTR_CHARDEV_TYPE 69		/* string */
#define WEFT_NLDEV_ATTR_CHARDEV_NAME 70		/* string */
#define WEFT_NLDEV_ATTR_CHARDEV_ABI 71		/* u64 */
#define WEFT_NLDEV_ATTR_CHARDEV 72		/* u64 */
#define WEFT_NLDEV_ATTR_UVERBS_DRIVER_ID 73	/* u32 */
#define WEFT_NLDEV_ATTR_DEV_DIM 84		/* u8 */
#define WEFT_NLDEV_ATTR_DRIVER_DETAILS 97	/* u8: `rdma -dd`, driver-internal objects too */
#define WEFT_NLDEV_SYS_ATTR_COPY_ON_FORK 93	/* u8 */

/* RDMA_NLDEV_ATTR_CHARDEV_TYPE_SIZE: client names are shorter than this. */
#define WEFT_NLDEV_CHARDEV_TYPE_SIZE 32
/* enum rdma_driver_id: the stock rxe provider binds to this id. */
#define WEFT_RDMA_DRIVER_RXE 14

struct weft_nl_req;

/* Create the kernel socket in every namespace, present and future. */
int weft_uverbs_nl_init(void);
void weft_uverbs_nl_exit(void);

/* --- request ----------------------------------------------------------------- */
unsigned int weft_nl_op(const struct weft_nl_req *r);
bool weft_nl_is_dump(const struct weft_nl_req *r);
/* Attribute values: true (and *v set) when the request carries the attribute. */
bool weft_nl_get_u32(const struct weft_nl_req *r, unsigned int attr, uint32_t *v);
bool weft_nl_get_u8(const struct weft_nl_req *r, unsigned int attr, uint8_t *v);
/* A string attribute, truncated to @size - 1 and NUL-terminated. */
bool weft_nl_get_str(const struct weft_nl_req *r, unsigned int attr, char *buf, size_t size);
/* A dump's position between calls (cb->args[0..1]), 0 at the start. */
long *weft_nl_cursor(struct weft_nl_req *r);

/* --- answer -------------------------------------------------------------------- */
/*
 * Start one answer message of command @cmd: for a dump, into the dump's
 * buffer (NLM_F_MULTI); otherwise a new message sent by weft_nl_send().
 * -EMSGSIZE when a dump's buffer is full, -ENOMEM.
 */
int weft_nl_begin(struct weft_nl_req *r, unsigned int cmd);
/* Attributes of the current message: 0 or -EMSGSIZE. */
int weft_nl_put_u8(struct weft_nl_req *r, unsigned int attr, uint8_t v);
int weft_nl_put_u32(struct weft_nl_req *r, unsigned int attr, uint32_t v);
int weft_nl_put_u64(struct weft_nl_req *r, unsigned int attr, uint64_t v);
int weft_nl_put_str(struct weft_nl_req *r, unsigned int attr, const char *s);
/*
 * Nested attributes inside the current message: start one (its handle,
 * or NULL when the buffer is full), then end it (its length fixed) or
 * cancel it (it and everything put since removed).  Nests nest.
 */
struct weft_nl_nest;
struct weft_nl_nest *weft_nl_nest_start(struct weft_nl_req *r, unsigned int attr);
void weft_nl_nest_end(struct weft_nl_req *r, struct weft_nl_nest *n);
void weft_nl_nest_cancel(struct weft_nl_req *r, struct weft_nl_nest *n);
/* Whether the requester may see keys (in-tree netlink_capable(CAP_NET_ADMIN)). */
bool weft_nl_net_admin(const struct weft_nl_req *r);
/* Finish the current message (a dump's stays in its buffer). */
void weft_nl_end(struct weft_nl_req *r);
/* Drop the current message (a dump's full buffer: it goes in the next one). */
void weft_nl_cancel(struct weft_nl_req *r);
/* Send a non-dump answer to the requester: 0 or -errno. */
int weft_nl_send(struct weft_nl_req *r);

/* --- implemented in C++ (nldev.cpp) ----------------------------------------------- */
/*
 * Whether @op (< WEFT_NLDEV_NUM_OPS) is answered, as a dump if @dump:
 * 0, -EOPNOTSUPP for a command Weft does not implement, -EINVAL for a dump
 * of a command that has none (in-tree).
 */
int weft_uverbs_nl_supported(unsigned int op, bool dump);
/*
 * Answer a request: a doit sends its answer (weft_nl_send) and returns 0
 * or -errno; a dump fills what fits, advances the cursor and returns 0
 * (the shim calls again until a call adds nothing) or -errno.
 */
int weft_uverbs_nl_request(struct weft_nl_req *r);

WEFT_C_END

#endif
