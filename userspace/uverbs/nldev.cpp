// SPDX-License-Identifier: GPL-2.0
/*
 * The RDMA netlink device commands (RDMA_NL_NLDEV) Weft answers, with the
 * attributes of the in-tree 6.1 nldev.c that libibverbs 44 and iproute2's
 * `rdma` read:
 *
 *   GET (doit, dump)   the device: index, name, last port, capabilities,
 *                      firmware, GUIDs, node type, protocol "ib"
 *   PORT_GET (both)    a port: capabilities, subnet prefix, LID, SM LID,
 *                      LMC, state, physical state
 *   GET_CHARDEV        uverbsN: its number, ABI (rxe's 1), name, and the
 *                      driver id RDMA_DRIVER_RXE that binds librxe
 *   SYS_GET            netns mode "shared", copy-on-fork
 *   RES_*              resource tracking (nldev_res.cpp)
 *
 * Everything else is EOPNOTSUPP (statistics, renames, netns moves, links
 * are not Weft's yet).  Errors are the in-tree ones:
 * EINVAL for a missing or unknown device index or port.
 */
#include <weft/log.h>

#include "commands.h"
#include "nldev.h"

namespace weft::uverbs {

namespace nl {

namespace {

/* In-tree rdma_start_port()/rdma_end_port(): a switch has only its port 0. */
uint32_t start_port(verbs::Device &d)
{
	return d.node_type() == verbs::NodeType::Switch ? 0 : 1;
}

uint32_t end_port(verbs::Device &d)
{
	return d.node_type() == verbs::NodeType::Switch ? 0 : d.num_ports();
}

} // namespace

bool port_valid(verbs::Device &d, uint32_t port)
{
	return port >= start_port(d) && port <= end_port(d);
}

Result<void> fill_handle(weft_nl_req *r, UDevice &u)
{
	WEFT_TRY(put(weft_nl_put_u32(r, WEFT_NLDEV_ATTR_DEV_INDEX, u.index)));
	return put(weft_nl_put_str(r, WEFT_NLDEV_ATTR_DEV_NAME, u.dev().name()));
}

Result<uint32_t> need_u32(weft_nl_req *r, unsigned int attr)
{
	uint32_t v;
	if (!weft_nl_get_u32(r, attr, &v))
		return Error(err::EINVAL);
	return v;
}

namespace {

Result<void> fill_dev(weft_nl_req *r, UDevice &u)
{
	verbs::Device &d = u.dev();
	const verbs::DeviceAttr &a = d.attr();
	char fw[32];
	format(fw, sizeof(fw), "%u.%u.%u", unsigned(a.fw_ver >> 32),
	       unsigned((a.fw_ver >> 16) & 0xffff), unsigned(a.fw_ver & 0xffff));
	WEFT_TRY(fill_handle(r, u));
	/* For GET, PORT_INDEX is the last port (libibverbs: the port count). */
	WEFT_TRY(put(weft_nl_put_u32(r, WEFT_NLDEV_ATTR_PORT_INDEX, end_port(d))));
	WEFT_TRY(put(weft_nl_put_u64(r, WEFT_NLDEV_ATTR_CAP_FLAGS, device_cap_flags(d))));
	/* In-tree: no FW_VERSION for a device without firmware (the soft switch). */
	if (a.fw_ver)
		WEFT_TRY(put(weft_nl_put_str(r, WEFT_NLDEV_ATTR_FW_VERSION, fw)));
	/* GUIDs in host order here (the verbs ABI carries them big-endian). */
	WEFT_TRY(put(weft_nl_put_u64(r, WEFT_NLDEV_ATTR_NODE_GUID, a.node_guid)));
	WEFT_TRY(put(weft_nl_put_u64(r, WEFT_NLDEV_ATTR_SYS_IMAGE_GUID, a.sys_image_guid)));
	WEFT_TRY(put(weft_nl_put_u8(r, WEFT_NLDEV_ATTR_DEV_NODE_TYPE,
				    static_cast<uint8_t>(d.node_type()))));
	WEFT_TRY(put(weft_nl_put_u8(r, WEFT_NLDEV_ATTR_DEV_DIM, 0)));
	return put(weft_nl_put_str(r, WEFT_NLDEV_ATTR_DEV_PROTOCOL, "ib"));
}

Result<void> fill_port(weft_nl_req *r, UDevice &u, uint32_t port)
{
	verbs::Device &d = u.dev();
	verbs::PortAttr a;
	WEFT_TRY(fill_handle(r, u));
	WEFT_TRY(put(weft_nl_put_u32(r, WEFT_NLDEV_ATTR_PORT_INDEX, port)));
	WEFT_TRY(d.query_port(static_cast<uint8_t>(port), a));
	auto gid = d.query_gid(static_cast<uint8_t>(port), 0);
	/* CapabilityMask in the low half; CapabilityMask2 (not modelled) would be the high. */
	WEFT_TRY(put(weft_nl_put_u64(r, WEFT_NLDEV_ATTR_CAP_FLAGS, a.port_cap_flags)));
	WEFT_TRY(put(weft_nl_put_u64(r, WEFT_NLDEV_ATTR_SUBNET_PREFIX,
				     gid ? gid.value().subnet_prefix() : 0)));
	WEFT_TRY(put(weft_nl_put_u32(r, WEFT_NLDEV_ATTR_LID, a.lid)));
	WEFT_TRY(put(weft_nl_put_u32(r, WEFT_NLDEV_ATTR_SM_LID, a.sm_lid)));
	WEFT_TRY(put(weft_nl_put_u8(r, WEFT_NLDEV_ATTR_LMC, a.lmc)));
	WEFT_TRY(put(weft_nl_put_u8(r, WEFT_NLDEV_ATTR_PORT_STATE, static_cast<uint8_t>(a.state))));
	return put(weft_nl_put_u8(r, WEFT_NLDEV_ATTR_PORT_PHYS_STATE,
				  static_cast<uint8_t>(a.phys_state)));
}

Result<void> get_doit(weft_nl_req *r)
{
	WEFT_TRY(on_device(r, [&](UDevice &u) {
		return message(r, WEFT_NLDEV_CMD_GET, [&] { return fill_dev(r, u); });
	}));
	return put(weft_nl_send(r));
}

/* Cursor 0: the next device index to send. */
Result<void> get_dump(weft_nl_req *r)
{
	long *cursor = weft_nl_cursor(r);
	table().for_each_from(static_cast<uint32_t>(cursor[0]), [&](UDevice &u) {
		if (!message(r, WEFT_NLDEV_CMD_GET, [&] { return fill_dev(r, u); }))
			return false; /* full: the rest in the next buffer */
		cursor[0] = long(u.index) + 1;
		return true;
	});
	return ok();
}

Result<void> port_get_doit(weft_nl_req *r)
{
	const uint32_t port = WEFT_TRY(need_u32(r, WEFT_NLDEV_ATTR_PORT_INDEX));
	WEFT_TRY(on_device(r, [&](UDevice &u) -> Result<void> {
		if (!port_valid(u.dev(), port))
			return Error(err::EINVAL);
		/* In-tree answers PORT_GET's doit with the GET command number. */
		return message(r, WEFT_NLDEV_CMD_GET, [&] { return fill_port(r, u, port); });
	}));
	return put(weft_nl_send(r));
}

/* Cursor 0: how many of the device's ports were sent. */
Result<void> port_get_dump(weft_nl_req *r)
{
	long *cursor = weft_nl_cursor(r);
	return on_device(r, [&](UDevice &u) {
		verbs::Device &d = u.dev();
		for (uint32_t p = start_port(d) + uint32_t(cursor[0]); p <= end_port(d); p++) {
			if (!message(r, WEFT_NLDEV_CMD_PORT_GET, [&] { return fill_port(r, u, p); }))
				break;
			cursor[0]++;
		}
		return ok();
	});
}

Result<void> get_chardev(weft_nl_req *r)
{
	char type[WEFT_NLDEV_CHARDEV_TYPE_SIZE];
	uint32_t port = 0;
	if (!weft_nl_get_str(r, WEFT_NLDEV_ATTR_CHARDEV_TYPE, type, sizeof(type)))
		return Error(err::EINVAL);
	const bool has_port = weft_nl_get_u32(r, WEFT_NLDEV_ATTR_PORT_INDEX, &port);
	uint32_t index;
	if (!weft_nl_get_u32(r, WEFT_NLDEV_ATTR_DEV_INDEX, &index))
		/* A port needs a device; no client of Weft's has a device-less char device. */
		return Error(has_port ? err::EINVAL : err::EOPNOTSUPP);
	WEFT_TRY(on_device(r, [&](UDevice &u) -> Result<void> {
		if (has_port && !port_valid(u.dev(), port))
			return Error(err::EINVAL);
		if (__builtin_strcmp(type, "uverbs") != 0)
			return Error(err::EOPNOTSUPP);
		/* uverbs is per device, not per port (in-tree ib_uverbs_get_nl_info()). */
		if (has_port)
			return Error(err::EINVAL);
		if (!u.cdev())
			return Error(err::EOPNOTSUPP);
		return message(r, WEFT_NLDEV_CMD_GET_CHARDEV, [&]() -> Result<void> {
			char name[16];
			format(name, sizeof(name), "uverbs%d", u.num);
			WEFT_TRY(put(weft_nl_put_u64(r, WEFT_NLDEV_ATTR_CHARDEV,
						     weft_uverbs_cdev_number(u.cdev()))));
			WEFT_TRY(put(weft_nl_put_u64(r, WEFT_NLDEV_ATTR_CHARDEV_ABI,
						     WEFT_UVERBS_DEVICE_ABI)));
			WEFT_TRY(put(weft_nl_put_str(r, WEFT_NLDEV_ATTR_CHARDEV_NAME, name)));
			return put(weft_nl_put_u32(r, WEFT_NLDEV_ATTR_UVERBS_DRIVER_ID,
						   WEFT_RDMA_DRIVER_RXE));
		});
	}));
	return put(weft_nl_send(r));
}

Result<void> sys_get(weft_nl_req *r)
{
	WEFT_TRY(message(r, WEFT_NLDEV_CMD_SYS_GET, [&]() -> Result<void> {
		/* Shared: every namespace sees every device (Weft devices have no namespace). */
		WEFT_TRY(put(weft_nl_put_u8(r, WEFT_NLDEV_SYS_ATTR_NETNS_MODE, 1)));
		/* The 6.1 mm copies pinned pages at fork (in-tree reports 1 too). */
		return put(weft_nl_put_u8(r, WEFT_NLDEV_SYS_ATTR_COPY_ON_FORK, 1));
	}));
	return put(weft_nl_send(r));
}

} // namespace

} // namespace nl

} // namespace weft::uverbs

