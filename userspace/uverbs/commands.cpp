// SPDX-License-Identifier: GPL-2.0
/*
 * The command table (commands.h) and the request/response copies every
 * handler uses (in-tree uverbs_request() and uverbs_response()).
 */
#include "commands.h"

namespace weft::uverbs {

namespace {

/* In-tree UAPI_DEF_WRITE_IO / UAPI_DEF_WRITE_UDATA_IO: sizes of the core structures. */
template <typename Req, typename Resp>
constexpr Method write_io(Result<void> (*h)(Call &), bool udata)
{
	return Method{h, uint16_t(sizeof(Req)), uint16_t(sizeof(Resp)), true, udata, false};
}

/* UAPI_DEF_WRITE_IO_EX: the request and the response up to a given field. */
constexpr Method write_io_ex(Result<void> (*h)(Call &), size_t req, size_t resp)
{
	return Method{h, uint16_t(req), uint16_t(resp), true, false, true};
}

constexpr Method get_context = write_io<abi::GetContext, abi::GetContextResp>(cmd_get_context, true);
constexpr Method query_device = write_io<abi::QueryDevice, abi::QueryDeviceResp>(cmd_query_device, false);
constexpr Method query_port = write_io<abi::QueryPort, abi::QueryPortResp>(cmd_query_port, false);
/* The extended QUERY_DEVICE: the whole request, the response up to response_length. */
constexpr Method ex_query_device = write_io_ex(
	cmd_ex_query_device, sizeof(abi::ExQueryDevice),
	__builtin_offsetof(abi::ExQueryDeviceResp, response_length) + sizeof(uint32_t));

} // namespace

const Method *find_method(uint32_t command)
{
	const uint32_t idx = command & abi::cmd_command_mask;
	if (command & abi::cmd_flag_extended) {
		switch (idx) {
		case abi::cmd::query_device:
			return &ex_query_device;
		default:
			return nullptr;
		}
	}
	switch (idx) {
	case abi::cmd::get_context:
		return &get_context;
	case abi::cmd::query_device:
		return &query_device;
	case abi::cmd::query_port:
		return &query_port;
	default:
		return nullptr;
	}
}

Result<void> Call::request(void *req, size_t len) const
{
	const size_t n = min(in.len, len);
	WEFT_TRY(from_errno(weft_uverbs_copy_from_user(req, in.ptr(), n)));
	if (n < len)
		__builtin_memset(static_cast<uint8_t *>(req) + n, 0, len - n);
	/* More than Weft knows is fine only if it is all zero (ib_is_buffer_cleared()). */
	for (size_t off = len; off < in.len;) {
		uint8_t chunk[64];
		const size_t k = min(sizeof(chunk), in.len - off);
		WEFT_TRY(from_errno(weft_uverbs_copy_from_user(
			chunk, reinterpret_cast<const uint8_t *>(in.ptr()) + off, k)));
		for (size_t i = 0; i < k; i++)
			if (chunk[i])
				return Error(err::EOPNOTSUPP);
		off += k;
	}
	return ok();
}

Result<void> Call::response(const void *resp, size_t len) const
{
	const size_t n = min(out.len, len);
	WEFT_TRY(from_errno(weft_uverbs_copy_to_user(out.ptr(), resp, n)));
	if (n < out.len)
		WEFT_TRY(from_errno(
			weft_uverbs_clear_user(static_cast<uint8_t *>(out.ptr()) + n, out.len - n)));
	return ok();
}

Result<void> Call::need_context() const
{
	return file.context() ? ok() : Result<void>(Error(err::EINVAL));
}

} // namespace weft::uverbs
