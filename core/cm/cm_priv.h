/* SPDX-License-Identifier: GPL-2.0 */
/*
 * weft_cm internals.  One mutex (Cm::lock) guards every Id's state, the
 * Id table and the ports: the CM's traffic is a handful of MADs per
 * connection, and one lock keeps the state machines of IBA 12.9 easy to
 * follow.  MADs are sent under it (a GSI send never runs a receiver
 * inline).  Handler calls and the QP's move to Error happen outside it,
 * from each Id's list of pending work, one caller at a time (deliver()).
 */
#ifndef WEFT_CM_PRIV_H
#define WEFT_CM_PRIV_H

#include <weft/atomic.h>
#include <weft/cm/cm.h>
#include <weft/log.h>
#include <weft/mad/port.h>
#include <weft/ref.h>

namespace weft::cm {

class CmPort;

extern const Logger log;

/* What the QP needs for Init, RTR and RTS (IBA 12.7, 11.2.5). */
struct QpSetup {
	uint32_t access = 0;
	uint16_t pkey_index = 0;
	uint8_t port = 0;
	verbs::AhAttr av;
	iba::Mtu mtu = iba::Mtu::M256;
	uint32_t local_psn = 0, remote_psn = 0, remote_qpn = 0;
	uint8_t responder_resources = 0, initiator_depth = 0;
	uint8_t min_rnr_timer = 0, ack_timeout = 0, retry_count = 0, rnr_retry = 0;
};

/*
 * What deliver() does to the owner's QP before the handler call: Modify QP
 * happens outside the CM lock (the verbs context lock is taken inside it,
 * and a QP event handler may call into the CM), and never after destroy().
 */
enum class QpMove : uint8_t { None, Error, RtrRts, Rts };

/* A handler call, with a QP move first, waiting for deliver(). */
struct Pending {
	ListNode node;
	EventType type;
	QpMove qp = QpMove::None;
	bool then_rtu = false; /* Reply: send the RTU unless the handler refused */
	bool silent = false;   /* only the QP move: the event comes later */
	Ref<Id> listener;      /* Request, SidrRequest */
	RequestInfo req{};
	SidrInfo sidr{};
	uint16_t reason = 0;
	uint8_t ari_len = 0, pdata_len = 0;
	uint8_t ari[iba::cm::rej::ari_max];
	uint8_t pdata[iba::cm::pdata::rtu];

	void set_pdata(const uint8_t *p, size_t n);
};

class Id : public RefCounted<Id> {
public:
	/* The creator puts it on Cm::all (under the lock). */
	Id(verbs::Device &d, Handler &h, void *ctx);
	WEFT_NOCOPY(Id);
	~Id();
	/* The last reference hands the Id to the reaper (never freed inside its own timer). */
	static void release(Id *id);

	/* Everything below under Cm::lock. */
	Ref<verbs::Device> dev;
	CmPort *port = nullptr; /* set by connect or the arriving REQ; null once the port went */
	Handler *handler;
	void *context;
	State state = State::Idle;
	bool ulp_gone = false; /* destroy() called */
	bool in_table = false; /* on Cm::ids, with a reference */
	uint32_t local_id = 0, remote_id = 0;
	uint64_t service_id = 0, service_mask = 0;
	uint64_t tid = 0;
	uint64_t remote_ca_guid = 0;
	mad::MadAddr peer; /* where its CM MADs go */
	verbs::Qp *qp = nullptr;
	verbs::QpType qp_type = verbs::QpType::Rc; /* the owner's QP, attached or not */
	uint32_t qpn = 0;			    /* the owner's QP's number */
	bool manual_rtu = false;		    /* ConnectParam::manual_rtu */
	QpSetup setup;
	uint8_t pkt_life = 0;	      /* the path's PacketLifeTime (IBA 12.7.2) */
	uint8_t peer_cm_timeout = 0;  /* how long the peer may take to answer us */
	uint8_t max_cm_retries = 0, tries_left = 0;

	/* The last message sent, for retransmission and for answering duplicates. */
	mad::Mad msg;
	bool has_msg = false;
	uint32_t resend_ms = 0;

	/* Timer: a reference is held while timer_ref is set. */
	DelayedWork timer;
	uint64_t deadline = 0; /* ms; 0: nothing to time */
	bool timer_ref = false;

