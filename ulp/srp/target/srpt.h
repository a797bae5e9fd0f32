/* SPDX-License-Identifier: GPL-2.0 */
/*
 * weft_srpt: the SRP target (T10 SRP over IB RC, IBA annex "SRP" / 12.6
 * for the login in CM private data).  An Hca per Weft CA listens for
 * logins on its service ID; each accepted login is a Channel: an RC QP,
 * its receive IUs, one IoCtx per credit granted, and an LIO session
 * (shim_lio.c) whose commands move data by RDMA READ (data-out) and RDMA
 * WRITE (data-in) with the initiator's keys, then answer with SRP_RSP.
 *
 * Lifetimes.  The Hca owns its Channels (list under Hca::lock).  A Channel
 * is torn down once, by its release work: the CM Id first (the QP goes to
 * Error, posted WRs flush), then the LIO session (its close waits for every
 * command to be released), then QP, CQ and memory.  IoCtxs never outlive
 * their Channel: LIO's release of the last command is what the session
 * close waits for.  A Channel is listed (a SINGLE CHANNEL login may end
 * it) and, once its session is open, known to LIO (close_session, a TPG
 * disable) while its login still runs: shutdown() then only marks it
 * closing, and the login, which owns it until it returns, queues the
 * release work when it ends.
 */
#ifndef WEFT_SRPT_H
#define WEFT_SRPT_H

#include <weft/atomic.h>
#include <weft/cm/cm.h>
#include <weft/verbs/verbs.h>

#include "../srp_wire.h"
#include "parse.h"
#include "srpt_kapi.h"

namespace weft::srpt {

struct Params {
	uint32_t rq_size;      /* receive IUs and credits per channel */
	uint32_t max_req_size; /* largest IU accepted (SRP_LOGIN_RSP max_it_iu_len) */
	uint32_t max_rsp_size; /* largest IU sent (max_ti_iu_len) */
};
extern Params params;

class Channel;
class Hca;

/* What a command or TM function in flight needs (one per credit); plain data. */
struct IoCtx {
	enum class Stage : uint8_t { Read, Respond, Reply };
	Channel *ch;
	uint32_t index;
	weft_srpt_cmd *cmd;
	uint64_t tag;	    /* the initiator's, opaque */
	bool lio;	    /* the se_cmd is LIO's: released through it, not by us */
	Stage stage;	    /* what start() posts once it has send queue room */
	uint32_t ndesc;	    /* remote buffers (data-in or data-out) from the descriptors */
	uint32_t desc_total; /* their bytes */
	uint32_t rsp_len;   /* the SRP_RSP built for Respond and Reply */
	uint32_t n_wr;	    /* send queue slots reserved for this round of WRs */
	/*
	 * Where the RDMA goes on: a transfer needing more WRs than the send
	 * queue holds is posted in rounds, each ended by a signalled WR.
	 */
	uint32_t nents;	    /* pieces of LIO's buffer */
	uint32_t left;	    /* bytes still to RDMA */
	uint32_t rdesc, roff; /* remote: descriptor, offset in it */
	uint32_t lseg, loff;  /* local: piece of LIO's buffer, offset in it */
};

/*
 * KUnit only (tests/channel_test.cpp); unset in production.  The windows
 * the teardown rules close: login_started runs as a login begins (the
 * Channel listed, its login not done); id_destroyed once release() has
 * destroyed the CM Id and before the QP goes, when the HCA may still
 * deliver a QP event it raised earlier; release_started as release() begins.
 */
struct TestHooks {
	using ChannelHook = void (*)(Channel &ch, void *arg);
	using QpHook = void (*)(verbs::EventHandler &events, verbs::Qp &qp, void *arg);
	Atomic<ChannelHook> login_started{nullptr};
	Atomic<ChannelHook> release_started{nullptr};
	Atomic<QpHook> id_destroyed{nullptr};
	Atomic<void *> arg{nullptr};
};
extern constinit TestHooks test_hooks;

class Channel final : public verbs::EventHandler, public cm::Handler {
public:
	Channel(Hca &h, uint8_t port);
	WEFT_NOCOPY(Channel);
	~Channel();

	/*
	 * Answer a login (the CM Request event on @id): accepted, or an SRP
	 * reject reason in @reject_reason (the caller sends the REJ).  The
	 * Channel may be gone when this returns: its release is queued
	 * (failed, or shut down meanwhile) and runs on its own.
	 */
	Result<void> login(cm::Id &id, const cm::RequestInfo &req, const srp::wire::LoginReq &lreq,
			   uint32_t &reject_reason, uint8_t rsp_flags);
	/* Log out and release (any process context, or a QP event; idempotent; after login() ends). */
	void shutdown();
	bool same_nexus(const uint8_t i_port_id[16]) const;

	int event(const cm::Event &e) override;
	void handle(const verbs::Event &e) override;

	/* LIO callbacks (srpt_kapi.h), io.cpp. */
	int write_pending(IoCtx &io);
	int queue_response(IoCtx &io, bool data);
	void queue_tm_rsp(IoCtx &io);
	void aborted(IoCtx &io);
	void released(IoCtx &io);

	ListNode chan_node; /* on Hca::chans (live, then dead) */

private:
	/* wr_write: the signalled last RDMA WRITE of a round that is not the last. */
	static constexpr uint64_t wr_recv = 0, wr_rsp = 1, wr_read = 2, wr_write = 3, wr_kind_bits = 2;
	static constexpr uint32_t max_sge = 16;
	enum class Reserve : uint8_t { Ok, Wait, Closed };

