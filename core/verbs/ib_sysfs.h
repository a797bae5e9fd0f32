/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C API of the sysfs shim (core/verbs/shim_ib_sysfs.c): the `infiniband`
 * device class with the attribute files and formats of the in-tree 6.1
 * kernel (drivers/infiniband/core/sysfs.c), which libibumad, ibstat and
 * ibstatus read.  The shim owns the class, the struct device and every
 * kobject; the values come from the C++ verbs core through the callbacks
 * below, called in process context with no Weft lock held.  A callback may
 * sleep; it must not take a lock that the caller of weft_ib_sysfs_del()
 * holds across that call (del() waits for running callbacks).
 *
 *   /sys/class/infiniband/<name>/{node_type,node_guid,sys_image_guid,
 *       fw_ver,hca_type,hw_rev,board_id,node_desc}
 *   /sys/class/infiniband/<name>/ports/<N>/{lid,lid_mask_count,sm_lid,
 *       sm_sl,state,phys_state,rate,cap_mask,link_layer}
 *   /sys/class/infiniband/<name>/ports/<N>/gids/<i>, pkeys/<i>
 *   /sys/class/infiniband/<name>/ports/<N>/counters/<counter>
 *   (hca_type, hw_rev and board_id only when given; no gid_attrs/)
 */
#ifndef WEFT_CORE_VERBS_IB_SYSFS_H
#define WEFT_CORE_VERBS_IB_SYSFS_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

struct weft_ib_sysfs;

/* One port's PortInfo as sysfs shows it; numbers as IBA 14.2.5.6. */
struct weft_ib_sysfs_port {
	uint32_t lid, sm_lid;
	uint32_t cap_mask;
	uint8_t lmc, sm_sl;
	uint8_t state;	     /* 0..4: NOP DOWN INIT ARMED ACTIVE */
	uint8_t phys_state;  /* 1..7: Sleep Polling Disabled ... LinkUp ... */
	uint8_t active_width; /* 1 (1X), 2 (4X), 4 (8X), 8 (12X), 16 (2X) */
	uint8_t active_speed; /* 1 SDR, 2 DDR, 4 QDR, 8 FDR10, 16 FDR, 32 EDR, 64 HDR, 128 NDR */
	/* Read once by weft_ib_sysfs_add() to size gids/ and pkeys/. */
	uint32_t gid_tbl_len;	/* <= 256 */
	uint32_t pkey_tbl_len;	/* <= 65535 (PartitionCap); 0: no pkeys/ */
};

/*
 * IBA 16.1.3.5 PortCounters (+ the PortCountersExtended data/packet
 * counters).  Shown as decimals; a counter of a narrower PortCounters field
 * reads as that field would (saturated at all ones), as in-tree shows it.
 */
struct weft_ib_sysfs_counters {
	uint64_t symbol_error, link_error_recovery, link_downed;
	uint64_t port_rcv_errors, port_rcv_remote_physical_errors, port_rcv_switch_relay_errors;
	uint64_t port_xmit_discards, port_xmit_constraint_errors, port_rcv_constraint_errors;
	uint64_t local_link_integrity_errors, excessive_buffer_overrun_errors, vl15_dropped;
	uint64_t port_xmit_wait;
	uint64_t port_xmit_data, port_rcv_data; /* in 32-bit words, as IBA counts them */
	uint64_t port_xmit_packets, port_rcv_packets;
	uint64_t unicast_xmit_packets, unicast_rcv_packets;
	uint64_t multicast_xmit_packets, multicast_rcv_packets;
	uint64_t out_of_buffer; /* hw_counters/: not a PMA counter */
	uint64_t mad_replies_dropped; /* hw_counters/: answers of the SMA/PMA lost to a full send queue */
};

/*
 * The queries return 0 or -errno (e.g. -ENODEV once the device is going
 * away); an error becomes the errno of the read(2) of the file.  Output
 * structures and buffers are zeroed before the call.  query_counters and
 * set_node_desc may be NULL (no counters/ directory; node_desc writes fail
 * with -EOPNOTSUPP, as in-tree without modify_device); the others may not.
 */
struct weft_ib_sysfs_ops {
	int (*query_port)(void *ctx, uint32_t port, struct weft_ib_sysfs_port *out);
	/* An empty GID table entry should read as the zero GID, as in-tree. */
	int (*query_gid)(void *ctx, uint32_t port, uint32_t index, uint8_t gid[16]);
	int (*query_pkey)(void *ctx, uint32_t port, uint32_t index, uint16_t *pkey);
	int (*query_counters)(void *ctx, uint32_t port, struct weft_ib_sysfs_counters *out);
	/* Copy the NodeDescription (IBA 14.2.5.2, up to 64 bytes, NUL-terminated). */
	void (*get_node_desc)(void *ctx, char desc[65]);
	/*
	 * A write to node_desc: one trailing newline removed, cut to 64 bytes
	 * as in-tree, no NUL inside (the shim rejects those with -EINVAL);
	 * desc[len] is NUL.  Return 0, or -EINVAL if unacceptable.
	 */
	int (*set_node_desc)(void *ctx, const char *desc, size_t len);
};

struct weft_ib_sysfs_info {
	const char *name; /* "weft0"; copied; 1..63 chars, no '/' (umad wants < 20) */
	uint8_t node_type; /* 1 CA, 2 switch, 3 router */
	uint64_t node_guid, sys_image_guid; /* host order */
	const char *fw_ver, *hca_type, *hw_rev, *board_id; /* copied; may be NULL */
	/* Ports shown: switches show only port 0, CAs 1..num_ports. */
	uint32_t first_port, num_ports; /* num_ports <= 255 */
};

/* Register/unregister the `infiniband` class (at weft_verbs load/unload). */
int weft_ib_sysfs_class_init(void);
void weft_ib_sysfs_class_exit(void);

/*
 * Create the device directory and all its files.  Returns an ERR_PTR-free
 * handle or NULL with *err set to a negative errno (everything undone).
 * add() itself calls query_port once per port (table sizes); the callbacks
 * may then be called from the moment the files appear (during add()) until
 * weft_ib_sysfs_del() returns: del() removes the files and waits for
 * running callbacks to finish, so after it returns @ops and @ctx are no
 * longer used.  @ops must stay valid until then.  del(NULL) does nothing.
 */
struct weft_ib_sysfs *weft_ib_sysfs_add(const struct weft_ib_sysfs_info *info,
					const struct weft_ib_sysfs_ops *ops, void *ctx, int *err);
void weft_ib_sysfs_del(struct weft_ib_sysfs *s);

WEFT_C_END

#endif
