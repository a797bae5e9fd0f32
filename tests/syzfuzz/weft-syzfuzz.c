// SPDX-License-Identifier: GPL-2.0
/*
 * weft-syzfuzz: a syscall-sequence fuzzer for Weft's user-space entries
 * (tests/syzfuzz/README.md).  Random but well-typed sequences of
 * open/write/ioctl/mmap/munmap/read/close/fork/kill on
 * /dev/infiniband/uverbsN (the write() command ABI and the rxe rings),
 * /dev/infiniband/rdma_cm, umadN/issmN and NETLINK_RDMA, from several
 * processes with several threads each, sharing handles within a process
 * (so objects are destroyed while other threads use them), with child
 * processes killed (SIGKILL) in the middle of their commands and,
 * optionally, an HCA removed and made again through configfs under all of
 * it.
 *
 * Everything is drawn from one seed: process P, thread T draws from a
 * splitmix64 stream seeded with (seed, P, T), a forked child from (the
 * parent's stream), the remover from (seed, ~0).  The sequence of
 * operations each stream asks for is therefore fixed by the seed; which
 * of them succeed depends on how the threads interleave, so a replay of a
 * seed re-runs the same program, not the same schedule.
 *
 * Layouts are the kernel's UAPI headers' (<rdma/ib_user_verbs.h>,
 * <rdma/rdma_user_rxe.h>, <rdma/rdma_user_cm.h>, <rdma/ib_user_mad.h>,
 * <rdma/rdma_netlink.h>); nothing here comes from libibverbs.
 *
 * Exit status: 0 when every worker ran its operations and exited; 1 when
 * a worker died of a signal it did not expect; 3 when the workers did not
 * finish within --timeout seconds (a task stuck in the kernel: their
 * kernel stacks are printed first).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ib_user_mad.h>
#include <rdma/rdma_netlink.h>
#include <rdma/rdma_user_cm.h>
#include <rdma/rdma_user_ioctl.h>
#include <rdma/rdma_user_rxe.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The kernel's values (include/rdma/ib_verbs.h, rdma_cm.h), not in the UAPI headers. */
enum { QPS_RESET, QPS_INIT, QPS_RTR, QPS_RTS, QPS_SQD, QPS_SQE, QPS_ERR };
enum {
	QP_STATE = 1 << 0, QP_ACCESS_FLAGS = 1 << 3, QP_PKEY_INDEX = 1 << 4, QP_PORT = 1 << 5,
	QP_QKEY = 1 << 6, QP_AV = 1 << 7, QP_PATH_MTU = 1 << 8, QP_TIMEOUT = 1 << 9,
	QP_RETRY_CNT = 1 << 10, QP_RNR_RETRY = 1 << 11, QP_RQ_PSN = 1 << 12,
	QP_MAX_QP_RD_ATOMIC = 1 << 13, QP_MIN_RNR_TIMER = 1 << 15, QP_SQ_PSN = 1 << 16,
	QP_MAX_DEST_RD_ATOMIC = 1 << 17, QP_DEST_QPN = 1 << 20,
};
#define SEND_INLINE (1u << 3)		/* SEND_INLINE */
#define CM_EVENT_CONNECT_REQUEST 4	/* RDMA_CM_EVENT_CONNECT_REQUEST */
/* How far an rdma_cm Id got, as the fuzzer saw it (to aim the next command). */
enum { CM_NEW, CM_BOUND, CM_ADDR, CM_ROUTE, CM_LISTEN, CM_REQ, CM_CONN };

/* ---- options ---- */

static uint64_t opt_seed = 1;
static long opt_ops = 2000;	/* per thread */
static int opt_threads = 3;	/* per process */
static int opt_procs = 2;
static int opt_timeout = 600;	/* seconds, for all workers */
static int opt_trace;		/* every operation to stderr */
static int opt_nobody;		/* the last process runs as nobody */
static const char *opt_netns;	/* odd processes join this network namespace */
static char opt_remove[128];	/* "hcaentry:device:cable" for the remover */
static uint32_t opt_disable;	/* operation groups left out */
static struct in_addr opt_addrs[8];
static int opt_naddrs;
static int my_addr;		/* the index of this process's own address (its namespace's) */
static uint16_t opt_lids[8];
static int opt_nlids;

enum { G_UVERBS = 1, G_UCMA = 2, G_UMAD = 4, G_NETLINK = 8, G_FORK = 16, G_MIGRATE = 32, G_RING = 64 };
static const struct {
	const char *name;
	uint32_t bit;
} groups[] = {
	{ "uverbs", G_UVERBS }, { "ucma", G_UCMA }, { "umad", G_UMAD }, { "netlink", G_NETLINK },
	{ "fork", G_FORK }, { "migrate", G_MIGRATE }, { "ring", G_RING },
};

/* ---- the random streams ---- */

struct rng {
	uint64_t s;
};

static uint64_t next64(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static struct rng rng_derive(uint64_t a, uint64_t b, uint64_t c)
{
	struct rng r = { a };

	r.s = next64(&r) ^ (b * 0x100000001b3ull);
	r.s = next64(&r) ^ (c * 0xc2b2ae3d27d4eb4full);
	next64(&r);
	return r;
}

static uint32_t rnd(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(next64(r) % n) : 0;
}

static int chance(struct rng *r, int pct)
{
	return rnd(r, 100) < (uint32_t)pct;
}

/* A value for a size or count: mostly small, sometimes a boundary. */
static uint32_t rnd_size(struct rng *r, uint32_t typical)
{
	static const uint32_t edges[] = { 0, 1, 2, 3, 4, 7, 8, 15, 16, 63, 64, 255, 256, 4095, 4096,
					  65535, 65536, 0x7fffffff, 0x80000000u, 0xffffffffu };

	if (chance(r, 85))
		return 1 + rnd(r, typical);
	return edges[rnd(r, ARRAY_SIZE(edges))];
}

static void rnd_bytes(struct rng *r, void *p, size_t n)
{
	uint8_t *b = p;

	while (n) {
		uint64_t v = next64(r);
		size_t k = n < 8 ? n : 8;

		memcpy(b, &v, k);
		b += k;
		n -= k;
	}
}

/* ---- the handle table (one per process, shared by its threads) ---- */

enum kind {
	K_NONE,
	K_UVERBS, /* fd of /dev/infiniband/uverbsN (a = has a context) */
	K_ASYNC,  /* the async event fd of a context */
	K_CHAN,	  /* a completion channel fd */
	K_UCMA,	  /* fd of /dev/infiniband/rdma_cm */
	K_UMAD,	  /* fd of umadN */
	K_ISSM,	  /* fd of issmN */
	K_NL,	  /* NETLINK_RDMA socket */
	K_PD, K_MR, K_MW, K_CQ, K_QP, K_SRQ, K_AH, /* uverbs handles: fd = owning file */
	K_CMID,	  /* ucma Id: fd = owning file */
	K_MCAST,  /* ucma multicast id */
	K_AGENT,  /* umad agent id */
	K_MAP,	  /* a ring mapped by thread `owner` */
	K_NKINDS
};

static const char *const kind_name[K_NKINDS] = {
	"none", "uverbs", "async", "chan", "ucma", "umad", "issm", "nl", "pd", "mr", "mw", "cq",
	"qp", "srq", "ah", "cmid", "mcast", "agent", "map",
};

struct res {
	uint8_t kind;
	uint8_t live;
	int16_t owner;	/* the thread that may touch a K_MAP's memory */
	int fd;		/* the fd itself, or the owning file's */
	uint32_t fgen;	/* the owning file's generation when made */
	uint32_t gen;	/* this entry's */
	uint32_t h;	/* handle/id */
	uint32_t x;	/* K_QP: its type */
	uint32_t st;	/* K_QP: its state; K_CMID: how far it got (CM_*); fds: K_UMAD ENABLE_PKEY done */
	uint64_t a, b, c, d;
};

#define NRES 384
struct table {
	pthread_mutex_t lock;
	struct res r[NRES];
	uint32_t gen;
	int dev_count;	/* uverbsN/umadN numbers tried: 0..dev_count-1 */
};

static struct table *tab;
static unsigned long made[K_NKINDS];	/* per process: what add() took, for the summary */

/* Published across processes: QP numbers and MR keys to aim at. */
struct shared {
	uint32_t qpn[64];
	uint32_t rkey[64];
	uint64_t addr[64];
};
static struct shared *shm;

static uint8_t *mrbuf;	/* per process, never unmapped */
#define MRBUF_SIZE (1u << 20)

/* Per thread. */
struct th {
	struct rng r;
	int pi, ti;
	int child;	/* a forked child: may block, is killed */
	long op;
	uint8_t *resp;	/* response room that ends at a PROT_NONE page */
	uint8_t *edge;	/* the first byte of that page */
	char last[160];
};

static void tlog(struct th *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->last, sizeof(t->last), fmt, ap);
	va_end(ap);
	if (opt_trace)
		fprintf(stderr, "syzfuzz %s%d.%d #%ld %s\n", t->child ? "c" : "p", t->pi, t->ti, t->op,
			t->last);
}

static int count_live(int kind)
{
	int i, n = 0;

	pthread_mutex_lock(&tab->lock);
	for (i = 0; i < NRES; i++)
		n += tab->r[i].live && tab->r[i].kind == kind;
	pthread_mutex_unlock(&tab->lock);
	return n;
}

/* Few files, many objects on each: a new file only now and then once there are some. */
static int enough_files(struct th *t, int kind)
{
	return count_live(kind) >= 3 && chance(&t->r, 85);
}

static int fd_live(struct res *e)
{
	int i;

	for (i = 0; i < NRES; i++) {
		struct res *f = &tab->r[i];

		if (f->live && f->kind <= K_NL && f->fd == e->fd && f->gen == e->fgen)
			return 1;
	}
	return 0;
}

static int add_locked(struct th *t, int kind, int fd, uint32_t fgen, uint32_t h, uint64_t a, uint64_t b,
		      uint64_t c, uint64_t d)
{
	int i, slot = -1;

	for (i = 0; i < NRES; i++)
		if (tab->r[i].kind == K_NONE) {
			slot = i;
			break;
		}
	if (slot < 0)
		for (i = 0; i < NRES; i++)
			if (!tab->r[i].live && tab->r[i].kind != K_MAP) {
				slot = i;
				break;
			}
	if (slot < 0)
		return -1; /* full: the object stays, unnamed (close or exit ends it) */
	made[kind]++;
	tab->r[slot] = (struct res){ .kind = (uint8_t)kind, .live = 1, .owner = (int16_t)t->ti, .fd = fd,
				     .fgen = fgen, .gen = ++tab->gen, .h = h, .a = a, .b = b, .c = c, .d = d };
	return slot;
}

static int add(struct th *t, int kind, int fd, uint32_t fgen, uint32_t h, uint64_t a, uint64_t b,
	       uint64_t c, uint64_t d)
{
	int s;

	pthread_mutex_lock(&tab->lock);
	s = add_locked(t, kind, fd, fgen, h, a, b, c, d);
	pthread_mutex_unlock(&tab->lock);
	return s;
}

/*
 * Pick an entry of @kind: mostly a live one (whose file is still open),
 * sometimes a dead one (a stale handle).  Copies it out; -1 if none.
 */
static int pick(struct th *t, int kind, struct res *out, int allow_dead)
{
	int idx[NRES], n = 0, i, want_dead = allow_dead && chance(&t->r, 6);

	pthread_mutex_lock(&tab->lock);
	for (i = 0; i < NRES; i++) {
		struct res *e = &tab->r[i];

		if (e->kind != kind)
			continue;
		if (kind == K_MAP && e->owner != t->ti)
			continue;
		if (want_dead ? e->live : !e->live)
			continue;
		if (!want_dead && kind > K_NL && kind != K_MAP && !fd_live(e))
			continue;
		idx[n++] = i;
	}
	if (!n && want_dead) {
		pthread_mutex_unlock(&tab->lock);
		return pick(t, kind, out, 0);
	}
	i = n ? idx[rnd(&t->r, n)] : -1;
	if (i >= 0)
		*out = tab->r[i];
	pthread_mutex_unlock(&tab->lock);
	return i;
}

/* Mark entry @i dead if it is still the one copied (same generation). */
static void kill_entry(int i, const struct res *e)
{
	if (i < 0)
		return;
	pthread_mutex_lock(&tab->lock);
	if (tab->r[i].gen == e->gen)
		tab->r[i].live = 0;
	pthread_mutex_unlock(&tab->lock);
}

static void update_entry(int i, const struct res *e)
{
	pthread_mutex_lock(&tab->lock);
	if (tab->r[i].gen == e->gen)
		tab->r[i] = *e;
	pthread_mutex_unlock(&tab->lock);
}

/* A live entry of @kind made through file @fd. */
static int pick_on(struct th *t, int kind, int fd, struct res *out)
{
	int idx[NRES], n = 0, i;

	pthread_mutex_lock(&tab->lock);
	for (i = 0; i < NRES; i++) {
		struct res *e = &tab->r[i];

		if (e->kind == kind && e->live && e->fd == fd && fd_live(e))
			idx[n++] = i;
	}
	i = n ? idx[rnd(&t->r, n)] : -1;
	if (i >= 0)
		*out = tab->r[i];
	pthread_mutex_unlock(&tab->lock);
	return i;
}

/* Mostly an entry of @kind in state @st (when there is one), else any. */
static int pick_st(struct th *t, int kind, uint32_t st, struct res *out)
{
	int idx[NRES], n = 0, i;

	if (chance(&t->r, 25))
		return pick(t, kind, out, 1);
	pthread_mutex_lock(&tab->lock);
	for (i = 0; i < NRES; i++) {
		struct res *e = &tab->r[i];

		if (e->kind == kind && e->live && e->st == st && fd_live(e))
			idx[n++] = i;
	}
	i = n ? idx[rnd(&t->r, n)] : -1;
	if (i >= 0)
		*out = tab->r[i];
	pthread_mutex_unlock(&tab->lock);
	return i >= 0 ? i : pick(t, kind, out, 1);
}

/* Set the state of the entry of @kind with handle @h on file @fd. */
static void set_st(int kind, int fd, uint32_t h, uint32_t st)
{
	int i;

	pthread_mutex_lock(&tab->lock);
	for (i = 0; i < NRES; i++) {
		struct res *e = &tab->r[i];

		if (e->kind == kind && e->live && e->fd == fd && e->h == h)
			e->st = st;
	}
	pthread_mutex_unlock(&tab->lock);
}

/*
 * A handle of @kind for a command on file @fd: mostly a real one of that
 * file, sometimes another file's, a stale one, another kind's or garbage.
 */
