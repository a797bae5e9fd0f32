/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RDMA connection manager, weft_rdma_cm.ko: connections addressed by
 * IP address and port (IBA Vol 1 Annex A11, "RDMA IP CM Service") on top
 * of the IB CM (include/weft/cm/cm.h), the kernel SA client and IPoIB's
 * address resolution (ARP/ND through an ib netdev gives the peer's GID).
 *
 * An Id lives in a port space (TCP, UDP, IB, IPoIB) and in the network
 * namespace it was created in.  Its life, as in-tree:
 *   bind (optional) -> resolve_addr -> AddrResolved -> resolve_route ->
 *   RouteResolved -> connect -> ConnectResponse/Established -> disconnect
 *   -> Disconnected (-> TimewaitExit), or bind -> listen -> ConnectRequest
 *   (a new Id) -> accept -> Established.
 *
 * QPs.  A kernel ULP creates its QP on the Id's device and attach_qp()s
 * it: the RDMA CM then moves it through Init, RTR and RTS (and to Error
 * on disconnect), as the in-tree rdma_create_qp does.  Without an
 * attached QP (user space through ucma) the connection carries
 * ConnParam::qp_num, the owner moves its QP itself with init_qp_attr(),
 * and on the active side it answers ConnectResponse with establish().
 *
 * Handlers run in process context, one at a time per Id, with no RDMA CM
 * lock held; they may call anything here except destroy() on their own
 * Id (return non-zero instead: the Id is destroyed when the call
 * returns).  An Event and what it points to are valid during the call
 * only.  destroy() waits for a running handler of the Id; none comes
 * after it.
 *
 * DeviceRemoval: release what you hold on the device and destroy the Id
 * (return non-zero, or destroy it from another context): the removal of
 * the device waits for it.
 *
 * Errnos: EINVAL (bad state or argument), EADDRINUSE, EADDRNOTAVAIL (no
 * local ib interface has that address), EAFNOSUPPORT (not IPv4/IPv6),
 * ENODEV (the Id's device went), ENOMEM, ENETUNREACH, ETIMEDOUT.
 */
#ifndef WEFT_RDMA_CM_RDMA_CM_H
#define WEFT_RDMA_CM_RDMA_CM_H

#include <weft/iba/cm.h>
#include <weft/iba/sa.h>
#include <weft/span.h>
#include <weft/verbs/verbs.h>

namespace weft::rdma_cm {

class Id;

/* IBA A11.2 port spaces, numbered as in-tree enum rdma_ucm_port_space. */
enum class PortSpace : uint16_t { Ipoib = 0x0002, Ib = 0x013f, Tcp = 0x0106, Udp = 0x0111 };

inline constexpr uint16_t af_inet = 2, af_inet6 = 10;

/* An IP socket address (sockaddr_in/in6 without the layout). */
struct SockAddr {
	uint16_t family = 0;   /* af_inet, af_inet6; 0: none given */
	uint16_t port = 0;     /* host order; 0: any (bind picks one) */
	uint8_t ip[16] = {};   /* network order; IPv4 in ip[0..3] */
	uint32_t scope_id = 0; /* IPv6 link-local: the interface index */

	bool any() const;      /* the wildcard address of its family */
	bool loopback() const; /* 127/8 or ::1 */
	size_t ip_len() const { return family == af_inet ? 4 : 16; }
};
bool same_ip(const SockAddr &a, const SockAddr &b);

/* Numbered as in-tree enum rdma_cm_event_type: ucma passes them through. */
enum class EventType : uint8_t {
	AddrResolved = 0,
	AddrError,
	RouteResolved,
	RouteError,
	ConnectRequest,
	ConnectResponse, /* active, no attached QP: answer with establish() */
	ConnectError,
	Unreachable,
	Rejected,
	Established,
	Disconnected,
	DeviceRemoval,
	MulticastJoin,
	MulticastError,
	AddrChange,
	TimewaitExit,
};
const char *event_name(EventType t);

/* The parameters of a connection (in-tree struct rdma_conn_param). */
struct ConnParam {
	ConstBytes private_data; /* the user's part (the CMA header is the RDMA CM's) */
	/* Always this side's view: in a ConnectRequest, what the listener may give. */
	uint8_t responder_resources = 0, initiator_depth = 0;
	uint8_t flow_control = 1, retry_count = 7, rnr_retry_count = 7;
	bool srq = false;
	uint32_t qp_num = 0; /* no attached QP: the owner's QP number */
};

/* A UD peer (UDP port space, multicast): what the owner's AH and sends need. */
struct UdParam {
	ConstBytes private_data;
	verbs::AhAttr ah;
	uint32_t qp_num = 0, qkey = 0;
};

struct Event {
	EventType type;
	/*
	 * Errors: a negative errno (AddrError, RouteError, ConnectError,
	 * Unreachable, MulticastError); Rejected: the REJ reason (positive,
	 * IBA 12.6.7.2); else 0.
	 */
	int status = 0;
	Id *id = nullptr;
	Id *listen_id = nullptr; /* ConnectRequest: the listener (id is the new one) */
	ConnParam conn;		 /* ConnectRequest, ConnectResponse, Established, Rejected, Disconnected */
	UdParam ud;		 /* UDP ConnectRequest and Established (SIDR), MulticastJoin */
	void *mc_context = nullptr; /* MulticastJoin, MulticastError */
};

class Handler {
public:
	/* 0, or non-zero to have @e.id destroyed when the call returns. */
	virtual int event(const Event &e) = 0;

protected:
	~Handler() = default;
};

/* A network namespace, held (the caller's reference). */
struct Net;
Net *current_net(); /* the calling task's, with a reference */
Net *init_net();    /* the initial namespace, with a reference */
void put_net(Net *n);

/*
 * A new Id in @net (a reference of its own is taken) for connections of
 * @type (Rc or Ud; Ud only in the UDP and IPoIB port spaces).
 */
Result<Id *> create_id(Net *net, PortSpace ps, verbs::QpType type, Handler &h, void *context);
void destroy(Id *id);
void *context(const Id &id);
/* A new Id from ConnectRequest comes with its listener's handler and context. */
void set_handler(Id &id, Handler &h, void *context);

/*
 * Take @addr's address and port for the Id: a specific address (then the
 * Id is bound to the device of the ib interface that has it), the
 * wildcard, or port 0 (an ephemeral port is picked).  EADDRINUSE: another
 * Id of the port space and namespace has the port on an overlapping
 * address (unless both set reuseaddr and neither listens).
 */
Result<void> bind(Id &id, const SockAddr &addr);
/*
 * Resolve @dst to a device, port and peer GID (route lookup in the Id's
 * namespace, then the neighbour entry of the ib interface: ARP or ND
 * asked if need be).  Binds first if the Id is not bound (to @src if
 * given).  AddrResolved or AddrError (-ETIMEDOUT, -ENETUNREACH,
 * -EHOSTUNREACH) follows, within @timeout_ms.
 */
Result<void> resolve_addr(Id &id, const SockAddr *src, const SockAddr &dst, uint32_t timeout_ms);
/* SA PathRecord for the resolved GIDs; RouteResolved or RouteError (-ETIMEDOUT...). */
Result<void> resolve_route(Id &id, uint32_t timeout_ms);
/* Take connection requests for the bound address and port (binding to the wildcard if unbound). */
Result<void> listen(Id &id, int backlog);

/* A kernel ULP's QP, created on device(id): moved to Init now, then by the RDMA CM. */
Result<void> attach_qp(Id &id, verbs::Qp &qp);
/*
 * What a QP needs to go to @state for this Id's connection (Init, RTR,
 * RTS), with the mask of QpAttr fields to apply (verbs::qp_attr bits).
 */
Result<void> init_qp_attr(Id &id, verbs::QpState state, verbs::QpAttr &attr, uint32_t &mask);

/* RC: send the REQ (CMA header + private data).  UD: SIDR request. */
Result<void> connect(Id &id, const ConnParam &p);
/* Answer a ConnectRequest: REP (RC) or SIDR_REP (UD, with the owner's qp_num and qkey). */
Result<void> accept(Id &id, const ConnParam &p);
/*
 * Answer a ConnectRequest with REJ @reason (IBA 12.6.7.2: "consumer
 * reject", 28, unless the ULP says "vendor option not supported", 35, as
 * an ECE refusal does) and @private_data; a SIDR request with "rejected".
 */
Result<void> reject(Id &id, ConstBytes private_data, uint16_t reason = iba::cm::rej::consumer);
/* Active side without an attached QP: after ConnectResponse, send the RTU. */
Result<void> establish(Id &id);
/* The owner's QP saw CommEst (data before the RTU). */
Result<void> notify_established(Id &id);
/* DREQ (or DREP to a DREQ); the QP goes to Error; Disconnected follows. */
Result<void> disconnect(Id &id);

/* UD multicast (IPoIB's mapping of the IP group to an MGID, RFC 4391 §4). */
Result<void> join_multicast(Id &id, const SockAddr &group, uint8_t join_state, void *mc_context);
Result<void> leave_multicast(Id &id, const SockAddr &group);

/* Options (in-tree rdma_set_*). */
Result<void> set_tos(Id &id, uint8_t tos);
Result<void> set_reuseaddr(Id &id, bool on); /* before bind */
Result<void> set_afonly(Id &id, bool on);    /* before bind */
Result<void> set_ack_timeout(Id &id, uint8_t timeout);

/* What an Id has resolved, for ucma's QUERY and for ULPs. */
struct Info {
	PortSpace ps;
	verbs::QpType qp_type;
	SockAddr src, dst;
	verbs::Device *dev = nullptr; /* null until bound to a device */
	uint8_t port = 0;
	uint16_t pkey = 0;
	verbs::Gid sgid{}, dgid{};
	bool has_route = false;
	iba::PathRecord route{}; /* has_route */
	uint32_t qp_num = 0;	 /* the attached QP's, or the ConnParam's */
};
Info info(const Id &id);

/* For leak checks. */
struct Stats {
	uint32_t ids;	    /* live Ids */
	uint32_t listeners; /* IB CM listeners shared by listening Ids */
	uint64_t requests, rejected_no_listener, bad_header;
};
Stats stats();

} // namespace weft::rdma_cm

#endif
