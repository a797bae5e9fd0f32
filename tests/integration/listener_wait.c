// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD aid for ucma_apps.sh's perftest clients, a workaround for a
 * perftest bug, not for Weft.
 *
 * perftest 4.5+0.17 (Debian bookworm) with -R exchanges keys over its first
 * RDMA CM connection and then, at once, connects its data QPs, while the
 * server only starts listening for them after that exchange.  When the
 * client's REQ wins that race the passive CM answers with a REJ (no listener,
 * IBA 12.6.7 reason 8), as in-tree and any IB CM do, and the client's retry
 * loop reuses the ids it has just destroyed: a segfault in librdmacm's
 * rdma_resolve_addr (fixed upstream in perftest 3d9d8d0, December 2025).
 * A loaded machine makes the server slow enough to lose; CI did once.
 *
 * So before each rdma_connect() wait, 60 s at most, until weft_rdma_cm has a
 * listening IB CM id (its `listeners` parameter).  The client's first
 * connection finds the server's first listener, which the server destroys as
 * soon as it accepts; the data connection then waits for the second one.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

struct rdma_cm_id;
struct rdma_conn_param;

static const char listeners[] = "/sys/module/weft_rdma_cm/parameters/listeners";

static int listening(void)
{
	FILE *f = fopen(listeners, "r");
	unsigned int n = 0;

	if (!f)
		return 1; /* nothing to wait for: let rdma_connect say what is wrong */
	if (fscanf(f, "%u", &n) != 1)
		n = 1;
	fclose(f);
	return n > 0;
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	static int (*real)(struct rdma_cm_id *, struct rdma_conn_param *);
	const struct timespec tick = { 0, 50 * 1000 * 1000 };
	int i;

	if (!real)
		real = (int (*)(struct rdma_cm_id *, struct rdma_conn_param *))
			dlsym(RTLD_NEXT, "rdma_connect");
	for (i = 0; i < 1200 && !listening(); i++)
		nanosleep(&tick, NULL);
	return real(id, param);
}
