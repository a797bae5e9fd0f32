// SPDX-License-Identifier: GPL-2.0
/*
 * The command table (commands.h) and the request/response copies every
 * handler uses (in-tree uverbs_request() and uverbs_response()).
 */
#include "abi_verbs.h"
#include "commands.h"

namespace weft::uverbs {

namespace {

/* In-tree UAPI_DEF_WRITE_IO / UAPI_DEF_WRITE_UDATA_IO: sizes of the core structures. */
template <typename Req, typename Resp>
constexpr Method write_io(Result<void> (*h)(Call &), bool udata)
{
	return Method{h, uint16_t(sizeof(Req)), uint16_t(sizeof(Resp)), true, udata, false};
}

/* UAPI_DEF_WRITE_I: a request only, no response. */
template <typename Req> constexpr Method write_i(Result<void> (*h)(Call &))
{
	return Method{h, uint16_t(sizeof(Req)), 0, false, false, false};
}

/* UAPI_DEF_WRITE_I_UDATA: a request and driver data, no response. */
template <typename Req> constexpr Method write_i_udata(Result<void> (*h)(Call &))
{
	return Method{h, uint16_t(sizeof(Req)), 0, false, true, false};
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
/* In-tree: the request up to `reserved` (CQ) or `comp_mask` (QP), the response up to response_length. */
constexpr Method ex_create_cq = write_io_ex(cmd_ex_create_cq, sizeof(abi::ExCreateCq),
					    sizeof(abi::ExCreateCqResp));
constexpr Method ex_create_qp = write_io_ex(
	cmd_ex_create_qp, __builtin_offsetof(abi::ExCreateQp, comp_mask) + sizeof(uint32_t),
	sizeof(abi::ExCreateQpResp));

constexpr Method alloc_pd = write_io<abi::AllocPd, abi::AllocPdResp>(cmd_alloc_pd, true);
constexpr Method dealloc_pd = write_i<abi::DeallocPd>(cmd_dealloc_pd);
constexpr Method reg_mr = write_io<abi::RegMr, abi::RegMrResp>(cmd_reg_mr, true);
constexpr Method dereg_mr = write_i<abi::DeregMr>(cmd_dereg_mr);
constexpr Method alloc_mw = write_io<abi::AllocMw, abi::AllocMwResp>(cmd_alloc_mw, true);
constexpr Method dealloc_mw = write_i<abi::DeallocMw>(cmd_dealloc_mw);
constexpr Method create_ah = write_io<abi::CreateAh, abi::CreateAhResp>(cmd_create_ah, true);
constexpr Method destroy_ah = write_i<abi::DestroyAh>(cmd_destroy_ah);
constexpr Method create_comp_channel =
	write_io<abi::CreateCompChannel, abi::CreateCompChannelResp>(cmd_create_comp_channel, false);
constexpr Method create_cq = write_io<abi::CreateCq, abi::CreateCqResp>(cmd_create_cq, true);
constexpr Method resize_cq = write_io<abi::ResizeCq, abi::ResizeCqResp>(cmd_resize_cq, true);
constexpr Method destroy_cq = write_io<abi::DestroyCq, abi::DestroyCqResp>(cmd_destroy_cq, false);
constexpr Method req_notify_cq = write_i<abi::ReqNotifyCq>(cmd_req_notify_cq);
constexpr Method create_qp = write_io<abi::CreateQp, abi::CreateQpResp>(cmd_create_qp, true);
constexpr Method query_qp = write_io<abi::QueryQp, abi::QueryQpResp>(cmd_query_qp, false);
constexpr Method modify_qp = write_i<abi::ModifyQp>(cmd_modify_qp);
constexpr Method destroy_qp = write_io<abi::DestroyQp, abi::DestroyQpResp>(cmd_destroy_qp, false);
constexpr Method post_send = write_io<abi::PostSend, abi::PostSendResp>(cmd_post_send, false);
constexpr Method attach_mcast = write_i<abi::Mcast>(cmd_attach_mcast);
constexpr Method detach_mcast = write_i<abi::Mcast>(cmd_detach_mcast);
constexpr Method create_srq = write_io<abi::CreateSrq, abi::CreateSrqResp>(cmd_create_srq, true);
/* librxe's MODIFY_SRQ always carries the address for the resized ring's place. */
constexpr Method modify_srq = write_i_udata<abi::ModifySrq>(cmd_modify_srq);
constexpr Method query_srq = write_io<abi::QuerySrq, abi::QuerySrqResp>(cmd_query_srq, false);
constexpr Method destroy_srq = write_io<abi::DestroySrq, abi::DestroySrqResp>(cmd_destroy_srq, false);

/* The legacy write() commands, by number. */
struct Legacy {
	const Method *m[abi::cmd::destroy_srq + 1] = {};
};

constexpr Legacy make_legacy()
{
	Legacy t;
	t.m[abi::cmd::get_context] = &get_context;
	t.m[abi::cmd::query_device] = &query_device;
	t.m[abi::cmd::query_port] = &query_port;
	t.m[abi::cmd::alloc_pd] = &alloc_pd;
	t.m[abi::cmd::dealloc_pd] = &dealloc_pd;
	t.m[abi::cmd::create_ah] = &create_ah;
	t.m[abi::cmd::destroy_ah] = &destroy_ah;
	t.m[abi::cmd::reg_mr] = &reg_mr;
	t.m[abi::cmd::dereg_mr] = &dereg_mr;
	t.m[abi::cmd::alloc_mw] = &alloc_mw;
	t.m[abi::cmd::dealloc_mw] = &dealloc_mw;
	t.m[abi::cmd::create_comp_channel] = &create_comp_channel;
	t.m[abi::cmd::create_cq] = &create_cq;
	t.m[abi::cmd::resize_cq] = &resize_cq;
	t.m[abi::cmd::destroy_cq] = &destroy_cq;
	t.m[abi::cmd::req_notify_cq] = &req_notify_cq;
	t.m[abi::cmd::create_qp] = &create_qp;
	t.m[abi::cmd::query_qp] = &query_qp;
	t.m[abi::cmd::modify_qp] = &modify_qp;
	t.m[abi::cmd::destroy_qp] = &destroy_qp;
	t.m[abi::cmd::post_send] = &post_send;
	t.m[abi::cmd::attach_mcast] = &attach_mcast;
	t.m[abi::cmd::detach_mcast] = &detach_mcast;
	t.m[abi::cmd::create_srq] = &create_srq;
	t.m[abi::cmd::modify_srq] = &modify_srq;
	t.m[abi::cmd::query_srq] = &query_srq;
	t.m[abi::cmd::destroy_srq] = &destroy_srq;
	return t;
}

constexpr Legacy legacy = make_legacy();

} // namespace

const Method *find_method(uint32_t command)
{
	const uint32_t idx = command & abi::cmd_command_mask;
	if (command & abi::cmd_flag_extended) {
		switch (idx) {
		case abi::cmd::query_device:
			return &ex_query_device;
		case abi::cmd::create_cq:
			return &ex_create_cq;
		case abi::cmd::create_qp:
			return &ex_create_qp;
		default:
			return nullptr;
		}
	}
	return idx <= abi::cmd::destroy_srq ? legacy.m[idx] : nullptr;
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

Result<void> Call::driver_response(const void *resp, size_t len) const
{
	if (drv_out.len < len)
		return Error(err::EINVAL);
	return from_errno(weft_uverbs_copy_to_user(drv_out.ptr(), resp, len));
}

Result<void> Call::need_context() const
{
	return file.context() ? ok() : Result<void>(Error(err::EINVAL));
}

} // namespace weft::uverbs
