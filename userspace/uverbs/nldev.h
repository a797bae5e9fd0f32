/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the RDMA netlink commands share (nldev.cpp: devices, ports, char
 * devices; nldev_res.cpp: resource tracking): answers are built through
 * nl_kapi.h, devices are found in the table (device.h) under its lock.
 */
#ifndef WEFT_UVERBS_NLDEV_H
#define WEFT_UVERBS_NLDEV_H

#include "device.h"
#include "nl_kapi.h"

namespace weft::uverbs::nl {

inline Result<void> put(int rc)
{
	return from_errno(rc);
}

/* In-tree rdma_is_port_valid(): a switch has only its port 0. */
bool port_valid(verbs::Device &d, uint32_t port);
/* The device's handle: DEV_INDEX, DEV_NAME. */
Result<void> fill_handle(weft_nl_req *r, UDevice &u);
/* A u32 attribute the request must carry: EINVAL without it. */
Result<uint32_t> need_u32(weft_nl_req *r, unsigned int attr);

/* One message: begun, filled, ended, or cancelled on any failure. */
template <typename F> Result<void> message(weft_nl_req *r, unsigned int cmd, F fill)
{
	WEFT_TRY(put(weft_nl_begin(r, cmd)));
	auto filled = fill();
	if (!filled) {
		weft_nl_cancel(r);
		return filled;
	}
	weft_nl_end(r);
	return ok();
}

/* A device by the request's index; EINVAL for none (in-tree). */
template <typename F> Result<void> on_device(weft_nl_req *r, F fn)
{
	const uint32_t index = WEFT_TRY(need_u32(r, WEFT_NLDEV_ATTR_DEV_INDEX));
	auto done = table().with_device(index, fn);
	if (!done && done.error().code() == err::ENODEV)
		return Error(err::EINVAL);
	return done;
}

/* Resource tracking (nldev_res.cpp): RES_GET and RES_{QP,CQ,MR,PD}_GET, doit and dump. */
bool res_handles(unsigned int op);
Result<void> res_request(weft_nl_req *r, unsigned int op, bool dump);

} // namespace weft::uverbs::nl

#endif
