// SPDX-License-Identifier: GPL-2.0
/*
 * Resource tracking over RDMA netlink: what iproute2's `rdma res` asks,
 * answered with the attributes of the in-tree 6.1 nldev.c from the verbs
 * core's contexts (Device::for_each_context, Context::inspect):
 *
 *   RES_GET          per device: counts of pd, cq, qp, cm_id, mr, ctx, srq
 *   RES_QP_GET       port, LQPN, PDN (user), owner, RQPN/RQ PSN (RC, UC),
 *                    SQ PSN, path migration state (RC, UC), type, state
 *   RES_CQ_GET       CQE, usecnt, poll context (kernel), DIM, CQN, CTXN (user), owner
 *   RES_MR_GET       rkey, lkey (CAP_NET_ADMIN only), length, MRN, PDN (user), owner
 *   RES_PD_GET       local DMA lkey, unsafe global rkey (CAP_NET_ADMIN only),
 *                    usecnt, PDN, CTXN (user), owner
 *
 * The owner is KERN_NAME for a kernel consumer's context (its owner
 * name: weft_ipoib, weft_mad...) and PID for a process's, as the asking
 * process's PID namespace numbers it (none when it cannot see it).  A
 * dump lists one device's objects (DEV_INDEX required, PORT_INDEX filters
 * QPs); a doit names one object by its id (LQPN with a port, or
 * PDN/CQN/MRN without one), as in-tree.
 *
 * Driver-internal objects (in-tree's RESTRACK_DD, shown with `rdma -dd`):
 * the MR uverbs registers over a user QP's send ring in the process's
 * context.  Counts and dumps leave them out unless DRIVER_DETAILS is set.
 */
#include "nldev.h"

namespace weft::uverbs::nl {

namespace {

using verbs::Context;
using Objects = Context::Objects;

/* In-tree rdma_restrack_entry: the owner of a tracked object. */
Result<void> put_owner(weft_nl_req *r, Context &c)
{
	if (!c.is_user())
		return put(weft_nl_put_str(r, WEFT_NLDEV_ATTR_RES_KERN_NAME, c.owner));
	/* Exited, or in a PID namespace the requester cannot see: no PID (in-tree). */
	if (const uint32_t pid = c.owner_pid())
		return put(weft_nl_put_u32(r, WEFT_NLDEV_ATTR_RES_PID, pid));
	return ok();
}

Result<void> put_usecnt(weft_nl_req *r, int usecnt)
{
	return put(weft_nl_put_u64(r, WEFT_NLDEV_ATTR_RES_USECNT, uint64_t(usecnt)));
}

/* What every entry's filler gets. */
struct Fill {
	weft_nl_req *r;
	bool admin;    /* CAP_NET_ADMIN: keys shown */
	uint32_t port; /* 0, or only QPs of this port */
};

/* The request asks for driver-internal objects too (`rdma -dd`). */
bool details(weft_nl_req *r)
{
	uint8_t v = 0;
	return weft_nl_get_u8(r, WEFT_NLDEV_ATTR_DRIVER_DETAILS, &v) && v;
}

/* A process registers only user memory: any other MR in its context is uverbs' own. */
bool internal(const Context &c, const verbs::Mr &mr)
{
	return c.is_user() && mr.kind != verbs::MrKind::User;
}

/* A kind's command, its table and entry nests, the id attribute, and whether it is per device (no port). */
struct Tags {
	unsigned int cmd, table, entry, id_attr;
	bool per_dev;
};

struct QpRes {
	using T = verbs::Qp;
	static constexpr Tags tags{WEFT_NLDEV_CMD_RES_QP_GET, WEFT_NLDEV_ATTR_RES_QP, WEFT_NLDEV_ATTR_RES_QP_ENTRY,
				    WEFT_NLDEV_ATTR_RES_LQPN, false};
	static List<T, &T::node> &list(const Objects &o) { return o.qps; }
	static uint32_t id(const T &qp) { return qp.qpn; }
	static bool internal(const Context &, const T &) { return false; }

