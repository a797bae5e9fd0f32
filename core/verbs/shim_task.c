// SPDX-License-Identifier: GPL-2.0
/* The owner of a user context (task_kapi.h): a struct pid reference. */
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "task_kapi.h"

struct pid *weft_task_current_tgid(char *comm)
{
	__get_task_comm(comm, TASK_COMM_LEN, current);
	return get_task_pid(current, PIDTYPE_TGID);
}

uint32_t weft_task_pid_vnr(struct pid *tgid)
{
	uint32_t nr = 0;

	rcu_read_lock();
	if (pid_has_task(tgid, PIDTYPE_TGID))
		nr = pid_vnr(tgid);
	rcu_read_unlock();
	return nr;
}

void weft_task_put(struct pid *tgid)
{
	put_pid(tgid);
}
