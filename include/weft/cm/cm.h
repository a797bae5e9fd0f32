/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The InfiniBand communication manager for kernel ULPs (IBA Vol 1 ch. 12),
 * weft_cm.ko.  A ULP creates an Id on a device, then either listens on a
 * service ID or connects with a path record (from the SA client); the CM
 * exchanges the CM MADs over QP1, moves the ULP's RC/UC QP through
 * Init, RTR and RTS on its behalf, retransmits, and tells the ULP what
 * happened through its Handler.
 *
 * Lifetimes.  An Id belongs to the ULP from create_id() (or from the
 * Request event that hands it a new one) until destroy(), which tells the
 * peer (REJ or DREQ) when a connection is being set up or is up, puts the
 * QP in the error state, and returns only when no handler call for the Id
 * is running; none comes after.  The CM keeps its own state for
 * retransmission and time-wait after that.  The ULP's QP must stay alive
 * until destroy() returns (or TimewaitExit).  destroy() may be called
 * from the Id's own handler; a handler may also return a negative value
 * to have the Id destroyed on its return.
 *
 * Handlers run in process context, one at a time per Id, in the order the
 * events happened, with no CM lock held: they may call any function here.
 */
#ifndef WEFT_CM_CM_H
#define WEFT_CM_CM_H

#include <weft/iba/cm.h>
#include <weft/iba/sa.h>
#include <weft/span.h>
#include <weft/verbs/verbs.h>

