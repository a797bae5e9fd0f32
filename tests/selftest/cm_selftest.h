/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test only: what the CM self-test modules (cm_server.cpp, cm_client.cpp)
 * share: the verbs resources of one side and, for their C glue, the
 * counters and entry points.
 */
#ifndef WEFT_SELFTEST_CM_H
#define WEFT_SELFTEST_CM_H

#ifdef __cplusplus
#include <weft/verbs/rc_conn.h>

namespace weft::selftest {

/*
 * A context on a device with a PD, a DMA MR (verbs::DmaDomain) and one CQ
 * for all its QPs.  Opened on a device a verbs client was given in add(),
 * closed in its remove() (or at unload), after every QP on it is gone.
 */
struct CmResources : verbs::DmaDomain {
	Ref<verbs::Device> dev;
	verbs::Cq *cq = nullptr;

	~CmResources() { close(); }

	Result<void> open(verbs::Device &d, verbs::Cq::CompHandler h, void *arg)
	{
		dev = Ref<verbs::Device>::share(&d);
		WEFT_TRY(DmaDomain::open(d, "weft_selftest_cm"));
		cq = WEFT_TRY(ctx->create_cq(4096, h, arg));
		if (h)
			(void)cq->req_notify(false);
		return ok();
	}

	/* Whatever open() made (also after it failed half-way), and the device reference. */
	void close()
	{
		DmaDomain::close();
		cq = nullptr;
		dev.reset();
	}

	Result<verbs::Qp *> rc_qp(uint32_t depth) { return verbs::create_rc_qp(*ctx, pd, cq, caps(depth)); }

	Result<verbs::Qp *> ud_qp(uint32_t depth)
	{
		const verbs::RcCaps c = caps(depth);
		verbs::QpInitAttr init;
		init.type = verbs::QpType::Ud;
		init.send_cq = init.recv_cq = cq;
		init.cap.max_send_wr = c.send_wr;
		init.cap.max_recv_wr = c.recv_wr;
		init.cap.max_send_sge = c.send_sge;
		init.cap.max_recv_sge = c.recv_sge;
		init.sq_sig_all = c.sq_sig_all;
		return ctx->create_qp(pd, init);
	}

	static verbs::RcCaps caps(uint32_t depth)
	{
		verbs::RcCaps c;
		c.send_wr = c.recv_wr = depth;
		c.sq_sig_all = true;
		return c;
	}

	Result<void> recv(verbs::Qp &qp, uint64_t *buf, uint64_t wr_id)
	{
		verbs::Sge sg{reinterpret_cast<uint64_t>(buf), sizeof(*buf), mr->lkey};
		verbs::RecvWr r;
		r.wr_id = wr_id;
		r.sg = Span<const verbs::Sge>(&sg, 1);
		return qp.post_recv(r);
	}

	Result<void> send(verbs::Qp &qp, const uint64_t *buf, uint64_t wr_id)
	{
		verbs::Sge sg{reinterpret_cast<uint64_t>(buf), sizeof(*buf), mr->lkey};
		verbs::SendWr w;
		w.wr_id = wr_id;
		w.sg = Span<const verbs::Sge>(&sg, 1);
		return qp.post_send(w);
	}
};

} // namespace weft::selftest

extern "C" {
#endif

/*
 * Server counters (module parameters, read-only).  lost: connections
 * released because their device went away; listening: 1 while the
 * listener is up (it comes back with the device).
 */
extern unsigned int weft_cm_server_accepted, weft_cm_server_established, weft_cm_server_disconnected,
	weft_cm_server_echoed, weft_cm_server_active, weft_cm_server_lost, weft_cm_server_listening;
int weft_selftest_cm_server_start(const char *dev, unsigned long long service);
void weft_selftest_cm_server_stop(void);

/* Client: what to do at load (parameters) and what happened (read-only parameters). */
struct weft_cm_client_params {
	char *dev, *dest; /* charp module parameters */
	unsigned long long service;
	unsigned int cycles, concurrent, hold, unreach_lid;
	bool reject_check;
	char *pdata; /* hex: a REQ with this private data to @service, which must reject it */
	char *login, *ius, *probe; /* hex: an accepted login, IUs sent after it, each then @probe */
};
/* lost: held connections released because the client's device went away. */
extern unsigned int weft_cm_client_cycles_done, weft_cm_client_concurrent_done, weft_cm_client_held,
	weft_cm_client_peer_disconnects, weft_cm_client_reject_reason, weft_cm_client_reject_ms,
	weft_cm_client_unreach_ms, weft_cm_client_lost, weft_cm_client_reject_word;
extern char weft_cm_client_iu_replies[512]; /* what answered each of @ius (cm_client.cpp) */
int weft_selftest_cm_client_run(const struct weft_cm_client_params *p);
void weft_selftest_cm_client_stop(void);

#ifdef __cplusplus
}
#endif

#endif