static uint32_t handle(struct th *t, int kind, int fd)
{
	struct res e;
	int p = rnd(&t->r, 100);

	if (p < 85 && pick_on(t, kind, fd, &e) >= 0)
		return e.h;
	if (p < 92 && pick(t, kind, &e, 1) >= 0)
		return e.h;
	if (p < 96) {
		static const int k[] = { K_PD, K_MR, K_CQ, K_QP, K_SRQ, K_CMID, K_AGENT, K_AH, K_MW };

		if (pick(t, k[rnd(&t->r, ARRAY_SIZE(k))], &e, 1) >= 0)
			return e.h;
	}
	return chance(&t->r, 50) ? rnd(&t->r, 8) : (uint32_t)next64(&t->r);
}

/* An fd of @kind, now and then another kind's or a closed number. */
static int pick_fd(struct th *t, int kind, struct res *e)
{
	int i = pick(t, kind, e, 1);

	if (i >= 0 && chance(&t->r, 3)) {
		static const int k[] = { K_UVERBS, K_UCMA, K_UMAD, K_NL, K_ASYNC, K_CHAN };
		struct res o;

		if (pick(t, k[rnd(&t->r, ARRAY_SIZE(k))], &o, 1) >= 0)
			e->fd = o.fd;
	}
	return i;
}

static uint32_t fd_gen(int fd)
{
	uint32_t g = 0;
	int i;

	pthread_mutex_lock(&tab->lock);
	for (i = 0; i < NRES; i++)
		if (tab->r[i].live && tab->r[i].kind <= K_NL && tab->r[i].fd == fd)
			g = tab->r[i].gen;
	pthread_mutex_unlock(&tab->lock);
	return g;
}

/* ---- user pointers ---- */

/* Where a response goes: mostly a buffer that fits, sometimes one that ends early, or nothing. */
static uint64_t resp_ptr(struct th *t, size_t len)
{
	int p = rnd(&t->r, 100);

	if (p < 94 || len == 0)
		return (uint64_t)(uintptr_t)(t->edge - ((len + 63) & ~63ul) - 64);
	if (p < 96)
		return (uint64_t)(uintptr_t)(t->edge - rnd(&t->r, len)); /* crosses into PROT_NONE */
	if (p < 97)
		return 0;
	if (p < 98)
		return 16;
	if (p < 99)
		return 0xffff888000000000ull; /* the kernel's direct map */
	return next64(&t->r);
}

static void *resp_of(uint64_t p)
{
	return (void *)(uintptr_t)p;
}

static int resp_ok(struct th *t, uint64_t p, size_t len)
{
	uint8_t *q = resp_of(p);

	return q >= t->resp && q + len <= t->edge;
}

/* ---- uverbs ---- */

static int uv_write(struct th *t, int fd, uint32_t cmd, void *req, size_t reqlen, size_t resplen)
{
	uint8_t buf[1024];
	struct ib_uverbs_cmd_hdr *h = (void *)buf;
	size_t len = sizeof(*h) + reqlen;
	ssize_t n;
	int p = rnd(&t->r, 100);

	memcpy(buf + sizeof(*h), req, reqlen);
	h->command = cmd;
	h->in_words = (uint16_t)(len / 4);
	h->out_words = (uint16_t)(resplen / 4);
	if (p < 3) {
		h->in_words += (uint16_t)(rnd(&t->r, 5) - 2); /* words not the write's size */
	} else if (p < 5) {
		h->out_words = (uint16_t)rnd(&t->r, 4); /* no room */
	} else if (p < 7 && len >= 12) {
		len -= 4 * (1 + rnd(&t->r, 2)); /* a short request */
		h->in_words = (uint16_t)(len / 4);
	} else if (p < 9 && len + 16 < sizeof(buf)) {
		memset(buf + len, chance(&t->r, 50) ? 0 : 0xa5, 16); /* bytes past what is known */
		len += 16;
		h->in_words = (uint16_t)(len / 4);
	} else if (p < 10) {
		h->command ^= 1u << rnd(&t->r, 32);
	} else if (p < 11) {
		len = rnd(&t->r, len + 1);
	}
	n = write(fd, buf, len);
	return n < 0 ? -errno : (int)n;
}

/* An extended command: {hdr, ex_hdr, core request, provider data}. */
static int uv_write_ex(struct th *t, int fd, uint32_t cmd, void *req, size_t reqlen, uint64_t resp,
		       size_t resplen, size_t prov_out)
{
	uint8_t buf[512];
	struct ib_uverbs_cmd_hdr *h = (void *)buf;
	struct ib_uverbs_ex_cmd_hdr *x = (void *)(buf + sizeof(*h));
	size_t len = sizeof(*h) + sizeof(*x) + reqlen;
	ssize_t n;

	memcpy(x + 1, req, reqlen);
	h->command = IB_USER_VERBS_CMD_FLAG_EXTENDED | cmd;
	h->in_words = (uint16_t)(reqlen / 8);
	h->out_words = (uint16_t)(resplen / 8);
	x->response = resp;
	x->provider_in_words = 0;
	x->provider_out_words = (uint16_t)(prov_out / 8);
	x->cmd_hdr_reserved = chance(&t->r, 3) ? 1 : 0;
	if (chance(&t->r, 4))
		h->in_words += (uint16_t)(rnd(&t->r, 3) - 1);
	if (chance(&t->r, 4))
		x->provider_in_words = (uint16_t)rnd(&t->r, 3);
	n = write(fd, buf, len);
	return n < 0 ? -errno : (int)n;
}

static void op_uv_open(struct th *t)
{
	char path[64];
	int dev = rnd(&t->r, tab->dev_count + 1), fd, s;

	if (enough_files(t, K_UVERBS))
		return;
	snprintf(path, sizeof(path), "/dev/infiniband/uverbs%d", dev);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		tlog(t, "open %s -> %d", path, -errno);
		return;
	}
	s = add(t, K_UVERBS, fd, 0, 0, 0, 0, 0, 0);
	tlog(t, "open %s -> fd %d", path, fd);
	if (s >= 0 && chance(&t->r, 90)) {
		struct ib_uverbs_get_context c = { .response = resp_ptr(t, 8) };
		int ret = uv_write(t, fd, IB_USER_VERBS_CMD_GET_CONTEXT, &c, sizeof(c), 8);

		tlog(t, "GET_CONTEXT fd %d -> %d", fd, ret);
		if (ret > 0 && resp_ok(t, c.response, 8)) {
			struct ib_uverbs_get_context_resp *r = resp_of(c.response);
			int afd = (int)r->async_fd;

			pthread_mutex_lock(&tab->lock);
			if (tab->r[s].fd == fd)
				tab->r[s].a = 1;
			pthread_mutex_unlock(&tab->lock);
			if (afd > 2 && fcntl(afd, F_GETFD) >= 0) {
				fcntl(afd, F_SETFL, O_NONBLOCK);
				add(t, K_ASYNC, afd, 0, 0, 0, 0, 0, 0);
			}
		}
	}
}

/* A uverbs fd (with a context, mostly) and its generation. */
static int uv_fd(struct th *t, uint32_t *gen)
{
	struct res e;

	if (pick_fd(t, K_UVERBS, &e) < 0)
		return -1;
	*gen = e.gen;
	return e.fd;
}

static void op_uv_query(struct th *t)
{
	uint32_t g;
	int fd = uv_fd(t, &g), ret;

	if (fd < 0)
		return;
	switch (rnd(&t->r, 4)) {
	case 0: {
		struct ib_uverbs_query_device q = { .response = resp_ptr(t, sizeof(struct ib_uverbs_query_device_resp)) };

		ret = uv_write(t, fd, IB_USER_VERBS_CMD_QUERY_DEVICE, &q, sizeof(q),
			       sizeof(struct ib_uverbs_query_device_resp));
		tlog(t, "QUERY_DEVICE fd %d -> %d", fd, ret);
		break;
	}
	case 1: {
		struct ib_uverbs_query_port q = { .response = resp_ptr(t, sizeof(struct ib_uverbs_query_port_resp)),
						  .port_num = (uint8_t)(chance(&t->r, 80) ? 1 : rnd(&t->r, 256)) };

		ret = uv_write(t, fd, IB_USER_VERBS_CMD_QUERY_PORT, &q, sizeof(q),
			       sizeof(struct ib_uverbs_query_port_resp));
		tlog(t, "QUERY_PORT fd %d port %d -> %d", fd, q.port_num, ret);
		break;
	}
	case 2: {
		struct ib_uverbs_ex_query_device q = { .comp_mask = chance(&t->r, 90) ? 0 : 1 };
		size_t rl = sizeof(struct ib_uverbs_ex_query_device_resp);

		ret = uv_write_ex(t, fd, IB_USER_VERBS_EX_CMD_QUERY_DEVICE, &q, sizeof(q), resp_ptr(t, rl),
				  chance(&t->r, 90) ? rl : rnd(&t->r, rl), 0);
		tlog(t, "EX_QUERY_DEVICE fd %d -> %d", fd, ret);
		break;
	}
	default: {
		/* A command number Weft does not offer, or the ioctl() ABI. */
		uint8_t junk[64];

		rnd_bytes(&t->r, junk, sizeof(junk));
		if (chance(&t->r, 50)) {
			ret = uv_write(t, fd, rnd(&t->r, 60), junk, 8 * rnd(&t->r, 8), 8 * rnd(&t->r, 4));
		} else {
			ret = ioctl(fd, _IOWR(RDMA_IOCTL_MAGIC, 1, struct ib_uverbs_ioctl_hdr), junk);
			ret = ret < 0 ? -errno : ret;
		}
		tlog(t, "uverbs junk fd %d -> %d", fd, ret);
	}
	}
}

static void op_uv_alloc_pd(struct th *t)
{
	uint32_t g;
	int fd = uv_fd(t, &g), ret;
	struct ib_uverbs_alloc_pd c;

	if (fd < 0)
		return;
	c = (struct ib_uverbs_alloc_pd){ .response = resp_ptr(t, 4) };
	ret = uv_write(t, fd, IB_USER_VERBS_CMD_ALLOC_PD, &c, sizeof(c), 4);
	tlog(t, "ALLOC_PD fd %d -> %d", fd, ret);
	if (ret > 0 && resp_ok(t, c.response, 4))
		add(t, K_PD, fd, g, *(uint32_t *)resp_of(c.response), 0, 0, 0, 0);
}

static void op_uv_reg_mr(struct th *t)
{
	uint32_t g;
	int fd = uv_fd(t, &g), ret;
	struct ib_uverbs_reg_mr c = { 0 };
	uint64_t off = rnd(&t->r, MRBUF_SIZE / 4096) * 4096ull;

	if (fd < 0)
		return;
	c.response = resp_ptr(t, sizeof(struct ib_uverbs_reg_mr_resp));
	c.pd_handle = handle(t, K_PD, fd);
	if (chance(&t->r, 90)) {
		c.start = (uint64_t)(uintptr_t)mrbuf + off + (chance(&t->r, 80) ? 0 : rnd(&t->r, 4096));
		c.length = 1 + rnd(&t->r, (uint32_t)(MRBUF_SIZE - off));
		if (c.start + c.length > (uint64_t)(uintptr_t)mrbuf + MRBUF_SIZE)
			c.length = (uint64_t)(uintptr_t)mrbuf + MRBUF_SIZE - c.start;
	} else {
		c.start = chance(&t->r, 50) ? (uint64_t)(uintptr_t)t->edge : next64(&t->r);
		c.length = rnd_size(&t->r, 1 << 20);
		if (chance(&t->r, 20))
			c.length = next64(&t->r);
	}
	c.hca_va = chance(&t->r, 90) ? c.start : next64(&t->r);
	c.access_flags = chance(&t->r, 85) ? IB_UVERBS_ACCESS_LOCAL_WRITE | (rnd(&t->r, 16) << 1)
					   : (uint32_t)next64(&t->r) & 0x1ff;
	ret = uv_write(t, fd, IB_USER_VERBS_CMD_REG_MR, &c, sizeof(c), sizeof(struct ib_uverbs_reg_mr_resp));
	tlog(t, "REG_MR fd %d pd %u len %llu acc %#x -> %d", fd, c.pd_handle, (unsigned long long)c.length,
	     c.access_flags, ret);
	if (ret > 0 && resp_ok(t, c.response, sizeof(struct ib_uverbs_reg_mr_resp))) {
		struct ib_uverbs_reg_mr_resp *r = resp_of(c.response);
		int slot = rnd(&t->r, 64);

		add(t, K_MR, fd, g, r->mr_handle, c.start, c.length, r->lkey, r->rkey);
		shm->rkey[slot] = r->rkey;
		shm->addr[slot] = c.start;
	}
}

static void op_uv_alloc_mw(struct th *t)
{
	uint32_t g;
	int fd = uv_fd(t, &g), ret;
	struct ib_uverbs_alloc_mw c = { 0 };

	if (fd < 0)
		return;
	c.response = resp_ptr(t, sizeof(struct ib_uverbs_alloc_mw_resp));
	c.pd_handle = handle(t, K_PD, fd);
	c.mw_type = (uint8_t)(chance(&t->r, 90) ? 1 + rnd(&t->r, 2) : rnd(&t->r, 256));
	ret = uv_write(t, fd, IB_USER_VERBS_CMD_ALLOC_MW, &c, sizeof(c), sizeof(struct ib_uverbs_alloc_mw_resp));
	tlog(t, "ALLOC_MW fd %d pd %u type %d -> %d", fd, c.pd_handle, c.mw_type, ret);
	if (ret > 0 && resp_ok(t, c.response, 8)) {
		struct ib_uverbs_alloc_mw_resp *r = resp_of(c.response);

		add(t, K_MW, fd, g, r->mw_handle, r->rkey, 0, 0, 0);
	}
}

static void op_uv_comp_channel(struct th *t)
{
	uint32_t g;
	int fd = uv_fd(t, &g), ret;
	struct ib_uverbs_create_comp_channel c;

	if (fd < 0)
		return;
	c.response = resp_ptr(t, 4);
	ret = uv_write(t, fd, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, &c, sizeof(c), 4);
	tlog(t, "CREATE_COMP_CHANNEL fd %d -> %d", fd, ret);
	if (ret > 0 && resp_ok(t, c.response, 4)) {
		int cfd = *(int *)resp_of(c.response);

		if (cfd > 2 && fcntl(cfd, F_GETFD) >= 0) {
			fcntl(cfd, F_SETFL, O_NONBLOCK);
			add(t, K_CHAN, cfd, 0, 0, (uint64_t)fd, 0, 0, 0);
		}
	}
}

