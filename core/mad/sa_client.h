/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One CA port's SA client (include/weft/mad/sa.h): a send-only RMPP agent
 * of class SA version 2 on the port's GSI, the waiting queries, and a
 * small path cache that every subnet change of the port invalidates.
 */
#ifndef WEFT_MAD_SA_CLIENT_H
#define WEFT_MAD_SA_CLIENT_H

#include <weft/atomic.h>
#include <weft/mad/sa.h>
#include <weft/mad/service.h>

#include <weft/work.h>

#include "sa_inform.h"
#include "sa_records.h"

namespace weft::mad {

class MadPort;

class SaPort final : public AgentHandler, public verbs::EventHandler {
public:
	explicit SaPort(MadPort &p);
	WEFT_NOCOPY(SaPort);
	~SaPort();

	Result<void> start();
	/* Unregister (cancelling queries in flight), stop listening to events. */
	void stop();

	/*
	 * One SA request and its answer.  @rec (of @len bytes) is the record
	 * after the SA header; on success the response's record area (a
	 * GetTable's whole message) is in @out.
	 */
	struct Answer {
		Mad first;
		Array<uint8_t> all; /* a segmented (RMPP) answer; else empty */
		size_t len = 0;
		/* Its records (sa_records.h): EBADMSG if it is too short to hold any. */
		Result<sa::Records> records() const
		{
			return sa::Records::of(all.size() ? all.data() : first.bytes, len);
		}
	};
	Result<void> ask(uint8_t method, uint16_t attr, uint64_t comp_mask, const void *rec, size_t len,
			 Answer &out);

	Result<iba::PathRecord> resolve_path(const verbs::Gid &dgid, uint16_t pkey);

	/* AgentHandler: the SA's Reports (IBA 13.4.8.3), answered with a ReportResp. */
	void recv(Agent &a, const Mad &m, const MadAddr &from) override;
	void send_done(Agent &a, SendReq &r) override;
	/* EventHandler: subnet changes of this port make the cache stale. */
	void handle(const verbs::Event &e) override;

	MadPort &port;
	sa::InformStats inform_stats();

private:
	/* Subscribe when due and hand the reported events to the watchers (process context). */
	static void inform_tick(DelayedWork &w);
	void subscribe_step();
	void subscription_done(SendReq &r);
	void subscription_over(bool ok);
	/* The SA is told the subscriptions end (from stop()). */
	void unsubscribe();
	void forget_path(const verbs::Gid &gid);
	/* A request to the SA at the port's SM LID (ENODEV: none, or the port is not ACTIVE). */
	Result<void> prepare(SendReq &r, uint8_t method, uint16_t attr, uint64_t comp_mask, const void *rec,
			     size_t len);

	struct Cached {
		verbs::Gid dgid;
		uint16_t pkey;
		uint64_t gen;
		iba::PathRecord rec;
	};
	static constexpr uint32_t cache_size = 16;

	Agent agent_{*this, iba::mgmt_class::subn_adm, iba::sa_class_version};
	bool started_ = false;
	Atomic<uint32_t> next_tid_{1};
	Atomic<uint64_t> gen_{1}; /* bumped by subnet changes; a cached path of an older one is stale */
	SpinLock cache_lock_;
	Cached cache_[cache_size] = {}; /* under cache_lock_; gen 0 is empty */
	uint32_t cache_next_ = 0;	/* under cache_lock_ */

	/* Subscriptions (sa_inform.h) and the events reported, waiting for inform_work_. */
	static constexpr uint8_t max_events = 16;
	SpinLock inform_lock_;
	inform::Subscription sub_;		   /* under inform_lock_ */
	inform::GidNotice events_[max_events] = {}; /* under inform_lock_ */
	uint8_t nevents_ = 0;			   /* under inform_lock_ */
	/* The subscription's SubnAdmSet in flight (sub_busy_), of traps[sub_next_], for sub_sent_epoch_. */
	SendReq sub_req_;
	SendReq unsub_req_[2]; /* traps 64, 65: sent by unsubscribe(), never waited for */
	bool sub_busy_ = false;	     /* under inform_lock_ */
	uint8_t sub_next_ = 0;	     /* under inform_lock_ */
	uint32_t sub_epoch_ = 0;      /* under inform_lock_: bumped by port events */
	uint32_t sub_sent_epoch_ = 0; /* under inform_lock_ */
	Atomic<uint32_t> subscriptions_{0}, gid_in_{0}, gid_out_{0}, other_{0}, lost_{0};
	DelayedWork inform_work_; /* cancelled in stop() */
};

/* The SA client of @dev's @port, or nullptr (not a CA port with a MAD interface). */
SaPort *find_sa(verbs::Device &dev, uint8_t port);

/* Multicast memberships (sa_mcast.cpp): module init/exit, and a port going away. */
void sa_groups_init();
void sa_groups_exit();
/* GID watchers (sa_client.cpp): module init and exit. */
void sa_watchers_init();
void sa_watchers_exit();
void sa_orphan(verbs::Device &dev, uint8_t port);

} // namespace weft::mad

#endif
