/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MADs handed to a MadService without a wire: queued, and delivered in
 * order from a work item (process context, as a QP's poller delivers).
 * A port's SMI uses it for what never leaves the port (port_mad.cpp).
 */
#ifndef WEFT_MAD_LOOPBACK_H
#define WEFT_MAD_LOOPBACK_H

#include <weft/mad/service.h>

namespace weft::mad {

/* MADs handed back to this port's services without the wire, delivered in process context. */
class Loopback {
public:
	explicit Loopback(MadService &svc);
	WEFT_NOCOPY(Loopback);
	~Loopback();

	/* ENOMEM, or ENODEV once stopping. */
	Result<void> post(const Mad &m, const MadAddr &from);
	/* Two-phase: refuse new MADs, wait for the delivery work, drop the rest. */
	void stop();

private:
	struct Item {
		Mad mad;
		MadAddr from;
		ListNode node;
	};
	static void run(Work &w);

	MadService &svc_;
	SpinLock lock_;
	List<Item, &Item::node> items_; /* under lock_ */
	bool stopping_ = false;		/* under lock_ */
	Work work_;
};

} // namespace weft::mad

#endif
