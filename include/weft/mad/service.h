/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The MAD service of one port (IBA Vol 1 13.4-13.5): agents register for a
 * management class, class version and methods; requests they send carry a
 * timeout and a retry count and are matched with their responses by TID;
 * unsolicited requests go to the agent registered for them; a Get or Set
 * nobody serves is answered with the IBA error status.  The service moves
 * MADs through a MadTransport (QP0/QP1 of a port; a loopback in tests).
 */
#ifndef WEFT_MAD_SERVICE_H
#define WEFT_MAD_SERVICE_H

#include <weft/alloc.h>
#include <weft/atomic.h>
#include <weft/iba/mad.h>
#include <weft/list.h>
#include <weft/span.h>
#include <weft/lock.h>
#include <weft/wait.h>
#include <weft/work.h>

namespace weft::mad {

/*
 * The global route of a GMP (IBA 8.3, 13.5.1): sent, the GRH to build; received,
 * the route back to its sender, as in-tree ib_init_ah_attr_from_wc() makes it.
 */
struct MadGrh {
	uint8_t gid[16] = {};	 /* the far end: DGID sent, the sender's SGID received */
	uint32_t flow_label = 0; /* 20 bits */
	uint8_t sgid_index = 0;	 /* the near end in the port's GID table: SGID sent, DGID received */
	uint8_t hop_limit = 0;	 /* received: 0xff, the reply may cross every router */
	uint8_t traffic_class = 0;
};

/* Where a MAD comes from or goes to (IBA 13.5.1: the addressing a GSI/SMI datagram needs). */
struct MadAddr {
	uint16_t lid = 0;
	uint32_t qpn = 0;
	uint32_t qkey = 0;
	uint16_t pkey_index = 0;
	uint8_t sl = 0;
	bool global = false; /* with a GRH (@grh); never on QP0 */
	MadGrh grh;
};

struct Mad {
	uint8_t bytes[iba::mad_size];

	iba::MadHeader &hdr() { return *reinterpret_cast<iba::MadHeader *>(bytes); }
	const iba::MadHeader &hdr() const { return *reinterpret_cast<const iba::MadHeader *>(bytes); }
};

class MadTransport {
public:
	virtual Result<void> transmit(const Mad &m, const MadAddr &to) = 0;

protected:
	~MadTransport() = default;
};

/*
 * The longest RMPP message (IBA 13.6) of a class this stack reassembles or
 * accepts to send.  IBA lets PayloadLength (13.6.2.1) announce up to
 * 2^32-1 bytes; the in-tree 6.1 MAD layer caps nothing (it chains one
 * buffer per segment until memory runs out, and takes a umad write of any
 * length).  The SA class gets 64 MiB: OpenSM's largest SA tables for a
 * full subnet of 48K LIDs fit many times over (every NodeRecord, 112
 * bytes each with padding: 5.4 MiB; every PortInfoRecord of 64K ports at
 * 72 bytes: 4.5 MiB; one source's PathRecords to every LID: 3 MiB).  What
 * does not fit: every switch's LinearForwardingTableRecords in a fabric of
 * more than about 1,200 switches (768 records of 72 bytes, 54 KiB, per
 * switch) and an unrestricted all-pairs PathRecord table.  Other RMPP
 * classes (device management, vendor) get 1 MiB.
 */
constexpr size_t rmpp_max_message(uint8_t mgmt_class)
{
	return mgmt_class == iba::mgmt_class::subn_adm ? size_t(64) << 20 : size_t(1) << 20;
}

class Agent;
namespace rmpp {
class Receiver;
class Sender;
}

/*
 * A request waiting for its response.  The sender owns it; between a
 * successful send() and its send_done() callback the service uses it.
 */
struct SendReq {
	SendReq() = default;
	WEFT_NOCOPY(SendReq);
	~SendReq();

	Mad mad;
	/*
	 * For an RMPP agent (IBA 13.6): a message longer than one MAD, its
	 * headers then its data, sent in segments instead of @mad.  Only read
	 * during send().
	 */
	ConstBytes long_msg;
	MadAddr to;
	uint32_t timeout_ms = 0; /* 0: no response expected (responses, traps) */
	uint8_t retries = 0;
	/* On send_done: 0 with the response, ETIMEDOUT after the retries, ECANCELED at unregistration. */
	int status = 0;
	Mad response;
	/* An RMPP agent's reassembled response (its first 256 bytes are also in @response). */
	Array<uint8_t> long_response;
	size_t long_len = 0;
	MadAddr from;

