/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between weft_srpt's C++ (the SRP target's channels, target.cpp) and its
 * LIO side (shim_lio.c): the fabric module "srpt" that targetcli drives,
 * its target ports (one configfs WWN per IB port, named as in-tree by the
 * port's GID "0x<32 hex>" or GUID "xxxx:xxxx:xxxx:xxxx"), one TPG each,
 * ACLs named by initiator port id, sessions and SCSI commands.
 *
 * The shim owns every LIO object (se_wwn, se_portal_group, se_session,
 * se_cmd) and makes no SRP decision.  The C++ side is reached through the
 * weft_srpt_* callbacks at the end; @ctx is the pointer the C++ side gave.
 * All calls are in process context unless stated.
 */
#ifndef WEFT_SRPT_KAPI_H
#define WEFT_SRPT_KAPI_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

struct weft_srpt_sess;
struct weft_srpt_cmd;

/* Request IUs dropped unanswered, all channels (module parameter dropped_ius). */
extern unsigned long weft_srpt_dropped_ius;

/* Data directions (as enum dma_data_direction). */
#define WEFT_SRPT_DIR_NONE 3
#define WEFT_SRPT_DIR_TO_TARGET 1   /* DMA_TO_DEVICE: a WRITE's data-out */
#define WEFT_SRPT_DIR_FROM_TARGET 2 /* DMA_FROM_DEVICE: a READ's data-in */

/* One piece of a command's data buffer (kernel addresses). */
struct weft_srpt_seg {
	uintptr_t kva;
	uint32_t len;
};

/* What to send back for a finished command (SRP_RSP, SRP 5.7.2). */
struct weft_srpt_status {
	uint8_t status;	       /* SCSI status */
	const uint8_t *sense;  /* NULL or sense_len bytes */
	uint32_t sense_len;
	uint32_t resid;	       /* with under/over */
	bool under, over;
	int dir;	       /* WEFT_SRPT_DIR_* */
	uint32_t data_len;     /* bytes of data to move (data-in: to RDMA WRITE) */
};

/* Register / unregister the "srpt" fabric with target_core (module init/exit). */
int weft_srpt_fabric_register(void);
void weft_srpt_fabric_unregister(void);

/*
 * A session for initiator port @i_port_id on the enabled target port
 * named @gid_name (or, failing that, @guid_name), whose ACL must allow
 * it (tried with and without "0x", as in-tree).  NULL and *err: ENOENT no
 * enabled target port of that name, EACCES no ACL, ENOMEM.
 */
struct weft_srpt_sess *weft_srpt_session_open(const char *gid_name, const char *guid_name,
					       const uint8_t i_port_id[16], void *ctx, int *err);
/* Whether an enabled target port has either name (takes the shim's lock: call unlocked). */
bool weft_srpt_port_enabled(const char *gid_name, const char *guid_name);
/* Stop new commands, wait until every command was released, remove (may sleep long). */
void weft_srpt_session_close(struct weft_srpt_sess *s);

struct weft_srpt_cmd *weft_srpt_cmd_alloc(struct weft_srpt_sess *s, void *ctx);
void weft_srpt_cmd_free(struct weft_srpt_cmd *c);
/*
 * Start a SCSI command (target_init_cmd, target_submit_prep, target_submit);
 * LIO allocates the data buffer.  Nonzero: not started (the caller answers
 * BUSY itself).
 */
int weft_srpt_cmd_submit(struct weft_srpt_cmd *c, const uint8_t *cdb, const uint8_t lun[8],
			 uint32_t data_len, int dir, uint8_t task_attr, uint64_t tag);
/* Start a task management function (SRP 5.6.3 code in @srp_tmf). Nonzero: not started. */
int weft_srpt_tmr_submit(struct weft_srpt_cmd *c, const uint8_t lun[8], uint8_t srp_tmf,
			 uint64_t task_tag, uint64_t tag);
/* Pieces @first.. of the data buffer, up to @max of them; returns how many there are in all. */
uint32_t weft_srpt_cmd_data(struct weft_srpt_cmd *c, uint32_t first, struct weft_srpt_seg *segs,
			    uint32_t max);
void weft_srpt_cmd_status(struct weft_srpt_cmd *c, struct weft_srpt_status *out);
/* The SRP response code for a finished task management function (SRP 5.7.2 table 34). */
uint8_t weft_srpt_tmr_response(struct weft_srpt_cmd *c);
/* Data-out arrived (after write_pending): run the command. */
void weft_srpt_cmd_execute(struct weft_srpt_cmd *c);
/* Data-out could not be fetched: fail the command with a check condition. */
void weft_srpt_cmd_fail(struct weft_srpt_cmd *c);
/* The response went out (or never will): drop the fabric's reference. */
void weft_srpt_cmd_finished(struct weft_srpt_cmd *c);

/* --- the C++ side, called by the shim ------------------------------------------ */

/* Module init/exit: the verbs client (a listener per CA), with the module's parameters. */
int weft_srpt_client_register(uint32_t rq_size, uint32_t max_req_size, uint32_t max_rsp_size);
void weft_srpt_client_unregister(void);

/* targetcli created / removed the target port @name: 0 if a local port has it (EINVAL if not). */
int weft_srpt_port_name_ok(const char *name);
/* LIO wants data-out for @ctx's command (RDMA READ it, then weft_srpt_cmd_execute). */
int weft_srpt_write_pending(void *ctx);
/* The command finished: move data-in (if @data) and send SRP_RSP. */
int weft_srpt_queue_response(void *ctx, bool data);
void weft_srpt_queue_tm_rsp(void *ctx);
/* LIO aborted @ctx's command: no response will be asked for. */
void weft_srpt_aborted(void *ctx);
/* LIO released @ctx's command: the context may be reused. */
void weft_srpt_released(void *ctx);
/* The target port's TPG was disabled or removed, or the ACL dropped: log the session out. */
void weft_srpt_session_shutdown(void *ctx);

WEFT_C_END

#endif
