// SPDX-License-Identifier: GPL-2.0
/*
 * NETLINK_RDMA for Weft (nl_kapi.h).  Thin: the commands and their answers
 * live in C++ (nldev.cpp); this file owns the kernel socket of every
 * network namespace, the per-message dispatch (as the in-tree 6.1
 * drivers/infiniband/core/netlink.c does it: client and op from the
 * message type, NLM_F_DUMP starts a dump, errors are acked), attribute
 * validation against a policy, and the answer buffers.
 *
 * Only one kernel socket per protocol and namespace can exist, so the
 * in-tree ib_core (which creates the same socket) and weft_uverbs exclude
 * each other: whichever loads second fails.  That is deliberate, as with
 * weft_ipoib and ib_ipoib.  With the socket registered, a user opening
 * NETLINK_RDMA no longer makes the kernel request_module() ib_core.
 *
 * Namespaces: a socket in each (pernet operations), every one answering
 * for every Weft device: in-tree's default "shared" netns mode
 * (RDMA_NLDEV_SYS_ATTR_NETNS_MODE 1), as Weft devices belong to no
 * namespace.
 */
#include <linux/module.h>
#include <linux/netlink.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <net/netlink.h>
#include <net/netns/generic.h>
#include <net/sock.h>
#include <uapi/rdma/ib_user_ioctl_verbs.h>
#include <uapi/rdma/rdma_netlink.h>

#include "nl_kapi.h"

