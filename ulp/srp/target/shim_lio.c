// SPDX-License-Identifier: GPL-2.0
/*
 * weft_srpt's LIO fabric module "srpt" (srpt_kapi.h): target ports in
 * configfs, one TPG each, ACLs, sessions and se_cmds.  target_core_mod is
 * IB-independent; the in-tree ib_srpt is another user of the same API, and
 * only one "srpt" fabric can be registered at a time.
 */
#include <linux/ctype.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <scsi/scsi_common.h>
#include <scsi/scsi_proto.h>
#include <target/target_core_base.h>
#include <target/target_core_fabric.h>

#include "../dm/dm_host.h"
#include "srpt_kapi.h"

struct weft_srpt_tport {
	struct se_wwn wwn;
	struct se_portal_group tpg;
	char name[48];
	bool has_tpg, enabled;
	struct list_head node;	   /* on tports, under tports_lock */
	struct list_head sessions; /* weft_srpt_sess, under tports_lock */
	atomic_t nsess;		   /* how many: what srpt_disable() waits on, unlocked */
};

struct weft_srpt_sess {
	struct se_session *se;
	struct weft_srpt_tport *tp;
	void *ctx;
	struct list_head node;
};

struct weft_srpt_cmd {
	struct se_cmd se;
	struct weft_srpt_sess *s;
	void *ctx;
	unsigned char sense[TRANSPORT_SENSE_BUFFER];
};

/* Target ports and their sessions: configfs and logins meet here. */
static DEFINE_MUTEX(tports_lock);
static LIST_HEAD(tports);
static DECLARE_WAIT_QUEUE_HEAD(sessions_gone);

static struct weft_srpt_tport *tport_of(struct se_portal_group *tpg)
{
	return container_of(tpg, struct weft_srpt_tport, tpg);
}

static struct weft_srpt_cmd *cmd_of(struct se_cmd *se)
{
	return container_of(se, struct weft_srpt_cmd, se);
}

/* --- fabric ops: the trivial answers ------------------------------------------- */

static char *srpt_tpg_get_wwn(struct se_portal_group *tpg)
{
	return tport_of(tpg)->name;
}

static u16 srpt_tpg_get_tag(struct se_portal_group *tpg)
{
	return 1;
}

static int srpt_false(struct se_portal_group *tpg)
{
	return 0;
}

static int srpt_true(struct se_portal_group *tpg)
{
	return 1;
}

static u32 srpt_inst_index(struct se_portal_group *tpg)
{
	return 1;
}

static u32 srpt_sess_index(struct se_session *se)
{
	return 0;
}

static void srpt_default_node_attrs(struct se_node_acl *nacl)
{
}

static int srpt_cmd_state(struct se_cmd *se)
{
	return 0;
}

/* --- commands ------------------------------------------------------------------ */

static int srpt_check_stop_free(struct se_cmd *se)
{
	return target_put_sess_cmd(se);
}

static void srpt_release_cmd(struct se_cmd *se)
{
	weft_srpt_released(cmd_of(se)->ctx);
}

static int srpt_write_pending(struct se_cmd *se)
{
	return weft_srpt_write_pending(cmd_of(se)->ctx);
}

static int srpt_queue_data_in(struct se_cmd *se)
{
	return weft_srpt_queue_response(cmd_of(se)->ctx, true);
}

static int srpt_queue_status(struct se_cmd *se)
{
	return weft_srpt_queue_response(cmd_of(se)->ctx, false);
}

static void srpt_queue_tm_rsp(struct se_cmd *se)
{
	weft_srpt_queue_tm_rsp(cmd_of(se)->ctx);
}

static void srpt_aborted_task(struct se_cmd *se)
{
	weft_srpt_aborted(cmd_of(se)->ctx);
}

static void srpt_close_session(struct se_session *se)
{
	struct weft_srpt_sess *s = se->fabric_sess_ptr;

	weft_srpt_session_shutdown(s->ctx);
}

/* --- configfs: target ports, TPGs, ACLs ---------------------------------------- */