static int32_t comp_channel_for(struct th *t)
{
	struct res e;
	int p = rnd(&t->r, 100);

	if (p < 60)
		return -1;
	if (p < 95 && pick(t, K_CHAN, &e, 1) >= 0)
		return e.fd;
	return (int32_t)rnd(&t->r, 64);
}

static void op_uv_create_cq(struct th *t)
{
	uint32_t g;
	int fd = uv_fd(t, &g), ret;
	size_t rl = sizeof(struct ib_uverbs_create_cq_resp) + sizeof(struct rxe_create_cq_resp);
	uint64_t rp = resp_ptr(t, rl + 16);

	if (fd < 0)
		return;
	if (chance(&t->r, 80)) {
		struct ib_uverbs_create_cq c = { .response = rp, .user_handle = next64(&t->r) };

		c.cqe = chance(&t->r, 90) ? 1 + rnd(&t->r, 256) : rnd_size(&t->r, 1 << 16);
		c.comp_vector = chance(&t->r, 90) ? 0 : rnd(&t->r, 4);
		c.comp_channel = comp_channel_for(t);
		ret = uv_write(t, fd, IB_USER_VERBS_CMD_CREATE_CQ, &c, sizeof(c), chance(&t->r, 95) ? rl : 8);
		tlog(t, "CREATE_CQ fd %d cqe %u chan %d -> %d", fd, c.cqe, c.comp_channel, ret);
	} else {
		struct ib_uverbs_ex_create_cq c = { .user_handle = next64(&t->r) };
		size_t xl = sizeof(struct ib_uverbs_ex_create_cq_resp);

		c.cqe = 1 + rnd(&t->r, 128);
		c.comp_channel = comp_channel_for(t);
		c.comp_mask = chance(&t->r, 90) ? 0 : (uint32_t)next64(&t->r);
		c.flags = chance(&t->r, 90) ? 0 : rnd(&t->r, 4);
		rl = xl + sizeof(struct rxe_create_cq_resp);
		ret = uv_write_ex(t, fd, IB_USER_VERBS_EX_CMD_CREATE_CQ, &c, sizeof(c), rp, xl,
				  sizeof(struct rxe_create_cq_resp));
		tlog(t, "EX_CREATE_CQ fd %d cqe %u -> %d", fd, c.cqe, ret);
	}
	if (ret > 0 && resp_ok(t, rp, rl)) {
		struct ib_uverbs_create_cq_resp *r = resp_of(rp);
		struct mminfo *mi = (void *)((uint8_t *)resp_of(rp) + rl - sizeof(*mi));

		add(t, K_CQ, fd, g, r->cq_handle, mi->offset, mi->size, r->cqe, 0);
	}
}

static void op_uv_create_srq(struct th *t)
{
	uint32_t g;
	int fd = uv_fd(t, &g), ret;
	struct ib_uverbs_create_srq c = { 0 };
	size_t rl = sizeof(struct ib_uverbs_create_srq_resp) + sizeof(struct rxe_create_srq_resp);

	if (fd < 0)
		return;
	c.response = resp_ptr(t, rl);
	c.user_handle = next64(&t->r);
	c.pd_handle = handle(t, K_PD, fd);
	c.max_wr = chance(&t->r, 90) ? 1 + rnd(&t->r, 64) : rnd_size(&t->r, 1 << 16);
	c.max_sge = chance(&t->r, 90) ? 1 + rnd(&t->r, 4) : rnd_size(&t->r, 64);
	c.srq_limit = chance(&t->r, 70) ? 0 : rnd(&t->r, c.max_wr + 2);
	ret = uv_write(t, fd, IB_USER_VERBS_CMD_CREATE_SRQ, &c, sizeof(c), rl);
	tlog(t, "CREATE_SRQ fd %d wr %u sge %u -> %d", fd, c.max_wr, c.max_sge, ret);
	if (ret > 0 && resp_ok(t, c.response, rl)) {
		struct ib_uverbs_create_srq_resp *r = resp_of(c.response);
		struct rxe_create_srq_resp *x = (void *)(r + 1);

		add(t, K_SRQ, fd, g, r->srq_handle, x->mi.offset, x->mi.size, 0, 0);
	}
}

static void op_uv_create_qp(struct th *t)
{
	uint32_t g;
	int fd = uv_fd(t, &g), ret;
	struct ib_uverbs_create_qp c = { 0 };
	size_t rl = sizeof(struct ib_uverbs_create_qp_resp) + sizeof(struct rxe_create_qp_resp);
	static const uint8_t types[] = { IB_UVERBS_QPT_RC, IB_UVERBS_QPT_UC, IB_UVERBS_QPT_UD };

	if (fd < 0)
		return;
	c.response = resp_ptr(t, rl);
	c.user_handle = next64(&t->r);
	c.pd_handle = handle(t, K_PD, fd);
	c.send_cq_handle = handle(t, K_CQ, fd);
	c.recv_cq_handle = chance(&t->r, 60) ? c.send_cq_handle : handle(t, K_CQ, fd);
	c.is_srq = chance(&t->r, 20);
	if (c.is_srq)
		c.srq_handle = handle(t, K_SRQ, fd);
	c.max_send_wr = chance(&t->r, 90) ? 1 + rnd(&t->r, 32) : rnd_size(&t->r, 1 << 16);
	c.max_recv_wr = chance(&t->r, 90) ? 1 + rnd(&t->r, 32) : rnd_size(&t->r, 1 << 16);
	c.max_send_sge = chance(&t->r, 90) ? 1 + rnd(&t->r, 3) : rnd_size(&t->r, 64);
	c.max_recv_sge = chance(&t->r, 90) ? 1 + rnd(&t->r, 3) : rnd_size(&t->r, 64);
	c.max_inline_data = chance(&t->r, 80) ? rnd(&t->r, 128) : rnd_size(&t->r, 1024);
	c.sq_sig_all = (uint8_t)rnd(&t->r, 2);
	c.qp_type = chance(&t->r, 95) ? types[rnd(&t->r, 3)] : (uint8_t)rnd(&t->r, 256);
	ret = uv_write(t, fd, IB_USER_VERBS_CMD_CREATE_QP, &c, sizeof(c), rl);
	tlog(t, "CREATE_QP fd %d type %d pd %u cq %u/%u srq %d -> %d", fd, c.qp_type, c.pd_handle,
	     c.send_cq_handle, c.recv_cq_handle, c.is_srq, ret);
	if (ret > 0 && resp_ok(t, c.response, rl)) {
		struct ib_uverbs_create_qp_resp *r = resp_of(c.response);
		struct rxe_create_qp_resp *x = (void *)((uint8_t *)r + sizeof(*r));
		int s;

		tlog(t, "  QP handle %u qpn %u", r->qp_handle, r->qpn);
		shm->qpn[rnd(&t->r, 64)] = r->qpn;
		/* a: SQ offset, b: SQ size, c: RQ offset, d: RQ size */
		pthread_mutex_lock(&tab->lock);
		s = add_locked(t, K_QP, fd, g, r->qp_handle, x->sq_mi.offset, x->sq_mi.size, x->rq_mi.offset,
			       x->rq_mi.size);
		if (s >= 0)
			tab->r[s].x = c.qp_type;
		pthread_mutex_unlock(&tab->lock);
	}
}

static void op_uv_modify_qp(struct th *t)
{
	struct res e;
	int fd, ret;
	struct ib_uverbs_modify_qp c = { 0 };
	uint8_t type;
	uint32_t st;

	if (pick_st(t, K_QP, rnd(&t->r, 3), &e) < 0)
		return;
	fd = e.fd;
	type = (uint8_t)e.x;
	c.qp_handle = chance(&t->r, 97) ? e.h : handle(t, K_QP, fd);
	/* Mostly the next state on the way to RTS (with that transition's attributes), sometimes any. */
	st = chance(&t->r, 80) && e.st < QPS_RTS ? e.st + 1 : chance(&t->r, 50) ? 1 + rnd(&t->r, 3) : rnd(&t->r, 8);
	c.qp_state = (uint8_t)st;
	c.attr_mask = QP_STATE;
	switch (st) {
	case QPS_INIT:
		c.attr_mask |= QP_PKEY_INDEX | QP_PORT;
		c.port_num = chance(&t->r, 95) ? 1 : (uint8_t)rnd(&t->r, 4);
		c.pkey_index = chance(&t->r, 95) ? 0 : (uint16_t)rnd(&t->r, 130);
		if (type == IB_UVERBS_QPT_UD) {
			c.attr_mask |= QP_QKEY;
			c.qkey = chance(&t->r, 80) ? 0x11111111 : (uint32_t)next64(&t->r);
		} else {
			c.attr_mask |= QP_ACCESS_FLAGS;
			/* UC has no remote read or atomics (IBA 10.2.3): mostly what the type allows. */
			c.qp_access_flags = rnd(&t->r, type == IB_UVERBS_QPT_UC && chance(&t->r, 90) ? 4 : 16);
		}
		break;
	case QPS_RTR:
		if (type != IB_UVERBS_QPT_UD) {
			c.attr_mask |= QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN;
			c.dest.dlid = opt_nlids ? opt_lids[rnd(&t->r, opt_nlids)] : (uint16_t)(1 + rnd(&t->r, 4));
			if (chance(&t->r, 5))
				c.dest.dlid = (uint16_t)next64(&t->r);
			c.dest.port_num = 1;
			c.dest.sl = (uint8_t)rnd(&t->r, chance(&t->r, 90) ? 1 : 16);
			c.dest.is_global = chance(&t->r, 5);
			c.dest.hop_limit = 1;
			c.path_mtu = (uint8_t)(chance(&t->r, 90) ? 1 + rnd(&t->r, 5) : rnd(&t->r, 256));
			c.dest_qp_num = chance(&t->r, 85) ? shm->qpn[rnd(&t->r, 64)] : (uint32_t)next64(&t->r);
			c.rq_psn = rnd(&t->r, 1 << 24);
			if (type == IB_UVERBS_QPT_RC) {
				c.attr_mask |= QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER;
				c.max_dest_rd_atomic = (uint8_t)rnd(&t->r, 17);
				c.min_rnr_timer = (uint8_t)rnd(&t->r, 32);
			}
		}
		break;
	case QPS_RTS:
		c.attr_mask |= QP_SQ_PSN;
		c.sq_psn = rnd(&t->r, 1 << 24);
		if (type == IB_UVERBS_QPT_RC) {
			c.attr_mask |= QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_MAX_QP_RD_ATOMIC;
			c.timeout = (uint8_t)(chance(&t->r, 80) ? 8 + rnd(&t->r, 4) : rnd(&t->r, 32));
			c.retry_cnt = (uint8_t)rnd(&t->r, 8);
			c.rnr_retry = (uint8_t)rnd(&t->r, 8);
			c.max_rd_atomic = (uint8_t)rnd(&t->r, 17);
		}
		break;
	default:
		break;
	}
	if (chance(&t->r, 8))
		c.attr_mask ^= 1u << rnd(&t->r, 24);
	ret = uv_write(t, fd, IB_USER_VERBS_CMD_MODIFY_QP, &c, sizeof(c), 0);
	tlog(t, "MODIFY_QP fd %d qp %u state %u mask %#x -> %d", fd, c.qp_handle, st, c.attr_mask, ret);
	if (ret > 0 && c.qp_handle == e.h)
		set_st(K_QP, fd, e.h, st);
}

static void op_uv_query_qp(struct th *t)
{
	struct res e;
	int ret;
	struct ib_uverbs_query_qp c = { 0 };

	if (pick(t, K_QP, &e, 1) < 0)
		return;
	c.response = resp_ptr(t, sizeof(struct ib_uverbs_query_qp_resp));
	c.qp_handle = e.h;
	c.attr_mask = (uint32_t)next64(&t->r);
	ret = uv_write(t, e.fd, IB_USER_VERBS_CMD_QUERY_QP, &c, sizeof(c), sizeof(struct ib_uverbs_query_qp_resp));
	tlog(t, "QUERY_QP fd %d qp %u -> %d", e.fd, c.qp_handle, ret);
}

static void op_uv_create_ah(struct th *t)
{
	uint32_t g;
	int fd = uv_fd(t, &g), ret;
	struct ib_uverbs_create_ah c = { 0 };
	size_t rl = sizeof(struct ib_uverbs_create_ah_resp) + sizeof(struct rxe_create_ah_resp);

	if (fd < 0)
		return;
	c.response = resp_ptr(t, rl);
	c.user_handle = next64(&t->r);
	c.pd_handle = handle(t, K_PD, fd);
	c.attr.dlid = opt_nlids ? opt_lids[rnd(&t->r, opt_nlids)] : 1;
	if (chance(&t->r, 10))
		c.attr.dlid = (uint16_t)next64(&t->r);
	c.attr.port_num = chance(&t->r, 95) ? 1 : (uint8_t)rnd(&t->r, 4);
	c.attr.sl = (uint8_t)rnd(&t->r, 16);
	c.attr.is_global = chance(&t->r, 10);
	c.attr.grh.hop_limit = 1;
	ret = uv_write(t, fd, IB_USER_VERBS_CMD_CREATE_AH, &c, sizeof(c), rl);
	tlog(t, "CREATE_AH fd %d pd %u dlid %u -> %d", fd, c.pd_handle, c.attr.dlid, ret);
	if (ret > 0 && resp_ok(t, c.response, rl)) {
		struct ib_uverbs_create_ah_resp *r = resp_of(c.response);
		struct rxe_create_ah_resp *x = (void *)(r + 1);

		add(t, K_AH, fd, g, r->ah_handle, x->ah_num, 0, 0, 0);
	}
}

