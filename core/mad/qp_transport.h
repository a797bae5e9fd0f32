/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MADs on the wire: a MadTransport over a port's GSI QP (QP1, IBA 13.5.1)
 * with the port's MadService on top.  Receives arrive on a ring of posted
 * buffers and are handed to the service from a work item (process
 * context, so agents may sleep); each send gets its own copy of the MAD
 * and an address handle, released when its completion is polled.
 */
#ifndef WEFT_MAD_QP_TRANSPORT_H
#define WEFT_MAD_QP_TRANSPORT_H

#include <weft/verbs/verbs.h>

#include <weft/mad/service.h>

namespace weft::mad {

/* IBA 13.5.1: QP1's well-known Q_Key. */
inline constexpr uint32_t gsi_qkey = 0x80010000;

class GsiTransport final : public MadTransport {
public:
	GsiTransport(verbs::Device &dev, uint8_t port);
	WEFT_NOCOPY(GsiTransport);
	~GsiTransport();

	/* Open a context, create QP1 of the port and bring it to RTS with receives posted. */
	Result<void> start();
	/* Two-phase: stop the poller, destroy QP1 (flushing), release everything. */
	void stop();

	/* Process context.  ENOMEM, or the verbs error of the AH or the post. */
	Result<void> transmit(const Mad &m, const MadAddr &to) override;

	MadService service{*this};

private:
	static constexpr uint32_t ring = 16;
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

	verbs::Device &dev_;
	const uint8_t port_;
	verbs::Context *ctx_ = nullptr;
	verbs::Pd *pd_ = nullptr;
	verbs::Mr *mr_ = nullptr;
	verbs::Cq *cq_ = nullptr;
	verbs::Qp *qp_ = nullptr;
	Array<RecvBuf> bufs_;
	/* Set before the poller is cancelled; checked where it is queued (under poll_lock_). */
	SpinLock poll_lock_;
	bool stopping_ = false;
	Work poll_work_;
};

} // namespace weft::mad

#endif
