/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between weft_srp's C++ (the SRP initiator: options, target ports,
 * channels) and its kernel side: the class "infiniband_srp" with one
 * srp-<hca>-<port> device per CA port (shim_class.c), and one Scsi_Host per
 * target port, attached to scsi_transport_srp (shim_scsi.c).
 *
 * The shim owns every kernel object (device, Scsi_Host, scsi_cmnd,
 * srp_rport) and makes no SRP decision; the C++ side is reached through
 * the weft_srp_* callbacks at the end, with @ctx the pointer it gave.
 * Commands are named by their scsi_cmnd as an opaque pointer.
 */
#ifndef WEFT_SRP_KAPI_H
#define WEFT_SRP_KAPI_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

struct weft_srp_port_dev;
struct weft_srp_host;

/* Data directions (as enum dma_data_direction). */
#define WEFT_SRP_DIR_TO_DEVICE 1
#define WEFT_SRP_DIR_FROM_DEVICE 2
#define WEFT_SRP_DIR_NONE 3

/* SCSI host bytes the C++ side completes commands with (as in scsi.h). */
#define WEFT_SRP_DID_OK 0x00
#define WEFT_SRP_DID_BAD_TARGET 0x04
#define WEFT_SRP_DID_ABORT 0x05
#define WEFT_SRP_DID_ERROR 0x07
#define WEFT_SRP_DID_RESET 0x08
#define WEFT_SRP_DID_TRANSPORT_FAILFAST 0x0f

/* The class device srp-<ibdev>-<port> (add_target, ibdev, port). NULL and *err on failure. */
struct weft_srp_port_dev *weft_srp_port_dev_create(void *ctx, const char *ibdev, uint8_t port,
						   int *err);
/* Gone from sysfs; an add_target running meanwhile has returned. */
void weft_srp_port_dev_destroy(struct weft_srp_port_dev *d);
int weft_srp_class_register(void);
void weft_srp_class_unregister(void);
int weft_srp_transport_attach(void);
void weft_srp_transport_release(void);

struct weft_srp_host_params {
	uint32_t can_queue;	 /* per hardware queue (channel) */
	uint32_t cmd_per_lun;
	uint32_t sg_tablesize;
	uint32_t max_sectors;
	uint32_t nr_hw_queues;	 /* channels */
	uint8_t port_id[16];	 /* the target port identifier, for the srp_rport */
};

struct weft_srp_host *weft_srp_host_alloc(void *ctx, const struct weft_srp_host_params *p, int *err);
/* scsi_add_host under @parent, the srp_rport, then a scan of LUNs. */
int weft_srp_host_add(struct weft_srp_host *h, struct weft_srp_port_dev *parent);
/* Take the host out of SCSI (waits for its devices to go); after a successful add only. */
void weft_srp_host_remove(struct weft_srp_host *h);
/* The last reference: the Scsi_Host is freed; no callback after. */
void weft_srp_host_put(struct weft_srp_host *h);
unsigned int weft_srp_host_no(struct weft_srp_host *h);
/* The connection broke: let scsi_transport_srp's timers run (reconnect_delay, fast_io_fail, dev_loss). */
void weft_srp_host_lost(struct weft_srp_host *h);

struct weft_srp_seg {
	uintptr_t kva;
	uint32_t len;
};

struct weft_srp_cmd_info {
	const uint8_t *cdb;
	uint32_t cdb_len;
	uint8_t lun[8];
	int dir;
	uint32_t len;
	uint32_t nsg;
	uint16_t hwq, tag; /* blk-mq: the channel and the slot in it */
};
/* Data segments @first.. of @scmnd, up to @max of them; returns how many it has in all. */
uint32_t weft_srp_cmd_sg(void *scmnd, uint32_t first, struct weft_srp_seg *segs, uint32_t max);
/* Complete @scmnd: host byte, SCSI status, sense, residual (any context). */
void weft_srp_cmd_done(void *scmnd, uint8_t host_byte, uint8_t status, const uint8_t *sense,
		       uint32_t sense_len, int32_t resid);

/* The values the Scsi_Host's sysfs attributes show (in-tree names and formats). */
struct weft_srp_target_info {
	uint64_t id_ext, ioc_guid, service_id;
	uint16_t pkey;
	uint8_t sgid[16], dgid[16], orig_dgid[16];
	int req_lim, zero_req_lim;
	uint8_t local_port;
	char local_dev[20];
	uint32_t ch_count, comp_vector, tl_retry_count, cmd_sg_entries;
	bool allow_ext_sg;
};

/* --- the C++ side, called by the shim ------------------------------------------ */

void weft_srp_set_params(uint32_t cmd_sg_entries, uint32_t queue_size, uint32_t ch_count,
			 uint32_t max_sect);
int weft_srp_client_register(void);
void weft_srp_client_unregister(void);
/* A write to add_target: 0 or the in-tree errno (EINVAL, EEXIST, ENOMEM, ...). */
int weft_srp_add_target(void *port_ctx, const char *buf, size_t len);
/* queuecommand: 0, or nonzero for "busy, retry later". */
int weft_srp_queuecommand(void *ctx, void *scmnd, const struct weft_srp_cmd_info *ci);
/* SCSI EH: 0 when done (SUCCESS), negative when it failed (FAILED). */
int weft_srp_eh_abort(void *ctx, void *scmnd, uint16_t hwq, uint16_t tag);
int weft_srp_eh_lun_reset(void *ctx, const uint8_t lun[8]);
/* scsi_transport_srp's rport callbacks (with the rport mutex held). */
int weft_srp_rport_reconnect(void *ctx);
void weft_srp_rport_terminate_io(void *ctx);
void weft_srp_rport_delete(void *ctx);
/* The host's "delete" attribute: remove this target (asynchronously). */
void weft_srp_host_delete(void *ctx);
void weft_srp_host_info(void *ctx, struct weft_srp_target_info *out);

WEFT_C_END

#endif
