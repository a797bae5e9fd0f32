/* SPDX-License-Identifier: GPL-2.0 */
/*
 * weft_isert: the iSER transport (RFC 7145) of LIO's iSCSI target.
 *
 * An Np is one portal with iSER enabled: a listening RDMA CM Id in the
 * namespace of the configfs writer.  Each accepted connection is a Conn:
 * its own verbs context on the Id's device (PD, DMA MR, one CQ with a
 * Sleepable handler, since LIO's helpers sleep), an RC QP, the login
 * buffers and, once the login completes, a ring of 128 receive buffers.
 *
 * Lifetimes.  A Conn belongs to its Np until LIO's login thread takes it
 * (np_accept); one that dies before is released by its own work item or
 * by the Np's free.  Once LIO has it, only LIO ends it: wait_conn
 * (disconnect, every WR flushed and completed) then free_conn (the Id
 * first, its QP's events detached from it before, then QP, CQ, context,
 * memory).  RDMA CM events on a taken Conn
 * only ask LIO to reinstate the connection: no handler ever blocks.
 */
#ifndef WEFT_ISERT_H
#define WEFT_ISERT_H

#include <weft/rdma_cm/rdma_cm.h>
#include <weft/verbs/conn_events.h>
#include <weft/verbs/rc_conn.h>
#include <weft/verbs/verbs.h>
#include <weft/wait.h>
#include <weft/work.h>

#include "../iser_wire.h"
#include "isert_kapi.h"

namespace weft::isert {

class Np;

/* Counters behind the module's read-only parameters. */
struct Stats {
	Atomic<uint64_t> accepted, rejected, dropped;
	Atomic<uint32_t> conns; /* Conns alive, released or not */
};
extern Stats stats;
extern WaitQueue *conns_gone;

class Conn;
/* Free @c from the module's reaper (its own work item cannot). */
void reap(Conn &c);

class Conn final : public rdma_cm::Handler {
public:
	/* RFC 7145 / in-tree sizes: 128 receive buffers of 8 KiB data, 512-aligned. */
	static constexpr uint32_t ring = 128, data_max = 8192, slot = data_max + 1024;
	static constexpr uint32_t hdr_off = 512 - iser::wire::hdrs_len; /* data at 512 */

	explicit Conn(Np &np);
	WEFT_NOCOPY(Conn);
	~Conn();

	/* The ConnectRequest: resources, login receive, REP with the iSER CM header. */
	Result<void> start(const rdma_cm::Event &e);
	int event(const rdma_cm::Event &e) override;

	/* LIO's calls (isert_kapi.h). */
	void bind(iscsit_conn *lio, weft_isert_addr &peer, weft_isert_addr &local);
	int login_first(uint8_t *bhs, uint8_t *data, uint32_t max, uint32_t &len);
	int login_wait();
	int login_tx(const uint8_t *bhs, const void *data, uint32_t len, bool failed, bool complete);
	void full_feature();
	int send(weft_isert_io &io);
	int rdma(weft_isert_io &io, bool write, const weft_isert_seg *segs, uint32_t nsegs,
		 uint32_t offset, uint32_t len);
	void ctrl_hold(int delta);
	void logout_posted();
	/* Disconnect and wait for every WR to complete: whether a logout response went. */
	bool wait_conn();
	void wait_ctrl();
	/* Disconnect and free everything (free_conn, the Np's free, or release_work). */
	void release();
	/* A connection LIO never took went down: release it from a work item. */
	void release_later() { release_work_.queue(); }

	/* The Id is being destroyed by the handler's return value. */
	void forget_id()
	{
		qp_events_.detach();
		id_ = nullptr;
	}

	ListNode np_node; /* on the Np's lists while it owns the Conn, then the reaper's */
	bool on_np = false;	   /* under the Np's lock */
	bool established_ = false; /* under the Np's lock: on its pending list */

private:
	enum class State : uint8_t { Connecting, Up, Bound, FullFeature, Terminating };
	static constexpr uint64_t k_recv = 0, k_login_recv = 1, k_login_send = 2, k_send = 3,
				  k_read = 4, k_rdma = 5, k_bits = 3;

