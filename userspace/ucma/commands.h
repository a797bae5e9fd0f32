/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The write() commands: one Method per RDMA_USER_CM_CMD_* number, with the
 * request and response sizes it needs, and the Call its handler gets.
 * Framing as in-tree ucma_write(): a header shorter than 8 bytes, an
 * unknown command, or a request longer than the write are EINVAL; a
 * command in-tree leaves unimplemented (GET_OPTION) is ENOSYS.  Weft also
 * refuses a request shorter than the command's structure (EINVAL; in-tree
 * would read past it) and, as in-tree, a response room smaller than the
 * command's response (ENOSPC).
 */
#ifndef WEFT_UCMA_COMMANDS_H
#define WEFT_UCMA_COMMANDS_H

#include "file.h"

namespace weft::ucma {

struct Call {
	File &file;
	const uint8_t *in; /* user memory: the request */
	size_t in_len;
	size_t out_len;	   /* the response room the caller declared */
	bool nonblock;

	/* The request: what the caller sent of @len bytes, zero-filled beyond. */
	Result<void> request(void *req, size_t len) const;
	/* Copy @len bytes of @resp to the user's @response address. */
	static Result<void> respond(uint64_t response, const void *resp, size_t len);
};

struct Method {
	Result<void> (*handler)(Call &c);
	uint16_t req_min;  /* bytes of request required */
	uint16_t resp_min; /* bytes of response room required (ENOSPC) */
};

/* The method of @cmd, or nullptr (ENOSYS); @cmd < abi::cmd::count. */
const Method *find_method(uint32_t cmd);

/* The node GUID of @dev (device.cpp: the one place ucma reads a verbs::Device). */
uint64_t node_guid(const verbs::Device &dev);

/* The Id's device must be known (in-tree ucma_get_ctx_dev()): EINVAL otherwise. */
Result<void> need_device(const Ctx &c);

/*
 * fn(Ctx &, rdma_cm::Id &) on the file's Id @num under its command lock:
 * ENOENT (no such Id in this file), ENXIO (its RDMA CM Id went with its
 * device), EINVAL (@dev: the Id has no device yet).
 */
template <typename F> Result<void> with_id(Call &c, uint32_t num, bool dev, F fn)
{
	Ref<Ctx> ctx = WEFT_TRY(c.file.get(num));
	MutexGuard g(ctx->lock);
	if (!ctx->id)
		return Error(err::ENXIO);
	if (dev)
		WEFT_TRY(need_device(*ctx));
	return fn(*ctx, *ctx->id);
}

Result<void> cmd_create_id(Call &c);
Result<void> cmd_destroy_id(Call &c);
Result<void> cmd_bind_ip(Call &c);
Result<void> cmd_bind(Call &c);
Result<void> cmd_resolve_ip(Call &c);
Result<void> cmd_resolve_addr(Call &c);
Result<void> cmd_resolve_route(Call &c);
Result<void> cmd_query_route(Call &c);
Result<void> cmd_query(Call &c);
Result<void> cmd_connect(Call &c);
Result<void> cmd_listen(Call &c);
Result<void> cmd_accept(Call &c);
Result<void> cmd_reject(Call &c);
Result<void> cmd_disconnect(Call &c);
Result<void> cmd_init_qp_attr(Call &c);
Result<void> cmd_get_event(Call &c);
Result<void> cmd_set_option(Call &c);
Result<void> cmd_notify(Call &c);
Result<void> cmd_join_ip_mcast(Call &c);
Result<void> cmd_join_mcast(Call &c);
Result<void> cmd_leave_mcast(Call &c);
Result<void> cmd_migrate_id(Call &c);

} // namespace weft::ucma

#endif