	static Result<void> fill(const Fill &f, Context &c, const Objects &, T &qp)
	{
		const uint8_t port = qp.port();
		/* In-tree -EAGAIN: the dump skips it, the doit fails with it. */
		if (f.port && f.port != port)
			return Error(err::EAGAIN);
		/* Not bound before RESET->INIT. */
		if (port)
			WEFT_TRY(put(weft_nl_put_u32(f.r, WEFT_NLDEV_ATTR_PORT_INDEX, port)));
		WEFT_TRY(put(weft_nl_put_u32(f.r, WEFT_NLDEV_ATTR_RES_LQPN, qp.qpn)));
		if (c.is_user())
			WEFT_TRY(put(weft_nl_put_u32(f.r, WEFT_NLDEV_ATTR_RES_PDN, qp.pd.res_id)));
		WEFT_TRY(put_owner(f.r, c));
		verbs::QpAttr a;
		qp.query(a);
		const bool connected = qp.type == verbs::QpType::Rc || qp.type == verbs::QpType::Uc;
		if (connected) {
			WEFT_TRY(put(weft_nl_put_u32(f.r, WEFT_NLDEV_ATTR_RES_RQPN, a.dest_qp_num)));
			WEFT_TRY(put(weft_nl_put_u32(f.r, WEFT_NLDEV_ATTR_RES_RQ_PSN, a.rq_psn)));
		}
		WEFT_TRY(put(weft_nl_put_u32(f.r, WEFT_NLDEV_ATTR_RES_SQ_PSN, a.sq_psn)));
		if (connected)
			WEFT_TRY(put(weft_nl_put_u8(f.r, WEFT_NLDEV_ATTR_RES_PATH_MIG_STATE,
						    static_cast<uint8_t>(a.path_mig_state))));
		/* QpType and QpState are numbered as enum ib_qp_type and ib_qp_state. */
		WEFT_TRY(put(weft_nl_put_u8(f.r, WEFT_NLDEV_ATTR_RES_TYPE, static_cast<uint8_t>(qp.type))));
		return put(weft_nl_put_u8(f.r, WEFT_NLDEV_ATTR_RES_STATE,
					  static_cast<uint8_t>(qp.state())));
	}
};

struct CqRes {
	using T = verbs::Cq;
	static constexpr Tags tags{WEFT_NLDEV_CMD_RES_CQ_GET, WEFT_NLDEV_ATTR_RES_CQ, WEFT_NLDEV_ATTR_RES_CQ_ENTRY,
				    WEFT_NLDEV_ATTR_RES_CQN, true};
	static List<T, &T::node> &list(const Objects &o) { return o.cqs; }
	static uint32_t id(const T &cq) { return cq.res_id; }
	static bool internal(const Context &, const T &) { return false; }

	/* enum ib_poll_context: a handler in the producer's context is softirq-like. */
	static constexpr uint8_t poll_softirq = 1, poll_workqueue = 2;

	static Result<void> fill(const Fill &f, Context &c, const Objects &, T &cq)
	{
		WEFT_TRY(put(weft_nl_put_u32(f.r, WEFT_NLDEV_ATTR_RES_CQE, cq.cqe.load(Order::Relaxed))));
		WEFT_TRY(put_usecnt(f.r, cq.usecnt));
		if (!c.is_user()) {
			const bool atomic = cq.handler_context() == verbs::Cq::HandlerContext::Atomic;
			WEFT_TRY(put(weft_nl_put_u8(f.r, WEFT_NLDEV_ATTR_RES_POLL_CTX,
						    atomic ? poll_softirq : poll_workqueue)));
		}
		/* No adaptive moderation (DIM). */
		WEFT_TRY(put(weft_nl_put_u8(f.r, WEFT_NLDEV_ATTR_DEV_DIM, 0)));
		WEFT_TRY(put(weft_nl_put_u32(f.r, WEFT_NLDEV_ATTR_RES_CQN, cq.res_id)));
		if (c.is_user())
			WEFT_TRY(put(weft_nl_put_u32(f.r, WEFT_NLDEV_ATTR_RES_CTXN, c.res_id)));
		return put_owner(f.r, c);
	}
};

struct MrRes {
	using T = verbs::Mr;
	static constexpr Tags tags{WEFT_NLDEV_CMD_RES_MR_GET, WEFT_NLDEV_ATTR_RES_MR, WEFT_NLDEV_ATTR_RES_MR_ENTRY,
				    WEFT_NLDEV_ATTR_RES_MRN, true};
	static List<T, &T::node> &list(const Objects &o) { return o.mrs; }
	static uint32_t id(const T &mr) { return mr.res_id; }
	static bool internal(const Context &c, const T &mr) { return nl::internal(c, mr); }

