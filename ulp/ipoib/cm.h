/* SPDX-License-Identifier: GPL-2.0 */
/*
 * IPoIB connected mode (RFC 4755) of one interface: RC connections beside
 * the UD QP, one per peer and direction, through weft_cm.
 *
 * Sending (active side): the first packet for a peer whose address has
 * the C flag creates a TxConn (Connecting) and queues work_, which
 * resolves the path, creates an RC QP and sends the REQ to the peer's
 * service ID; packets wait on the TxConn meanwhile (a few).  Once
 * Established they go on the RC QP.  A peer without the flag, or whose
 * connection failed (REJ, no answer), gets datagrams: packets larger
 * than the UD MTU are answered with ICMP "too big" (PMTU discovery) and
 * dropped.  A failed peer is tried again after retry_ms.
 *
 * Receiving (passive side): from the first open, in either mode (the C
 * flag in our address stands), a listener takes REQs on our service ID;
 * each gets an RC QP on the shared SRQ, whose buffers hold 65524 bytes
 * (cm_data.cpp).  A datagram-mode interface thus receives over a
 * connected-mode peer's connection and answers with datagrams.  A
 * passive connection goes with the peer's DREQ or, for a peer that went
 * away without one, once its QP has received nothing for twice
 * dest_idle_secs (age_rx, in either mode).
 *
 * Locks: lock_ (BH) guards the TxConn list, their states and rings and
 * slots_.  mutex_ guards the RxConn list.  Neither is held across a CM
 * or Modify QP call.  events_lock_ (BH) guards what a passive QP's event
 * handler may reach (RxConn::event_id); the handler only calls
 * cm::established() under it.
 *
 * Work: work_ (process context) reconciles the mode (listener up,
 * sending connections torn down in datagram mode, all on a flush),
 * connects Connecting peers, and releases dead connections.
 *
 * Releasing a passive connection has two phases, because its QP must
 * outlive its Id (the CM moves it) while the QP's events lead to the Id:
 * first no new work (QP events no longer reach the Id, a CommEst the HCA
 * raised earlier and delivers late included), then drain (cm::destroy:
 * no handler call after it; the QP destroyed: no QP event after it), then
 * free the RxConn.
 *
 * Teardown (destroy(), after the netdev is unregistered: no xmit, no
 * poll): no new work, listener gone, work cancelled, every connection
 * released (as above for the passive ones), rings and SRQ buffers freed,
 * SRQ and CQ destroyed.
 */
#ifndef WEFT_IPOIB_CM_H
#define WEFT_IPOIB_CM_H

#include <weft/atomic.h>
#include <weft/cm/cm.h>
#include <weft/verbs/verbs.h>
#include <weft/work.h>

#include "addr.h"
#include "cm_proto.h"
#include "ipoib_kapi.h"

namespace weft::ipoib {

class Interface;

struct CmParams {
	uint32_t srq_size;  /* SRQ receive buffers */
	uint32_t ring_size; /* send ring of one connection */
	uint32_t max_conns; /* active connections */
	bool advertise;	    /* the C flag in our address */
};

/*
 * KUnit only (ulp/ipoib/tests/cm_release_test.cpp); unset in production.
 * release_rx calls rx_released once the connection's Id is destroyed and
 * before its QP is: the window in which the HCA may still deliver a QP
 * event it raised earlier, such as CommEst.
 */
struct CmTestHooks {
	using RxReleased = void (*)(verbs::EventHandler &events, verbs::Qp &qp, void *arg);
	/* Set by a test while connections are released (in work_). */
	Atomic<RxReleased> rx_released{nullptr};
	Atomic<void *> arg{nullptr};
};
extern constinit CmTestHooks cm_test_hooks;

class Cm final : public cm::Handler {
public:
	static Result<Cm *> create(Interface &ifc, const CmParams &p);
	void destroy();

	/* Connected mode chosen (fast path reads it without a lock). */
	bool connected() const { return connected_.load(Order::Acquire); }
	/* rtnl held (ipoib_kapi.h). */
	int set_mode(bool connected);
	/* Port events, interface down: every connection goes. */
	void flush();
	/* The interface opened: listener and SRQ buffers up (in work_), whatever the mode. */
	void listen() { kick(); }
	/*
	 * Sending connections idle for dest_idle_secs go, and the peers'
	 * connections that received nothing for twice that (in work_).
	 */
	void age();