	ListNode node;

private:
	friend class MadService;
	Agent *agent_ = nullptr;
	uint64_t deadline_ = 0; /* ms, monotonic */
	uint8_t tries_left_ = 0;
	bool sending_ = false; /* inside send(): it finishes whatever ends the request */
	uint8_t redirects_ = 0; /* IBA 13.5.3.3: redirections followed */
	bool ended_ = false;
	bool segmented_ = false; /* sent by RMPP: its segments are the RMPP sender's to resend */
	rmpp::Receiver *rx_ = nullptr; /* a response arriving in segments */
};

class AgentHandler {
public:
	/* An unsolicited MAD for a method this agent registered. */
	virtual void recv(Agent &a, const Mad &m, const MadAddr &from) = 0;
	/* A request of this agent completed: answered, timed out or cancelled. */
	virtual void send_done(Agent &a, SendReq &r) = 0;
	/*
	 * An RMPP agent's unsolicited request of more than one segment (IBA
	 * 13.6), reassembled: @len bytes of @msg, the first segment's headers
	 * then the data.  The handler may take @msg.  False (the default, for
	 * agents that serve no such request): not taken, a counted drop.
	 */
	virtual bool recv_message(Agent &, Array<uint8_t> &, size_t, const MadAddr &) { return false; }

protected:
	~AgentHandler() = default;
};

class Agent {
public:
	Agent(AgentHandler &h, uint8_t mgmt_class, uint8_t class_version) :
		handler(h), mgmt_class(mgmt_class), class_version(class_version)
	{
	}
	WEFT_NOCOPY(Agent);

	/* Serve method @m (IBA 13.4.5); a response method makes registration fail. */
	void add_method(uint8_t m) { methods_[m / 32] |= 1u << (m % 32); }
	bool serves(uint8_t m) const { return (methods_[m / 32] >> (m % 32)) & 1; }

	AgentHandler &handler;
	const uint8_t mgmt_class, class_version;
	/* Set before registering: the service does RMPP (IBA 13.6) for this agent. */
	bool rmpp = false;
	/* Set before registering, for vendor classes 0x30-0x4f: the OUI it serves (IBA 13.4.9). */
	uint32_t oui = 0;
	ListNode node;

private:
	friend class MadService;
	uint32_t methods_[8] = {}; /* a bit per method value; 0x80 and up are responses */
	uint32_t id_ = 0;      /* the high half of the TIDs it sends */
	uint32_t active_ = 0;  /* callbacks running; under the service's lock */
	bool registered_ = false;
};

class MadService {
public:
	explicit MadService(MadTransport &t);
	WEFT_NOCOPY(MadService);
	~MadService();

	/*
	 * EINVAL: a response method, or registered already; EBUSY: a method
	 * another agent of the class and version serves.  An agent with no
	 * methods only sends requests and receives their responses.
	 */
	Result<void> register_agent(Agent &a);
	/*
	 * Cancel the agent's outstanding requests (send_done with ECANCELED),
	 * then wait for its callbacks to return: none comes after this.
	 */
	void unregister_agent(Agent &a);
	/*
	 * Send @r for @a.  A request with a timeout gets a TID naming the
	 * agent and waits for its response; errors: EINVAL (agent not
	 * registered), the transport's.
	 */
	Result<void> send(Agent &a, SendReq &r);
	/*
	 * A MAD from the transport.  Process context: agents' handlers run
	 * here, and a request nobody serves is answered through transmit().
	 */
	void receive(const Mad &m, const MadAddr &from);

	/* Dropped: malformed, unmatched responses, no agent and no answer due. */
	uint64_t dropped() const { return dropped_.load(Order::Relaxed); }

