/* SPDX-License-Identifier: GPL-2.0 */
/*
 * weft_srp: the SRP initiator (T10 SRP over IB RC).  A Port per CA port
 * owns the class device srp-<hca>-<port> and the target ports added
 * through it; a Target is one SCSI host (shim_scsi.c) with ch_count
 * Channels, each an RC connection logged in with SRP_LOGIN_REQ in the CM
 * REQ (SRP 6.2), carrying the commands of one blk-mq hardware queue.
 *
 * Data buffers are fast-registered (IBA 10.6.3.5), as the in-tree
 * initiator does by default (register_always): each slot has an MR whose
 * REG_MR is posted ahead of its SRP_CMD, with a new key for every command
 * and the rights of its direction only, described to the target by one
 * direct descriptor, and invalidated (LOCAL_INV) when the response comes.
 * The SCSI host's virt_boundary_mask keeps every scatterlist a page list.
 * The port's DMA MR only gives local keys: nothing of the host's memory
 * is open to a target beyond the commands in flight.
 *
 * Lifetimes.  A Port's mutex guards its target list from add_target to
 * removal; a Target is removed by its Port (synchronously on device
 * removal, from the Port's reap work when the SCSI host's "delete" or
 * the transport's dev_loss asks), never by itself.  A Channel's
 * connection (Id, QP, CQ, receive IUs) lives from connect() to
 * disconnect(), which detaches the QP's events from the Id before it
 * destroys the Id (verbs/conn_events.h); its slots, one per blk-mq tag, hold the scsi_cmnd a
 * response completes, claimed under the Channel's lock so that exactly
 * one of response, abort and teardown completes a command.
 */
#ifndef WEFT_SRP_INITIATOR_H
#define WEFT_SRP_INITIATOR_H

#include <weft/cm/cm.h>
#include <weft/verbs/conn_events.h>
#include <weft/verbs/rc_conn.h>
#include <weft/verbs/verbs.h>

#include "../srp_wire.h"
#include "options.h"
#include "srp_kapi.h"

namespace weft::srp {

/* The page lists' page size (and the SCSI host's virt boundary). */
inline constexpr uint32_t page_size = 4096;

struct Params {
	uint32_t cmd_sg_entries; /* descriptors in one SRP_CMD (and the host's sg_tablesize) */
	uint32_t queue_size;	 /* commands per channel unless add_target says */
	uint32_t ch_count;	 /* channels per target unless add_target says; 0: one per CPU */
	uint32_t max_sect;	 /* largest command, 512-byte sectors */
};
extern Params params;

class Target;
class Port;

class Channel final : public cm::Handler {
public:
	Channel(Target &t, uint16_t index);
	WEFT_NOCOPY(Channel);
	~Channel();

	/* The memory that outlives connections: slots and send IUs. */
	Result<void> init();
	/* SRP 6.2 login, waited for; @multi asks for MULTI CHANNEL. */
	Result<void> connect(bool multi);
	/* SRP 6.3 (logout by disconnect): the connection goes, outstanding commands complete with @host_byte. */
	void disconnect(uint8_t host_byte);
	/* Complete every outstanding command with @host_byte; the connection stays. */
	void fail_all(uint8_t host_byte);

	int queue(void *scmnd, const weft_srp_cmd_info &ci);
	bool connected();
	/* SRP 6.7 task management, waited for: the SRP response code. */
	Result<uint8_t> task_mgmt(uint8_t function, const uint8_t lun[8], uint64_t task_tag);
	Result<void> abort(void *scmnd, uint16_t tag);
	int req_lim();

	int event(const cm::Event &e) override;

private:
	static constexpr uint64_t wr_recv = 1ull << 62, tm_bit = 1ull << 63;
	static constexpr uint32_t misc_ius = 4; /* CRED_RSP / AER_RSP in flight */

	uint64_t cmd_tag(uint16_t slot) const { return uint64_t(index_) << 16 | slot; }
	Result<void> create_qp();
	Result<void> logged_in(ConstBytes pdata);
	void login_failed(int err);
	static void cq_event(verbs::Cq &cq, void *arg);
	static void poll_work(Work &w);
	void poll();
	void completion(const verbs::Wc &wc);
	void received(uint32_t i, uint32_t len);
	void handle_rsp(const uint8_t *iu, uint32_t len);
	void answer(uint8_t opcode, const uint8_t tag[8]);
	Result<void> post_send(const void *buf, uint32_t len, uint64_t wr_id);
	void post_recv(uint32_t i);
	void lost();
	uint32_t build_cmd(uint8_t *iu, const weft_srp_cmd_info &ci);
	/* Fast registration of slot @slot's data (IBA 10.6.3.5); its rkey, or an error. */
	Result<uint32_t> register_data(uint16_t slot, bool invalidate_first, void *scmnd,
				       const weft_srp_cmd_info &ci, uint64_t &iova, uint64_t &len);
	Result<void> post_local(verbs::WrOpcode op, verbs::Mr *mr, uint32_t key, uint32_t access);
	void invalidate_after(uint16_t slot);

