// SPDX-License-Identifier: GPL-2.0
/*
 * Connections: CONNECT, LISTEN, ACCEPT, REJECT, DISCONNECT, INIT_QP_ATTR,
 * NOTIFY and SET_OPTION, as the in-tree 6.1 ucma.c answers them.  The
 * user's QP is not attached to the Id: its number travels in the
 * connection parameters, the user moves it with INIT_QP_ATTR, and
 * librdmacm answers CONNECT_RESPONSE with an ACCEPT that has no parameters
 * (the RTU: rdma_cm::establish()).
 */
#include "commands.h"
#include "translate.h"

namespace weft::ucma {

namespace {

/* The listen backlog's ceiling (in-tree's net.rdma_ucm.max_backlog default). */
constexpr int max_backlog = 1024;

/* IBA 12.6.7.2 REJ reasons a user may give (in-tree ucma_reject()). */
constexpr uint8_t rej_consumer = iba::cm::rej::consumer,
		  rej_vendor_option = iba::cm::rej::vendor_option_unsupported;

/* enum ib_event_type: the QP's CommEst (IBA 11.6.3.1), which NOTIFY forwards. */
constexpr uint32_t ib_event_comm_est = 4;

} // namespace

Result<void> cmd_connect(Call &c)
{
	abi::Connect req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	if (!req.conn_param.valid)
		return Error(err::EINVAL);
	const rdma_cm::ConnParam p = conn_param_in(req.conn_param);
	return with_id(c, req.id, true,
		       [&](Ctx &, rdma_cm::Id &id) { return rdma_cm::connect(id, p); });
}

Result<void> cmd_listen(Call &c)
{
	abi::Listen req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	int backlog = static_cast<int>(req.backlog);
	if (backlog <= 0 || backlog > max_backlog)
		backlog = max_backlog;
	return with_id(c, req.id, false, [&](Ctx &x, rdma_cm::Id &id) {
		x.backlog.store(backlog, Order::Relaxed);
		return rdma_cm::listen(id, backlog);
	});
}

Result<void> cmd_accept(Call &c)
{
	abi::Accept req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	return with_id(c, req.id, true, [&](Ctx &x, rdma_cm::Id &id) -> Result<void> {
		if (!req.conn_param.valid)
			return rdma_cm::establish(id); /* the active side's RTU */
		/*
		 * The Id reports from now on, under the user's uid: set before
		 * the REP goes, so ESTABLISHED (which may come at once) is seen.
		 */
		uint64_t old_uid;
		bool old_reporting;
		{
			MutexGuard h(x.hlock);
			old_uid = exchange(x.uid, req.uid);
			old_reporting = exchange(x.reporting, true);
		}
		auto r = rdma_cm::accept(id, conn_param_in(req.conn_param));
		if (!r) {
			MutexGuard h(x.hlock);
			x.uid = old_uid;
			x.reporting = old_reporting;
		}
		return r;
	});
}

Result<void> cmd_reject(Call &c)
{
	abi::Reject req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	if (!req.reason)
		req.reason = rej_consumer;
	if (req.reason != rej_consumer && req.reason != rej_vendor_option)
		return Error(err::EINVAL);
	const ConstBytes pd(req.private_data, req.private_data_len);
	return with_id(c, req.id, true,
		       [&](Ctx &, rdma_cm::Id &id) { return rdma_cm::reject(id, pd, req.reason); });
}

Result<void> cmd_disconnect(Call &c)
{
	abi::Disconnect req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	return with_id(c, req.id, true,
		       [&](Ctx &, rdma_cm::Id &id) { return rdma_cm::disconnect(id); });
}

Result<void> cmd_init_qp_attr(Call &c)
{
	abi::InitQpAttr req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	if (req.qp_state > static_cast<uint32_t>(verbs::QpState::Err))
		return Error(err::EINVAL);
	return with_id(c, req.id, true, [&](Ctx &, rdma_cm::Id &id) -> Result<void> {
		verbs::QpAttr attr;
		attr.state = static_cast<verbs::QpState>(req.qp_state);
		uint32_t mask = 0;
		WEFT_TRY(rdma_cm::init_qp_attr(id, attr.state, attr, mask));
		abi::QpAttr out;
		qp_attr_out(attr, mask, out);
		return Call::respond(req.response, &out, sizeof(out));
	});
}

Result<void> cmd_notify(Call &c)
{
	abi::Notify req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	return with_id(c, req.id, true, [&](Ctx &, rdma_cm::Id &id) -> Result<void> {
		/* In-tree ib_cm_notify(): CommEst; path migration is not offered (EINVAL). */
		if (req.event != ib_event_comm_est)
			return Error(err::EINVAL);
		return rdma_cm::notify_established(id);
	});
}

namespace {

/* An option's value: exactly @len bytes (EINVAL otherwise). */
Result<void> option_value(const abi::SetOption &req, void *val, size_t len)
{
	if (req.optlen != len)
		return Error(err::EINVAL);
	return from_errno(weft_ucma_copy_from_user(
		val, reinterpret_cast<const void *>(static_cast<uintptr_t>(req.optval)), len));
}

Result<void> set_id_option(rdma_cm::Id &id, const abi::SetOption &req)
{
	switch (req.optname) {
	case abi::opt::tos: {
		uint8_t v;
		WEFT_TRY(option_value(req, &v, sizeof(v)));
		return rdma_cm::set_tos(id, v);
	}
	case abi::opt::reuseaddr: {
		int v;
		WEFT_TRY(option_value(req, &v, sizeof(v)));
		return rdma_cm::set_reuseaddr(id, v != 0);
	}
	case abi::opt::afonly: {
		int v;
		WEFT_TRY(option_value(req, &v, sizeof(v)));
		return rdma_cm::set_afonly(id, v != 0);
	}
	case abi::opt::ack_timeout: {
		uint8_t v;
		WEFT_TRY(option_value(req, &v, sizeof(v)));
		return rdma_cm::set_ack_timeout(id, v);
	}
	default:
		return Error(err::ENOSYS);
	}
}

} // namespace

/*
 * Levels and names as in-tree: unknown ones are ENOSYS.  RDMA_OPTION_IB_PATH
 * (a path the user resolved itself, e.g. through ibacm) is ENOSYS too:
 * TODO(rdma_cm API): no set_ib_path(); librdmacm resolves routes through
 * RESOLVE_ROUTE unless told to use ibacm.
 */
Result<void> cmd_set_option(Call &c)
{
	abi::SetOption req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	return with_id(c, req.id, false, [&](Ctx &, rdma_cm::Id &id) -> Result<void> {
		if (req.level == abi::opt::level_id)
			return set_id_option(id, req);
		return Error(err::ENOSYS);
	});
}

} // namespace weft::ucma