/* The numbers C++ uses are the UAPI's. */
static_assert(WEFT_NLDEV_CMD_GET == RDMA_NLDEV_CMD_GET);
static_assert(WEFT_NLDEV_CMD_PORT_GET == RDMA_NLDEV_CMD_PORT_GET);
static_assert(WEFT_NLDEV_CMD_SYS_GET == RDMA_NLDEV_CMD_SYS_GET);
static_assert(WEFT_NLDEV_CMD_GET_CHARDEV == RDMA_NLDEV_CMD_GET_CHARDEV);
static_assert(WEFT_NLDEV_NUM_OPS == RDMA_NLDEV_NUM_OPS);
static_assert(WEFT_NLDEV_ATTR_DEV_INDEX == RDMA_NLDEV_ATTR_DEV_INDEX);
static_assert(WEFT_NLDEV_ATTR_DEV_NAME == RDMA_NLDEV_ATTR_DEV_NAME);
static_assert(WEFT_NLDEV_ATTR_PORT_INDEX == RDMA_NLDEV_ATTR_PORT_INDEX);
static_assert(WEFT_NLDEV_ATTR_CAP_FLAGS == RDMA_NLDEV_ATTR_CAP_FLAGS);
static_assert(WEFT_NLDEV_ATTR_FW_VERSION == RDMA_NLDEV_ATTR_FW_VERSION);
static_assert(WEFT_NLDEV_ATTR_NODE_GUID == RDMA_NLDEV_ATTR_NODE_GUID);
static_assert(WEFT_NLDEV_ATTR_SYS_IMAGE_GUID == RDMA_NLDEV_ATTR_SYS_IMAGE_GUID);
static_assert(WEFT_NLDEV_ATTR_SUBNET_PREFIX == RDMA_NLDEV_ATTR_SUBNET_PREFIX);
static_assert(WEFT_NLDEV_ATTR_LID == RDMA_NLDEV_ATTR_LID);
static_assert(WEFT_NLDEV_ATTR_SM_LID == RDMA_NLDEV_ATTR_SM_LID);
static_assert(WEFT_NLDEV_ATTR_LMC == RDMA_NLDEV_ATTR_LMC);
static_assert(WEFT_NLDEV_ATTR_PORT_STATE == RDMA_NLDEV_ATTR_PORT_STATE);
static_assert(WEFT_NLDEV_ATTR_PORT_PHYS_STATE == RDMA_NLDEV_ATTR_PORT_PHYS_STATE);
static_assert(WEFT_NLDEV_ATTR_DEV_NODE_TYPE == RDMA_NLDEV_ATTR_DEV_NODE_TYPE);
static_assert(WEFT_NLDEV_SYS_ATTR_NETNS_MODE == RDMA_NLDEV_SYS_ATTR_NETNS_MODE);
static_assert(WEFT_NLDEV_ATTR_DEV_PROTOCOL == RDMA_NLDEV_ATTR_DEV_PROTOCOL);
static_assert(WEFT_NLDEV_ATTR_CHARDEV_TYPE == RDMA_NLDEV_ATTR_CHARDEV_TYPE);
static_assert(WEFT_NLDEV_ATTR_CHARDEV_NAME == RDMA_NLDEV_ATTR_CHARDEV_NAME);
static_assert(WEFT_NLDEV_ATTR_CHARDEV_ABI == RDMA_NLDEV_ATTR_CHARDEV_ABI);
static_assert(WEFT_NLDEV_ATTR_CHARDEV == RDMA_NLDEV_ATTR_CHARDEV);
static_assert(WEFT_NLDEV_ATTR_UVERBS_DRIVER_ID == RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID);
static_assert(WEFT_NLDEV_ATTR_DEV_DIM == RDMA_NLDEV_ATTR_DEV_DIM);
static_assert(WEFT_NLDEV_ATTR_DRIVER_DETAILS == RDMA_NLDEV_ATTR_DRIVER_DETAILS);
static_assert(WEFT_NLDEV_SYS_ATTR_COPY_ON_FORK == RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK);
static_assert(WEFT_RDMA_DRIVER_RXE == RDMA_DRIVER_RXE);
static_assert(WEFT_NLDEV_CMD_RES_GET == RDMA_NLDEV_CMD_RES_GET);
static_assert(WEFT_NLDEV_CMD_RES_QP_GET == RDMA_NLDEV_CMD_RES_QP_GET);
static_assert(WEFT_NLDEV_CMD_RES_CM_ID_GET == RDMA_NLDEV_CMD_RES_CM_ID_GET);
static_assert(WEFT_NLDEV_CMD_RES_CQ_GET == RDMA_NLDEV_CMD_RES_CQ_GET);
static_assert(WEFT_NLDEV_CMD_RES_MR_GET == RDMA_NLDEV_CMD_RES_MR_GET);
static_assert(WEFT_NLDEV_CMD_RES_PD_GET == RDMA_NLDEV_CMD_RES_PD_GET);
static_assert(WEFT_NLDEV_ATTR_RES_SUMMARY == RDMA_NLDEV_ATTR_RES_SUMMARY);
static_assert(WEFT_NLDEV_ATTR_RES_SUMMARY_ENTRY == RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY);
static_assert(WEFT_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME == RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME);
static_assert(WEFT_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR == RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR);
static_assert(WEFT_NLDEV_ATTR_RES_QP == RDMA_NLDEV_ATTR_RES_QP);
static_assert(WEFT_NLDEV_ATTR_RES_QP_ENTRY == RDMA_NLDEV_ATTR_RES_QP_ENTRY);
static_assert(WEFT_NLDEV_ATTR_RES_LQPN == RDMA_NLDEV_ATTR_RES_LQPN);
static_assert(WEFT_NLDEV_ATTR_RES_RQPN == RDMA_NLDEV_ATTR_RES_RQPN);
static_assert(WEFT_NLDEV_ATTR_RES_RQ_PSN == RDMA_NLDEV_ATTR_RES_RQ_PSN);
static_assert(WEFT_NLDEV_ATTR_RES_SQ_PSN == RDMA_NLDEV_ATTR_RES_SQ_PSN);
static_assert(WEFT_NLDEV_ATTR_RES_PATH_MIG_STATE == RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE);
static_assert(WEFT_NLDEV_ATTR_RES_TYPE == RDMA_NLDEV_ATTR_RES_TYPE);
static_assert(WEFT_NLDEV_ATTR_RES_STATE == RDMA_NLDEV_ATTR_RES_STATE);
static_assert(WEFT_NLDEV_ATTR_RES_PID == RDMA_NLDEV_ATTR_RES_PID);
static_assert(WEFT_NLDEV_ATTR_RES_KERN_NAME == RDMA_NLDEV_ATTR_RES_KERN_NAME);
static_assert(WEFT_NLDEV_ATTR_RES_CQ == RDMA_NLDEV_ATTR_RES_CQ);
static_assert(WEFT_NLDEV_ATTR_RES_CQ_ENTRY == RDMA_NLDEV_ATTR_RES_CQ_ENTRY);
static_assert(WEFT_NLDEV_ATTR_RES_CQE == RDMA_NLDEV_ATTR_RES_CQE);
static_assert(WEFT_NLDEV_ATTR_RES_USECNT == RDMA_NLDEV_ATTR_RES_USECNT);
static_assert(WEFT_NLDEV_ATTR_RES_POLL_CTX == RDMA_NLDEV_ATTR_RES_POLL_CTX);
static_assert(WEFT_NLDEV_ATTR_RES_MR == RDMA_NLDEV_ATTR_RES_MR);
static_assert(WEFT_NLDEV_ATTR_RES_MR_ENTRY == RDMA_NLDEV_ATTR_RES_MR_ENTRY);
static_assert(WEFT_NLDEV_ATTR_RES_RKEY == RDMA_NLDEV_ATTR_RES_RKEY);
static_assert(WEFT_NLDEV_ATTR_RES_LKEY == RDMA_NLDEV_ATTR_RES_LKEY);
static_assert(WEFT_NLDEV_ATTR_RES_MRLEN == RDMA_NLDEV_ATTR_RES_MRLEN);
static_assert(WEFT_NLDEV_ATTR_RES_PD == RDMA_NLDEV_ATTR_RES_PD);
static_assert(WEFT_NLDEV_ATTR_RES_PD_ENTRY == RDMA_NLDEV_ATTR_RES_PD_ENTRY);
static_assert(WEFT_NLDEV_ATTR_RES_LOCAL_DMA_LKEY == RDMA_NLDEV_ATTR_RES_LOCAL_DMA_LKEY);
static_assert(WEFT_NLDEV_ATTR_RES_UNSAFE_GLOBAL_RKEY == RDMA_NLDEV_ATTR_RES_UNSAFE_GLOBAL_RKEY);
static_assert(WEFT_NLDEV_ATTR_RES_PDN == RDMA_NLDEV_ATTR_RES_PDN);
static_assert(WEFT_NLDEV_ATTR_RES_CQN == RDMA_NLDEV_ATTR_RES_CQN);
static_assert(WEFT_NLDEV_ATTR_RES_MRN == RDMA_NLDEV_ATTR_RES_MRN);
static_assert(WEFT_NLDEV_ATTR_RES_CTXN == RDMA_NLDEV_ATTR_RES_CTXN);

