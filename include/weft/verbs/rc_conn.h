/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The verbs objects of a kernel ULP's RC connections (weft_srp,
 * weft_iser, weft_isert, the CM self-tests): the owner's domain on a
 * device (its own context, a PD, and a DMA MR whose key is local only:
 * peers reach data through per-command registrations, IBA 10.6.3.5), and
 * per connection one CQ that both work queues complete to and the RC QP
 * with its caps (IBA 11.2.4.1, 11.2.5).
 *
 * Lifetime rule.  A DmaDomain is open from open() to close(); close()
 * closes the context, which destroys whatever is left in it (QPs, CQs,
 * MR, PD).  RcQueues live from create() to destroy(), inside their
 * domain's lifetime.  destroy() destroys the QP first (no completion
 * reaches the CQ after it, and no QP event its handler), then waits for
 * the owner's poll work (queued by the CQ's handler, it may still use
 * the CQ), then destroys the CQ; each pointer is reset once its object
 * is gone.  Both undo what they made also after a failed open or create.
 */
#ifndef WEFT_VERBS_RC_CONN_H
#define WEFT_VERBS_RC_CONN_H

#include <weft/verbs/verbs.h>
#include <weft/work.h>

namespace weft::verbs {

class DmaDomain {
public:
	Context *ctx = nullptr;
	Pd *pd = nullptr;
	Mr *mr = nullptr; /* all kernel memory, local write: the lkey of every SGE */

	/* @owner names the context (in logs and `rdma res`). */
	Result<void> open(Device &dev, const char *owner);
	void close();
};

struct RcCaps {
	uint32_t send_wr = 0, recv_wr = 0;
	uint32_t send_sge = 1, recv_sge = 1;
	uint32_t cq_extra = 0;	 /* CQ entries beyond send_wr + recv_wr */
	bool sq_sig_all = false; /* IBA 11.2.4.1: every send WR signalled */
	uint8_t port = 0;	 /* 0: the CM binds it (Modify QP to Init) */
	EventHandler *events = nullptr;
};

/* An RC QP of @caps whose work queues both complete to @cq. */
Result<Qp *> create_rc_qp(Context &ctx, Pd *pd, Cq *cq, const RcCaps &caps);

class RcQueues {
public:
	Cq *cq = nullptr;
	Qp *qp = nullptr;

	/* The CQ (handler @h with @arg, armed) and the QP; on failure neither. */
	Result<void> create(Context &ctx, Pd *pd, const RcCaps &caps, Cq::CompHandler h, void *arg);
	void destroy(Context &ctx, Work &poll);
};

} // namespace weft::verbs

#endif