	List<Pending, &Pending::node> pending;
	/* Written under the lock, read without it by destroy()'s wait. */
	Atomic<bool> delivering{false};
	Atomic<const void *> deliverer{nullptr};

	/* established()'s work: its caller may be a QP's event handler. */
	Work comm_est;

	bool stopped = false; /* module exit: its works are cancelled */
	/* Listener: Requests whose handler is running (deliver()); read by destroy()'s wait. */
	Atomic<uint32_t> requests_in_flight{0};
	Id *serving = nullptr; /* a new Id: the listener whose Request handler runs for it */

	ListNode node;	    /* Cm::ids */
	ListNode all_node;  /* Cm::all */
	ListNode reap_node; /* Cm::reap */
};

class CmPort final : public mad::AgentHandler {
public:
	CmPort(mad::MadPort &mp);
	WEFT_NOCOPY(CmPort);
	~CmPort();
	Result<void> start();
	/* Stop receiving, then detach every Id of the port (under neither lock). */
	void stop();

	void recv(mad::Agent &a, const mad::Mad &m, const mad::MadAddr &from) override;
	void send_done(mad::Agent &, mad::SendReq &) override {}

	verbs::Device &dev;
	const uint8_t num;
	mad::MadService &gsi;
	mad::Agent agent;
	ListNode node; /* Cm::ports, under Cm::lock */

private:
	struct Rx {
		ListNode node;
		mad::Mad mad;
		mad::MadAddr from;
	};
	static void rx_work(Work &w);

	SpinLock rx_lock_;
	List<Rx, &Rx::node> rx_; /* under rx_lock_ */
	bool stopping_ = false;	 /* under rx_lock_ */
	Work work_;
	bool registered_ = false;
};

struct Cm {
	Cm();
	WEFT_NOCOPY(Cm);

	Mutex lock;
	List<Id, &Id::node> ids;	     /* connections and listeners, each with a reference */
	List<Id, &Id::all_node> all;	     /* every Id allocated, without a reference */
	List<CmPort, &CmPort::node> ports;
	uint32_t next_local_id;
	Atomic<uint32_t> live{0}; /* Ids allocated and not yet freed */
	Atomic<uint32_t> lingering{0}; /* of those, Ids whose owner is gone: DREQ retries, time-wait, the reaper */
	Atomic<uint64_t> freed{0};	/* Ids freed ever: what settle() and drain_ids() wait for */
	Atomic<uint64_t> comm_est{0};	/* established() calls (its callers hold no CM lock) */
	Stats stats{};
	mad::SendReq scratch; /* every send, under lock */