/* In-tree IB_DEVICE_NAME_MAX. */
#define WEFT_NL_NAME_MAX 64

/*
 * The attributes Weft reads, typed as in-tree nldev_policy.  Parsing is the
 * lenient (deprecated) kind for every command: attributes Weft does not
 * read are ignored.
 */
static const struct nla_policy weft_nldev_policy[RDMA_NLDEV_ATTR_MAX] = {
	[RDMA_NLDEV_ATTR_DEV_INDEX] = { .type = NLA_U32 },
	[RDMA_NLDEV_ATTR_DEV_NAME] = { .type = NLA_NUL_STRING, .len = WEFT_NL_NAME_MAX },
	[RDMA_NLDEV_ATTR_PORT_INDEX] = { .type = NLA_U32 },
	[RDMA_NLDEV_ATTR_CHARDEV_TYPE] = { .type = NLA_NUL_STRING,
					   .len = WEFT_NLDEV_CHARDEV_TYPE_SIZE },
	[RDMA_NLDEV_ATTR_RES_LQPN] = { .type = NLA_U32 },
	[RDMA_NLDEV_ATTR_RES_PDN] = { .type = NLA_U32 },
	[RDMA_NLDEV_ATTR_RES_CQN] = { .type = NLA_U32 },
	[RDMA_NLDEV_ATTR_RES_MRN] = { .type = NLA_U32 },
	[RDMA_NLDEV_ATTR_DRIVER_DETAILS] = { .type = NLA_U8 },
};

struct weft_nl_req {
	struct sk_buff *in;		/* the request (a dump: cb->skb) */
	const struct nlmsghdr *nlh;	/* its header (a dump: cb->nlh) */
	struct netlink_callback *cb;	/* a dump's state; NULL for a doit */
	struct sk_buff *out;		/* the answer being built */
	struct nlmsghdr *cur;		/* the message being built in @out */
	unsigned int op;
	struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
};

/* --- request ------------------------------------------------------------------- */

unsigned int weft_nl_op(const struct weft_nl_req *r)
{
	return r->op;
}

bool weft_nl_is_dump(const struct weft_nl_req *r)
{
	return r->cb;
}

