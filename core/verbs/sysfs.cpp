// SPDX-License-Identifier: GPL-2.0
/*
 * The verbs side of the `infiniband` sysfs class: answers the shim's
 * queries (shim_ib_sysfs.c) from a registered Device.
 */
#include <weft/log.h>
#include <weft/verbs/verbs.h>

#include "ib_sysfs.h"
#include "sysfs.h"

namespace weft::verbs {

namespace {

Device &dev_of(void *ctx)
{
	return *static_cast<Device *>(ctx);
}

int query_port(void *ctx, uint32_t port, struct weft_ib_sysfs_port *out)
{
	PortAttr a;
	auto r = dev_of(ctx).query_port(static_cast<uint8_t>(port), a);
	if (!r)
		return r.to_errno();
	out->lid = a.lid;
	out->sm_lid = a.sm_lid;
	out->cap_mask = a.port_cap_flags;
	out->lmc = a.lmc;
	out->sm_sl = a.sm_sl;
	out->state = static_cast<uint8_t>(a.state);
	out->phys_state = static_cast<uint8_t>(a.phys_state);
	out->active_width = a.active_width;
	out->active_speed = a.active_speed;
	out->gid_tbl_len = a.gid_tbl_len;
	out->pkey_tbl_len = a.pkey_tbl_len;
	return 0;
}

int query_gid(void *ctx, uint32_t port, uint32_t index, uint8_t gid[16])
{
	auto r = dev_of(ctx).query_gid(static_cast<uint8_t>(port), index);
	if (!r)
		return r.to_errno();
	__builtin_memcpy(gid, r.value().raw, 16);
	return 0;
}

int query_pkey(void *ctx, uint32_t port, uint32_t index, uint16_t *pkey)
{
	auto r = dev_of(ctx).query_pkey(static_cast<uint8_t>(port), static_cast<uint16_t>(index));
	if (!r)
		return r.to_errno();
	*pkey = r.value();
	return 0;
}

int query_counters(void *ctx, uint32_t port, struct weft_ib_sysfs_counters *out)
{
	PortCounterValues v;
	auto r = dev_of(ctx).query_counters(static_cast<uint8_t>(port), v);
	if (!r)
		return r.to_errno();
	out->port_xmit_packets = v.xmit_packets;
	out->port_rcv_packets = v.rcv_packets;
	out->port_xmit_data = v.xmit_words;
	out->port_rcv_data = v.rcv_words;
	out->port_xmit_discards = v.xmit_discards;
	out->port_rcv_errors = v.rcv_errors;
	out->vl15_dropped = v.vl15_dropped;
	out->link_downed = v.link_downed;
	out->unicast_xmit_packets = v.unicast_xmit;
	out->unicast_rcv_packets = v.unicast_rcv;
	out->multicast_xmit_packets = v.multicast_xmit;
	out->multicast_rcv_packets = v.multicast_rcv;
	out->out_of_buffer = v.out_of_buffer;
	out->mad_replies_dropped = dev_of(ctx).mad_replies_dropped(static_cast<uint8_t>(port));
	return 0;
}

void get_node_desc(void *ctx, char desc[65])
{
	dev_of(ctx).node_desc(desc);
}

int set_node_desc(void *ctx, const char *desc, size_t len)
{
	auto r = dev_of(ctx).set_node_desc(desc, len);
	return r ? 0 : -r.error().code();
}

constexpr weft_ib_sysfs_ops ops = {
	query_port, query_gid, query_pkey, query_counters, get_node_desc, set_node_desc,
};

} // namespace

Result<weft_ib_sysfs *> sysfs_add(Device &dev)
{
	char fw[32];
	uint64_t v = dev.attr().fw_ver;
	format(fw, sizeof(fw), "%u.%u.%u", unsigned(v >> 32), unsigned((v >> 16) & 0xffff),
	       unsigned(v & 0xffff));
	weft_ib_sysfs_info info = {};
	info.name = dev.name();
	info.node_type = static_cast<uint8_t>(dev.node_type());
	info.node_guid = dev.attr().node_guid;
	info.sys_image_guid = dev.attr().sys_image_guid;
	info.fw_ver = fw;
	info.hca_type = dev.node_type() == NodeType::Switch ? "weft-switch" : "weft-hca";
	info.first_port = dev.first_port();
	info.num_ports = dev.num_ports();
	int e = 0;
	weft_ib_sysfs *s = weft_ib_sysfs_add(&info, &ops, &dev, &e);
	if (!s)
		return Error(-e);
	return s;
}

void sysfs_del(weft_ib_sysfs *s)
{
	if (s)
		weft_ib_sysfs_del(s);
}

} // namespace weft::verbs