	static Result<void> fill(const Fill &f, Context &c, const Objects &, T &mr)
	{
		if (f.admin) {
			WEFT_TRY(put(weft_nl_put_u32(f.r, WEFT_NLDEV_ATTR_RES_RKEY, mr.rkey)));
			WEFT_TRY(put(weft_nl_put_u32(f.r, WEFT_NLDEV_ATTR_RES_LKEY, mr.lkey)));
		}
		WEFT_TRY(put(weft_nl_put_u64(f.r, WEFT_NLDEV_ATTR_RES_MRLEN, mr.length)));
		WEFT_TRY(put(weft_nl_put_u32(f.r, WEFT_NLDEV_ATTR_RES_MRN, mr.res_id)));
		if (c.is_user())
			WEFT_TRY(put(weft_nl_put_u32(f.r, WEFT_NLDEV_ATTR_RES_PDN, mr.pd.res_id)));
		return put_owner(f.r, c);
	}
};

struct PdRes {
	using T = verbs::Pd;
	static constexpr Tags tags{WEFT_NLDEV_CMD_RES_PD_GET, WEFT_NLDEV_ATTR_RES_PD, WEFT_NLDEV_ATTR_RES_PD_ENTRY,
				    WEFT_NLDEV_ATTR_RES_PDN, true};
	static List<T, &T::node> &list(const Objects &o) { return o.pds; }
	static uint32_t id(const T &pd) { return pd.res_id; }
	static bool internal(const Context &, const T &) { return false; }

	/*
	 * In-tree a kernel PD's local_dma_lkey is its internal all-memory MR's
	 * lkey, and that MR's rkey, when it has one, the "unsafe global rkey".
	 * Weft's kernel consumers register that MR themselves (get_dma_mr).
	 */
	static const verbs::Mr *dma_mr(const Objects &o, const T &pd)
	{
		for (verbs::Mr &mr : o.mrs)
			if (&mr.pd == &pd && mr.kind == verbs::MrKind::Dma)
				return &mr;
		return nullptr;
	}