bool weft_nl_get_u32(const struct weft_nl_req *r, unsigned int attr, uint32_t *v)
{
	if (attr >= RDMA_NLDEV_ATTR_MAX || !r->tb[attr])
		return false;
	*v = nla_get_u32(r->tb[attr]);
	return true;
}

bool weft_nl_get_u8(const struct weft_nl_req *r, unsigned int attr, uint8_t *v)
{
	if (attr >= RDMA_NLDEV_ATTR_MAX || !r->tb[attr])
		return false;
	*v = nla_get_u8(r->tb[attr]);
	return true;
}

bool weft_nl_get_str(const struct weft_nl_req *r, unsigned int attr, char *buf, size_t size)
{
	if (attr >= RDMA_NLDEV_ATTR_MAX || !r->tb[attr] || !size)
		return false;
	nla_strscpy(buf, r->tb[attr], size);
	return true;
}

long *weft_nl_cursor(struct weft_nl_req *r)
{
	static_assert(sizeof_field(struct netlink_callback, args) >= 2 * sizeof(long));
	return r->cb ? r->cb->args : NULL;
}

/* --- answer -------------------------------------------------------------------- */

int weft_nl_begin(struct weft_nl_req *r, unsigned int cmd)
{
	if (r->cur)
		return -EINVAL;
	if (!r->cb) {
		if (r->out)
			return -EINVAL;	/* a doit answers once */
		r->out = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
		if (!r->out)
			return -ENOMEM;
	}
	r->cur = nlmsg_put(r->out, NETLINK_CB(r->in).portid, r->nlh->nlmsg_seq,
			   RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd), 0, r->cb ? NLM_F_MULTI : 0);
	return r->cur ? 0 : -EMSGSIZE;
}

int weft_nl_put_u8(struct weft_nl_req *r, unsigned int attr, uint8_t v)
{
	return r->cur && !nla_put_u8(r->out, attr, v) ? 0 : -EMSGSIZE;
}

int weft_nl_put_u32(struct weft_nl_req *r, unsigned int attr, uint32_t v)
{
	return r->cur && !nla_put_u32(r->out, attr, v) ? 0 : -EMSGSIZE;
}

int weft_nl_put_u64(struct weft_nl_req *r, unsigned int attr, uint64_t v)
{
	return r->cur && !nla_put_u64_64bit(r->out, attr, v, RDMA_NLDEV_ATTR_PAD) ? 0 : -EMSGSIZE;
}

int weft_nl_put_str(struct weft_nl_req *r, unsigned int attr, const char *s)
{
	return r->cur && !nla_put_string(r->out, attr, s) ? 0 : -EMSGSIZE;
}

/* A nest is the kernel's struct nlattr inside the message; the C API keeps it opaque. */
struct weft_nl_nest *weft_nl_nest_start(struct weft_nl_req *r, unsigned int attr)
{
	return r->cur ? (struct weft_nl_nest *)nla_nest_start_noflag(r->out, attr) : NULL;
}

void weft_nl_nest_end(struct weft_nl_req *r, struct weft_nl_nest *n)
{
	nla_nest_end(r->out, (struct nlattr *)n);
}

void weft_nl_nest_cancel(struct weft_nl_req *r, struct weft_nl_nest *n)
{
	nla_nest_cancel(r->out, (struct nlattr *)n);
}

bool weft_nl_net_admin(const struct weft_nl_req *r)
{
	return netlink_capable(r->in, CAP_NET_ADMIN);
}

void weft_nl_end(struct weft_nl_req *r)
{
	if (r->cur)
		nlmsg_end(r->out, r->cur);
	r->cur = NULL;
}

void weft_nl_cancel(struct weft_nl_req *r)
{
	if (r->cur)
		nlmsg_cancel(r->out, r->cur);
	r->cur = NULL;
}

int weft_nl_send(struct weft_nl_req *r)
{
	struct sk_buff *out = r->out;
	int ret;

	if (r->cb || !out || r->cur)
		return -EINVAL;
	r->out = NULL;
	/* In the input callback the request's skb belongs to our kernel socket. */
	ret = netlink_unicast(r->in->sk, out, NETLINK_CB(r->in).portid, MSG_DONTWAIT);
	return ret < 0 ? ret : 0;
}

/* --- dispatch ------------------------------------------------------------------- */

