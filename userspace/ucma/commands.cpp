// SPDX-License-Identifier: GPL-2.0
/*
 * The command table and framing (commands.h), File::write(), and the
 * commands about Ids and events themselves: CREATE_ID, DESTROY_ID,
 * GET_EVENT, MIGRATE_ID (in-tree ucma.c).
 */
#include "commands.h"

namespace weft::ucma {

namespace {

template <typename Req> constexpr Method in(Result<void> (*h)(Call &), size_t req = sizeof(Req))
{
	return Method{h, uint16_t(req), 0};
}
template <typename Req, typename Resp>
constexpr Method io(Result<void> (*h)(Call &), size_t resp = sizeof(Resp))
{
	return Method{h, uint16_t(sizeof(Req)), uint16_t(resp)};
}

struct Table {
	Method m[abi::cmd::count] = {};
};

constexpr Table make_table()
{
	using namespace abi;
	Table t;
	t.m[cmd::create_id] = io<CreateId, IdResp>(cmd_create_id);
	t.m[cmd::destroy_id] = io<DestroyId, EventsResp>(cmd_destroy_id);
	t.m[cmd::bind_ip] = in<BindIp>(cmd_bind_ip);
	t.m[cmd::resolve_ip] = in<ResolveIp>(cmd_resolve_ip);
	t.m[cmd::resolve_route] = in<ResolveRoute>(cmd_resolve_route);
	/* Older librdmacm asks for the route without ibdev_index. */
	t.m[cmd::query_route] = io<Query, QueryRouteResp>(
		cmd_query_route, __builtin_offsetof(QueryRouteResp, ibdev_index));
	/* CONNECT and ACCEPT: the ECE trailer is optional (in-tree). */
	t.m[cmd::connect] = in<Connect>(cmd_connect, __builtin_offsetof(Connect, ece));
	t.m[cmd::listen] = in<Listen>(cmd_listen);
	t.m[cmd::accept] = in<Accept>(cmd_accept, __builtin_offsetof(Accept, ece));
	t.m[cmd::reject] = in<Reject>(cmd_reject);
	t.m[cmd::disconnect] = in<Disconnect>(cmd_disconnect);
	t.m[cmd::init_qp_attr] = io<InitQpAttr, QpAttr>(cmd_init_qp_attr);
	t.m[cmd::get_event] = io<GetEvent, EventResp>(cmd_get_event, event_resp_min);
	/* GET_OPTION: none in-tree either (ENOSYS). */
	t.m[cmd::set_option] = in<SetOption>(cmd_set_option);
	t.m[cmd::notify] = in<Notify>(cmd_notify);
	t.m[cmd::join_ip_mcast] = io<JoinIpMcast, IdResp>(cmd_join_ip_mcast);
	t.m[cmd::leave_mcast] = io<DestroyId, EventsResp>(cmd_leave_mcast);
	t.m[cmd::migrate_id] = io<MigrateId, EventsResp>(cmd_migrate_id);
	/* QUERY's response size depends on the option (cmd_query checks it). */
	t.m[cmd::query] = in<Query>(cmd_query);
	t.m[cmd::bind] = in<Bind>(cmd_bind);
	t.m[cmd::resolve_addr] = in<ResolveAddr>(cmd_resolve_addr);
	t.m[cmd::join_mcast] = io<JoinMcast, IdResp>(cmd_join_mcast);
	return t;
}

constexpr Table table = make_table();

/* In-tree ucma_get_qp_type(): the port space decides, but for RDMA_PS_IB. */
Result<verbs::QpType> qp_type_of(uint16_t ps, uint8_t qp_type)
{
	switch (static_cast<rdma_cm::PortSpace>(ps)) {
	case rdma_cm::PortSpace::Tcp:
		return verbs::QpType::Rc;
	case rdma_cm::PortSpace::Udp:
	case rdma_cm::PortSpace::Ipoib:
		return verbs::QpType::Ud;
	case rdma_cm::PortSpace::Ib:
		if (qp_type == uint8_t(verbs::QpType::Rc) || qp_type == uint8_t(verbs::QpType::Ud))
			return static_cast<verbs::QpType>(qp_type);
		return Error(err::EINVAL);
	}
	return Error(err::EINVAL);
}

} // namespace

const Method *find_method(uint32_t cmd)
{
	if (cmd >= abi::cmd::count)
		return nullptr;
	const Method *m = &table.m[cmd];
	return m->handler ? m : nullptr;
}

Result<void> Call::request(void *req, size_t len) const
{
	const size_t n = min(in_len, len);
	WEFT_TRY(from_errno(weft_ucma_copy_from_user(req, in, n)));
	if (n < len)
		__builtin_memset(static_cast<uint8_t *>(req) + n, 0, len - n);
	return ok();
}

Result<void> Call::respond(uint64_t response, const void *resp, size_t len)
{
	return from_errno(weft_ucma_copy_to_user(
		reinterpret_cast<void *>(static_cast<uintptr_t>(response)), resp, len));
}

Result<size_t> File::write(const void *ubuf, size_t len, bool nonblock)
{
	const auto *p = static_cast<const uint8_t *>(ubuf);
	abi::CmdHdr hdr;
	if (len < sizeof(hdr))
		return Error(err::EINVAL);
	WEFT_TRY(from_errno(weft_ucma_copy_from_user(&hdr, p, sizeof(hdr))));
	if (hdr.cmd >= abi::cmd::count || size_t(hdr.in) + sizeof(hdr) > len)
		return Error(err::EINVAL);
	const Method *m = find_method(hdr.cmd);
	if (!m)
		return Error(err::ENOSYS);
	if (hdr.in < m->req_min)
		return Error(err::EINVAL);
	if (hdr.out < m->resp_min)
		return Error(err::ENOSPC);
	Call c{*this, p + sizeof(hdr), hdr.in, hdr.out, nonblock};
	WEFT_TRY(m->handler(c));
	return len;
}

Result<void> cmd_create_id(Call &c)
{
	abi::CreateId req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	const verbs::QpType type = WEFT_TRY(qp_type_of(req.ps, req.qp_type));
	auto *x = new (Gfp::Sleep) Ctx(c.file, type);
	if (!x)
		return Error(err::ENOMEM);
	Ref<Ctx> ctx = Ref<Ctx>::adopt(x);
	ctx->uid = req.uid; /* not yet published: no handler, no command sees it */
	ctx->reporting = true;
	rdma_cm::Net *net = rdma_cm::current_net();
	auto id = rdma_cm::create_id(net, static_cast<rdma_cm::PortSpace>(req.ps), type, *ctx,
				     ctx.get());
	rdma_cm::put_net(net);
	if (!id)
		return id.error();
	ctx->id = id.value();
	const abi::IdResp resp{ctx->num};
	auto r = Call::respond(req.response, &resp, sizeof(resp));
	if (!r) {
		(void)c.file.destroy(move(ctx));
		return r;
	}
	c.file.publish(*ctx.leak());
	return ok();
}

Result<void> cmd_destroy_id(Call &c)
{
	abi::DestroyId req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	Ref<Ctx> ctx = WEFT_TRY(c.file.take(req.id));
	const abi::EventsResp resp{c.file.destroy(move(ctx))};
	return Call::respond(req.response, &resp, sizeof(resp));
}

Result<void> cmd_get_event(Call &c)
{
	abi::GetEvent req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	return c.file.get_event(req.response, c.out_len, c.nonblock);
}

Result<void> cmd_migrate_id(Call &c)
{
	abi::MigrateId req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	int e = 0;
	void *hold = nullptr;
	auto *from = static_cast<File *>(weft_ucma_fd_get(static_cast<int>(req.fd), &hold, &e));
	if (!from)
		return Error(-e);
	auto taken = from->take(req.id);
	if (!taken) {
		weft_ucma_fd_put(hold);
		return taken.error();
	}
	Ref<Ctx> ctx = taken.take();
	const abi::EventsResp resp{c.file.adopt(*from, *ctx)};
	ctx.leak(); /* now the new file's list's reference */
	weft_ucma_fd_put(hold);
	return Call::respond(req.response, &resp, sizeof(resp));
}

Result<void> need_device(const Ctx &c)
{
	return c.id && rdma_cm::info(*c.id).dev ? ok() : Result<void>(Error(err::EINVAL));
}

} // namespace weft::ucma
