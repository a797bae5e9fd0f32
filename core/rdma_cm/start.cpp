// SPDX-License-Identifier: GPL-2.0
/* weft_rdma_cm's start and stop: the state, the verbs client, the address notifiers. */
#include "rcm.h"
#include "rcm_module.h"

using namespace weft;
using namespace weft::rdma_cm;

int weft_rcm_init(void)
{
	rcm = new (Gfp::Sleep) Rcm();
	if (!rcm)
		return -err::ENOMEM;
	auto r = addr_changes_init();
	if (r)
		r = devices_init();
	if (!r) {
		addr_changes_exit();
		delete rcm;
		rcm = nullptr;
		return -r.error().code();
	}
	int ret = weft_rcm_notifiers_register();
	if (ret) {
		devices_exit();
		addr_changes_exit();
		delete rcm;
		rcm = nullptr;
	}
	return ret;
}

void weft_rcm_exit(void)
{
	/* The ULPs are gone (they hold this module): only Ids the reaper still owes are left. */
	weft_rcm_notifiers_unregister();
	addr_changes_exit();
	rcm->reaper.flush();
	devices_exit();
	rcm->reaper.flush();
	uint32_t left = rcm->live.load(Order::Acquire);
	if (left)
		log.warn("%u ids left at exit", left);
	delete rcm;
	rcm = nullptr;
}

unsigned int weft_rcm_live_ids(void)
{
	return rcm ? rcm->live.load(Order::Relaxed) : 0;
}

unsigned int weft_rcm_live_listeners(void)
{
	return rcm ? stats().listeners : 0;
}