	/*
	 * Unsolicited multi-segment RMPP requests being reassembled at once
	 * (IBA 13.6.5.2 sets no number): per port and per agent; a first
	 * segment past either, or past the port's byte budget, is refused with
	 * STOP (ResX) and counted.  The budget is one SA message of the largest.
	 */
	static constexpr uint32_t max_rmpp_recvs = 16, max_rmpp_recvs_per_agent = 8;
	static constexpr size_t rmpp_recv_budget = rmpp_max_message(iba::mgmt_class::subn_adm);
	/* Time a transfer gets to complete before it is ABORTed (in-tree's 40 s); tests shorten it. */
	void set_rmpp_recv_timeout(uint32_t ms) { rmpp_recv_timeout_ms_ = ms; }
	/* Tests: a smaller byte budget than rmpp_recv_budget. */
	void set_rmpp_recv_budget(size_t bytes) { rmpp_recv_budget_ = bytes; }
	/* Transfers being reassembled, and their buffers' bytes (tests). */
	uint32_t rmpp_receiving();
	size_t rmpp_receiving_bytes();

private:
	/* One RMPP message being sent (rmpp.h), until its last segment is acknowledged. */
	struct RmppSend {
		ListNode node;
		rmpp::Sender *sender;
		MadAddr to;
		uint32_t timeout_ms;
		uint64_t deadline;
		uint8_t tries_left;
		/* Pumps sending its segments (without the lock); the last one frees it once done. */
		uint32_t users;
		bool done;
	};

	/* One unsolicited RMPP message being reassembled, then kept a while to re-ACK repeats. */
	struct RmppRecv {
		ListNode node;
		rmpp::Receiver *rx;
		iba::MadHeader hdr; /* its first segment's: the key, and the header of an ABORT */
		MadAddr from;
		uint32_t agent_id;
		uint64_t deadline; /* ms: ABORTed if still incomplete, forgotten if complete */
		bool complete;
	};

	static void tick(DelayedWork &w);
	void drop() { dropped_.fetch_add(1, Order::Relaxed); }
	bool end_locked(SendReq &r, int status);
	bool follow_redirect_locked(SendReq &r, const Mad &m, Mad &copy, MadAddr &to);
	static bool came_back(const SendReq &r, const Mad &m, const MadAddr &from);
	Result<void> rmpp_send(Agent &a, SendReq &r);
	void rmpp_pump(RmppSend &s);
	void rmpp_finish_locked(RmppSend &s);
	void rmpp_put(RmppSend &s);
	static void rmpp_tick(DelayedWork &w);
	bool rmpp_receive(const Mad &m, const MadAddr &from);
	void rmpp_ack_arrived(const Mad &m);
	void rmpp_response_segment(const Mad &m, const MadAddr &from);
	SendReq *rmpp_request_locked(const Mad &m, const MadAddr *from = nullptr);
	bool rmpp_receiver_stopped(const Mad &m);
	bool rmpp_request_segment(const Mad &m, const MadAddr &from);
	RmppRecv *rmpp_recv_find_locked(const Mad &m, const MadAddr &from);
	RmppRecv *rmpp_recv_start_locked(const Mad &m, const MadAddr &from, Mad &reply, bool &refused);
	void rmpp_recv_free_locked(RmppRecv &r);
	void rmpp_recv_arm_locked();
	bool rmpp_recv_step_locked(RmppRecv &r, const Mad &m, Mad &reply, Array<uint8_t> &msg, size_t &len);
	void rmpp_deliver(Array<uint8_t> &msg, size_t len, const MadAddr &from);
	static void rmpp_recv_tick(DelayedWork &w);
	static void arm_at(DelayedWork &w, uint64_t first);
	void arm_timer_locked();
	void deliver_response(const Mad &m, const MadAddr &from);
	void deliver_request(const Mad &m, const MadAddr &from);
	void put_agent(Agent &a);
	Agent *find_agent_locked(const Mad &m, bool &class_known);

	MadTransport &transport_;
	SpinLock lock_;
	List<Agent, &Agent::node> agents_;	       /* under lock_ */
	List<SendReq, &SendReq::node> outstanding_; /* under lock_ */
	uint32_t next_id_ = 1;			       /* under lock_ */
	Atomic<uint64_t> dropped_{0};
	WaitQueue idle_;
	DelayedWork timer_;
	/* RMPP messages in flight (process context only); transmits happen without it. */
	Mutex rmpp_lock_;
	List<RmppSend, &RmppSend::node> rmpp_sends_; /* under rmpp_lock_ */
	DelayedWork rmpp_timer_;
	List<RmppRecv, &RmppRecv::node> rmpp_recvs_; /* under rmpp_lock_ */
	size_t rmpp_recv_bytes_ = 0;		      /* their buffers, under rmpp_lock_ */
	uint32_t rmpp_recv_timeout_ms_ = 40000;
	size_t rmpp_recv_budget_ = rmpp_recv_budget;
	DelayedWork rmpp_recv_timer_;
};

} // namespace weft::mad

#endif