static struct se_wwn *srpt_make_wwn(struct target_fabric_configfs *tf, struct config_group *group,
				    const char *name)
{
	struct weft_srpt_tport *tp;
	int ret = weft_srpt_port_name_ok(name);

	if (ret)
		return ERR_PTR(ret);
	tp = kzalloc(sizeof(*tp), GFP_KERNEL);
	if (!tp)
		return ERR_PTR(-ENOMEM);
	strscpy(tp->name, name, sizeof(tp->name));
	INIT_LIST_HEAD(&tp->sessions);
	mutex_lock(&tports_lock);
	list_add_tail(&tp->node, &tports);
	mutex_unlock(&tports_lock);
	return &tp->wwn;
}

static void srpt_drop_wwn(struct se_wwn *wwn)
{
	struct weft_srpt_tport *tp = container_of(wwn, struct weft_srpt_tport, wwn);

	mutex_lock(&tports_lock);
	list_del(&tp->node);
	mutex_unlock(&tports_lock);
	kfree(tp);
}

static struct se_portal_group *srpt_make_tpg(struct se_wwn *wwn, const char *name)
{
	struct weft_srpt_tport *tp = container_of(wwn, struct weft_srpt_tport, wwn);
	int ret;

	mutex_lock(&tports_lock);
	if (tp->has_tpg) {
		mutex_unlock(&tports_lock);
		return ERR_PTR(-EEXIST);
	}
	tp->has_tpg = true;
	mutex_unlock(&tports_lock);
	ret = core_tpg_register(wwn, &tp->tpg, SCSI_PROTOCOL_SRP);
	if (ret) {
		mutex_lock(&tports_lock);
		tp->has_tpg = false;
		mutex_unlock(&tports_lock);
		return ERR_PTR(ret);
	}
	return &tp->tpg;
}

/*
 * Disable: no new login, and every session of the port logged out; returns
 * when they are gone (their commands released), as in-tree disabling does.
 */
static void srpt_disable(struct weft_srpt_tport *tp)
{
	struct weft_srpt_sess *s;

	mutex_lock(&tports_lock);
	tp->enabled = false;
	mutex_unlock(&tports_lock);
	/* The IOC goes from the DM agent first: srp_daemon stops finding it. */
	weft_srpt_tports_changed();
	mutex_lock(&tports_lock);
	list_for_each_entry(s, &tp->sessions, node)
		weft_srpt_session_shutdown(s->ctx);
	mutex_unlock(&tports_lock);
	wait_event(sessions_gone, atomic_read(&tp->nsess) == 0);
}

static int srpt_enable_tpg(struct se_portal_group *tpg, bool enable)
{
	struct weft_srpt_tport *tp = tport_of(tpg);

	if (!enable) {
		srpt_disable(tp);
		return 0;
	}
	mutex_lock(&tports_lock);
	tp->enabled = true;
	mutex_unlock(&tports_lock);
	weft_srpt_tports_changed();
	return 0;
}

static void srpt_drop_tpg(struct se_portal_group *tpg)
{
	struct weft_srpt_tport *tp = tport_of(tpg);

	srpt_disable(tp);
	core_tpg_deregister(tpg);
	mutex_lock(&tports_lock);
	tp->has_tpg = false;
	mutex_unlock(&tports_lock);
}

/* ACL names are initiator port ids: "0x" optional, then up to 32 hex digits (in-tree). */
static int srpt_init_nodeacl(struct se_node_acl *nacl, const char *name)
{
	const char *p = name;
	size_t len, i;

	if (!strncasecmp(p, "0x", 2))
		p += 2;
	len = strlen(p);
	if (!len || len % 2 || len > 32)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!isxdigit(p[i]))
			return -EINVAL;
	return 0;
}

static const struct target_core_fabric_ops weft_srpt_ops = {
	.module = THIS_MODULE,
	.fabric_name = "srpt",
	.tpg_get_wwn = srpt_tpg_get_wwn,
	.tpg_get_tag = srpt_tpg_get_tag,
	.tpg_check_demo_mode = srpt_false,
	.tpg_check_demo_mode_cache = srpt_true,
	.tpg_check_demo_mode_write_protect = srpt_true,
	.tpg_check_prod_mode_write_protect = srpt_false,
	.tpg_get_inst_index = srpt_inst_index,
	.release_cmd = srpt_release_cmd,
	.check_stop_free = srpt_check_stop_free,
	.close_session = srpt_close_session,
	.sess_get_index = srpt_sess_index,
	.write_pending = srpt_write_pending,
	.set_default_node_attributes = srpt_default_node_attrs,
	.get_cmd_state = srpt_cmd_state,
	.queue_data_in = srpt_queue_data_in,
	.queue_status = srpt_queue_status,
	.queue_tm_rsp = srpt_queue_tm_rsp,
	.aborted_task = srpt_aborted_task,
	.fabric_make_wwn = srpt_make_wwn,
	.fabric_drop_wwn = srpt_drop_wwn,
	.fabric_make_tpg = srpt_make_tpg,
	.fabric_enable_tpg = srpt_enable_tpg,
	.fabric_drop_tpg = srpt_drop_tpg,
	.fabric_init_nodeacl = srpt_init_nodeacl,
};