namespace weft::cm {

class Id;

enum class EventType : uint8_t {
	Request,      /* passive: a REQ for a listened service; @id is the new connection's Id */
	Reply,	      /* active: the REP (QP now in RTS; RTU follows unless the handler refuses) */
	Established,  /* data may flow: RTU sent (active), RTU or first data received (passive) */
	Rejected,     /* the peer sent REJ (@reason, @ari, @private_data) */
	Unreachable,  /* REQ or REP retransmitted max_cm_retries times without an answer */
	Disconnected, /* a DREQ arrived (DREP sent), or ours was answered or timed out */
	TimewaitExit, /* time-wait over: the QP may be reused or destroyed */
	SidrRequest,  /* passive SIDR: answer with sidr_reply() */
	SidrReply,    /* active SIDR: the SIDR_REP in @sidr (Unreachable if none came) */
};

/* What a Request event describes: the REQ as received (IBA 12.6.5). */
struct RequestInfo {
	uint64_t service_id;
	uint64_t remote_ca_guid;
	uint32_t remote_qpn;
	uint16_t remote_lid;
	verbs::Gid remote_gid;
	uint16_t pkey;
	uint8_t port;
	uint8_t responder_resources, initiator_depth;
	iba::Mtu mtu;
	verbs::Gid local_gid; /* the REQ's primary path: the GID it was sent to */
	uint8_t retry_count, rnr_retry_count;
	bool srq;
};

struct SidrInfo {
	uint8_t status;	     /* SidrReply: iba::cm::sidr */
	uint32_t qpn, qkey;  /* SidrReply: the service's UD QP */
	uint64_t service_id; /* SidrRequest */
	uint16_t pkey;	     /* SidrRequest */
	uint8_t port;	     /* SidrRequest: the port it arrived on */
};

struct Event {
	EventType type;
	Id *id;
	Id *listen_id = nullptr;	/* Request, SidrRequest: the listening Id */
	const RequestInfo *req = nullptr; /* Request */
	const SidrInfo *sidr = nullptr;	  /* SidrRequest, SidrReply */
	uint16_t reason = 0;		  /* Rejected: iba::cm::rej */
	ConstBytes ari;			  /* Rejected */
	ConstBytes private_data;	  /* of the message that caused the event */
};

class Handler {
public:
	/* 0, or negative to have @e.id destroyed when the call returns. */
	virtual int event(const Event &e) = 0;

protected:
	~Handler() = default;
};

/* A new Id on @dev; ENOMEM, ENODEV (not a CA). */
Result<Id *> create_id(verbs::Device &dev, Handler &h, void *context);
/* Tell the peer if need be, stop the Id's QP, wait for its handler; see above. */
void destroy(Id *id);
void *context(const Id &id);
/* A passive Id comes with its listener's handler and context; the ULP may change them. */
void set_handler(Id &id, Handler &h, void *context);

/*
 * Take REQs (and SIDR_REQs) whose service ID matches @service_id under
 * @mask, on every port of the Id's device.  EBUSY: another Id listens on
 * an overlapping service; EINVAL: the Id is in use.
 */
Result<void> listen(Id &id, uint64_t service_id, uint64_t mask = ~0ull);

/* IBA 12.7: the parameters of a REQ. */
struct ConnectParam {
	verbs::Qp *qp = nullptr; /* RC or UC, in Reset or Init */
	uint8_t port = 1;
	iba::PathRecord path; /* primary path: SLID, DLID, GIDs, P_Key, MTU, SL, PacketLifeTime */
	uint64_t service_id = 0;
	ConstBytes private_data; /* at most iba::cm::pdata::req bytes */
	uint32_t access = verbs::access::local_write | verbs::access::remote_write |
			  verbs::access::remote_read | verbs::access::remote_atomic;
	uint8_t responder_resources = 4, initiator_depth = 4;
	uint8_t retry_count = 7, rnr_retry_count = 7, min_rnr_timer = 12;
	/* QP local ACK timeout (IBA 9.7.6.1.3 encoding); 0: derived from the path. */
	uint8_t ack_timeout = 0;
	/* IBA 12.7.27: CM response times (4.096 us * 2^t) and retransmissions. */
	uint8_t local_cm_response_timeout = 16, remote_cm_response_timeout = 16;
	uint8_t max_cm_retries = 15;
	bool srq = false;
	/*
	 * No @qp: a QP its owner moves itself (user space through the RDMA
	 * CM), with qp_attr() for the attributes; its number and type.
	 */
	uint32_t qpn = 0;
	verbs::QpType qp_type = verbs::QpType::Rc;
	/* The Reply handler's return does not send the RTU: rtu() does, once the owner's QP is in RTS. */
	bool manual_rtu = false;
};
/* Send the REQ.  EINVAL: bad parameters or Id state; ENODEV: no such CA port. */
Result<void> connect(Id &id, const ConnectParam &p);

struct AcceptParam {
	verbs::Qp *qp = nullptr; /* RC or UC, in Reset or Init */
	ConstBytes private_data; /* at most iba::cm::pdata::rep bytes */
	uint32_t access = verbs::access::local_write | verbs::access::remote_write |
			  verbs::access::remote_read | verbs::access::remote_atomic;
	uint8_t responder_resources = 4, initiator_depth = 4;
	uint8_t rnr_retry_count = 7, min_rnr_timer = 12;
	bool srq = false;
	/*
	 * RTS before the REP (as the in-tree RDMA CM does), so the ULP can
	 * answer data that comes before the RTU; false keeps the QP in RTR
	 * until the RTU or CommEst (IBA 12.9.5), when it cannot send yet.
	 */
	bool rts_now = true;
	/* No @qp: the number and type of the QP its owner moves (see ConnectParam). */
	uint32_t qpn = 0;
	verbs::QpType qp_type = verbs::QpType::Rc;
};
/* Answer a Request with REP (ECONNRESET: the REQ was withdrawn meanwhile). */
Result<void> accept(Id &id, const AcceptParam &p);
/* Answer a Request (or, active side, a Reply) with REJ; the Id is done. */
Result<void> reject(Id &id, uint16_t reason, ConstBytes ari = {}, ConstBytes private_data = {});
/* Active side with ConnectParam::manual_rtu: send the RTU after the Reply (EINVAL in another state). */
Result<void> rtu(Id &id);
/*
 * The Modify QP attributes for a QP its owner moves (IBA 12.9.5 steps
 * as qp.cpp applies them): Init, Rtr or Rts in @state, the fields set
 * named in @mask (verbs::qp_attr bits).  EINVAL: not known yet (Rtr
 * before the REP on the active side) or another state asked.
 */
Result<void> qp_attr(Id &id, verbs::QpState state, verbs::QpAttr &attr, uint32_t &mask);
/* IBA 12.6.6: tell the peer the answer takes 4.096 us * 2^@service_timeout. */
Result<void> send_mra(Id &id, uint8_t service_timeout, ConstBytes private_data = {});
/* Send DREQ; Disconnected follows (DREP or timeout), then TimewaitExit. */
Result<void> disconnect(Id &id, ConstBytes private_data = {});
/*
 * The ULP's QP raised CommEst (IBA 11.6.3.1): data arrived before the
 * RTU, which counts as the RTU (IBA 12.9.5).  The one call a QP event
 * handler may make: those run inside the HCA's engine, which the verbs
 * context's lock (taken by Modify QP, and by the GSI under the CM's lock)
 * waits for; anything else must be deferred to a work item.
 */
void established(Id &id);

/* IBA 12.11: service ID resolution over UD. */
struct SidrParam {
	uint8_t port = 1;
	iba::PathRecord path;
	uint64_t service_id = 0;
	ConstBytes private_data; /* at most iba::cm::pdata::sidr_req bytes */
	uint32_t timeout_ms = 1000;
	uint8_t max_cm_retries = 3;
};
Result<void> sidr_request(Id &id, const SidrParam &p);
Result<void> sidr_reply(Id &id, uint8_t status, uint32_t qpn, uint32_t qkey,
			ConstBytes private_data = {});

/* IBA 12.9.6-12.9.8: the connection states, for tests and diagnostics. */
enum class State : uint8_t {
	Idle,
	Listen,
	ReqSent,
	RepWait, /* REQ sent and MRAed */
	ReqRcvd,
	MraReqSent,
	RepSent,
	MraRepRcvd,
	RepRcvd,
	MraRepSent,
	Established,
	DreqSent, /* a received DREQ is answered at once: no DREQ-received state */
	TimeWait,
	SidrReqSent,
	SidrReqRcvd,
};
State state(const Id &id);
const char *state_name(State s);
uint32_t local_comm_id(const Id &id);

/* CM bookkeeping, for leak checks and tests. */
struct Stats {
	uint32_t ids;	     /* live Ids, the ULPs' and time-wait ones */
	uint32_t lingering;  /* of those, destroyed by their owner: DREQ retries, time-wait, not yet freed */
	uint64_t sent, received, retransmitted;
	uint64_t dropped;    /* malformed or unexpected CM MADs */
	uint64_t stale_rej;  /* REJ "stale connection" sent */
	uint64_t comm_est;   /* established() calls (CommEst reported by ULPs) */
};
Stats stats();
/*
 * For leak checks: wait until no Id lingers (stats().lingering is 0), so
 * that stats().ids counts only Ids their owners hold.  Waits for events:
 * each lingering Id freed; ETIMEDOUT only when none was freed for
 * @quiet_ms while some are left (one is stuck).
 */
Result<void> settle(uint32_t quiet_ms);

} // namespace weft::cm

#endif