using namespace weft;
using namespace weft::uverbs;
using namespace weft::uverbs::nl;

int weft_uverbs_nl_supported(unsigned int op, bool dump)
{
	if (res_handles(op))
		return 0;
	switch (op) {
	case WEFT_NLDEV_CMD_GET:
	case WEFT_NLDEV_CMD_PORT_GET:
		return 0;
	case WEFT_NLDEV_CMD_GET_CHARDEV:
	case WEFT_NLDEV_CMD_SYS_GET:
		return dump ? -err::EINVAL : 0;
	default:
		return -err::EOPNOTSUPP;
	}
}

int weft_uverbs_nl_request(struct weft_nl_req *r)
{
	const bool dump = weft_nl_is_dump(r);
	if (res_handles(weft_nl_op(r)))
		return res_request(r, weft_nl_op(r), dump).to_errno();
	switch (weft_nl_op(r)) {
	case WEFT_NLDEV_CMD_GET:
		return (dump ? get_dump(r) : get_doit(r)).to_errno();
	case WEFT_NLDEV_CMD_PORT_GET:
		return (dump ? port_get_dump(r) : port_get_doit(r)).to_errno();
	case WEFT_NLDEV_CMD_GET_CHARDEV:
		return get_chardev(r).to_errno();
	case WEFT_NLDEV_CMD_SYS_GET:
		return sys_get(r).to_errno();
	default:
		return -err::EOPNOTSUPP;
	}
}