static void op_uv_misc(struct th *t)
{
	struct res e;
	int ret;

	switch (rnd(&t->r, 5)) {
	case 0: {
		struct ib_uverbs_req_notify_cq c;

		if (pick(t, K_CQ, &e, 1) < 0)
			return;
		c.cq_handle = e.h;
		c.solicited_only = rnd(&t->r, 2);
		ret = uv_write(t, e.fd, IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, &c, sizeof(c), 0);
		tlog(t, "REQ_NOTIFY_CQ fd %d cq %u -> %d", e.fd, c.cq_handle, ret);
		break;
	}
	case 1: {
		struct ib_uverbs_resize_cq c = { 0 };
		size_t rl = sizeof(struct ib_uverbs_resize_cq_resp) + sizeof(struct rxe_resize_cq_resp);
		int i = pick(t, K_CQ, &e, 1);

		if (i < 0)
			return;
		c.response = resp_ptr(t, rl);
		c.cq_handle = e.h;
		c.cqe = chance(&t->r, 90) ? 1 + rnd(&t->r, 512) : rnd_size(&t->r, 1 << 17);
		ret = uv_write(t, e.fd, IB_USER_VERBS_CMD_RESIZE_CQ, &c, sizeof(c), rl);
		tlog(t, "RESIZE_CQ fd %d cq %u cqe %u -> %d", e.fd, c.cq_handle, c.cqe, ret);
		if (ret > 0 && resp_ok(t, c.response, rl)) {
			struct rxe_resize_cq_resp *x = (void *)((uint8_t *)resp_of(c.response) +
							       sizeof(struct ib_uverbs_resize_cq_resp));

			e.a = x->mi.offset;
			e.b = x->mi.size;
			update_entry(i, &e);
		}
		break;
	}
	case 2: {
		struct {
			struct ib_uverbs_modify_srq m;
			struct rxe_modify_srq_cmd x;
		} c = { 0 };

		if (pick(t, K_SRQ, &e, 1) < 0)
			return;
		c.m.srq_handle = e.h;
		c.m.attr_mask = rnd(&t->r, 4);
		c.m.max_wr = 1 + rnd(&t->r, 128);
		c.m.srq_limit = rnd(&t->r, 64);
		c.x.mmap_info_addr = resp_ptr(t, sizeof(struct mminfo));
		ret = uv_write(t, e.fd, IB_USER_VERBS_CMD_MODIFY_SRQ, &c, sizeof(c), 0);
		tlog(t, "MODIFY_SRQ fd %d srq %u mask %u wr %u -> %d", e.fd, e.h, c.m.attr_mask, c.m.max_wr, ret);
		break;
	}
	case 3: {
		struct ib_uverbs_attach_mcast c = { 0 };

		if (pick(t, K_QP, &e, 1) < 0)
			return;
		c.gid[0] = 0xff;
		c.gid[1] = 0x12;
		c.gid[15] = (uint8_t)rnd(&t->r, 4);
		c.qp_handle = e.h;
		c.mlid = (uint16_t)(chance(&t->r, 90) ? 0xc000 + rnd(&t->r, 4) : next64(&t->r));
		ret = uv_write(t, e.fd, chance(&t->r, 50) ? IB_USER_VERBS_CMD_ATTACH_MCAST
						      : IB_USER_VERBS_CMD_DETACH_MCAST, &c, sizeof(c), 0);
		tlog(t, "ATTACH/DETACH_MCAST fd %d qp %u -> %d", e.fd, e.h, ret);
		break;
	}
	default: {
		struct ib_uverbs_query_srq c = { 0 };

		if (pick(t, K_SRQ, &e, 1) < 0)
			return;
		c.response = resp_ptr(t, sizeof(struct ib_uverbs_query_srq_resp));
		c.srq_handle = e.h;
		ret = uv_write(t, e.fd, IB_USER_VERBS_CMD_QUERY_SRQ, &c, sizeof(c),
			       sizeof(struct ib_uverbs_query_srq_resp));
		tlog(t, "QUERY_SRQ fd %d srq %u -> %d", e.fd, e.h, ret);
	}
	}
}

static void op_uv_destroy(struct th *t)
{
	static const int kinds[] = { K_PD, K_MR, K_MW, K_CQ, K_QP, K_SRQ, K_AH };
	int k = kinds[rnd(&t->r, ARRAY_SIZE(kinds))], i, ret;
	struct res e;
	uint8_t c[24] = { 0 };
	uint64_t rp = resp_ptr(t, 8);
	uint32_t cmd;
	size_t len, rl = 0;

	if ((i = pick(t, k, &e, 1)) < 0)
		return;
	switch (k) {
	case K_PD:
		cmd = IB_USER_VERBS_CMD_DEALLOC_PD, len = 4;
		memcpy(c, &e.h, 4);
		break;
	case K_MR:
		cmd = IB_USER_VERBS_CMD_DEREG_MR, len = 4;
		memcpy(c, &e.h, 4);
		break;
	case K_MW:
		cmd = IB_USER_VERBS_CMD_DEALLOC_MW, len = 4;
		memcpy(c, &e.h, 4);
		break;
	case K_AH:
		cmd = IB_USER_VERBS_CMD_DESTROY_AH, len = 4;
		memcpy(c, &e.h, 4);
		break;
	default:
		cmd = k == K_CQ ? IB_USER_VERBS_CMD_DESTROY_CQ
				: k == K_QP ? IB_USER_VERBS_CMD_DESTROY_QP : IB_USER_VERBS_CMD_DESTROY_SRQ;
		len = 16;
		rl = k == K_CQ ? 8 : 4;
		memcpy(c, &rp, 8);
		memcpy(c + 8, &e.h, 4);
	}
	ret = uv_write(t, e.fd, cmd, c, len, rl);
	tlog(t, "destroy %s fd %d handle %u -> %d", kind_name[k], e.fd, e.h, ret);
	if (ret > 0 || ret == -EINVAL)
		kill_entry(i, &e);
}

/* ---- the rings ---- */

struct ring_hdr {
	uint32_t log2_elem_size;
	uint32_t index_mask;
	uint32_t pad1[30];
	uint32_t producer_index;
	uint32_t pad2[31];
	uint32_t consumer_index;
	uint32_t pad3[31];
	uint8_t data[];
};
_Static_assert(sizeof(struct ring_hdr) == 384, "the rxe queue header");

enum { RING_SQ, RING_RQ, RING_CQ, RING_SRQ };

static void op_mmap(struct th *t)
{
	static const int kinds[] = { K_QP, K_QP, K_CQ, K_SRQ };
	int which = rnd(&t->r, 4), k = kinds[which], rk;
	struct res e;
	uint64_t off, size;
	void *p;

	if (pick(t, k, &e, 1) < 0)
		return;
	if (k == K_QP && which == 1) {
		off = e.c, size = e.d, rk = RING_RQ;
	} else {
		off = e.a, size = e.b;
		rk = k == K_QP ? RING_SQ : k == K_CQ ? RING_CQ : RING_SRQ;
	}
	if (!size)
		return;
	if (chance(&t->r, 5))
		size += 4096 * (1 + rnd(&t->r, 2));
	if (chance(&t->r, 4))
		off += 4096 * (rnd(&t->r, 3) + 1);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, e.fd, (off_t)off);
	tlog(t, "mmap fd %d off %#llx size %llu (%s ring) -> %s", e.fd, (unsigned long long)off,
	     (unsigned long long)size, rk == RING_SQ ? "sq" : rk == RING_RQ ? "rq" : rk == RING_CQ ? "cq" : "srq",
	     p == MAP_FAILED ? strerror(errno) : "ok");
	if (p == MAP_FAILED)
		return;
	/* a: address, b: size, c: ring kind, d: QP handle and its fd */
	if (add(t, K_MAP, e.fd, e.fgen, e.h, (uint64_t)(uintptr_t)p, size, (uint64_t)rk, e.x) < 0)
		munmap(p, size);
}

static void op_munmap(struct th *t)
{
	struct res e;
	int i = pick(t, K_MAP, &e, 0);

	if (i < 0)
		return;
	pthread_mutex_lock(&tab->lock);
	if (tab->r[i].gen == e.gen)
		tab->r[i].kind = K_NONE;
	pthread_mutex_unlock(&tab->lock);
	munmap((void *)(uintptr_t)e.a, e.b);
	tlog(t, "munmap %#llx", (unsigned long long)e.a);
}

/* The slot at @idx of a mapped ring, if it lies inside the mapping. */
static uint8_t *ring_slot(struct res *m, uint32_t idx, size_t need)
{
	struct ring_hdr *h = (void *)(uintptr_t)m->a;
	uint32_t l2 = h->log2_elem_size;
	uint64_t off;

	if (l2 > 16)
		return NULL;
	off = sizeof(*h) + ((uint64_t)(idx & h->index_mask) << l2);
	if (need > (1u << l2) || off + need > m->b)
		return NULL;
	return (uint8_t *)h + off;
}

static void fill_sge(struct th *t, int fd, struct rxe_sge *s)
{
	struct res mr;

	if ((pick_on(t, K_MR, fd, &mr) >= 0 || pick(t, K_MR, &mr, 1) >= 0) && chance(&t->r, 90)) {
		uint64_t o = mr.b ? rnd(&t->r, (uint32_t)(mr.b < 65536 ? mr.b : 65536)) : 0;

		s->addr = mr.a + o;
		s->length = chance(&t->r, 90) ? rnd(&t->r, (uint32_t)(mr.b - o < 8192 ? mr.b - o : 8192) + 1)
					      : rnd_size(&t->r, 1 << 20);
		s->lkey = (uint32_t)mr.c;
	} else {
		s->addr = next64(&t->r);
		s->length = rnd_size(&t->r, 4096);
		s->lkey = (uint32_t)next64(&t->r);
	}
}

static void op_ring(struct th *t)
{
	struct res m;
	struct ring_hdr *h;
	int ret;

	if (pick(t, K_MAP, &m, 0) < 0)
		return;
	h = (void *)(uintptr_t)m.a;
	switch (m.c) {
	case RING_SQ: {
		uint32_t prod = h->producer_index, cons = __atomic_load_n(&h->consumer_index, __ATOMIC_ACQUIRE);
		int n = 1 + rnd(&t->r, 4), i;
		static const uint32_t ops[] = { IB_UVERBS_WR_SEND, IB_UVERBS_WR_SEND_WITH_IMM, IB_UVERBS_WR_RDMA_WRITE,
						IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, IB_UVERBS_WR_RDMA_READ,
						IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD,
						IB_UVERBS_WR_LOCAL_INV, IB_UVERBS_WR_BIND_MW,
						IB_UVERBS_WR_SEND_WITH_INV };
		struct ib_uverbs_post_send c = { 0 };

		for (i = 0; i < n; i++) {
			size_t room = sizeof(struct rxe_send_wqe) + 2 * sizeof(struct rxe_sge);
			struct rxe_send_wqe *w;
			uint32_t nsge, j;

			if (((prod + 1) & h->index_mask) == (cons & h->index_mask))
				break; /* full */
			w = (void *)ring_slot(&m, prod, room);
			if (!w)
				break;
			memset(w, 0, room);
			w->wr.wr_id = next64(&t->r);
			w->wr.opcode = chance(&t->r, 95) ? ops[rnd(&t->r, ARRAY_SIZE(ops))] : rnd(&t->r, 64);
			w->wr.send_flags = rnd(&t->r, 32);
			w->wr.ex.imm_data = (uint32_t)next64(&t->r);
			if (m.d == IB_UVERBS_QPT_UD) {
				struct res ah;

				w->wr.wr.ud.remote_qpn = shm->qpn[rnd(&t->r, 64)];
				w->wr.wr.ud.remote_qkey = 0x11111111;
				w->wr.wr.ud.ah_num = pick_on(t, K_AH, m.fd, &ah) >= 0 ? (uint32_t)ah.a : rnd(&t->r, 8);
			} else if (w->wr.opcode == IB_UVERBS_WR_BIND_MW) {
				struct res mr;

				if (pick_on(t, K_MR, m.fd, &mr) >= 0) {
					w->wr.wr.mw.addr = mr.a;
					w->wr.wr.mw.length = rnd(&t->r, (uint32_t)mr.b + 1);
					w->wr.wr.mw.mr_lkey = (uint32_t)mr.c;
				}
				{
					struct res mw;

					w->wr.wr.mw.mw_rkey = pick_on(t, K_MW, m.fd, &mw) >= 0 ? (uint32_t)mw.a
											     : (uint32_t)next64(&t->r);
				}
				w->wr.wr.mw.rkey = (uint32_t)next64(&t->r);
				w->wr.wr.mw.access = rnd(&t->r, 32);
			} else {
				int s = rnd(&t->r, 64);

				w->wr.wr.atomic.remote_addr = shm->addr[s] + (chance(&t->r, 80) ? 0 : rnd(&t->r, 8192));
				w->wr.wr.atomic.rkey = shm->rkey[s];
				w->wr.wr.atomic.compare_add = next64(&t->r);
				w->wr.wr.atomic.swap = next64(&t->r);
				if (w->wr.opcode <= IB_UVERBS_WR_RDMA_READ)
					w->wr.wr.rdma.rkey = shm->rkey[s];
			}
			nsge = chance(&t->r, 90) ? rnd(&t->r, 3) : (uint32_t)next64(&t->r);
			w->dma.num_sge = nsge;
			if (w->wr.send_flags & SEND_INLINE) {
				uint32_t len = rnd(&t->r, 2 * sizeof(struct rxe_sge));

				rnd_bytes(&t->r, w->dma.inline_data, len);
				w->dma.length = chance(&t->r, 90) ? len : (uint32_t)next64(&t->r);
			} else {
				for (j = 0; j < nsge && j < 2; j++) {
					fill_sge(t, m.fd, &w->dma.sge[j]);
					w->dma.length += w->dma.sge[j].length;
				}
			}
			w->dma.resid = w->dma.length;
			__atomic_store_n(&h->producer_index, ++prod, __ATOMIC_RELEASE);
		}
		if (chance(&t->r, 2))
			__atomic_store_n(&h->producer_index, (uint32_t)next64(&t->r), __ATOMIC_RELEASE);
		c.response = resp_ptr(t, 4);
		c.qp_handle = m.h;
		ret = uv_write(t, m.fd, IB_USER_VERBS_CMD_POST_SEND, &c, sizeof(c), 4);
		tlog(t, "post %d WQEs qp %u fd %d -> %d", i, m.h, m.fd, ret);
		break;
	}
	case RING_RQ:
	case RING_SRQ: {
		uint32_t prod = h->producer_index, cons = __atomic_load_n(&h->consumer_index, __ATOMIC_ACQUIRE);
		int n = 1 + rnd(&t->r, 8), i;

		for (i = 0; i < n; i++) {
			size_t room = sizeof(struct rxe_recv_wqe) + 2 * sizeof(struct rxe_sge);
			struct rxe_recv_wqe *w;

			if (((prod + 1) & h->index_mask) == (cons & h->index_mask))
				break;
			w = (void *)ring_slot(&m, prod, room);
			if (!w)
				break;
			memset(w, 0, room);
			w->wr_id = next64(&t->r);
			w->dma.num_sge = chance(&t->r, 95) ? 1 + rnd(&t->r, 2) : (uint32_t)next64(&t->r);
			fill_sge(t, m.fd, &w->dma.sge[0]);
			fill_sge(t, m.fd, &w->dma.sge[1]);
			w->dma.length = w->dma.sge[0].length + w->dma.sge[1].length;
			__atomic_store_n(&h->producer_index, ++prod, __ATOMIC_RELEASE);
		}
		tlog(t, "%d receive WQEs into a mapped ring", i);
		break;
	}
	default: { /* CQ: consume what is there, or move the consumer index anywhere */
		uint32_t prod = __atomic_load_n(&h->producer_index, __ATOMIC_ACQUIRE);

		__atomic_store_n(&h->consumer_index, chance(&t->r, 95) ? prod : (uint32_t)next64(&t->r),
				 __ATOMIC_RELEASE);
		tlog(t, "CQ ring consumed to %u", prod);
	}
	}
}