int weft_srpt_fabric_register(void)
{
	return target_register_template(&weft_srpt_ops);
}

void weft_srpt_fabric_unregister(void)
{
	target_unregister_template(&weft_srpt_ops);
}

/* --- sessions ------------------------------------------------------------------ */

static struct weft_srpt_tport *find_enabled(const char *name)
{
	struct weft_srpt_tport *tp;

	list_for_each_entry(tp, &tports, node)
		if (tp->enabled && !strcasecmp(tp->name, name))
			return tp;
	return NULL;
}

bool weft_srpt_port_enabled(const char *gid_name, const char *guid_name)
{
	bool on;

	mutex_lock(&tports_lock);
	on = find_enabled(gid_name) || find_enabled(guid_name);
	mutex_unlock(&tports_lock);
	return on;
}

struct weft_srpt_sess *weft_srpt_session_open(const char *gid_name, const char *guid_name,
					       const uint8_t i_port_id[16], void *ctx, int *err)
{
	struct weft_srpt_sess *s = kzalloc(sizeof(*s), GFP_KERNEL);
	struct weft_srpt_tport *tp;
	char id[40];

	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	snprintf(id, sizeof(id), "0x%16phN", i_port_id);
	s->ctx = ctx;
	mutex_lock(&tports_lock);
	tp = find_enabled(gid_name);
	if (!tp)
		tp = find_enabled(guid_name);
	if (!tp) {
		mutex_unlock(&tports_lock);
		kfree(s);
		*err = -ENOENT;
		return NULL;
	}
	s->se = target_setup_session(&tp->tpg, 0, 0, TARGET_PROT_NORMAL, id, s, NULL);
	if (IS_ERR(s->se)) /* the ACL may be named without "0x" */
		s->se = target_setup_session(&tp->tpg, 0, 0, TARGET_PROT_NORMAL, id + 2, s, NULL);
	if (IS_ERR(s->se)) {
		mutex_unlock(&tports_lock);
		*err = PTR_ERR(s->se);
		kfree(s);
		return NULL;
	}
	s->tp = tp;
	list_add_tail(&s->node, &tp->sessions);
	atomic_inc(&tp->nsess);
	mutex_unlock(&tports_lock);
	return s;
}

void weft_srpt_session_close(struct weft_srpt_sess *s)
{
	target_stop_session(s->se);
	target_wait_for_sess_cmds(s->se);
	target_remove_session(s->se);
	mutex_lock(&tports_lock);
	list_del(&s->node);
	atomic_dec(&s->tp->nsess);
	mutex_unlock(&tports_lock);
	wake_up_all(&sessions_gone);
	kfree(s);
}

/* --- commands ------------------------------------------------------------------ */

struct weft_srpt_cmd *weft_srpt_cmd_alloc(struct weft_srpt_sess *s, void *ctx)
{
	struct weft_srpt_cmd *c = kzalloc(sizeof(*c), GFP_KERNEL);

	if (c) {
		c->s = s;
		c->ctx = ctx;
	}
	return c;
}

void weft_srpt_cmd_free(struct weft_srpt_cmd *c)
{
	kfree(c);
}

static int task_attr_to_tcm(uint8_t a)
{
	switch (a) { /* SRP 5.6.2 table 28 */
	case 0:
		return TCM_SIMPLE_TAG;
	case 1:
		return TCM_HEAD_TAG;
	case 4:
		return TCM_ACA_TAG;
	default:
		return TCM_ORDERED_TAG;
	}
}

static void cmd_reset(struct weft_srpt_cmd *c, uint64_t tag)
{
	memset(&c->se, 0, sizeof(c->se));
	memset(c->sense, 0, sizeof(c->sense));
	c->se.tag = tag;
}