	SpinLock reap_lock;
	List<Id, &Id::reap_node> reap; /* under reap_lock */
	Work reaper;
	WaitQueue delivered; /* an Id stopped delivering */
	WaitQueue freed_wq;  /* an Id was freed */
};

extern Cm *cm;

uint64_t now_ms();

/* IBA 12.7.34: twice the PacketLifeTime, the wire's share of every CM wait, in ms. */
inline uint32_t round_trip_ms(uint8_t pkt_life)
{
	return 2 * iba::cm::timeout_ms(pkt_life);
}

/* --- id.cpp: table, timer, delivery ----------------------------------- */
void table_add_locked(Id &id);
void table_remove_locked(Id &id);
Id *find_local_locked(uint32_t local_id);
/* (Re)arm the Id's timer for @ms from now; 0 disarms. */
void arm_locked(Id &id, uint32_t ms);
/* Queue @p for the Id's owner; allocation failure loses only the event. */
Pending *queue_locked(Id &id, EventType t, QpMove qp = QpMove::None);
/* Run the Id's pending work (no lock held by the caller). */
void deliver(Id &id);
void timer_fn(DelayedWork &w);
/* Module exit: cancel every Id's timer and CommEst work, dropping their references. */
void stop_all_timers();
/* The owner is done with @id (destroy(), or an event that could not be queued for it). */
void owner_gone_locked(Id &id);
/*
 * Wait until at most @keep Ids are alive.  Each Id freed is progress; the
 * wait ends early only when none was freed for @quiet_ms.  Returns how
 * many are left above @keep (0: all went).  Module exit, with @keep 0.
 */
uint32_t drain_ids(uint32_t keep, uint32_t quiet_ms);
/* Log every Id still allocated, and WARN: something keeps Ids the CM is about to go without. */
void report_left_ids(uint32_t left);
/* Send the Id's msg (has_msg) to its peer; counts. */
void send_msg_locked(Id &id);
/* Send @m to @to without keeping it (answers to strangers, DREP, REJ of a REQ). */
void send_raw_locked(CmPort &p, mad::Mad &m, const mad::MadAddr &to);
/* A CM MAD header with @attr and @tid. */
void format_hdr(mad::Mad &m, uint16_t attr, uint64_t tid);
CmPort *find_port_locked(verbs::Device &dev, uint8_t port);

/* The Reply handler did not refuse: RTU and Established (active.cpp). */
void reply_accepted(Id &id);
/* CommEst reported by the owner (passive.cpp). */
void comm_est_work(Work &w);
/* The QP would not move as @p asked: end the connection (under lock). */
void qp_move_failed_locked(Id &id, const Pending &p);

/* --- qp.cpp: QP transitions on the ULP's behalf ----------------------- */
Result<void> qp_to_init(verbs::Qp &qp, const QpSetup &s);
Result<void> qp_to_rtr(verbs::Qp &qp, const QpSetup &s);
Result<void> qp_to_rts(verbs::Qp &qp, const QpSetup &s);
void qp_to_error(verbs::Qp &qp);
/* The attributes (and their mask) for moving a @type QP to @st with @s. */
uint32_t setup_attr(verbs::QpState st, verbs::QpType type, const QpSetup &s, verbs::QpAttr &a);
/* The index of @pkey in the port's table (full member preferred); ENOENT. */
Result<uint16_t> find_pkey(verbs::Device &dev, uint8_t port, uint16_t pkey);

/* --- active.cpp, passive.cpp, release.cpp, sidr.cpp: message handlers - */
void on_req(CmPort &p, const mad::Mad &m, const mad::MadAddr &from);
void on_mra(CmPort &p, const mad::Mad &m, const mad::MadAddr &from);
void on_rej(CmPort &p, const mad::Mad &m, const mad::MadAddr &from);
void on_rep(CmPort &p, const mad::Mad &m, const mad::MadAddr &from);
void on_rtu(CmPort &p, const mad::Mad &m, const mad::MadAddr &from);
void on_dreq(CmPort &p, const mad::Mad &m, const mad::MadAddr &from);
void on_drep(CmPort &p, const mad::Mad &m, const mad::MadAddr &from);
void on_lap(CmPort &p, const mad::Mad &m, const mad::MadAddr &from);
void on_sidr_req(CmPort &p, const mad::Mad &m, const mad::MadAddr &from);
void on_sidr_rep(CmPort &p, const mad::Mad &m, const mad::MadAddr &from);
/* A timer ran out for @id in its current state (under lock). */
void expire_locked(Id &id);
/* REJ for the connection @id is setting up; it ends (Idle or TimeWait). */
void send_rej_locked(Id &id, uint16_t reason, ConstBytes ari, ConstBytes pdata);
/* Enter time-wait (IBA 12.9.8): stale packets die out before the QP is reused. */
void enter_timewait_locked(Id &id);
/* Leave the table and go Idle. */
void to_idle_locked(Id &id);
/* Whatever destroy() owes the peer in the Id's state (under lock). */
void abandon_locked(Id &id);
/* SIDR_REP "rejected" for a SIDR request the owner dropped; Idle (sidr.cpp). */
void sidr_refuse_locked(Id &id);
/* Detach every Id of @p (its port is going): timers off, table left. */
void detach_port(CmPort &p);

template <typename T> T &body(mad::Mad &m)
{
	static_assert(sizeof(T) == iba::cm::data_size);
	return *reinterpret_cast<T *>(m.bytes + sizeof(iba::MadHeader));
}
template <typename T> const T &body(const mad::Mad &m)
{
	static_assert(sizeof(T) == iba::cm::data_size);
	return *reinterpret_cast<const T *>(m.bytes + sizeof(iba::MadHeader));
}

} // namespace weft::cm

#endif
