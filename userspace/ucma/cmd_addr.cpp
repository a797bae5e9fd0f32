// SPDX-License-Identifier: GPL-2.0
/*
 * Addresses and routes: BIND_IP, BIND, RESOLVE_IP, RESOLVE_ADDR,
 * RESOLVE_ROUTE, QUERY_ROUTE and QUERY (ADDR, PATH, GID), as the in-tree
 * 6.1 ucma.c answers them.  The device is reported by node GUID with no
 * ibdev_index (0xffffffff, "unknown" to librdmacm), so librdmacm matches
 * it against libibverbs' devices by GUID alone.
 */
#include "commands.h"
#include "translate.h"

namespace weft::ucma {

namespace {

/* librdmacm's UCMA_INVALID_IB_INDEX: match the device by node GUID only. */
constexpr uint32_t no_ibdev_index = 0xffffffffu;

/* A sockaddr_in6 slot of the older commands: AF_INET6 or AF_INET in it. */
Result<rdma_cm::SockAddr> from_in6(const abi::SockaddrIn6 &sa)
{
	return sockaddr_in(&sa, sizeof(sa));
}

/* A sockaddr_storage of @size bytes (in-tree rdma_addr_size_kss() must agree). */
Result<rdma_cm::SockAddr> from_storage(const abi::SockaddrStorage &ss, uint16_t size)
{
	if (!size || size != addr_size(ss.family))
		return Error(err::EINVAL);
	return sockaddr_in(&ss, size);
}

Result<void> bind_to(Call &c, uint32_t num, const rdma_cm::SockAddr &a)
{
	return with_id(c, num, false,
		       [&](Ctx &, rdma_cm::Id &id) { return rdma_cm::bind(id, a); });
}

Result<void> resolve(Call &c, uint32_t num, const rdma_cm::SockAddr *src,
		     const rdma_cm::SockAddr &dst, uint32_t timeout_ms)
{
	return with_id(c, num, false, [&](Ctx &, rdma_cm::Id &id) {
		return rdma_cm::resolve_addr(id, src, dst, timeout_ms);
	});
}

be64 guid_of(const rdma_cm::Info &i)
{
	return be64::from(i.dev ? node_guid(*i.dev) : 0);
}

Result<void> query_addr(const Call &c, const rdma_cm::Info &i, uint64_t response)
{
	if (c.out_len < __builtin_offsetof(abi::QueryAddrResp, ibdev_index))
		return Error(err::ENOSPC);
	abi::QueryAddrResp r;
	__builtin_memset(static_cast<void *>(&r), 0, sizeof(r));
	r.src_size = uint16_t(sockaddr_out(i.src, &r.src_addr, sizeof(r.src_addr)));
	r.dst_size = uint16_t(sockaddr_out(i.dst, &r.dst_addr, sizeof(r.dst_addr)));
	r.ibdev_index = no_ibdev_index;
	if (i.dev) {
		r.node_guid = guid_of(i);
		r.port_num = i.port;
		r.pkey.set(i.pkey);
	}
	return Call::respond(response, &r, min(c.out_len, sizeof(r)));
}

Result<void> query_gid(const Call &c, const rdma_cm::Info &i, uint64_t response)
{
	if (c.out_len < __builtin_offsetof(abi::QueryAddrResp, ibdev_index))
		return Error(err::ENOSPC);
	abi::QueryAddrResp r;
	__builtin_memset(static_cast<void *>(&r), 0, sizeof(r));
	r.ibdev_index = no_ibdev_index;
	if (i.dev) {
		r.node_guid = guid_of(i);
		r.port_num = i.port;
		r.pkey.set(i.pkey);
	}
	abi::SockaddrIb sib;
	sockaddr_ib_out(i.sgid, i.pkey, i.ps, i.src.port, sib);
	__builtin_memcpy(&r.src_addr, &sib, sizeof(sib));
	sockaddr_ib_out(i.dgid, i.pkey, i.ps, i.dst.port, sib);
	__builtin_memcpy(&r.dst_addr, &sib, sizeof(sib));
	r.src_size = r.dst_size = sizeof(sib);
	return Call::respond(response, &r, min(c.out_len, sizeof(r)));
}

/* The resolved path (the RDMA CM keeps one: no alternate), in SA wire format. */
Result<void> query_path(const Call &c, const rdma_cm::Info &i, uint64_t response)
{
	if (c.out_len < sizeof(abi::QueryPathResp))
		return Error(err::ENOSPC);
	struct {
		abi::QueryPathResp hdr;
		abi::PathRecData path;
	} r;
	__builtin_memset(static_cast<void *>(&r), 0, sizeof(r));
	size_t len = sizeof(r.hdr);
	if (i.has_route) {
		r.hdr.num_paths = 1;
		if (c.out_len >= sizeof(r)) {
			r.path.flags = abi::path_flags_primary;
			static_assert(sizeof(r.path.path_rec) == sizeof(i.route));
			__builtin_memcpy(r.path.path_rec, &i.route, sizeof(i.route));
			len = sizeof(r);
		}
	}
	return Call::respond(response, &r, len);
}

} // namespace

Result<void> cmd_bind_ip(Call &c)
{
	abi::BindIp req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	const rdma_cm::SockAddr a = WEFT_TRY(from_in6(req.addr));
	return bind_to(c, req.id, a);
}

Result<void> cmd_bind(Call &c)
{
	abi::Bind req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	if (req.reserved)
		return Error(err::EINVAL);
	const rdma_cm::SockAddr a = WEFT_TRY(from_storage(req.addr, req.addr_size));
	return bind_to(c, req.id, a);
}

Result<void> cmd_resolve_ip(Call &c)
{
	abi::ResolveIp req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	rdma_cm::SockAddr src;
	const bool has_src = req.src_addr.family != 0;
	if (has_src)
		src = WEFT_TRY(from_in6(req.src_addr));
	const rdma_cm::SockAddr dst = WEFT_TRY(from_in6(req.dst_addr));
	return resolve(c, req.id, has_src ? &src : nullptr, dst, req.timeout_ms);
}

Result<void> cmd_resolve_addr(Call &c)
{
	abi::ResolveAddr req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	if (req.reserved)
		return Error(err::EINVAL);
	rdma_cm::SockAddr src;
	if (req.src_size)
		src = WEFT_TRY(from_storage(req.src_addr, req.src_size));
	const rdma_cm::SockAddr dst = WEFT_TRY(from_storage(req.dst_addr, req.dst_size));
	return resolve(c, req.id, req.src_size ? &src : nullptr, dst, req.timeout_ms);
}

Result<void> cmd_resolve_route(Call &c)
{
	abi::ResolveRoute req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	return with_id(c, req.id, true, [&](Ctx &, rdma_cm::Id &id) {
		return rdma_cm::resolve_route(id, req.timeout_ms);
	});
}

Result<void> cmd_query_route(Call &c)
{
	abi::Query req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	return with_id(c, req.id, false, [&](Ctx &, rdma_cm::Id &id) -> Result<void> {
		const rdma_cm::Info i = rdma_cm::info(id);
		abi::QueryRouteResp r;
		__builtin_memset(static_cast<void *>(&r), 0, sizeof(r));
		(void)sockaddr_out(i.src, &r.src_addr, sizeof(r.src_addr));
		(void)sockaddr_out(i.dst, &r.dst_addr, sizeof(r.dst_addr));
		r.ibdev_index = no_ibdev_index;
		if (i.dev) {
			r.node_guid = guid_of(i);
			r.port_num = i.port;
			if (i.has_route) {
				r.num_paths = 1;
				path_rec_out(i.route, r.ib_route[0]);
			} else {
				/* No path yet: the GIDs and P_Key of the resolved address. */
				__builtin_memcpy(r.ib_route[0].sgid, i.sgid.raw, 16);
				__builtin_memcpy(r.ib_route[0].dgid, i.dgid.raw, 16);
				r.ib_route[0].pkey.set(i.pkey);
			}
		}
		return Call::respond(req.response, &r, min(c.out_len, sizeof(r)));
	});
}

Result<void> cmd_query(Call &c)
{
	abi::Query req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	return with_id(c, req.id, false, [&](Ctx &, rdma_cm::Id &id) -> Result<void> {
		const rdma_cm::Info i = rdma_cm::info(id);
		switch (req.option) {
		case abi::query::addr:
			return query_addr(c, i, req.response);
		case abi::query::path:
			return query_path(c, i, req.response);
		case abi::query::gid:
			return query_gid(c, i, req.response);
		default:
			return Error(err::ENOSYS);
		}
	});
}

} // namespace weft::ucma