/* The async event and completion channel fds: read (non-blocking), poll, close. */
static void op_uv_events(struct th *t)
{
	struct res e;
	int k = chance(&t->r, 50) ? K_ASYNC : K_CHAN, i = pick(t, k, &e, 1);
	uint8_t buf[64];
	ssize_t n;

	if (i < 0)
		return;
	if (chance(&t->r, 10)) {
		kill_entry(i, &e);
		tlog(t, "close %s fd %d -> %d", kind_name[k], e.fd, close(e.fd) ? -errno : 0);
		return;
	}
	if (t->child && chance(&t->r, 50)) {
		/* A child may wait (it is killed); the file's flags are its parent's too. */
		struct pollfd p = { .fd = e.fd, .events = POLLIN };

		poll(&p, 1, -1);
	}
	n = read(e.fd, buf, chance(&t->r, 90) ? 16 : rnd(&t->r, 64));
	tlog(t, "read %s fd %d -> %zd", kind_name[k], e.fd, n < 0 ? -errno : n);
}

/* ---- ucma ---- */

static int ucma_write(struct th *t, int fd, uint32_t cmd, void *req, size_t reqlen, size_t out)
{
	uint8_t buf[1024];
	struct rdma_ucm_cmd_hdr *h = (void *)buf;
	size_t len = sizeof(*h) + reqlen;
	ssize_t n;
	int p = rnd(&t->r, 100);

	memcpy(buf + sizeof(*h), req, reqlen);
	h->cmd = cmd;
	h->in = (uint16_t)reqlen;
	h->out = (uint16_t)out;
	if (p < 2)
		h->in = (uint16_t)rnd(&t->r, reqlen + 16);
	else if (p < 4)
		h->out = (uint16_t)rnd(&t->r, out + 1);
	else if (p < 5)
		len = rnd(&t->r, len + 1);
	else if (p < 6)
		h->cmd = rnd(&t->r, 32);
	n = write(fd, buf, len);
	return n < 0 ? -errno : (int)n;
}

static void op_ucma_open(struct th *t)
{
	/*
	 * A thread's files never block (a mutated command may become GET_EVENT);
	 * a child's may, it is killed.
	 */
	int fd;

	if (enough_files(t, K_UCMA))
		return;
	fd = open("/dev/infiniband/rdma_cm", O_RDWR | O_CLOEXEC | (t->child && chance(&t->r, 50) ? 0 : O_NONBLOCK));

	tlog(t, "open rdma_cm -> %d", fd < 0 ? -errno : fd);
	if (fd >= 0)
		add(t, K_UCMA, fd, 0, 0, 0, 0, 0, 0);
}

static void op_ucma_create(struct th *t)
{
	struct res f;
	struct rdma_ucm_create_id c = { 0 };
	int ret;
	static const uint16_t ps[] = { RDMA_PS_TCP, RDMA_PS_UDP, RDMA_PS_IPOIB, RDMA_PS_IB };

	if (pick_fd(t, K_UCMA, &f) < 0)
		return;
	c.uid = next64(&t->r);
	c.response = resp_ptr(t, 4);
	c.ps = chance(&t->r, 95) ? ps[rnd(&t->r, chance(&t->r, 80) ? 1 : 4)] : (uint16_t)next64(&t->r);
	c.qp_type = (uint8_t)(c.ps == RDMA_PS_UDP ? IB_UVERBS_QPT_UD : IB_UVERBS_QPT_RC);
	ret = ucma_write(t, f.fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), 4);
	tlog(t, "CREATE_ID fd %d ps %#x -> %d", f.fd, c.ps, ret);
	if (ret > 0 && resp_ok(t, c.response, 4))
		add(t, K_CMID, f.fd, f.gen, *(uint32_t *)resp_of(c.response), 0, 0, 0, 0);
}

/* An address: mostly one of the fabric's IPoIB addresses on one of a few ports. */
static void rnd_addr(struct th *t, struct sockaddr_storage *ss, uint16_t *size, int any_ok)
{
	int p = rnd(&t->r, 100);
	uint16_t port = htons((uint16_t)(chance(&t->r, 90) ? 7470 + rnd(&t->r, 2) : next64(&t->r)));

	memset(ss, 0, sizeof(*ss));
	if (p < 80 && opt_naddrs) {
		struct sockaddr_in *s = (void *)ss;

		s->sin_family = AF_INET;
		s->sin_port = port;
		s->sin_addr = opt_addrs[rnd(&t->r, opt_naddrs)];
		*size = sizeof(*s);
	} else if (p < 88 && any_ok) {
		struct sockaddr_in *s = (void *)ss;

		s->sin_family = AF_INET;
		s->sin_port = port;
		s->sin_addr.s_addr = chance(&t->r, 50) ? htonl(INADDR_ANY) : htonl(INADDR_LOOPBACK);
		*size = sizeof(*s);
	} else if (p < 94) {
		struct sockaddr_in6 *s = (void *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = port;
		if (opt_naddrs && chance(&t->r, 50)) {
			s->sin6_addr.s6_addr[10] = s->sin6_addr.s6_addr[11] = 0xff;
			memcpy(&s->sin6_addr.s6_addr[12], &opt_addrs[rnd(&t->r, opt_naddrs)], 4);
		} else if (chance(&t->r, 50)) {
			s->sin6_addr.s6_addr[15] = 1;
		}
		*size = sizeof(*s);
	} else if (p < 97) {
		ss->ss_family = 27; /* AF_IB: refused */
		rnd_bytes(&t->r, (uint8_t *)ss + 2, 46);
		*size = 48;
	} else {
		rnd_bytes(&t->r, ss, sizeof(*ss));
		*size = (uint16_t)rnd(&t->r, sizeof(*ss) + 8);
	}
}

static int cmid(struct th *t, struct res *e)
{
	return pick(t, K_CMID, e, 1);
}

static void op_ucma_addr(struct th *t)
{
	struct res e;
	int ret, i;
	uint16_t sz;

	if ((i = cmid(t, &e)) < 0)
		return;
	switch (rnd(&t->r, 4)) {
	case 0: {
		struct rdma_ucm_bind c = { 0 };

		if ((i = pick_st(t, K_CMID, CM_NEW, &e)) < 0)
			return;
		c.id = e.h;
		rnd_addr(t, (struct sockaddr_storage *)&c.addr, &sz, 1);
		c.addr_size = sz;
		ret = ucma_write(t, e.fd, RDMA_USER_CM_CMD_BIND, &c, sizeof(c), 0);
		tlog(t, "BIND fd %d id %u -> %d", e.fd, c.id, ret);
		if (ret > 0)
			set_st(K_CMID, e.fd, e.h, CM_BOUND);
		break;
	}
	case 1: {
		struct rdma_ucm_bind_ip c = { 0 };
		struct sockaddr_storage ss;

		c.id = e.h;
		rnd_addr(t, &ss, &sz, 1);
		memcpy(&c.addr, &ss, sizeof(c.addr));
		ret = ucma_write(t, e.fd, RDMA_USER_CM_CMD_BIND_IP, &c, sizeof(c), 0);
		tlog(t, "BIND_IP fd %d id %u -> %d", e.fd, c.id, ret);
		break;
	}
	case 2: {
		struct rdma_ucm_resolve_addr c = { 0 };

		c.id = e.h;
		c.timeout_ms = chance(&t->r, 90) ? 100 + rnd(&t->r, 2000) : (uint32_t)next64(&t->r);
		if (chance(&t->r, 40)) {
			rnd_addr(t, (struct sockaddr_storage *)&c.src_addr, &sz, 1);
			c.src_size = sz;
		}
		rnd_addr(t, (struct sockaddr_storage *)&c.dst_addr, &sz, 0);
		c.dst_size = sz;
		ret = ucma_write(t, e.fd, RDMA_USER_CM_CMD_RESOLVE_ADDR, &c, sizeof(c), 0);
		tlog(t, "RESOLVE_ADDR fd %d id %u -> %d", e.fd, c.id, ret);
		break;
	}
	default: {
		struct rdma_ucm_resolve_route c = { .timeout_ms = 100 + rnd(&t->r, 2000) };

		if (pick_st(t, K_CMID, CM_ADDR, &e) < 0)
			return;
		c.id = e.h;

		ret = ucma_write(t, e.fd, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &c, sizeof(c), 0);
		tlog(t, "RESOLVE_ROUTE fd %d id %u -> %d", e.fd, c.id, ret);
	}
	}
}

static void conn_param(struct th *t, struct rdma_ucm_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	p->qp_num = chance(&t->r, 80) ? shm->qpn[rnd(&t->r, 64)] : (uint32_t)next64(&t->r);
	/* RC through the RDMA CM: 56 bytes less its 36-byte header (IBA 12.7.1, A.11). */
	p->private_data_len = (uint8_t)(chance(&t->r, 90) ? rnd(&t->r, 21) : rnd(&t->r, 256));
	rnd_bytes(&t->r, p->private_data, sizeof(p->private_data));
	p->responder_resources = (uint8_t)rnd(&t->r, 8);
	p->initiator_depth = (uint8_t)rnd(&t->r, 8);
	p->retry_count = (uint8_t)rnd(&t->r, 8);
	p->rnr_retry_count = (uint8_t)rnd(&t->r, 8);
	p->valid = chance(&t->r, 95);
	p->srq = chance(&t->r, 10);
}

static void op_ucma_conn(struct th *t)
{
	struct res e;
	int ret;

	if (cmid(t, &e) < 0)
		return;
	switch (rnd(&t->r, 6)) {
	case 0: {
		struct rdma_ucm_listen c = { .backlog = chance(&t->r, 90) ? 1 + rnd(&t->r, 8) : (uint32_t)next64(&t->r) };

		if (pick_st(t, K_CMID, CM_BOUND, &e) < 0)
			return;
		c.id = e.h;
		ret = ucma_write(t, e.fd, RDMA_USER_CM_CMD_LISTEN, &c, sizeof(c), 0);
		tlog(t, "LISTEN fd %d id %u -> %d", e.fd, c.id, ret);
		if (ret > 0)
			set_st(K_CMID, e.fd, e.h, CM_LISTEN);
		break;
	}
	case 1: {
		struct rdma_ucm_connect c = { 0 };

		if (pick_st(t, K_CMID, CM_ROUTE, &e) < 0)
			return;
		conn_param(t, &c.conn_param);
		c.id = e.h;
		ret = ucma_write(t, e.fd, RDMA_USER_CM_CMD_CONNECT, &c, sizeof(c), 0);
		tlog(t, "CONNECT fd %d id %u -> %d", e.fd, c.id, ret);
		if (ret > 0)
			set_st(K_CMID, e.fd, e.h, CM_CONN);
		break;
	}
	case 2: {
		struct rdma_ucm_accept c = { 0 };

		if (pick_st(t, K_CMID, CM_REQ, &e) < 0)
			return;
		conn_param(t, &c.conn_param);
		c.uid = next64(&t->r);
		c.id = e.h;
		ret = ucma_write(t, e.fd, RDMA_USER_CM_CMD_ACCEPT, &c, sizeof(c), 0);
		tlog(t, "ACCEPT fd %d id %u -> %d", e.fd, c.id, ret);
		break;
	}
	case 3: {
		struct rdma_ucm_reject c = { 0 };

		c.id = e.h;
		c.reason = (uint8_t)(chance(&t->r, 90) ? rnd(&t->r, 2) : rnd(&t->r, 256));
		c.private_data_len = (uint8_t)rnd(&t->r, 70);
		rnd_bytes(&t->r, c.private_data, sizeof(c.private_data));
		ret = ucma_write(t, e.fd, RDMA_USER_CM_CMD_REJECT, &c, sizeof(c), 0);
		tlog(t, "REJECT fd %d id %u -> %d", e.fd, c.id, ret);
		break;
	}
	case 4: {
		struct rdma_ucm_disconnect c = { .id = e.h };

		ret = ucma_write(t, e.fd, RDMA_USER_CM_CMD_DISCONNECT, &c, sizeof(c), 0);
		tlog(t, "DISCONNECT fd %d id %u -> %d", e.fd, c.id, ret);
		break;
	}
	default: {
		struct rdma_ucm_notify c = { .id = e.h, .event = rnd(&t->r, 20) };

		ret = ucma_write(t, e.fd, RDMA_USER_CM_CMD_NOTIFY, &c, sizeof(c), 0);
		tlog(t, "NOTIFY fd %d id %u -> %d", e.fd, c.id, ret);
	}
	}
}

static void op_ucma_query(struct th *t)
{
	struct res e;
	int ret;

	if (cmid(t, &e) < 0)
		return;
	switch (rnd(&t->r, 4)) {
	case 0: {
		struct rdma_ucm_query c = { .id = e.h, .option = chance(&t->r, 95) ? rnd(&t->r, 3) : rnd(&t->r, 16) };
		size_t rl = chance(&t->r, 90) ? 512 : rnd(&t->r, 600);

		c.response = resp_ptr(t, rl);
		ret = ucma_write(t, e.fd, RDMA_USER_CM_CMD_QUERY, &c, sizeof(c), rl);
		tlog(t, "QUERY fd %d id %u opt %u -> %d", e.fd, c.id, c.option, ret);
		break;
	}
	case 1: {
		struct rdma_ucm_query c = { .id = e.h };
		size_t rl = sizeof(struct rdma_ucm_query_route_resp);

		c.response = resp_ptr(t, rl);
		ret = ucma_write(t, e.fd, RDMA_USER_CM_CMD_QUERY_ROUTE, &c, sizeof(c), rl);
		tlog(t, "QUERY_ROUTE fd %d id %u -> %d", e.fd, c.id, ret);
		break;
	}
	case 2: {
		struct rdma_ucm_init_qp_attr c = { .id = e.h, .qp_state = rnd(&t->r, 8) };
		size_t rl = sizeof(struct ib_uverbs_qp_attr);

		c.response = resp_ptr(t, rl);
		ret = ucma_write(t, e.fd, RDMA_USER_CM_CMD_INIT_QP_ATTR, &c, sizeof(c), rl);
		tlog(t, "INIT_QP_ATTR fd %d id %u state %u -> %d", e.fd, c.id, c.qp_state, ret);
		break;
	}
	default: {
		struct rdma_ucm_set_option c = { .id = e.h };
		uint8_t *val = t->edge - 256;

		rnd_bytes(&t->r, val, 128);
		c.optval = chance(&t->r, 95) ? (uint64_t)(uintptr_t)val : resp_ptr(t, 8);
		c.level = chance(&t->r, 80) ? 0 : rnd(&t->r, 3);
		c.optname = rnd(&t->r, 5);
		c.optlen = chance(&t->r, 70) ? (c.optname == 0 ? 1 : 4) : rnd(&t->r, 200);
		ret = ucma_write(t, e.fd, RDMA_USER_CM_CMD_SET_OPTION, &c, sizeof(c), 0);
		tlog(t, "SET_OPTION fd %d id %u %u/%u len %u -> %d", e.fd, c.id, c.level, c.optname, c.optlen, ret);
	}
	}
}

static void op_ucma_mcast(struct th *t)
{
	struct res e;
	int ret, i;
	uint64_t rp;

	if (chance(&t->r, 35) && (i = pick(t, K_MCAST, &e, 1)) >= 0) {
		struct rdma_ucm_destroy_id c = { .id = e.h };

		c.response = resp_ptr(t, 4);
		ret = ucma_write(t, e.fd, RDMA_USER_CM_CMD_LEAVE_MCAST, &c, sizeof(c), 4);
		tlog(t, "LEAVE_MCAST fd %d mc %u -> %d", e.fd, c.id, ret);
		if (ret > 0 || ret == -ENOENT)
			kill_entry(i, &e);
		return;
	}
	if (cmid(t, &e) < 0)
		return;
	rp = resp_ptr(t, 4);
	if (chance(&t->r, 50)) {
		struct rdma_ucm_join_mcast c = { 0 };
		struct sockaddr_in *s = (void *)&c.addr;

		c.response = rp;
		c.uid = next64(&t->r);
		c.id = e.h;
		s->sin_family = AF_INET;
		s->sin_addr.s_addr = htonl(0xe0000100u + rnd(&t->r, 4));
		c.addr_size = chance(&t->r, 95) ? sizeof(*s) : (uint16_t)rnd(&t->r, 200);
		c.join_flags = (uint16_t)(chance(&t->r, 90) ? rnd(&t->r, 2) : rnd(&t->r, 8));
		ret = ucma_write(t, e.fd, RDMA_USER_CM_CMD_JOIN_MCAST, &c, sizeof(c), 4);
		tlog(t, "JOIN_MCAST fd %d id %u -> %d", e.fd, c.id, ret);
	} else {
		struct rdma_ucm_join_ip_mcast c = { 0 };

		c.response = rp;
		c.uid = next64(&t->r);
		c.id = e.h;
		c.addr.sin6_family = AF_INET6;
		c.addr.sin6_addr.s6_addr[0] = 0xff;
		c.addr.sin6_addr.s6_addr[1] = 0x0e;
		c.addr.sin6_addr.s6_addr[15] = (uint8_t)rnd(&t->r, 4);
		ret = ucma_write(t, e.fd, RDMA_USER_CM_CMD_JOIN_IP_MCAST, &c, sizeof(c), 4);
		tlog(t, "JOIN_IP_MCAST fd %d id %u -> %d", e.fd, c.id, ret);
	}
	/* Both answer {u32 id}: the multicast group's, for LEAVE_MCAST. */
	if (ret > 0 && resp_ok(t, rp, 4))
		add(t, K_MCAST, e.fd, e.fgen, *(uint32_t *)resp_of(rp), 0, 0, 0, 0);
}

static void op_ucma_get_event(struct th *t)
{
	struct res f;
	struct rdma_ucm_get_event c;
	size_t rl = sizeof(struct rdma_ucm_event_resp);
	int ret, fl;

	if (pick_fd(t, K_UCMA, &f) < 0)
		return;
	fl = fcntl(f.fd, F_GETFL);
	/* Only a child may block (it is killed); threads poll first or skip blocking files. */
	if (!t->child && fl >= 0 && !(fl & O_NONBLOCK)) {
		struct pollfd p = { .fd = f.fd, .events = POLLIN };

		if (poll(&p, 1, 0) != 1)
			return;
		/* Another thread may take it first: make sure this read cannot block. */
		fcntl(f.fd, F_SETFL, fl | O_NONBLOCK);
	}
	c.response = resp_ptr(t, rl);
	ret = ucma_write(t, f.fd, RDMA_USER_CM_CMD_GET_EVENT, &c, sizeof(c), chance(&t->r, 95) ? rl : 100);
	if (ret > 0 && resp_ok(t, c.response, rl)) {
		struct rdma_ucm_event_resp *r = resp_of(c.response);

		tlog(t, "GET_EVENT fd %d -> id %u event %u status %d", f.fd, r->id, r->event, (int)r->status);
		if (r->event == CM_EVENT_CONNECT_REQUEST) {
			add(t, K_CMID, f.fd, f.gen, r->id, 0, 0, 0, 0);
			set_st(K_CMID, f.fd, r->id, CM_REQ);
		} else if (r->event == 0 || r->event == 2) { /* ADDR_RESOLVED, ROUTE_RESOLVED */
			set_st(K_CMID, f.fd, r->id, r->event ? CM_ROUTE : CM_ADDR);
		}
	} else {
		tlog(t, "GET_EVENT fd %d -> %d", f.fd, ret);
	}
}

/* One command as librdmacm would send it (no mutation). */
static int ucma_raw(int fd, uint32_t cmd, void *req, size_t reqlen, size_t out)
{
	uint8_t buf[512];
	struct rdma_ucm_cmd_hdr *h = (void *)buf;
	ssize_t n;

	memcpy(buf + sizeof(*h), req, reqlen);
	h->cmd = cmd;
	h->in = (uint16_t)reqlen;
	h->out = (uint16_t)out;
	n = write(fd, buf, sizeof(*h) + reqlen);
	return n < 0 ? -errno : (int)n;
}

/* Wait up to @ms for event @want of Id @id on a file nobody else reads. */
static int ucma_wait(struct th *t, int fd, uint32_t id, uint32_t want, int ms)
{
	struct rdma_ucm_event_resp *r = (void *)(t->edge - 512);
	struct rdma_ucm_get_event g = { .response = (uint64_t)(uintptr_t)r };
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (poll(&p, 1, ms) == 1) {
		if (ucma_raw(fd, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), sizeof(*r)) < 0)
			return -1;
		if (r->id == id)
			return r->event == want ? 0 : -1;
	}
	return -1;
}

