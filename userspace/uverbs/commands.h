/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The write() commands: one Method per command number, found by
 * find_method(), and the Call a handler gets.  A command is one entry in
 * the table of commands.cpp and one handler; the later verbs (PD, MR, CQ,
 * QP, SRQ, AH...) slot in the same way.
 *
 * Sizes are those of the in-tree method declarations (uverbs_cmd.c,
 * UAPI_DEF_WRITE_*): the core request and response structures, whether a
 * response pointer leads the request, and whether driver data (udata)
 * follows the core structures.
 */
#ifndef WEFT_UVERBS_COMMANDS_H
#define WEFT_UVERBS_COMMANDS_H

#include "file.h"

namespace weft::uverbs {

/* A range of user memory: address and length (0: none). */
struct UserRange {
	uint64_t addr = 0;
	size_t len = 0;
	void *ptr() const { return reinterpret_cast<void *>(static_cast<uintptr_t>(addr)); }
};

/* One command in progress: the file (its lock held), the core and driver ranges. */
struct Call {
	File &file;
	UserRange in, out;	   /* the core request and response */
	UserRange drv_in, drv_out; /* driver data (udata) after them */

	/*
	 * The request, as in-tree uverbs_request(): what the caller sent of
	 * it, zero-filled beyond; EOPNOTSUPP if the caller sent more than
	 * Weft knows and the excess is not zero.
	 */
	Result<void> request(void *req, size_t len) const;
	/* The response, as uverbs_response(): what fits, the rest of the caller's buffer zeroed. */
	Result<void> response(const void *resp, size_t len) const;
	/* EINVAL before GET_CONTEXT (in-tree ib_uverbs_get_ucontext()). */
	Result<void> need_context() const;
	/* The driver's response (udata out): EINVAL if the caller left no room for it, as rxe. */
	Result<void> driver_response(const void *resp, size_t len) const;
};

struct Method {
	Result<void> (*handler)(Call &c);
	uint16_t req_size;  /* bytes of the core request */
	uint16_t resp_size; /* bytes of the core response (the minimum asked for) */
	bool has_resp;	    /* the request starts with the response's address */
	bool has_udata;	    /* driver data may follow request and response */
	bool is_ex;	    /* an extended command (ib_uverbs_ex_cmd_hdr) */
};

/* The method of @command (flag and index), or nullptr: EOPNOTSUPP. */
const Method *find_method(uint32_t command);

/*
 * The command written at @ubuf (@len bytes, user memory): its method, and
 * @c's ranges (request and driver data within the write, the response
 * where the request points), or the errno of a header that does not fit
 * (framing.cpp).  Reads only the headers and a legacy request's first
 * field (the response address).
 */
Result<const Method *> frame_command(const uint8_t *ubuf, size_t len, Call &c);

/* IB_DEVICE_* capabilities of @dev (QUERY_DEVICE, netlink CAP_FLAGS). */
uint64_t device_cap_flags(verbs::Device &dev);

/* Handlers (cmd_device.cpp). */
Result<void> cmd_get_context(Call &c);
Result<void> cmd_query_device(Call &c);
Result<void> cmd_query_port(Call &c);
Result<void> cmd_ex_query_device(Call &c);

/* cmd_pd_mr.cpp: protection domains, memory regions, address handles. */
Result<void> cmd_alloc_pd(Call &c);
Result<void> cmd_dealloc_pd(Call &c);
Result<void> cmd_reg_mr(Call &c);
Result<void> cmd_dereg_mr(Call &c);
Result<void> cmd_alloc_mw(Call &c);
Result<void> cmd_dealloc_mw(Call &c);
Result<void> cmd_create_ah(Call &c);
Result<void> cmd_destroy_ah(Call &c);

/* cmd_cq.cpp: completion channels and CQs. */
Result<void> cmd_create_comp_channel(Call &c);
Result<void> cmd_create_cq(Call &c);
Result<void> cmd_resize_cq(Call &c);
Result<void> cmd_destroy_cq(Call &c);
Result<void> cmd_req_notify_cq(Call &c);
Result<void> cmd_ex_create_cq(Call &c);

/* cmd_qp.cpp: QPs, their doorbell and multicast. */
Result<void> cmd_create_qp(Call &c);
Result<void> cmd_ex_create_qp(Call &c);
Result<void> cmd_query_qp(Call &c);
Result<void> cmd_modify_qp(Call &c);
Result<void> cmd_destroy_qp(Call &c);
Result<void> cmd_post_send(Call &c);
Result<void> cmd_attach_mcast(Call &c);
Result<void> cmd_detach_mcast(Call &c);

/* cmd_srq.cpp: shared receive queues. */
Result<void> cmd_create_srq(Call &c);
Result<void> cmd_modify_srq(Call &c);
Result<void> cmd_query_srq(Call &c);
Result<void> cmd_destroy_srq(Call &c);

} // namespace weft::uverbs

#endif
