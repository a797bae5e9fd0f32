/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MADs on the wire: one of a port's special QPs, QP0 (SMI) or QP1 (GSI),
 * IBA 13.5.1, as a datagram pipe for whole MADs.  Receives arrive on a
 * ring of posted buffers and are handed to the sink from a work item
 * (process context, so agents may sleep); each send gets its own copy of
 * the MAD and an address handle, released when its completion is polled.
 * What runs on top (directed-route processing, the device's firmware
 * agents, the MadService) is the port's business (port.cpp).
 */
#ifndef WEFT_MAD_QP_TRANSPORT_H
#define WEFT_MAD_QP_TRANSPORT_H

#include <weft/atomic.h>
#include <weft/verbs/verbs.h>

#include <weft/mad/service.h>

namespace weft::mad {

/* IBA 13.5.1: QP1's well-known Q_Key. */
inline constexpr uint32_t gsi_qkey = 0x80010000;

/* Where a special QP's arrivals go (process context). */
class MadSink {
public:
	virtual void arrived(const Mad &m, const MadAddr &from) = 0;

protected:
	~MadSink() = default;
};

class QpTransport final {
public:
	/* @type: QpType::Smi (QP0) or QpType::Gsi (QP1). */
	QpTransport(verbs::Device &dev, uint8_t port, verbs::QpType type, MadSink &sink);
	WEFT_NOCOPY(QpTransport);
	~QpTransport();

	/* Open a context, create the QP and bring it to RTS with receives posted. */
	Result<void> start();
	/* Two-phase: stop the poller, destroy the QP (flushing), release everything. */
	void stop();

	/*
	 * Process context.  ENOMEM, ENODEV (stopped), or the verbs error of the AH (EINVAL: no GID at the SGID index) or the post.
	 */
	Result<void> send(const Mad &m, const MadAddr &to);
	/* GMPs with a GRH whose DGID is none of the port's GIDs, dropped. */
	uint64_t foreign_dgid() const { return foreign_dgid_.load(Order::Relaxed); }

private:
	/*
	 * Receive buffers: a burst of CM MADs for 64 connections at once, and
	 * more than an RMPP window (rmpp.h); the in-tree MAD layer posts 512 too.
	 */
	static constexpr uint32_t ring = 512;
	static constexpr uint32_t grh_area = 40; /* IBA 11.4.1.2: UD receives start with it */
	struct RecvBuf {
		uint8_t bytes[grh_area + iba::mad_size];
	};
	struct SendSlot {
		Mad mad;
		verbs::Ah *ah;
	};

	static void cq_event(verbs::Cq &cq, void *arg);
	static void poll(Work &w);
	Result<void> post_recv(uint32_t i);
	void handle(const verbs::Wc &wc);
	bool route_back_of(const RecvBuf &b, MadAddr &from);

	verbs::Device &dev_;
	const uint8_t port_;
	const verbs::QpType type_;
	MadSink &sink_;
	verbs::Context *ctx_ = nullptr;
	verbs::Pd *pd_ = nullptr;
	verbs::Mr *mr_ = nullptr;
	verbs::Cq *cq_ = nullptr;
	verbs::Qp *qp_ = nullptr;
	Array<RecvBuf> bufs_;
	/* Set before the poller is cancelled; checked where it is queued (under poll_lock_). */
	SpinLock poll_lock_;
	bool stopping_ = false;
	/* Senders in send(); stop() waits for them before destroying the QP. */
	Mutex send_lock_;
	Work poll_work_;
	Atomic<uint64_t> foreign_dgid_{0};
};

} // namespace weft::mad

#endif
