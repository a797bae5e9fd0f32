// SPDX-License-Identifier: GPL-2.0
/*
 * The device commands: GET_CONTEXT, QUERY_DEVICE, QUERY_PORT and the
 * extended QUERY_DEVICE, as the in-tree 6.1 uverbs_cmd.c answers them
 * (ib_uverbs_get_context(), copy_query_dev_fields(),
 * copy_port_attr_to_resp(), ib_uverbs_ex_query_device()), from the verbs
 * device's attributes (IBA 11.2.1.2 Query HCA, 11.2.1.3 Query HCA port).
 */
#include <weft/log.h>

#include "commands.h"

namespace weft::uverbs {

namespace {

void fill_device(verbs::Device &dev, abi::QueryDeviceResp &r)
{
	const verbs::DeviceAttr &a = dev.attr();
	r.fw_ver = a.fw_ver;
	r.node_guid.set(a.node_guid);
	r.sys_image_guid.set(a.sys_image_guid);
	r.max_mr_size = a.max_mr_size;
	r.page_size_cap = a.page_size_cap;
	r.vendor_id = a.vendor_id;
	r.vendor_part_id = a.vendor_part_id;
	r.hw_ver = a.hw_ver;
	r.max_qp = a.max_qp;
	r.max_qp_wr = a.max_qp_wr;
	r.device_cap_flags = static_cast<uint32_t>(device_cap_flags(dev));
	r.max_sge = min(a.max_send_sge, a.max_recv_sge);
	r.max_sge_rd = a.max_send_sge;
	r.max_cq = a.max_cq;
	r.max_cqe = a.max_cqe;
	r.max_mr = a.max_mr;
	r.max_pd = a.max_pd;
	r.max_qp_rd_atom = a.max_qp_rd_atom;
	r.max_res_rd_atom = a.max_res_rd_atom;
	r.max_qp_init_rd_atom = a.max_qp_init_rd_atom;
	r.atomic_cap = a.atomic_cap ? abi::atomic_hca : abi::atomic_none;
	r.max_mcast_grp = a.max_mcast_grp;
	r.max_mcast_qp_attach = a.max_mcast_qp_attach;
	const uint64_t total = uint64_t(a.max_mcast_grp) * a.max_mcast_qp_attach;
	r.max_total_mcast_qp_attach = static_cast<uint32_t>(min<uint64_t>(total, 0xffffffffu));
	r.max_ah = a.max_ah;
	r.max_srq = a.max_srq;
	r.max_srq_wr = a.max_srq_wr;
	r.max_srq_sge = a.max_srq_sge;
	r.max_pkeys = a.max_pkeys;
	r.local_ca_ack_delay = a.local_ca_ack_delay;
	r.phys_port_cnt = dev.num_ports();
	r.max_mw = a.max_mw;
	/* No EE contexts, RDDs, FMRs or raw QPs: zero. */
}

} // namespace

uint64_t device_cap_flags(verbs::Device &dev)
{
	/*
	 * What every Weft device does for user space today: P_Key/Q_Key
	 * violation counters (PortCounters), PortActive events, a system
	 * image GUID, RNR NAKs on RC, and req_notify reporting missed events;
	 * memory windows of type 1 and 2B where the device has them (as
	 * in-tree rxe).  Fast registration from user work requests: not
	 * offered (librxe 44 has no REG_MR work request).
	 */
	uint64_t caps = abi::device_cap::bad_pkey_cntr | abi::device_cap::bad_qkey_cntr |
			abi::device_cap::port_active_event | abi::device_cap::sys_image_guid |
			abi::device_cap::rc_rnr_nak_gen | abi::device_cap::n_notify_cq;
	if (dev.attr().max_mw)
		caps |= abi::device_cap::mem_window | abi::device_cap::mem_window_type_2b;
	return caps;
}

Result<void> cmd_get_context(Call &c)
{
	abi::GetContext req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	File &f = c.file;
	/* One context per file (in-tree ib_init_ucontext()). */
	if (f.context())
		return Error(err::EINVAL);
	verbs::Device &dev = f.device();
	Ref<EventQueue> events = WEFT_TRY(make_ref<EventQueue>(Gfp::Sleep));
	verbs::Context *ctx = WEFT_TRY(verbs::Context::open_user(dev, "uverbs"));

	/* The event file takes a reference of its own. */
	int fd = -1, e = 0;
	events->get();
	weft_uverbs_evfd *efd = weft_uverbs_evfd_reserve(static_cast<EventSource *>(events.get()), &fd, &e);
	if (!efd) {
		events->put();
		ctx->close(false);
		return Error(-e);
	}
	abi::GetContextResp resp{static_cast<uint32_t>(fd), dev.attr().num_comp_vectors};
	auto sent = c.response(&resp, sizeof(resp));
	if (!sent) {
		weft_uverbs_evfd_abort(efd);
		ctx->close(false);
		return sent;
	}
	/* The fd is the process's only once the response that names it was written. */
	weft_uverbs_evfd_commit(efd);
	f.set_context(ctx, move(events));
	return ok();
}

Result<void> cmd_query_device(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::QueryDevice req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	abi::QueryDeviceResp r{};
	fill_device(c.file.device(), r);
	return c.response(&r, sizeof(r));
}

Result<void> cmd_query_port(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::QueryPort req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	verbs::Device &dev = c.file.device();
	/* In-tree rdma_is_port_valid(): EINVAL outside the device's ports. */
	if (req.port_num < dev.first_port() || req.port_num >= dev.first_port() + dev.num_ports())
		return Error(err::EINVAL);
	verbs::PortAttr a;
	WEFT_TRY(dev.query_port(req.port_num, a));
	abi::QueryPortResp r{};
	r.port_cap_flags = a.port_cap_flags;
	r.max_msg_sz = a.max_msg_sz;
	r.bad_pkey_cntr = a.bad_pkey_cntr;
	r.qkey_viol_cntr = a.qkey_viol_cntr;
	r.gid_tbl_len = a.gid_tbl_len;
	r.pkey_tbl_len = a.pkey_tbl_len;
	r.lid = a.lid;
	r.sm_lid = a.sm_lid;
	r.state = static_cast<uint8_t>(a.state);
	r.max_mtu = static_cast<uint8_t>(a.max_mtu);
	r.active_mtu = static_cast<uint8_t>(a.active_mtu);
	r.lmc = a.lmc;
	r.max_vl_num = a.max_vl_num;
	r.sm_sl = a.sm_sl;
	r.subnet_timeout = a.subnet_timeout;
	r.init_type_reply = a.init_type_reply;
	r.active_width = a.active_width;
	r.active_speed = a.active_speed;
	r.phys_state = static_cast<uint8_t>(a.phys_state);
	r.link_layer = abi::link_layer_infiniband;
	r.flags = 0; /* no GRH required: LID routing */
	return c.response(&r, sizeof(r));
}

Result<void> cmd_ex_query_device(Call &c)
{
	WEFT_TRY(c.need_context());
	abi::ExQueryDevice req;
	WEFT_TRY(c.request(&req, sizeof(req)));
	if (req.comp_mask || req.reserved)
		return Error(err::EINVAL);
	verbs::Device &dev = c.file.device();
	abi::ExQueryDeviceResp r{};
	fill_device(dev, r.base);
	r.device_cap_flags_ex = device_cap_flags(dev);
	/* No ODP, timestamps, RSS, tag matching, CQ moderation or device memory (yet). */
	r.response_length = static_cast<uint32_t>(min(c.out.len, sizeof(r)));
	return c.response(&r, sizeof(r));
}

} // namespace weft::uverbs