	static Result<void> fill(const Fill &f, Context &c, const Objects &o, T &pd)
	{
		if (f.admin) {
			const verbs::Mr *dma = dma_mr(o, pd);
			WEFT_TRY(put(weft_nl_put_u32(f.r, WEFT_NLDEV_ATTR_RES_LOCAL_DMA_LKEY,
						     dma ? dma->lkey : 0)));
			if (dma && dma->rkey)
				WEFT_TRY(put(weft_nl_put_u32(f.r, WEFT_NLDEV_ATTR_RES_UNSAFE_GLOBAL_RKEY,
							     dma->rkey)));
		}
		WEFT_TRY(put_usecnt(f.r, pd.usecnt));
		WEFT_TRY(put(weft_nl_put_u32(f.r, WEFT_NLDEV_ATTR_RES_PDN, pd.res_id)));
		if (c.is_user())
			WEFT_TRY(put(weft_nl_put_u32(f.r, WEFT_NLDEV_ATTR_RES_CTXN, c.res_id)));
		return put_owner(f.r, c);
	}
};

/*
 * fn(Context &, const Objects &, T &) for each object of kind K on @d,
 * until it returns false; under the context list lock and the object's
 * context's lock (verbs.h).
 */
template <typename K, typename F> void each(verbs::Device &d, F fn)
{
	d.for_each_context([&](Context &c) {
		return c.inspect([&](const Objects &o) {
			for (typename K::T &obj : K::list(o))
				if (!fn(c, o, obj))
					return false;
			return true;
		});
	});
}

/* The port filter of a request: 0 for none; EINVAL for a port the device lacks. */
Result<uint32_t> port_filter(weft_nl_req *r, verbs::Device &d)
{
	uint32_t port;
	if (!weft_nl_get_u32(r, WEFT_NLDEV_ATTR_PORT_INDEX, &port))
		return 0u;
	if (!port_valid(d, port))
		return Error(err::EINVAL);
	return port;
}

/*
 * One message per call: the device's handle and a table of as many
 * entries as fit, from the cursor (cursor 0: objects of the device already
 * walked).  A call that walks no object adds nothing, which ends the dump.
 */
template <typename K> Result<void> dump_device(weft_nl_req *r, UDevice &u)
{
	long *cursor = weft_nl_cursor(r);
	const Fill f{r, weft_nl_net_admin(r), WEFT_TRY(port_filter(r, u.dev()))};
	WEFT_TRY(put(weft_nl_begin(r, K::tags.cmd)));
	weft_nl_nest *table = nullptr;
	if (!fill_handle(r, u) || !(table = weft_nl_nest_start(r, K::tags.table))) {
		weft_nl_cancel(r);
		return Error(err::EMSGSIZE);
	}
	long idx = 0;
	bool filled = false;
	Result<void> failed = ok();
	const bool all = details(r);
	each<K>(u.dev(), [&](Context &c, const Objects &o, typename K::T &obj) {
		if (idx < cursor[0] || (!all && K::internal(c, obj))) {
			idx++;
			return true;
		}
		filled = true;
		weft_nl_nest *entry = weft_nl_nest_start(r, K::tags.entry);
		if (!entry)
			return false; /* full: this one starts the next message */
		auto done = K::fill(f, c, o, obj);
		if (!done) {
			weft_nl_nest_cancel(r, entry);
			if (done.error().code() == err::EMSGSIZE)
				return false;
			if (done.error().code() != err::EAGAIN) {
				failed = done;
				return false;
			}
		} else {
			weft_nl_nest_end(r, entry);
		}
		idx++;
		return true;
	});
	if (!failed || !filled) {
		weft_nl_cancel(r);
		return failed;
	}
	weft_nl_nest_end(r, table);
	weft_nl_end(r);
	cursor[0] = idx;
	return ok();
}

/* One object by its id: LQPN with a port (QPs are per port), else without one. */
template <typename K> Result<void> res_doit(weft_nl_req *r)
{
	const uint32_t id = WEFT_TRY(need_u32(r, K::tags.id_attr));
	WEFT_TRY(on_device(r, [&](UDevice &u) -> Result<void> {
		const Fill f{r, weft_nl_net_admin(r), WEFT_TRY(port_filter(r, u.dev()))};
		if ((f.port != 0) == K::tags.per_dev)
			return Error(err::EINVAL);
		Result<void> found = Error(err::ENOENT);
		each<K>(u.dev(), [&](Context &c, const Objects &o, typename K::T &obj) {
			if (K::id(obj) != id)
				return true;
			found = message(r, weft_nl_op(r), [&]() -> Result<void> {
				WEFT_TRY(fill_handle(r, u));
				return K::fill(f, c, o, obj);
			});
			return false;
		});
		return found;
	}));
	return put(weft_nl_send(r));
}

template <typename K> Result<void> res_object(weft_nl_req *r, bool dump)
{
	if (!dump)
		return res_doit<K>(r);
	return on_device(r, [&](UDevice &u) { return dump_device<K>(r, u); });
}

/* --- RES_GET: the summary ----------------------------------------------------------- */

struct Counts {
	uint64_t pd = 0, cq = 0, qp = 0, mr = 0, ctx = 0, srq = 0;
};

Counts count(verbs::Device &d, bool all)
{
	Counts n;
	d.for_each_context([&](Context &c) {
		/* In-tree counts user contexts (ib_ucontext) only. */
		n.ctx += c.is_user();
		c.inspect([&](const Objects &o) {
			n.pd += o.pds.size();
			n.cq += o.cqs.size();
			n.qp += o.qps.size();
			for (verbs::Mr &mr : o.mrs)
				n.mr += all || !internal(c, mr);
			n.srq += o.srqs.size();
		});
		return true;
	});
	return n;
}

Result<void> put_summary_entry(weft_nl_req *r, const char *name, uint64_t curr)
{
	weft_nl_nest *e = weft_nl_nest_start(r, WEFT_NLDEV_ATTR_RES_SUMMARY_ENTRY);
	if (!e)
		return Error(err::EMSGSIZE);
	if (weft_nl_put_str(r, WEFT_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME, name) ||
	    weft_nl_put_u64(r, WEFT_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR, curr)) {
		weft_nl_nest_cancel(r, e);
		return Error(err::EMSGSIZE);
	}
	weft_nl_nest_end(r, e);
	return ok();
}

/* In-tree: the doit honours DRIVER_DETAILS, the dump does not. */
Result<void> fill_summary(weft_nl_req *r, UDevice &u)
{
	const Counts n = count(u.dev(), !weft_nl_is_dump(r) && details(r));
	WEFT_TRY(fill_handle(r, u));
	weft_nl_nest *t = weft_nl_nest_start(r, WEFT_NLDEV_ATTR_RES_SUMMARY);
	if (!t)
		return Error(err::EMSGSIZE);
	/* In-tree order; Weft has no RDMA CM ids (cm_id 0). */
	const struct {
		const char *name;
		uint64_t curr;
	} rows[] = {{"pd", n.pd}, {"cq", n.cq}, {"qp", n.qp}, {"cm_id", 0},
		    {"mr", n.mr}, {"ctx", n.ctx}, {"srq", n.srq}};
	for (const auto &row : rows) {
		if (auto e = put_summary_entry(r, row.name, row.curr); !e) {
			weft_nl_nest_cancel(r, t);
			return e;
		}
	}
	weft_nl_nest_end(r, t);
	return ok();
}

Result<void> summary(weft_nl_req *r, bool dump)
{
	if (!dump) {
		WEFT_TRY(on_device(r, [&](UDevice &u) {
			return message(r, WEFT_NLDEV_CMD_RES_GET, [&] { return fill_summary(r, u); });
		}));
		return put(weft_nl_send(r));
	}
	/* Cursor 0: the next device index to send. */
	long *cursor = weft_nl_cursor(r);
	table().for_each_from(static_cast<uint32_t>(cursor[0]), [&](UDevice &u) {
		if (!message(r, WEFT_NLDEV_CMD_RES_GET, [&] { return fill_summary(r, u); }))
			return false;
		cursor[0] = long(u.index) + 1;
		return true;
	});
	return ok();
}

} // namespace

bool res_handles(unsigned int op)
{
	switch (op) {
	case WEFT_NLDEV_CMD_RES_GET:
	case WEFT_NLDEV_CMD_RES_QP_GET:
	case WEFT_NLDEV_CMD_RES_CQ_GET:
	case WEFT_NLDEV_CMD_RES_MR_GET:
	case WEFT_NLDEV_CMD_RES_PD_GET:
		return true;
	default:
		return false;
	}
}

Result<void> res_request(weft_nl_req *r, unsigned int op, bool dump)
{
	switch (op) {
	case WEFT_NLDEV_CMD_RES_GET:
		return summary(r, dump);
	case WEFT_NLDEV_CMD_RES_QP_GET:
		return res_object<QpRes>(r, dump);
	case WEFT_NLDEV_CMD_RES_CQ_GET:
		return res_object<CqRes>(r, dump);
	case WEFT_NLDEV_CMD_RES_MR_GET:
		return res_object<MrRes>(r, dump);
	case WEFT_NLDEV_CMD_RES_PD_GET:
		return res_object<PdRes>(r, dump);
	default:
		return Error(err::EOPNOTSUPP);
	}
}

} // namespace weft::uverbs::nl