	Result<void> create_resources(verbs::Device &dev);
	Result<void> post_login_recv();
	Result<void> post_recv(uint32_t i);
	int post_login_send();
	bool reserve(uint32_t n);
	void retire(uint32_t n);
	void outstanding_dec();
	int rdma_wrs(weft_isert_io &io, bool write, const weft_isert_seg *segs, uint32_t nsegs,
		     uint32_t offset, uint32_t len, uint32_t rkey, uint64_t va, bool post);
	void np_established();
	bool np_drop();
	void terminate();
	void failed();
	static void qp_failed(void *conn);
	static void comm_est(rdma_cm::Id &id);
	void login_kick();
	bool dead() const;

	static void cq_event(verbs::Cq &cq, void *arg);
	static void poll_work(Work &w);
	static void release_work(Work &w);
	void poll();
	void completion(const verbs::Wc &wc);
	void login_received(uint32_t byte_len);
	void received(uint32_t i, uint32_t byte_len);

	Np &np_;
	rdma_cm::Id *id_ = nullptr;
	verbs::ConnEvents qp_events_; /* the QP's events: CommEst to id_, errors to failed() */
	verbs::DmaDomain dom_;
	verbs::RcQueues rc_;
	uint32_t sges_ = 1;
	bool send_w_inv_ = false; /* the REQ allows Send with Invalidate (set before accept) */
	Array<uint8_t> login_rx_, login_tx_, rx_;

	SpinLock lock_; /* guards what follows */
	iscsit_conn *lio_ = nullptr;
	State state_ = State::Connecting;
	bool disconnected_ = false;
	bool login_rsp_pending_ = false;
	bool login_waiting_ = false; /* a non-final login response sent, no request since */
	bool logout_posted_ = false;
	uint32_t login_ready_ = 0;   /* login requests received, not yet taken */
	uint32_t login_len_ = 0;     /* data bytes of the one in login_rx_ */
	uint32_t login_tx_len_ = 0;  /* iSER + BHS + data of the response in login_tx_ */
	uint32_t sq_avail_ = 0;
	uint32_t outstanding_ = 0; /* WRs posted, not completed (signaled ones count their post) */
	int ctrl_ = 0;		   /* control completions running (shim_lio.c) */

	WaitQueue wq_;
	Work poll_work_;
	Work release_work_;
};

/* A portal with iSER enabled. */
class Np final : public rdma_cm::Handler {
public:
	explicit Np(iscsi_np *lio);
	WEFT_NOCOPY(Np);

	Result<void> listen(const weft_isert_addr &a);
	int event(const rdma_cm::Event &e) override;
	int accept(iscsit_conn *lio, Conn *&out, weft_isert_addr &peer, weft_isert_addr &local);
	void free();
	/* A Conn's connection is up: LIO may take it. */
	void established(Conn &c);
	/* A Conn died before LIO took it: true if the Np still owned it (the caller releases it). */
	bool drop(Conn &c);

	iscsi_np *const lio;

private:
	int request(const rdma_cm::Event &e);
	void take(Conn &c);
	static void drop_listener(Work &w);

	/* What accept()'s wait reads without the lock (its predicate must not sleep). */
	Atomic<uint32_t> waiting_; /* Conns on pending_ */
	Atomic<bool> stop_;	   /* closing_, for the same */
	Mutex lock_; /* guards what follows */
	rdma_cm::Id *id_ = nullptr;
	bool closing_ = false;
	List<Conn, &Conn::np_node> connecting_; /* accepted by us, not established */
	List<Conn, &Conn::np_node> pending_;	/* established, waiting for LIO */
	rdma_cm::Id *gone_id_ = nullptr;	/* its device went: drop_listener_ destroys it */
	WaitQueue wq_;
	Work drop_listener_;
};

} // namespace weft::isert

#endif