static uint32_t ucma_new_id(struct th *t, int fd)
{
	uint32_t *id = (void *)(t->edge - 64);
	struct rdma_ucm_create_id c = { .uid = next64(&t->r), .response = (uint64_t)(uintptr_t)id,
					.ps = RDMA_PS_TCP, .qp_type = IB_UVERBS_QPT_RC };

	return ucma_raw(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), 4) > 0 ? *id : ~0u;
}

/*
 * A listener and a connection to it, step by step on a private file so
 * that the request really arrives: the listener (on a shared file) is
 * left with a CONNECT_REQUEST queued for the other operations to take,
 * migrate, destroy or close under.
 */
static void op_ucma_pair(struct th *t)
{
	struct res lf;
	struct rdma_ucm_bind b = { 0 };
	struct rdma_ucm_listen l = { .backlog = 8 };
	struct rdma_ucm_resolve_addr ra = { .timeout_ms = 1000 };
	struct rdma_ucm_resolve_route rr = { .timeout_ms = 1000 };
	struct rdma_ucm_connect cn = { 0 };
	struct sockaddr_in *sa = (void *)&b.addr;
	uint16_t port = htons((uint16_t)(7472 + rnd(&t->r, 2)));
	uint32_t lid, cid;
	int cfd, ret;

	if (!opt_naddrs || pick_fd(t, K_UCMA, &lf) < 0)
		return;
	lid = ucma_new_id(t, lf.fd);
	if (lid != ~0u) {
		int s = add(t, K_CMID, lf.fd, lf.gen, lid, 0, 0, 0, 0);

		sa->sin_family = AF_INET;
		sa->sin_port = port;
		sa->sin_addr = opt_addrs[my_addr];
		b.id = lid;
		b.addr_size = sizeof(*sa);
		l.id = lid;
		if (ucma_raw(lf.fd, RDMA_USER_CM_CMD_BIND, &b, sizeof(b), 0) > 0 &&
		    ucma_raw(lf.fd, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), 0) > 0 && s >= 0)
			set_st(K_CMID, lf.fd, lid, CM_LISTEN);
	}
	cfd = open("/dev/infiniband/rdma_cm", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (cfd < 0)
		return;
	cid = ucma_new_id(t, cfd);
	ra.id = cid;
	ra.dst_size = sizeof(*sa);
	memcpy(&ra.dst_addr, sa, sizeof(*sa));
	if (chance(&t->r, 30))
		((struct sockaddr_in *)&ra.dst_addr)->sin_addr = opt_addrs[rnd(&t->r, opt_naddrs)];
	rr.id = cid;
	conn_param(t, &cn.conn_param);
	cn.conn_param.valid = 1;
	cn.conn_param.srq = 0;
	cn.conn_param.responder_resources = cn.conn_param.initiator_depth = 1;
	cn.conn_param.retry_count = cn.conn_param.rnr_retry_count = 7;
	cn.conn_param.private_data_len = (uint8_t)rnd(&t->r, 21);
	cn.id = cid;
	ret = cid == ~0u ? -1
	      : ucma_raw(cfd, RDMA_USER_CM_CMD_RESOLVE_ADDR, &ra, sizeof(ra), 0) < 0 ? -2
	      : ucma_wait(t, cfd, cid, 0, 1500) ? -3
	      : ucma_raw(cfd, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof(rr), 0) < 0 ? -4
	      : ucma_wait(t, cfd, cid, 2, 1500) ? -5
	      : ucma_raw(cfd, RDMA_USER_CM_CMD_CONNECT, &cn, sizeof(cn), 0) < 0 ? -6 : 0;
	tlog(t, "pair: listener %u on fd %d, connection %u on fd %d: %d", lid, lf.fd, cid, cfd, ret);
	if (add(t, K_UCMA, cfd, 0, 0, 0, 0, 0, 0) < 0) {
		close(cfd);
		return;
	}
	add(t, K_CMID, cfd, fd_gen(cfd), cid, 0, 0, 0, 0);
	set_st(K_CMID, cfd, cid, ret ? CM_NEW : CM_CONN);
}

static void op_ucma_destroy(struct th *t)
{
	struct res e;
	int ret, i;
	struct rdma_ucm_destroy_id c = { 0 };

	if ((i = cmid(t, &e)) < 0)
		return;
	c.id = e.h;
	c.response = resp_ptr(t, 4);
	ret = ucma_write(t, e.fd, RDMA_USER_CM_CMD_DESTROY_ID, &c, sizeof(c), 4);
	tlog(t, "DESTROY_ID fd %d id %u -> %d", e.fd, c.id, ret);
	if (ret > 0 || ret == -ENOENT)
		kill_entry(i, &e);
}

static void op_ucma_migrate(struct th *t)
{
	struct res e, to;
	int ret, i;
	struct rdma_ucm_migrate_id c = { 0 };

	if ((i = chance(&t->r, 50) ? pick_st(t, K_CMID, CM_LISTEN, &e) : cmid(t, &e)) < 0 ||
	    pick_fd(t, K_UCMA, &to) < 0)
		return;
	c.id = e.h;
	c.fd = chance(&t->r, 95) ? (uint32_t)e.fd : rnd(&t->r, 64);
	c.response = resp_ptr(t, 4);
	ret = ucma_write(t, to.fd, RDMA_USER_CM_CMD_MIGRATE_ID, &c, sizeof(c), 4);
	tlog(t, "MIGRATE_ID id %u fd %d -> fd %d: %d", c.id, e.fd, to.fd, ret);
	if (ret > 0) {
		e.fd = to.fd;
		e.fgen = fd_gen(to.fd);
		update_entry(i, &e);
	}
}

/* ---- umad and issm ---- */

static void op_umad_open(struct th *t)
{
	char path[64];
	int issm = chance(&t->r, 15), n = rnd(&t->r, tab->dev_count + 1), fd;

	if (!issm && enough_files(t, K_UMAD))
		return;
	snprintf(path, sizeof(path), "/dev/infiniband/%s%d", issm ? "issm" : "umad", n);
	/* A thread never blocks: issm's open waits for the port's SM bit otherwise. */
	fd = open(path, O_RDWR | O_CLOEXEC | (t->child && chance(&t->r, 50) ? 0 : O_NONBLOCK));
	tlog(t, "open %s -> %d", path, fd < 0 ? -errno : fd);
	if (fd >= 0)
		add(t, issm ? K_ISSM : K_UMAD, fd, 0, (uint32_t)n, 0, 0, 0, 0);
}

