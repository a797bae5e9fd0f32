// SPDX-License-Identifier: GPL-2.0
/*
 * What the DM agent answers (IBA 16.3): an I/O unit of 16 slots with the
 * SRP target's IOC in slot 1 (in-tree ib_srpt's shape, which srp_daemon
 * and ibsrpdm have always seen), its profile and its one service entry.
 * Malformed requests get the IBA 13.4.7 status that says why; a slot with
 * no IOC gets DevMgt's own NoIOC status (16.3.1.1).
 */
#include <weft/iba/dm.h>
#include <weft/iba/pma.h> /* ClassPortInfo */
#include <weft/log.h>
#include <weft/util.h>

#include "dm.h"

namespace weft::srp::dm {

namespace {

using namespace iba;

/* IOUnitInfo.MaxControllers: as in-tree, 16 slots, the IOC in slot 1. */
constexpr unsigned unit_slots = 16, ioc_slot_num = 1;
/* The IOC's ServiceEntries: the SRP target's one. */
constexpr unsigned service_count = 1;
/* ClassPortInfo.RespTimeValue (IBA 13.4.6.2: 4.096 us * 2^value): answers go out at once. */
constexpr uint8_t resp_time_value = 18;

/* IBA 13.4.8.1: no redirection, no traps (IBA 16.3.1: DM traps are optional). */
void class_port_info(DmMad &r)
{
	auto &cpi = *reinterpret_cast<ClassPortInfo *>(r.data);
	cpi.base_version.set(1);
	cpi.class_version.set(dm_class_version);
	ClassPortInfo::RespTimeValue::set(cpi.cap2_resp_time, resp_time_value);
}

/* IBA 16.3.3.3: slot n's 4-bit state, slot 1 in byte 0's high half. */
void set_slot(IouInfo &iou, unsigned slot, uint8_t state)
{
	uint8_t &b = iou.controller_list[(slot - 1) / 2];
	if (slot % 2)
		b = uint8_t((b & 0x0f) | (state << 4));
	else
		b = uint8_t((b & 0xf0) | state);
}

void iou_info(UnitState unit, DmMad &r)
{
	auto &iou = *reinterpret_cast<IouInfo *>(r.data);
	iou.change_id.set(unit.change_id);
	iou.max_controllers.set(unit_slots);
	for (unsigned s = 1; s <= unit_slots; s++)
		set_slot(iou, s, ioc_slot::not_installed);
	if (unit.present)
		set_slot(iou, ioc_slot_num, ioc_slot::present);
}

/* The status for a request about @slot: 0 when the IOC is there. */
uint16_t slot_status(UnitState unit, uint32_t slot)
{
	if (slot == 0 || slot > unit_slots)
		return mad_status::invalid_value;
	if (slot != ioc_slot_num || !unit.present)
		return dm_status::no_ioc;
	return mad_status::ok;
}

void copy_string(char *dst, size_t size, const char *src)
{
	for (size_t i = 0; i + 1 < size && src[i]; i++)
		dst[i] = src[i];
}

uint16_t ioc_profile(const Ioc &ioc, UnitState unit, uint32_t slot, DmMad &r)
{
	if (uint16_t st = slot_status(unit, slot))
		return st;
	auto &p = *reinterpret_cast<IocProfile *>(r.data);
	p.guid.set(ioc.ioc_guid);
	IocProfile::VendorId::set(p.vendor_id, ioc.vendor_id & 0xffffff);
	p.device_id.set(ioc.device_id);
	p.device_version.set(ioc.device_version);
	IocProfile::VendorId::set(p.subsys_vendor_id, ioc.vendor_id & 0xffffff);
	p.io_class.set(srp_io_class);
	p.io_subclass.set(srp_io_subclass);
	p.protocol.set(srp_protocol);
	p.protocol_version.set(srp_protocol_version);
	p.send_queue_depth.set(ioc.send_queue_depth);
	p.rdma_read_depth.set(ioc.rdma_read_depth);
	p.send_size.set(ioc.max_send_size);
	p.rdma_size.set(ioc.max_rdma_size);
	/* SRP r16a B.7: the initiator sends IUs and the target moves data by RDMA. */
	p.op_cap_mask.set(ioc_op_cap::send_to_ioc | ioc_op_cap::send_from_ioc | ioc_op_cap::rdma_read_from_ioc |
			  ioc_op_cap::rdma_write_from_ioc);
	p.service_entries.set(service_count);
	copy_string(p.id_string, sizeof(p.id_string), ioc.id_string);
	return mad_status::ok;
}

/* IBA 16.3.3.5: entries First..Last (at most four) of the IOC in Slot. */
uint16_t service_entries(const Ioc &ioc, UnitState unit, const be32 &mod, DmMad &r)
{
	const uint32_t first = ServiceEntriesMod::First::get(mod), last = ServiceEntriesMod::Last::get(mod);
	if (uint16_t st = slot_status(unit, ServiceEntriesMod::Slot::get(mod)))
		return st;
	if (first > last || last - first >= dm_entries_per_mad || last >= service_count)
		return mad_status::invalid_value;
	auto &e = *reinterpret_cast<ServiceEntries *>(r.data);
	ioc.service_name(e.entry[0].name);
	e.entry[0].id.set(ioc.service_id);
	return mad_status::ok;
}

uint16_t get(const Ioc &ioc, UnitState unit, const DmMad &q, DmMad &r)
{
	const uint32_t mod = q.hdr.attr_mod.get();
	switch (q.hdr.attr_id.get()) {
	case dm_attr::class_port_info:
		if (mod)
			return mad_status::invalid_value;
		class_port_info(r);
		return mad_status::ok;
	case dm_attr::iou_info:
		if (mod)
			return mad_status::invalid_value;
		iou_info(unit, r);
		return mad_status::ok;
	case dm_attr::ioc_profile:
		return ioc_profile(ioc, unit, mod, r);
	case dm_attr::service_entries:
		return service_entries(ioc, unit, q.hdr.attr_mod, r);
	default:
		return mad_status::attr_unsupported;
	}
}

} // namespace

Ioc Ioc::defaults(const verbs::Device &dev)
{
	const verbs::DeviceAttr &a = dev.attr();
	Ioc ioc;
	ioc.ioc_guid = ioc.id_ext = ioc.service_id = a.node_guid;
	ioc.vendor_id = a.vendor_id & 0xffffff;
	ioc.device_id = a.vendor_part_id;
	ioc.device_version = uint16_t(a.hw_ver);
	ioc.send_queue_depth = uint16_t(min(a.max_qp_wr, 4096u));
	ioc.rdma_read_depth = 4;
	ioc.max_send_size = 4096;
	ioc.max_rdma_size = 1u << 20;
	copy_string(ioc.id_string, sizeof(ioc.id_string), "Weft SRP target");
	return ioc;
}

void Ioc::service_name(char out[service_name_size]) const
{
	__builtin_memset(out, 0, service_name_size);
	format(out, service_name_size, "SRP.T10:%016llx", static_cast<unsigned long long>(id_ext));
}

bool answer(const Ioc &ioc, UnitState unit, const mad::Mad &req, mad::Mad &resp)
{
	const auto &q = *reinterpret_cast<const DmMad *>(req.bytes);
	const uint8_t mth = q.hdr.method.get();
	if (q.hdr.mgmt_class.get() != mgmt_class::dev_mgt || q.hdr.class_version.get() != dm_class_version)
		return false;
	if (MadHeader::Response::get(q.hdr.method) || mth == method::trap || mth == method::report ||
	    mth == method::send || mth == method::trap_repress)
		return false;
	resp = mad::Mad{};
	auto &r = *reinterpret_cast<DmMad *>(resp.bytes);
	r.hdr = q.hdr;
	r.hdr.method.set(method::get_resp);
	r.hdr.status.set(0);
	uint16_t st;
	if (mth == method::get)
		st = get(ioc, unit, q, r);
	else if (mth == method::set)
		st = mad_status::attr_unsupported; /* IBA 13.4.7: nothing here is settable */
	else
		st = mad_status::method_unsupported;
	if (st != mad_status::ok)
		__builtin_memset(r.data, 0, sizeof(r.data));
	r.hdr.status.set(st);
	return true;
}

} // namespace weft::srp::dm
