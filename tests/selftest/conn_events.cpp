// SPDX-License-Identifier: GPL-2.0
/*
 * weft_selftest_conn_events: the race verbs::ConnEvents closes, run at
 * load on any kernel (verbs/test_conn_events.h), for kernels without
 * KUnit.  Load fails with EIO when the Id was destroyed while the
 * handler held it.
 */
#include <weft/log.h>
#include <weft/verbs/test_conn_events.h>

using namespace weft;

/* Called by the module's init (conn_events_mod.c). */
extern "C" int weft_selftest_conn_events_run(void);

int weft_selftest_conn_events_run(void)
{
	const Logger log("weft_selftest_conn_events");
	auto r = verbs::testing::run_conn_events_race();
	if (!r) {
		log.warn("WEFT-CONN-EVENTS the teardown never finished (%d)", r.to_errno());
		return r.to_errno();
	}
	const verbs::testing::ConnEventsRace &race = r.value();
	log.info("WEFT-CONN-EVENTS hook_calls=%d destroyed_in_window=%d established_live=%d established_dead=%d",
		 race.hook_calls, race.destroyed_in_window ? 1 : 0, race.established_live,
		 race.established_dead);
	const bool good = race.hook_calls == 1 && !race.destroyed_in_window && race.established_live == 1 &&
			  !race.established_dead;
	return good ? 0 : -err::EIO;
}