	/*
	 * start_xmit, transmit lock held: 0 if the skb was taken (sent on a
	 * connection, waiting for one, or too big for datagrams), 1 if the
	 * connection's ring is full (queue stopped), -1 for the UD path.
	 */
	int xmit(void *skb, const HwAddr &dst);
	/* NAPI: completions of the RC QPs and the SRQ; then re-arm (true: poll again). */
	int poll(int budget);
	bool req_notify();
	/* ethtool -C (Interface::set_coalesce). */
	void moderate(uint16_t frames, uint16_t usecs) { cq_->moderate(frames, usecs); }
	/* RFC 4755 §4: the service ID peers connect to (our UD QPN). */
	uint64_t service_id() const;
	/* The listener is up (work_ set it up after the first open or listen()). */
	bool listening() const { return listener_.load(Order::Acquire) != nullptr; }

	int event(const cm::Event &e) override;

private:
	struct TxSlot {
		void *skb;
		uint32_t len;
	};
	enum class TxState : uint8_t { Connecting, Up, Failed };
	static constexpr uint32_t max_pending = 16;

	struct Conn {
		bool passive;
		cm::Id *id = nullptr;
		verbs::Qp *qp = nullptr;
		explicit Conn(bool p) : passive(p) {}
	};
	struct TxConn : Conn {
		TxConn() : Conn(false) {}
		HwAddr dst{};
		TxState state = TxState::Connecting;
		bool started = false;  /* work_ sent the REQ */
		bool release = false;  /* work_ must destroy Id and QP */
		uint64_t failed_at = 0;
		uint64_t used_at = 0;	/* ms of the last packet for it (lock_) */
		uint32_t mtu = 0;	/* the peer's largest packet */
		uint32_t slot = 0, gen = 0;
		Array<TxSlot> ring;
		uint32_t head = 0, tail = 0;
		void *pending[max_pending];
		uint32_t npending = 0;
		ListNode node;
	};
	struct RxConn final : Conn, verbs::EventHandler {
		RxConn(Cm &c) : Conn(true), cm(c) {}
		void handle(const verbs::Event &e) override;
		Cm &cm;
		/* The Id as the QP's events see it (cm.events_lock_): gone before the Id is destroyed. */
		cm::Id *event_id = nullptr;
		bool dead = false;
		/* age_rx (under mutex_): the receive PSN last seen, and since when (ms). */
		uint32_t seen_psn = 0;
		uint64_t seen_at = 0;
		ListNode rx_node;
	};
	struct RxBuf {
		void *skb;
		weft_ipoib_sg sg[WEFT_IPOIB_CM_SG];
	};

	Cm(Interface &ifc, const CmParams &p);
	~Cm() = default;
	Result<void> setup();

	/* cm.cpp: connections. */
	static void work_fn(Work &w);
	void reconcile();
	void connect(TxConn &c);
	Result<verbs::Qp *> rc_qp(verbs::EventHandler *events, uint32_t send_wr);
	int on_request(const cm::Event &e);
	void tx_event(TxConn &c, const cm::Event &e);
	void rx_event(RxConn &c, const cm::Event &e);
	void fail(TxConn &c, uint64_t retry_after_now);
	void release_tx(TxConn &c);
	void release_rx(RxConn &c);
	void teardown_all(bool passive = true);
	void kick();
	void age_tx();
	void age_rx();
	uint64_t now_ms() const;

	/* cm_data.cpp: the fast path. */
	TxConn *find_locked(const HwAddr &dst);
	TxConn *add_locked(const HwAddr &dst);
	bool post_locked(TxConn &c, void *skb);
	void send_pending(TxConn &c);
	void drain_ring(TxConn &c);
	void handle_tx(const verbs::Wc &wc);
	void handle_rx(const verbs::Wc &wc);
	Result<void> post_rx(uint32_t idx, bool can_sleep);
	void free_rx();
	void too_big(void *skb);
	void ud_send(void *skb, const HwAddr &dst);

	Interface &ifc_;
	const CmParams params_;
	verbs::Cq *cq_ = nullptr;
	verbs::Srq *srq_ = nullptr;
	Array<RxBuf> rx_;
	Atomic<cm::Id *> listener_{nullptr}; /* written by work_ only (and destroy() after it) */

	SpinLock events_lock_;

	SpinLock lock_;
	List<TxConn, &TxConn::node> tx_conns_; /* under lock_ */
	Array<TxConn *> slots_;		       /* under lock_: wr_id -> connection */
	uint32_t nconns_ = 0, gen_ = 0;	       /* under lock_ */

	Mutex mutex_;
	List<RxConn, &RxConn::rx_node> rx_conns_; /* under mutex_ */

	/* Read without a lock (fast path, CM handlers, listening()). */
	Atomic<bool> connected_{false};
	Atomic<bool> dying_{false};
	Atomic<bool> flush_{false};
	Work work_;
};

} // namespace weft::ipoib

#endif