static struct weft_nl_req *weft_nl_req_new(struct sk_buff *in, const struct nlmsghdr *nlh,
					   struct netlink_callback *cb, int *err)
{
	struct weft_nl_req *r = kzalloc(sizeof(*r), GFP_KERNEL);

	if (!r) {
		*err = -ENOMEM;
		return NULL;
	}
	r->in = in;
	r->nlh = nlh;
	r->cb = cb;
	r->op = RDMA_NL_GET_OP(nlh->nlmsg_type);
	/* In-tree nldev answers a malformed request with EINVAL. */
	if (nlmsg_parse_deprecated(nlh, 0, r->tb, RDMA_NLDEV_ATTR_MAX - 1, weft_nldev_policy,
				   NULL)) {
		kfree(r);
		*err = -EINVAL;
		return NULL;
	}
	return r;
}

static int weft_nl_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct weft_nl_req *r;
	int ret;

	r = weft_nl_req_new(cb->skb, cb->nlh, cb, &ret);
	if (!r)
		return ret;
	r->out = skb;
	ret = weft_uverbs_nl_request(r);
	weft_nl_cancel(r);
	kfree(r);
	/* Called again while the last call added something; 0 ends the dump. */
	return ret < 0 ? ret : skb->len;
}

static int weft_nl_rcv_msg(struct sk_buff *skb, struct nlmsghdr *nlh,
			   struct netlink_ext_ack *extack)
{
	unsigned int client = RDMA_NL_GET_CLIENT(nlh->nlmsg_type);
	unsigned int op = RDMA_NL_GET_OP(nlh->nlmsg_type);
	bool dump = nlh->nlmsg_flags & NLM_F_DUMP;
	struct weft_nl_req *r;
	int ret;

	/* The iWARP port mapper and local services clients are not Weft's. */
	if (client >= RDMA_NL_NUM_CLIENTS || (client == RDMA_NL_NLDEV && op >= RDMA_NLDEV_NUM_OPS))
		return -EINVAL;
	if (client != RDMA_NL_NLDEV)
		return -EOPNOTSUPP;
	ret = weft_uverbs_nl_supported(op, dump);
	if (ret)
		return ret;
	if (dump) {
		struct netlink_dump_control c = { .dump = weft_nl_dump };

		/* -EINTR once started: netlink_rcv_skb() then sends no ack. */
		return netlink_dump_start(skb->sk, skb, nlh, &c);
	}
	r = weft_nl_req_new(skb, nlh, NULL, &ret);
	if (!r)
		return ret;
	ret = weft_uverbs_nl_request(r);
	weft_nl_cancel(r);
	nlmsg_free(r->out);	/* an answer built and not sent */
	kfree(r);
	return ret;
}

static void weft_nl_rcv(struct sk_buff *skb)
{
	netlink_rcv_skb(skb, weft_nl_rcv_msg);
}

/* --- namespaces ------------------------------------------------------------------- */

static unsigned int weft_nl_net_id;

struct weft_nl_net {
	struct sock *sk;
};

static int __net_init weft_nl_net_init(struct net *net)
{
	struct weft_nl_net *n = net_generic(net, weft_nl_net_id);
	struct netlink_kernel_cfg cfg = { .input = weft_nl_rcv };

	n->sk = netlink_kernel_create(net, NETLINK_RDMA, &cfg);
	if (!n->sk) {
		pr_err("weft_uverbs: NETLINK_RDMA is taken in this network namespace: the in-tree ib_core is loaded? (it and weft_uverbs exclude each other)\n");
		return -EBUSY;
	}
	n->sk->sk_sndtimeo = 10 * HZ;	/* as in-tree */
	return 0;
}

static void __net_exit weft_nl_net_exit(struct net *net)
{
	struct weft_nl_net *n = net_generic(net, weft_nl_net_id);

	netlink_kernel_release(n->sk);
	n->sk = NULL;
}

static struct pernet_operations weft_nl_net_ops = {
	.init = weft_nl_net_init,
	.exit = weft_nl_net_exit,
	.id = &weft_nl_net_id,
	.size = sizeof(struct weft_nl_net),
};

int weft_uverbs_nl_init(void)
{
	return register_pernet_subsys(&weft_nl_net_ops);
}

void weft_uverbs_nl_exit(void)
{
	unregister_pernet_subsys(&weft_nl_net_ops);
}