	/* channel.cpp: resources, CM, completions, received IUs. */
	Result<void> create_resources();
	Result<void> accept_login(cm::Id &id, const cm::RequestInfo &req, const srp::wire::LoginReq &lreq,
				  uint32_t &reason, uint8_t rsp_flags);
	void login_done(bool accepted);
	static void cq_event(verbs::Cq &cq, void *arg);
	static void poll_work(Work &w);
	static void release_work(Work &w);
	void poll();
	void completion(const verbs::Wc &wc);
	void received(uint32_t index, uint32_t len);
	void post_recv(uint32_t index);
	void run_pending();
	void release();

	/* io.cpp: commands, RDMA and responses. */
	void handle_cmd(IoCtx &io, const uint8_t *iu, uint32_t len);
	void handle_tsk_mgmt(IoCtx &io, const uint8_t *iu, uint32_t len);
	/* An IU dropped unanswered (malformed or unknown): counted module-wide. */
	static void count_drop() { __atomic_fetch_add(&weft_srpt_dropped_ius, 1, __ATOMIC_RELAXED); }
	IoCtx *get_ioctx();
	void put_ioctx(IoCtx &io);
	Result<void> parse_desc(IoCtx &io, const uint8_t *iu, uint32_t len, int &dir,
				uint32_t &data_len);
	void reply(IoCtx &io, uint8_t status, bool rsp_valid, uint8_t code);
	uint32_t build_rsp(IoCtx &io, const weft_srpt_status *st, bool rsp_valid, uint8_t code);
	void rdma_begin(IoCtx &io, uint32_t xfer, uint32_t nents);
	uint32_t rdma_wrs(const IoCtx &io) const;
	uint32_t round_wrs(const IoCtx &io) const;
	Reserve reserve(IoCtx &io);
	void dispatch(IoCtx &io);
	void start(IoCtx &io);
	Result<void> post_rdma(IoCtx &io, bool write, uint32_t budget);
	void write_done(IoCtx &io, bool good);
	void send_rsp(IoCtx &io);
	void sq_returned(uint32_t n);
	void abandon(IoCtx &io);
	void fail_waiting();
	void rdma_done(IoCtx &io, bool ok);
	void rsp_done(IoCtx &io);
	srp::wire::DirectBuf *desc_of(IoCtx &io) { return &desc_buf_[io.index * max_desc]; }
	uint8_t *rsp_of(IoCtx &io) { return &rsp_buf_[io.index * params.max_rsp_size]; }

	static constexpr uint32_t max_desc = parse::max_desc;

	Hca &hca_;
	const uint8_t port_;
	/* Set and cleared under events_lock_: QP event handlers use it under that lock (handle()). */
	SpinLock events_lock_;
	cm::Id *id_ = nullptr;
	weft_srpt_sess *sess_ = nullptr;
	uint8_t i_port_id_[16] = {};
	verbs::Cq *cq_ = nullptr;
	verbs::Qp *qp_ = nullptr;
	uint32_t sges_ = 1; /* send SGEs per WR */
	uint32_t sq_size_ = 0; /* send queue slots: the most one round of WRs reserves */
	uint32_t it_iu_ = 0;  /* the login's largest IU, bytes (SRP 5.2.1) */
	uint16_t fmts_ = 0;   /* the login's REQUIRED BUFFER FORMATS */
	Array<uint8_t> recv_buf_; /* rq_size IUs of max_req_size */
	Array<uint8_t> rsp_buf_;  /* rq_size responses of max_rsp_size */
	Array<srp::wire::DirectBuf> desc_buf_; /* max_desc per IoCtx */
	Array<IoCtx> io_;
	Array<uint32_t> free_stack_; /* indices of IoCtxs not in use */
	Array<uint32_t> waiting_;    /* ring of IoCtx indices waiting for send queue room */

	SpinLock lock_; /* guards what follows */
	bool live_ = false;
	bool closing_ = false;
	bool in_login_ = true; /* login() runs: it, not shutdown(), queues the release */
	uint32_t nfree_ = 0;
	uint32_t sq_avail_ = 0;
	uint32_t credit_delta_ = 0; /* credits owed beyond the one each response returns */
	uint32_t wait_head_ = 0, nwait_ = 0;
	/* Received request IUs waiting for an IoCtx (LIO has not released one yet), in order. */
	Array<uint32_t> pending_rx_;
	Array<uint32_t> rx_len_;
	uint32_t pending_head_ = 0, npending_ = 0;

	Work poll_work_;
	Work release_work_;
};

/* One Weft CA: its verbs context, DMA MR, listener and channels. */
class Hca final : public cm::Handler {
public:
	explicit Hca(verbs::Device &d);
	WEFT_NOCOPY(Hca);
	Result<void> start();
	void stop();
	int event(const cm::Event &e) override;

	verbs::Device &dev;
	verbs::Context *ctx = nullptr;
	verbs::Pd *pd = nullptr;
	verbs::Mr *mr = nullptr;
	uint64_t service_id = 0; /* = id_ext = ioc_guid: the node GUID, as in-tree */
	ListNode node;

	/* A channel released itself: free it (from another work item than its own). */
	void channel_gone(Channel &ch);
	struct Chans {
		List<Channel, &Channel::chan_node> list; /* live */
		List<Channel, &Channel::chan_node> dead; /* released, to be freed by reap_ */
		bool stopping = false;
	};
	Protected<Chans, Mutex> chans;
	WaitQueue gone;

	/* The port names LIO knows a target port by (in-tree): GID and GUID forms. */
	Result<void> port_names(uint8_t port, char gid_name[40], char guid_name[24]);

private:
	int request(const cm::Event &e);
	static void reap(Work &w);
	cm::Id *listen_ = nullptr;
	Work reap_;
};

/* Whether @name names a port of a Weft CA (configfs WWN creation). */
bool port_name_known(const char *name);

} // namespace weft::srpt

#endif
