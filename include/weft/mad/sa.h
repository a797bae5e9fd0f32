/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SA client for kernel consumers (IBA Vol 1 15.4): questions to the
 * subnet administrator of a CA port's subnet (at the port's SM LID, over
 * QP1), asked in process context and waited for.  A caller that goes
 * away cannot get a late answer: each call returns only when its query
 * is answered, timed out or cancelled.
 *
 * Errors: ENODEV (no such CA port, no SM known to it yet, or the port is
 * not ACTIVE: a leave then frees the membership without telling the SA,
 * which drops the memberships of a port that left the subnet), ETIMEDOUT
 * (no answer after the retries), ENOENT (the SA has no such record),
 * EREMOTEIO (the SA answered with another error status), ECANCELED (the
 * port went away meanwhile), ENOMEM.
 */
#ifndef WEFT_MAD_SA_H
#define WEFT_MAD_SA_H

#include <weft/iba/pma.h> /* ClassPortInfo */
#include <weft/iba/sa.h>
#include <weft/list.h>
#include <weft/verbs/verbs.h>

namespace weft::mad::sa {

/* A SubnAdmGet(PathRecord) with the fields @comp_mask names (pr_comp bits). */
Result<iba::PathRecord> get_path(verbs::Device &dev, uint8_t port, const iba::PathRecord &want,
				 uint64_t comp_mask);
/*
 * The path from this port to @dgid in partition @pkey, from the port's
 * cache when one was found since the subnet last changed for the port
 * (LID, SM, P_Key table, client reregistration, port activation).
 */
Result<iba::PathRecord> resolve_path(verbs::Device &dev, uint8_t port, const verbs::Gid &dgid,
				     uint16_t pkey);

/*
 * Multicast membership (IBA 15.2.5.17), counted across users: the first
 * join of an MGID on a port asks the SA (SubnAdmSet), later ones share
 * it; the last leave tells the SA (SubnAdmDelete).  @rec carries the MGID
 * and JoinState and whatever else @comp_mask names; the port GID is
 * filled in.  The membership's record is the SA's answer (MLID, Q_Key...).
 */
struct Membership;
Result<Membership *> join(verbs::Device &dev, uint8_t port, const iba::McMemberRecord &rec,
			  uint64_t comp_mask);
const iba::McMemberRecord &record(const Membership &m);
void leave(Membership *m);
/*
 * Whether a consumer holds a membership of @mgid on the port with every
 * JoinState bit of @join_state (in-tree ib_sa_get_mcmember_rec's use by
 * IPoIB's umcast: a group someone else listens to).
 */
bool joined(verbs::Device &dev, uint8_t port, const verbs::Gid &mgid, uint8_t join_state);

/* SubnAdmGet(ClassPortInfo): what the SA supports (CapabilityMask2: iba::sa_cap2). */
Result<iba::ClassPortInfo> class_port_info(verbs::Device &dev, uint8_t port);

/* SubnAdmGetTable(ServiceRecord): up to @max records into @out; how many there were. */
Result<size_t> get_services(verbs::Device &dev, uint8_t port, const iba::ServiceRecord &want,
			    uint64_t comp_mask, iba::ServiceRecord *out, size_t max);

/*
 * GIDs coming into or going out of service in the subnet (IBA 14.2.5.1
 * traps 64/65), as the SA reports them to each CA port's subscription
 * (InformInfo, IBA 15.2.5.12), made once the port is ACTIVE under an SM
 * and again after an SM change or a client reregistration.  A GID out of
 * service leaves the port's path cache first.  Called in process
 * context, one event at a time for all watchers; unwatch_gids returns when
 * no call is in progress.
 */
class GidWatcher {
public:
	virtual void gid_event(verbs::Device &dev, uint8_t port, const verbs::Gid &gid, bool in_service) = 0;
	ListNode node;

protected:
	~GidWatcher() = default;
};
void watch_gids(GidWatcher &w);
void unwatch_gids(GidWatcher &w);

/* A port's subscription and the Reports it got. */
struct InformStats {
	bool subscribed;
	uint32_t subscriptions; /* SubnAdmSet(InformInfo) the SA accepted */
	uint32_t gid_in, gid_out; /* Reports of traps 64 and 65 */
	uint32_t other;		  /* Reports of anything else, answered and ignored */
	uint32_t lost;		  /* events not delivered: the queue was full */
};
Result<InformStats> inform_stats(verbs::Device &dev, uint8_t port);

} // namespace weft::mad::sa

#endif