int weft_srpt_cmd_submit(struct weft_srpt_cmd *c, const uint8_t *cdb, const uint8_t lun[8],
			 uint32_t data_len, int dir, uint8_t task_attr, uint64_t tag)
{
	int ret;

	cmd_reset(c, tag);
	ret = target_init_cmd(&c->se, c->s->se, c->sense, scsilun_to_int((struct scsi_lun *)lun),
			      data_len, task_attr_to_tcm(task_attr), dir, TARGET_SCF_ACK_KREF);
	if (ret)
		return ret;
	/* Nonzero: LIO failed the command already and will queue its status. */
	if (target_submit_prep(&c->se, (unsigned char *)cdb, NULL, 0, NULL, 0, NULL, 0, GFP_KERNEL))
		return 0;
	target_submit(&c->se);
	return 0;
}

static int tmf_to_tcm(uint8_t f)
{
	switch (f) { /* SRP 5.6.3 table 30 */
	case 0x01:
		return TMR_ABORT_TASK;
	case 0x02:
		return TMR_ABORT_TASK_SET;
	case 0x04:
		return TMR_CLEAR_TASK_SET;
	case 0x08:
		return TMR_LUN_RESET;
	case 0x40:
		return TMR_CLEAR_ACA;
	default:
		return -1;
	}
}

int weft_srpt_tmr_submit(struct weft_srpt_cmd *c, const uint8_t lun[8], uint8_t srp_tmf,
			 uint64_t task_tag, uint64_t tag)
{
	int tm = tmf_to_tcm(srp_tmf);

	cmd_reset(c, tag);
	if (tm < 0)
		return -EINVAL;
	return target_submit_tmr(&c->se, c->s->se, c->sense, scsilun_to_int((struct scsi_lun *)lun),
				 NULL, tm, GFP_KERNEL, task_tag, TARGET_SCF_ACK_KREF);
}

uint32_t weft_srpt_cmd_data(struct weft_srpt_cmd *c, uint32_t first, struct weft_srpt_seg *segs,
			    uint32_t max)
{
	struct scatterlist *sg;
	uint32_t n = c->se.t_data_nents, i;

	for_each_sg(c->se.t_data_sg, sg, n, i) {
		if (i < first)
			continue;
		if (i - first >= max)
			break;
		segs[i - first].kva = (uintptr_t)sg_virt(sg);
		segs[i - first].len = sg->length;
	}
	return n;
}

void weft_srpt_cmd_status(struct weft_srpt_cmd *c, struct weft_srpt_status *out)
{
	struct se_cmd *se = &c->se;

	memset(out, 0, sizeof(*out));
	out->status = se->scsi_status;
	if (se->se_cmd_flags & (SCF_TRANSPORT_TASK_SENSE | SCF_EMULATED_TASK_SENSE)) {
		out->sense = se->sense_buffer;
		out->sense_len = se->scsi_sense_length;
	}
	out->under = se->se_cmd_flags & SCF_UNDERFLOW_BIT;
	out->over = se->se_cmd_flags & SCF_OVERFLOW_BIT;
	out->resid = se->residual_count;
	out->dir = se->data_direction;
	out->data_len = se->data_length;
}

uint8_t weft_srpt_tmr_response(struct weft_srpt_cmd *c)
{
	switch (c->se.se_tmr_req->response) { /* SRP 5.7.2 table 34 */
	case TMR_FUNCTION_COMPLETE:
	case TMR_TASK_DOES_NOT_EXIST:
		return 0x00;
	case TMR_FUNCTION_REJECTED:
	case TMR_TASK_MGMT_FUNCTION_NOT_SUPPORTED:
		return 0x04;
	case TMR_LUN_DOES_NOT_EXIST:
		return 0x09;
	default:
		return 0x05;
	}
}

void weft_srpt_cmd_execute(struct weft_srpt_cmd *c)
{
	target_execute_cmd(&c->se);
}

void weft_srpt_cmd_fail(struct weft_srpt_cmd *c)
{
	transport_generic_request_failure(&c->se, TCM_CHECK_CONDITION_ABORT_CMD);
}

void weft_srpt_cmd_finished(struct weft_srpt_cmd *c)
{
	transport_generic_free_cmd(&c->se, 0);
}
