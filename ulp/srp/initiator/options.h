/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The add_target option string of the in-tree initiator, exactly: what
 * srp_daemon writes ("id_ext=...,ioc_guid=...,dgid=...,pkey=...,
 * service_id=...") and the optional keys people's scripts add.  Pure
 * parsing, no kernel state (host-fuzzable, KUnit-tested).
 */
#ifndef WEFT_SRP_OPTIONS_H
#define WEFT_SRP_OPTIONS_H

#include <weft/result.h>

namespace weft::srp {

struct TargetOptions {
	/* Which keys were given (opt:: bits). */
	uint32_t given = 0;
	uint64_t id_ext = 0, ioc_guid = 0, service_id = 0, initiator_ext = 0;
	uint8_t dgid[16] = {};
	uint16_t pkey = 0xffff;
	uint16_t io_class = 0x0100; /* SRP_REV16A_IB_IO_CLASS */
	uint32_t max_sect = 0, queue_size = 0, max_cmd_per_lun = 0, target_can_queue = 0;
	uint32_t cmd_sg_entries = 0, sg_tablesize = 0, comp_vector = 0, tl_retry_count = 7;
	uint32_t max_it_iu_size = 0, ch_count = 0;
	bool allow_ext_sg = false;
};

namespace opt {
inline constexpr uint32_t id_ext = 1u << 0, ioc_guid = 1u << 1, dgid = 1u << 2, pkey = 1u << 3,
			  service_id = 1u << 4, max_sect = 1u << 5, max_cmd_per_lun = 1u << 6,
			  io_class = 1u << 7, initiator_ext = 1u << 8, cmd_sg_entries = 1u << 9,
			  allow_ext_sg = 1u << 10, sg_tablesize = 1u << 11, comp_vector = 1u << 12,
			  tl_retry_count = 1u << 13, queue_size = 1u << 14, src = 1u << 15,
			  dest = 1u << 16, target_can_queue = 1u << 17, max_it_iu_size = 1u << 18,
			  ch_count = 1u << 19;
}

/*
 * Parse @buf (comma or newline separated key=value pairs).  EINVAL for an
 * unknown key, a bad value, or a missing mandatory key (as in-tree: one of
 * id_ext+ioc_guid+dgid+pkey+service_id or id_ext+ioc_guid+dest).
 * EOPNOTSUPP for src=/dest=: IP addressing needs the RDMA CM.
 */
Result<void> parse_options(const char *buf, size_t len, TargetOptions &out);

/*
 * The pages one fast registration (IBA 10.6.3.5) must hold for the
 * largest command, @max_sect 512-byte sectors at any offset in its first
 * page of @page_size bytes.  Counted in 64 bits (max_sect x 512 does not
 * fit in 32); EINVAL when more than @max_pages, the device's
 * max_fast_reg_page_list_len.
 */
Result<uint32_t> cmd_pages(uint32_t max_sect, uint32_t page_size, uint32_t max_pages);

} // namespace weft::srp

#endif