static void op_umad_register(struct th *t)
{
	struct res f;
	int ret, i;
	static const uint8_t classes[] = { 0x01, 0x81, 0x03, 0x04, 0x05, 0x06, 0x07, 0x09, 0x10, 0x0a, 0x30, 0x4f, 0x2f };

	if ((i = pick_fd(t, K_UMAD, &f)) < 0)
		return;
	if (chance(&t->r, 5)) {
		ret = ioctl(f.fd, IB_USER_MAD_ENABLE_PKEY);
		tlog(t, "ENABLE_PKEY fd %d -> %d", f.fd, ret < 0 ? -errno : ret);
		if (ret == 0) {
			pthread_mutex_lock(&tab->lock);
			if (tab->r[i].gen == f.gen)
				tab->r[i].st = 1;
			pthread_mutex_unlock(&tab->lock);
		}
		return;
	}
	if (chance(&t->r, 50)) {
		struct ib_user_mad_reg_req2 c = { 0 };

		c.qpn = chance(&t->r, 95) ? rnd(&t->r, 2) : rnd(&t->r, 8);
		c.mgmt_class = chance(&t->r, 85) ? classes[rnd(&t->r, ARRAY_SIZE(classes))] : (uint8_t)rnd(&t->r, 256);
		c.mgmt_class_version = (uint8_t)(chance(&t->r, 85) ? 1 + rnd(&t->r, 2) : rnd(&t->r, 256));
		c.flags = chance(&t->r, 85) ? rnd(&t->r, 2) : (uint32_t)next64(&t->r);
		c.method_mask[0] = chance(&t->r, 50) ? 0 : next64(&t->r);
		c.method_mask[1] = chance(&t->r, 90) ? 0 : next64(&t->r);
		c.oui = chance(&t->r, 80) ? 0x001405 : (uint32_t)next64(&t->r);
		c.rmpp_version = (uint8_t)(chance(&t->r, 90) ? rnd(&t->r, 2) : rnd(&t->r, 256));
		ret = ioctl(f.fd, IB_USER_MAD_REGISTER_AGENT2, &c);
		tlog(t, "REGISTER_AGENT2 fd %d qpn %u class %#x v%u -> %d id %u", f.fd, c.qpn, c.mgmt_class,
		     c.mgmt_class_version, ret < 0 ? -errno : ret, c.id);
		if (ret == 0)
			add(t, K_AGENT, f.fd, f.gen, c.id, c.qpn, c.mgmt_class, c.rmpp_version, 0);
	} else {
		struct ib_user_mad_reg_req c = { 0 };

		c.qpn = (uint8_t)(chance(&t->r, 95) ? rnd(&t->r, 2) : rnd(&t->r, 8));
		c.mgmt_class = chance(&t->r, 85) ? classes[rnd(&t->r, ARRAY_SIZE(classes))] : (uint8_t)rnd(&t->r, 256);
		c.mgmt_class_version = (uint8_t)(chance(&t->r, 85) ? 1 + rnd(&t->r, 2) : rnd(&t->r, 256));
		if (chance(&t->r, 50))
			rnd_bytes(&t->r, c.method_mask, sizeof(c.method_mask));
		c.oui[2] = 0x05;
		c.oui[1] = 0x14;
		c.rmpp_version = (uint8_t)(chance(&t->r, 90) ? rnd(&t->r, 2) : rnd(&t->r, 256));
		ret = ioctl(f.fd, IB_USER_MAD_REGISTER_AGENT, &c);
		tlog(t, "REGISTER_AGENT fd %d qpn %u class %#x -> %d id %u", f.fd, c.qpn, c.mgmt_class,
		     ret < 0 ? -errno : ret, c.id);
		if (ret == 0)
			add(t, K_AGENT, f.fd, f.gen, c.id, c.qpn, c.mgmt_class, c.rmpp_version, 0);
	}
}

static void op_umad_unregister(struct th *t)
{
	struct res e;
	int i = pick(t, K_AGENT, &e, 1), ret;
	uint32_t id;

	if (i < 0)
		return;
	id = chance(&t->r, 95) ? e.h : handle(t, K_AGENT, e.fd);
	ret = ioctl(e.fd, IB_USER_MAD_UNREGISTER_AGENT, &id);
	tlog(t, "UNREGISTER_AGENT fd %d id %u -> %d", e.fd, id, ret < 0 ? -errno : ret);
	if (ret == 0 || errno == EINVAL)
		kill_entry(i, &e);
}

static void op_umad_send(struct th *t)
{
	struct res a;
	uint8_t buf[64 + 2048];
	struct ib_user_mad_hdr *h = (void *)buf;
	uint8_t *mad;
	size_t len, madlen = 256, hlen;
	int ret, fd;

	if (pick(t, K_AGENT, &a, 1) < 0)
		return;
	fd = a.fd;
	/* The header is 64 bytes once the file did ENABLE_PKEY, else 56. */
	hlen = 56;
	pthread_mutex_lock(&tab->lock);
	for (ret = 0; ret < NRES; ret++)
		if (tab->r[ret].live && tab->r[ret].kind == K_UMAD && tab->r[ret].fd == fd && tab->r[ret].st)
			hlen = 64;
	pthread_mutex_unlock(&tab->lock);
	if (chance(&t->r, 5))
		hlen = 120 - hlen;
	mad = buf + hlen;
	memset(buf, 0, sizeof(buf));
	h->id = chance(&t->r, 95) ? a.h : handle(t, K_AGENT, fd);
	h->timeout_ms = chance(&t->r, 50) ? 0 : rnd(&t->r, 200);
	h->retries = rnd(&t->r, 3);
	h->qpn = htonl(a.a == 0 ? 0 : 1);
	h->qkey = htonl(0x80010000);
	h->lid = htons(opt_nlids ? opt_lids[rnd(&t->r, opt_nlids)] : 1);
	if (chance(&t->r, 5))
		h->lid = (uint16_t)next64(&t->r);
	h->sl = (uint8_t)rnd(&t->r, chance(&t->r, 90) ? 1 : 16);
	h->grh_present = chance(&t->r, 5);
	h->hop_limit = 1;
	h->pkey_index = chance(&t->r, 95) ? 0 : (uint16_t)rnd(&t->r, 130);
	/* The MAD: base version 1, the agent's class, a method. */
	mad[0] = 1;
	mad[1] = (uint8_t)(chance(&t->r, 90) ? a.b : rnd(&t->r, 256));
	mad[2] = (uint8_t)(mad[1] == 0x03 ? 2 : 1);
	if (mad[1] == 0x01 || mad[1] == 0x81)
		mad[3] = 0x01; /* SubnGet only: a fuzzer must not take the fabric down */
	else
		mad[3] = (uint8_t)(chance(&t->r, 80) ? 1 + rnd(&t->r, 3) : rnd(&t->r, 256));
	rnd_bytes(&t->r, mad + 8, 8); /* TID */
	mad[16] = 0;
	mad[17] = (uint8_t)(chance(&t->r, 80) ? rnd(&t->r, 0x40) : rnd(&t->r, 256));
	mad[16] = (uint8_t)(chance(&t->r, 90) ? 0 : rnd(&t->r, 256));
	if (mad[1] == 0x81) {
		mad[4] = mad[5] = 0;
		mad[6] = 0;	/* hop pointer */
		mad[7] = (uint8_t)(chance(&t->r, 80) ? rnd(&t->r, 3) : rnd(&t->r, 256)); /* hop count */
		mad[64 + 1] = 1;
		mad[64 + 2] = (uint8_t)rnd(&t->r, 4);
		mad[60] = mad[61] = 0xff; /* DrSLID permissive */
		mad[62] = mad[63] = 0xff;
		h->lid = 0xffff;
	} else if (mad[1] != 0x01) {
		rnd_bytes(&t->r, mad + 24, 232);
		if (a.c && chance(&t->r, 50)) {
			/* RMPP header: version 1, DATA, Active, segment 1 */
			mad[24] = 1;
			mad[25] = 1;
			mad[26] = (uint8_t)(chance(&t->r, 90) ? 0x04 | 0x02 | 0x01 : rnd(&t->r, 256));
			mad[27] = 0;
			madlen = chance(&t->r, 80) ? 256 + 220 * rnd(&t->r, 8) : rnd(&t->r, 2048);
			rnd_bytes(&t->r, mad + 256, madlen > 256 ? madlen - 256 : 0);
		}
	}
	len = hlen + madlen;
	if (chance(&t->r, 5))
		len = rnd(&t->r, (uint32_t)len + 1);
	if (len > sizeof(buf))
		len = sizeof(buf);
	ret = (int)write(fd, buf, len);
	tlog(t, "umad write fd %d agent %u class %#x method %#x len %zu -> %d", fd, h->id, mad[1], mad[3], len,
	     ret < 0 ? -errno : ret);
}

static void op_umad_recv(struct th *t)
{
	struct res f;
	int k = chance(&t->r, 85) ? K_UMAD : K_ISSM, i = pick_fd(t, k, &f);
	uint8_t *buf;
	size_t len;
	ssize_t n;

	if (i < 0)
		return;
	if (chance(&t->r, 15)) {
		kill_entry(i, &f);
		tlog(t, "close %s fd %d -> %d", kind_name[k], f.fd, close(f.fd) ? -errno : 0);
		return;
	}
	len = chance(&t->r, 80) ? 64 + 256 : rnd(&t->r, 4096);
	buf = t->edge - 4096 + (4096 - len) / 2;
	if (!t->child || chance(&t->r, 50)) {
		struct pollfd p = { .fd = f.fd, .events = POLLIN };

		if (poll(&p, 1, 0) != 1) {
			tlog(t, "poll %s fd %d: nothing", kind_name[k], f.fd);
			return;
		}
	}
	n = read(f.fd, buf, len);
	tlog(t, "read %s fd %d len %zu -> %zd", kind_name[k], f.fd, len, n < 0 ? -errno : n);
}

/* ---- RDMA netlink ---- */

static void op_nl(struct th *t)
{
	struct res f;
	int i = pick(t, K_NL, &f, 0), ret, m;
	uint8_t buf[512] __attribute__((aligned(8)));
	struct nlmsghdr *nh = (void *)buf;
	static const uint16_t cmds[] = { RDMA_NLDEV_CMD_GET, RDMA_NLDEV_CMD_PORT_GET, RDMA_NLDEV_CMD_RES_GET,
					 RDMA_NLDEV_CMD_RES_QP_GET, RDMA_NLDEV_CMD_RES_CQ_GET,
					 RDMA_NLDEV_CMD_RES_MR_GET, RDMA_NLDEV_CMD_RES_PD_GET,
					 RDMA_NLDEV_CMD_RES_CM_ID_GET, RDMA_NLDEV_CMD_GET_CHARDEV,
					 RDMA_NLDEV_CMD_SYS_GET, RDMA_NLDEV_CMD_RES_CTX_GET,
					 RDMA_NLDEV_CMD_RES_SRQ_GET, RDMA_NLDEV_CMD_STAT_GET };
	uint16_t cmd;
	size_t len;
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };

	if (i < 0 || chance(&t->r, 4)) {
		int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_RDMA);

		tlog(t, "socket NETLINK_RDMA -> %d", fd < 0 ? -errno : fd);
		if (fd >= 0)
			add(t, K_NL, fd, 0, 0, 0, 0, 0, 0);
		return;
	}
	if (chance(&t->r, 5)) {
		kill_entry(i, &f);
		tlog(t, "close nl fd %d -> %d", f.fd, close(f.fd) ? -errno : 0);
		return;
	}
	memset(buf, 0, sizeof(buf));
	cmd = chance(&t->r, 95) ? cmds[rnd(&t->r, ARRAY_SIZE(cmds))] : (uint16_t)rnd(&t->r, 64);
	nh->nlmsg_type = (uint16_t)RDMA_NL_GET_TYPE(chance(&t->r, 97) ? RDMA_NL_NLDEV : rnd(&t->r, 16), cmd);
	nh->nlmsg_flags = NLM_F_REQUEST | (chance(&t->r, 50) ? NLM_F_DUMP : 0) | (chance(&t->r, 30) ? NLM_F_ACK : 0);
	nh->nlmsg_seq = (uint32_t)t->op;
	len = NLMSG_HDRLEN;
	for (m = rnd(&t->r, 4); m > 0; m--) {
		struct nlattr *a = (void *)(buf + len);
		static const uint16_t attrs[] = { RDMA_NLDEV_ATTR_DEV_INDEX, RDMA_NLDEV_ATTR_PORT_INDEX,
						  RDMA_NLDEV_ATTR_RES_LQPN, RDMA_NLDEV_ATTR_RES_CQN,
						  RDMA_NLDEV_ATTR_RES_MRN, RDMA_NLDEV_ATTR_RES_PDN,
						  RDMA_NLDEV_ATTR_DRIVER_DETAILS, RDMA_NLDEV_ATTR_CHARDEV_TYPE };
		uint16_t type = chance(&t->r, 95) ? attrs[rnd(&t->r, ARRAY_SIZE(attrs))] : (uint16_t)rnd(&t->r, 200);
		uint32_t v = chance(&t->r, 80) ? rnd(&t->r, 4) : (uint32_t)next64(&t->r);

		if (len + 16 > sizeof(buf))
			break;
		a->nla_type = type;
		if (type == RDMA_NLDEV_ATTR_CHARDEV_TYPE) {
			static const char *const names[] = { "uverbs", "umad", "rdma_cm", "" };
			const char *s = names[rnd(&t->r, 4)];

			a->nla_len = (uint16_t)(NLA_HDRLEN + strlen(s) + 1);
			memcpy(a + 1, s, strlen(s) + 1);
		} else if (type == RDMA_NLDEV_ATTR_DRIVER_DETAILS) {
			a->nla_len = NLA_HDRLEN + 1;
			*(uint8_t *)(a + 1) = (uint8_t)v;
		} else {
			a->nla_len = NLA_HDRLEN + 4;
			memcpy(a + 1, &v, 4);
		}
		if (chance(&t->r, 5))
			a->nla_len = (uint16_t)rnd(&t->r, 24);
		len += NLA_ALIGN(a->nla_len < NLA_HDRLEN ? NLA_HDRLEN : a->nla_len);
	}
	nh->nlmsg_len = (uint32_t)len;
	if (chance(&t->r, 3))
		nh->nlmsg_len = rnd(&t->r, (uint32_t)len + 8);
	ret = (int)sendto(f.fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to));
	tlog(t, "netlink fd %d cmd %u flags %#x len %zu -> %d", f.fd, cmd, nh->nlmsg_flags, len, ret < 0 ? -errno : ret);
	/* Read some of the answer, or leave it for close. */
	for (m = 0; m < 8 && chance(&t->r, 85); m++) {
		static uint8_t sink[16384];
		ssize_t n = recv(f.fd, t->child ? sink : t->edge - 4096, t->child ? sizeof(sink) : 4096, MSG_DONTWAIT);

		if (n <= 0)
			break;
	}
}

/* ---- files, processes ---- */

static void op_close(struct th *t)
{
	static const int kinds[] = { K_UVERBS, K_UCMA, K_UMAD, K_ISSM };
	int k = kinds[rnd(&t->r, ARRAY_SIZE(kinds))], i;
	struct res e;

	if ((i = pick(t, k, &e, 0)) < 0)
		return;
	/* Keep a few files: closing them all leaves nothing to race. */
	kill_entry(i, &e);
	tlog(t, "close %s fd %d -> %d", kind_name[k], e.fd, close(e.fd) ? -errno : 0);
}

static void run_ops(struct th *t, long n);

