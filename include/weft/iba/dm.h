/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device management (IBA Vol 1 16.3) wire formats: the DevMgt MAD and the
 * attributes an I/O unit's DM agent answers (IOUnitInfo,
 * IOControllerProfile, ServiceEntries).  ClassPortInfo is the GS one
 * (pma.h, IBA 13.4.8.1).  Exact on-wire layouts, big-endian fields, as
 * mad.h and pma.h do.
 */
#ifndef WEFT_IBA_DM_H
#define WEFT_IBA_DM_H

#include <weft/iba/mad.h>

namespace weft::iba {

/* IBA 16.3.1: the DevMgt class speaks class version 1. */
inline constexpr uint8_t dm_class_version = 1;

/*
 * IBA 16.3.1: the common header, the RMPP header (13.6.2.1),
 * 28 reserved bytes, then 192 bytes of attribute.
 */
inline constexpr size_t dm_data_offset = 64;
inline constexpr size_t dm_data_size = mad_size - dm_data_offset;

struct DmMad {
	MadHeader hdr;
	RmppHeader rmpp;
	uint8_t reserved[28];
	uint8_t data[dm_data_size];
};
static_assert(sizeof(DmMad) == mad_size);

/* IBA 16.3.3: the attributes a DM agent of an I/O unit answers. */
namespace dm_attr {
inline constexpr uint16_t class_port_info = 0x0001, iou_info = 0x0010, ioc_profile = 0x0011,
			  service_entries = 0x0012;
}

/*
 * IBA 16.3.1.1: DevMgt's class-specific status (the Status
 * field's bits 8-14, beside the common codes of 13.4.7): no I/O controller
 * in the slot the attribute modifier names.
 */
namespace dm_status {
inline constexpr uint16_t no_ioc = 0x0100;
}

/* IBA 16.3.3.3: I/O controller slots are numbered 1..MaxControllers, at most 255. */
inline constexpr unsigned dm_max_slots = 255;

/* IBA 16.3.3.3 IOUnitInfo, 132 bytes. */
struct IouInfo {
	be16 change_id;
	be8 max_controllers;
	be8 flags; /* DiagDeviceID, OptionROM: Weft's I/O units have neither */
	/* One 4-bit state per slot, slot 1 in the high half of byte 0. */
	uint8_t controller_list[128];
};
static_assert(sizeof(IouInfo) == 132);

/* IBA 16.3.3.3: a ControllerList entry. */
namespace ioc_slot {
inline constexpr uint8_t not_installed = 0x0, present = 0x1, none = 0xf;
}

/* IBA 16.3.3.4 IOControllerProfile, 128 bytes. */
struct IocProfile {
	be64 guid;
	be32 vendor_id; /* VendorID:24 reserved:8 */
	be32 device_id;
	be16 device_version;
	be16 reserved1;
	be32 subsys_vendor_id; /* SubsystemVendorID:24 reserved:8 */
	be32 subsys_id;
	be16 io_class;
	be16 io_subclass;
	be16 protocol;
	be16 protocol_version;
	be32 reserved2;
	be16 send_queue_depth;
	be8 reserved3;
	be8 rdma_read_depth;
	be32 send_size;	 /* SendMessageSize: the largest Send the IOC takes, bytes */
	be32 rdma_size;	 /* RDMATransferSize: the largest RDMA transfer, bytes */
	be8 op_cap_mask; /* ControllerOperationsCapabilityMask */
	be8 reserved4;
	be8 service_entries;
	uint8_t reserved5[9];
	char id_string[64]; /* UTF-8, NUL-padded */

	using VendorId = BitField<be32, 8, 24>;
};
static_assert(sizeof(IocProfile) == 128);

/* IBA 16.3.3.4: ControllerOperationsCapabilityMask. */
namespace ioc_op_cap {
inline constexpr uint8_t send_to_ioc = 1u << 0, send_from_ioc = 1u << 1, rdma_read_to_ioc = 1u << 2,
			 rdma_read_from_ioc = 1u << 3, rdma_write_to_ioc = 1u << 4,
			 rdma_write_from_ioc = 1u << 5, atomic_to_ioc = 1u << 6, atomic_from_ioc = 1u << 7;
}

/* IBA 16.3.3.5 ServiceEntry: a service name and the service ID that reaches it. */
struct ServiceEntry {
	char name[40]; /* UTF-8, NUL-padded */
	be64 id;
};
static_assert(sizeof(ServiceEntry) == 48);

/* IBA 16.3.3.5 ServiceEntries: up to four entries of one IOC per MAD. */
inline constexpr unsigned dm_entries_per_mad = 4;
struct ServiceEntries {
	ServiceEntry entry[dm_entries_per_mad];
};
static_assert(sizeof(ServiceEntries) == 192);

/*
 * IBA 16.3.3.5: the ServiceEntries attribute modifier: the IOC's slot and
 * the first and last entry wanted (at most four).
 */
struct ServiceEntriesMod {
	using Slot = BitField<be32, 16, 16>;
	using Last = BitField<be32, 8, 8>;
	using First = BitField<be32, 0, 8>;
};

} // namespace weft::iba

#endif