	Target &t_;
	const uint16_t index_;
	uint32_t slots_n_ = 0, iu_len_ = 0, rx_len_ = 0, rx_n_ = 0;
	Array<uintptr_t> slots_;	 /* the scsi_cmnd of each blk-mq tag, or 0 */
	Array<uint8_t> tx_;		 /* a send IU per slot */
	Array<uint8_t> rx_;		 /* receive IUs (max_ti_iu_len each) */
	uint32_t max_pages_ = 0;	 /* pages of one command's data */
	Array<verbs::Mr *> fr_;		 /* a fast-reg MR per slot */
	Array<uint64_t> fr_scratch_;	 /* a page list per slot, while its command is built */
	uint8_t tm_iu_[sizeof(wire::TskMgmt)];
	uint8_t misc_iu_[misc_ius][sizeof(wire::CredRsp)];

	cm::Id *id_ = nullptr;
	verbs::ConnEvents qp_events_; /* the QP's events: CommEst to id_ */
	verbs::RcQueues rc_;
	Completion login_done_;
	int login_err_ = 0;

	SpinLock lock_; /* guards what follows */
	bool connected_ = false;
	int req_lim_ = 0;
	uint32_t misc_next_ = 0;
	uint64_t tm_tag_ = 0, tm_seq_ = 0;
	uint8_t tm_code_ = 0;
	bool tm_answered_ = false;
	Array<uint32_t> fr_key_; /* each slot's MR key, as last registered */
	Array<uint8_t> fr_live_; /* 1: registered, no LOCAL_INV posted since */

	Mutex tm_mutex_; /* one task management function at a time */
	Completion tm_done_;
	Work poll_work_;
};

class Target {
public:
	Target(Port &p, const TargetOptions &o);
	WEFT_NOCOPY(Target);
	~Target();

	/* Log in every channel, add the SCSI host and scan; the caller holds the Port's mutex. */
	Result<void> create();
	/* Out of SCSI, logged out, freed resources (the caller deletes). */
	void remove();

	int queue(void *scmnd, const weft_srp_cmd_info &ci);
	int eh_abort(void *scmnd, uint16_t hwq, uint16_t tag);
	int eh_lun_reset(const uint8_t lun[8]);
	int reconnect();
	void terminate_io();
	void lost();
	void info(weft_srp_target_info &out);
	bool same(const TargetOptions &o) const;

	Port &port;
	const TargetOptions opts;
	uint8_t sgid[16] = {};
	ListNode node; /* on the Port's targets, then doomed */
	bool doomed = false; /* under the Port's mutex: removal queued */
	uint32_t can_queue = 0, sg_entries = 0, ch_count = 0, max_sect = 0;
	uint32_t max_pages = 0; /* of one command's fast registration (cmd_pages()) */
	Atomic<int> zero_req_lim{0};

	/* Removal began: a command for a channel that is down fails instead of waiting. */
	Atomic<bool> removing{false};

private:
	friend class Channel;
	static void lost_work(Work &w);
	void disconnect_all(uint8_t host_byte);
	Result<void> connect_all();
	weft_srp_host *host_ = nullptr;
	Array<Channel *> chans_;
	/* Set by a channel that broke; lost_work_ tells the transport (never under its rport mutex). */
	Atomic<bool> lost_{false};
	Work lost_work_;
};

class Port {
public:
	Port(verbs::Device &d, uint8_t port);
	WEFT_NOCOPY(Port);
	Result<void> start();
	/* No new target; every target removed; the class device gone. */
	void stop();

	Result<void> add_target(const char *buf, size_t len);
	/* Remove @t from the reap work (the SCSI host's "delete", dev_loss). */
	void delete_async(Target &t);

	verbs::Device &dev;
	const uint8_t num;
	verbs::DmaDomain dom; /* local keys only: targets reach data through fast registrations */
	weft_srp_port_dev *pdev = nullptr;
	ListNode node;

private:
	static void reap(Work &w);
	struct Targets {
		List<Target, &Target::node> live;
		List<Target, &Target::node> doomed;
		bool closing = false;
	};
	Protected<Targets, Mutex> targets_;
	WaitQueue gone_;
	Work reap_;
};

} // namespace weft::srp

#endif