/* fork a child that runs operations of its own on the inherited files; kill -9 it at some point. */
static void op_fork(struct th *t)
{
	struct rng cr = { next64(&t->r) };
	uint32_t delay_us = chance(&t->r, 20) ? 0 : rnd(&t->r, 30000);
	long n = 5 + rnd(&t->r, 60);
	pid_t pid;
	int st;

	pthread_mutex_lock(&tab->lock);
	pid = fork();
	if (pid == 0) {
		int i;

		/*
		 * A child's commands on inherited uverbs and rdma_cm files fail
		 * (EACCES: another task's credentials, as in-tree): it mostly
		 * opens its own, so that it is killed in the middle of real work.
		 */
		for (i = 0; i < NRES; i++)
			if (tab->r[i].live && tab->r[i].kind <= K_NL && tab->r[i].kind != K_UMAD &&
			    chance(&cr, 85))
				tab->r[i].live = 0;
		pthread_mutex_unlock(&tab->lock);
		t->r = cr;
		t->child = 1;
		alarm(30);
		run_ops(t, n);
		_exit(0);
	}
	pthread_mutex_unlock(&tab->lock);
	if (pid < 0) {
		tlog(t, "fork -> %d", -errno);
		return;
	}
	if (delay_us)
		usleep(delay_us);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	tlog(t, "fork: child %d killed after %u us (%s)", pid, delay_us,
	     WIFSIGNALED(st) ? "mid-run" : "had finished");
}

struct op {
	const char *name;
	uint32_t group;
	int weight;
	void (*fn)(struct th *);
};

static const struct op ops[] = {
	{ "uv_open", G_UVERBS, 3, op_uv_open },
	{ "uv_query", G_UVERBS, 3, op_uv_query },
	{ "uv_alloc_pd", G_UVERBS, 5, op_uv_alloc_pd },
	{ "uv_reg_mr", G_UVERBS, 5, op_uv_reg_mr },
	{ "uv_alloc_mw", G_UVERBS, 2, op_uv_alloc_mw },
	{ "uv_comp_channel", G_UVERBS, 2, op_uv_comp_channel },
	{ "uv_create_cq", G_UVERBS, 5, op_uv_create_cq },
	{ "uv_create_srq", G_UVERBS, 2, op_uv_create_srq },
	{ "uv_create_qp", G_UVERBS, 6, op_uv_create_qp },
	{ "uv_modify_qp", G_UVERBS, 8, op_uv_modify_qp },
	{ "uv_query_qp", G_UVERBS, 1, op_uv_query_qp },
	{ "uv_create_ah", G_UVERBS, 2, op_uv_create_ah },
	{ "uv_misc", G_UVERBS, 3, op_uv_misc },
	{ "uv_destroy", G_UVERBS, 7, op_uv_destroy },
	{ "uv_events", G_UVERBS, 2, op_uv_events },
	{ "mmap", G_RING, 4, op_mmap },
	{ "munmap", G_RING, 1, op_munmap },
	{ "ring", G_RING, 8, op_ring },
	{ "ucma_open", G_UCMA, 2, op_ucma_open },
	{ "ucma_create", G_UCMA, 6, op_ucma_create },
	{ "ucma_addr", G_UCMA, 8, op_ucma_addr },
	{ "ucma_conn", G_UCMA, 7, op_ucma_conn },
	{ "ucma_query", G_UCMA, 3, op_ucma_query },
	{ "ucma_mcast", G_UCMA, 2, op_ucma_mcast },
	{ "ucma_get_event", G_UCMA, 8, op_ucma_get_event },
	{ "ucma_destroy", G_UCMA, 4, op_ucma_destroy },
	{ "ucma_migrate", G_MIGRATE, 3, op_ucma_migrate },
	{ "ucma_pair", G_UCMA, 2, op_ucma_pair },
	{ "umad_open", G_UMAD, 2, op_umad_open },
	{ "umad_register", G_UMAD, 3, op_umad_register },
	{ "umad_unregister", G_UMAD, 1, op_umad_unregister },
	{ "umad_send", G_UMAD, 5, op_umad_send },
	{ "umad_recv", G_UMAD, 4, op_umad_recv },
	{ "netlink", G_NETLINK, 4, op_nl },
	{ "close", 0, 2, op_close },
	{ "fork_kill", G_FORK, 1, op_fork },
};

static int op_total;

static void run_ops(struct th *t, long n)
{
	long i;

	for (i = 0; i < n; i++) {
		uint32_t w = rnd(&t->r, op_total);
		size_t k;

		t->op = i;
		for (k = 0; k < ARRAY_SIZE(ops); k++) {
			if (ops[k].group & opt_disable)
				continue;
			if (w < (uint32_t)ops[k].weight)
				break;
			w -= ops[k].weight;
		}
		if (k == ARRAY_SIZE(ops))
			continue;
		if (t->child && ops[k].fn == op_fork)
			continue;
		ops[k].fn(t);
	}
}

static void *thread_main(void *arg)
{
	struct th *t = arg;

	run_ops(t, opt_ops);
	return NULL;
}

static int alloc_resp(struct th *t)
{
	uint8_t *p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	mprotect(p + 2 * 4096, 4096, PROT_NONE);
	t->resp = p;
	t->edge = p + 2 * 4096;
	return 0;
}

static int proc_main(int pi)
{
	pthread_t tid[64];
	struct th *th;
	pthread_mutexattr_t ma;
	int i, n = opt_threads;
	struct rng r = rng_derive(opt_seed, (uint64_t)pi, 0xffff);

	if (opt_netns && (pi & 1)) {
		int ns = open(opt_netns, O_RDONLY | O_CLOEXEC);

		if (ns < 0 || setns(ns, CLONE_NEWNET)) {
			fprintf(stderr, "syzfuzz: setns %s: %s\n", opt_netns, strerror(errno));
			return 2;
		}
		close(ns);
	}
	my_addr = opt_netns && (pi & 1) && opt_naddrs > 1 ? 1 : 0;
	if (opt_nobody && pi == opt_procs - 1 && opt_procs > 1 && (setgid(65534) || setuid(65534))) {
		fprintf(stderr, "syzfuzz: setuid nobody: %s\n", strerror(errno));
		return 2;
	}
	tab = mmap(NULL, sizeof(*tab), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mrbuf = mmap(NULL, MRBUF_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	th = calloc((size_t)n, sizeof(*th));
	if (tab == MAP_FAILED || mrbuf == MAP_FAILED || !th)
		return 2;
	memset(tab, 0, sizeof(*tab));
	pthread_mutexattr_init(&ma);
	pthread_mutex_init(&tab->lock, &ma);
	tab->dev_count = 2;
	{
		glob_t g;

		if (glob("/dev/infiniband/uverbs*", 0, NULL, &g) == 0) {
			tab->dev_count = (int)g.gl_pathc;
			globfree(&g);
		}
	}
	for (i = 0; i < (int)MRBUF_SIZE; i += 4096)
		mrbuf[i] = (uint8_t)next64(&r);
	if (n > 64)
		n = 64;
	for (i = 0; i < n; i++) {
		th[i].r = rng_derive(opt_seed, (uint64_t)pi, (uint64_t)i);
		th[i].pi = pi;
		th[i].ti = i;
		if (alloc_resp(&th[i]))
			return 2;
		pthread_create(&tid[i], NULL, thread_main, &th[i]);
	}
	for (i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	{
		char sum[512];
		int k, o = 0;

		for (k = K_UVERBS; k < K_NKINDS; k++)
			o += snprintf(sum + o, sizeof(sum) - (size_t)o, " %s %lu", kind_name[k], made[k]);
		fprintf(stderr, "syzfuzz: seed %llu process %d made:%s\n", (unsigned long long)opt_seed, pi, sum);
	}
	/* Close everything explicitly, or leave it to exit (the release paths with objects alive). */
	if (next64(&r) & 1) {
		for (i = 0; i < NRES; i++)
			if (tab->r[i].live && tab->r[i].kind != K_NONE && tab->r[i].kind <= K_NL)
				close(tab->r[i].fd);
	}
	return 0;
}

/* ---- the remover: an HCA taken away and made again through configfs ---- */

static int cfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static volatile sig_atomic_t workers_done;

static void remover_stop(int sig)
{
	(void)sig;
	workers_done = 1;
}

static void remover(void)
{
	struct rng r = rng_derive(opt_seed, ~0ull, 0);
	char hca[64], dev[64], cable[64], p[256], end[80];
	const char *cfs = "/sys/kernel/config/weft";

	if (sscanf(opt_remove, "%63[^:]:%63[^:]:%63s", hca, dev, cable) != 3) {
		fprintf(stderr, "syzfuzz: --remove HCA_ENTRY:DEVICE:CABLE\n");
		return;
	}
	while (!workers_done) {
		int ret;

		usleep(200000 + rnd(&r, 1500000));
		if (workers_done)
			break;
		snprintf(p, sizeof(p), "%s/hcas/%s", cfs, hca);
		ret = rmdir(p) ? -errno : 0;
		fprintf(stderr, "syzfuzz: remover: rmdir %s -> %d\n", p, ret);
		usleep(100000 + rnd(&r, 1000000));
		if (mkdir(p, 0755) && errno != EEXIST)
			fprintf(stderr, "syzfuzz: remover: mkdir %s: %s\n", p, strerror(errno));
		snprintf(p, sizeof(p), "%s/hcas/%s/enable", cfs, hca);
		ret = cfs_write(p, "1");
		snprintf(p, sizeof(p), "%s/cables/%s/a", cfs, cable);
		snprintf(end, sizeof(end), "%s:1", dev);
		cfs_write(p, end);
		snprintf(p, sizeof(p), "%s/cables/%s/up", cfs, cable);
		fprintf(stderr, "syzfuzz: remover: %s made again (enable %d, cable up %d)\n", hca, ret,
			cfs_write(p, "1"));
	}
}

/* ---- main ---- */

static pid_t workers[64];
static int nworkers;

static void dump_stacks(void)
{
	int i;

	for (i = 0; i < nworkers; i++) {
		char path[64], line[256];
		DIR *d;
		struct dirent *de;

		if (workers[i] <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", workers[i]);
		d = opendir(path);
		if (!d)
			continue;
		while ((de = readdir(d))) {
			char sp[400];
			FILE *f;

			if (de->d_name[0] == '.')
				continue;
			snprintf(sp, sizeof(sp), "%s/%s/stack", path, de->d_name);
			fprintf(stderr, "syzfuzz: worker %d task %s:\n", workers[i], de->d_name);
			f = fopen(sp, "r");
			while (f && fgets(line, sizeof(line), f))
				fprintf(stderr, "  %s", line);
			if (f)
				fclose(f);
		}
		closedir(d);
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: weft-syzfuzz [--seed N] [--ops N] [--threads N] [--procs N] [--timeout S]\n"
		"                    [--addr IPV4]... [--lid N]... [--netns PATH] [--remove HCA:DEV:CABLE]\n"
		"                    [--disable uverbs,ucma,umad,netlink,fork,migrate,ring] [--nobody] [--trace]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int i, fail = 0, left;
	time_t start = time(NULL);
	pid_t rem = 0;
	size_t k;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--trace")) {
			opt_trace = 1;
			continue;
		}
		if (!strcmp(a, "--nobody")) {
			opt_nobody = 1;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--seed"))
			opt_seed = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--ops"))
			opt_ops = strtol(v, NULL, 0);
		else if (!strcmp(a, "--threads"))
			opt_threads = atoi(v);
		else if (!strcmp(a, "--procs"))
			opt_procs = atoi(v);
		else if (!strcmp(a, "--timeout"))
			opt_timeout = atoi(v);
		else if (!strcmp(a, "--netns"))
			opt_netns = v;
		else if (!strcmp(a, "--remove"))
			snprintf(opt_remove, sizeof(opt_remove), "%s", v);
		else if (!strcmp(a, "--addr") && opt_naddrs < 8 && inet_pton(AF_INET, v, &opt_addrs[opt_naddrs]) == 1)
			opt_naddrs++;
		else if (!strcmp(a, "--lid") && opt_nlids < 8)
			opt_lids[opt_nlids++] = (uint16_t)atoi(v);
		else if (!strcmp(a, "--disable")) {
			char *s = strdup(v), *tok, *save;

			for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				for (k = 0; k < ARRAY_SIZE(groups); k++)
					if (!strcmp(tok, groups[k].name))
						opt_disable |= groups[k].bit;
			}
			free(s);
		} else
			usage();
	}
	if (opt_procs < 1 || opt_procs > 64 || opt_threads < 1)
		usage();
	for (k = 0; k < ARRAY_SIZE(ops); k++)
		if (!(ops[k].group & opt_disable))
			op_total += ops[k].weight;
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stderr, NULL, _IOLBF, 0);
	fprintf(stderr, "syzfuzz: seed %llu: %d processes x %d threads x %ld operations%s%s\n",
		(unsigned long long)opt_seed, opt_procs, opt_threads, opt_ops, opt_remove[0] ? ", remover on " : "",
		opt_remove);
	for (i = 0; i < opt_procs; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			int null = open("/dev/null", O_RDONLY);

			if (null >= 0 && null != 0) {
				dup2(null, 0);
				close(null);
			}
			_exit(proc_main(i));
		}
		workers[nworkers++] = pid;
	}
	if (opt_remove[0]) {
		rem = fork();
		if (rem == 0) {
			signal(SIGTERM, remover_stop);
			remover();
			_exit(0);
		}
	}
	left = nworkers;
	while (left > 0) {
		int st;
		pid_t pid = waitpid(-1, &st, WNOHANG);

		if (pid > 0) {
			for (i = 0; i < nworkers; i++) {
				if (workers[i] != pid)
					continue;
				workers[i] = 0;
				left--;
				if (WIFSIGNALED(st)) {
					fprintf(stderr, "syzfuzz: seed %llu: worker %d killed by signal %d\n",
						(unsigned long long)opt_seed, i, WTERMSIG(st));
					fail = 1;
				} else if (WEXITSTATUS(st) != 0) {
					fprintf(stderr, "syzfuzz: seed %llu: worker %d exited %d\n",
						(unsigned long long)opt_seed, i, WEXITSTATUS(st));
					fail = 1;
				}
			}
			continue;
		}
		if (time(NULL) - start > opt_timeout) {
			fprintf(stderr, "syzfuzz: seed %llu: %d workers still running after %d s: stuck?\n",
				(unsigned long long)opt_seed, left, opt_timeout);
			dump_stacks();
			for (i = 0; i < nworkers; i++)
				if (workers[i] > 0)
					kill(workers[i], SIGKILL);
			if (rem > 0)
				kill(rem, SIGKILL);
			return 3;
		}
		usleep(50000);
	}
	if (rem > 0) {
		/* The remover finishes its round (the HCA made again), then stops. */
		kill(rem, SIGTERM);
		waitpid(rem, NULL, 0);
	}
	fprintf(stderr, "syzfuzz: seed %llu: %s in %ld s\n", (unsigned long long)opt_seed, fail ? "FAILED" : "done",
		(long)(time(NULL) - start));
	return fail;
}
