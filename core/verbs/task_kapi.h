/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The process that owns a user context (shim_task.c), for resource
 * tracking: Context::open_user() records the calling process's thread
 * group, `rdma res` reports its id as the asking process sees it.
 */
#ifndef WEFT_VERBS_TASK_KAPI_H
#define WEFT_VERBS_TASK_KAPI_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

struct pid;

/* A reference to the calling process's thread group; its comm into @comm (16 bytes). */
struct pid *weft_task_current_tgid(char *comm);
/*
 * @tgid's number in the calling process's PID namespace: 0 when it is not
 * visible there or no longer has a task (in-tree task_pid_vnr()).
 */
uint32_t weft_task_pid_vnr(struct pid *tgid);
void weft_task_put(struct pid *tgid);

WEFT_C_END

#endif
