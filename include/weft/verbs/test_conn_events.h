/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test support: the race verbs::ConnEvents closes (conn_events.h), with
 * its window held open.  A CommEst handler has read the attached Id and
 * is about to tell the CM while the connection's teardown detaches and
 * destroys the Id, as weft_srp's Channel::disconnect and weft_isert's
 * Conn::release do.  The test hook, inside that window, starts the
 * teardown in a work item and gives it 200 ms to finish: it must not
 * destroy the Id before the handler is done with it.  Used by the KUnit
 * suite weft_verbs_conn_events and by the stock-kernel module
 * weft_selftest_conn_events (tests/integration/conn_events.sh).
 */
#ifndef WEFT_VERBS_TEST_CONN_EVENTS_H
#define WEFT_VERBS_TEST_CONN_EVENTS_H

#include <weft/alloc.h>
#include <weft/verbs/conn_events.h>
#include <weft/work.h>

namespace weft::verbs::testing {

struct ConnEventsRace {
	int hook_calls = 0;
	bool destroyed_in_window = false; /* the teardown finished while the handler held the Id */
	int established_live = 0;	  /* callbacks that found the Id alive */
	int established_dead = 0;	  /* callbacks that found it destroyed */
};

namespace conn_events_detail {

/* Stands in for a CM Id: freed by the teardown, as cm::destroy frees one. */
struct FakeId {
	static constexpr uint32_t live = 0x1d1d1d1d;
	uint32_t magic = live;
	uint32_t calls = 0;
};

struct Window {
	Window()
		: events(on_established<FakeId, established>, nullptr, nullptr),
		  teardown(teardown_fn, WEFT_LOCK_CLASS("weft_verbs_test_teardown"))
	{
	}
	~Window() { teardown.cancel_sync(); }
	WEFT_NOCOPY(Window);

	static Window *&current()
	{
		static constinit Window *w = nullptr;
		return w;
	}

	/* What the ULP's callback does with the Id (cm::established reads and writes it). */
	static void established(FakeId &id)
	{
		ConnEventsRace &r = current()->result;
		if (id.magic == FakeId::live)
			r.established_live++;
		else
			r.established_dead++;
		id.calls++;
	}

	/* The ULP's teardown: QP events detached from the Id, then the Id destroyed. */
	static void teardown_fn(Work &wk)
	{
		Window &w = *container_of(&wk, &Window::teardown);
		w.started.complete_all(); /* done for every waiter: the hook's and the runner's */
		w.events.detach();
		w.id->magic = 0;
		delete w.id;
		w.torn_down.complete_all();
	}

	/* Between the handler's read of the Id and its use: run the teardown, let it finish if it can. */
	static void in_window(ConnEvents &, void *)
	{
		Window &w = *current();
		w.result.hook_calls++;
		w.teardown.queue();
		(void)w.started.wait(Timeout::msecs(10000));
		w.result.destroyed_in_window = w.torn_down.wait(Timeout::msecs(200)).ok();
	}

	ConnEvents events;
	FakeId *id = nullptr;
	Work teardown;
	Completion started, torn_down;
	ConnEventsRace result;
};

} // namespace conn_events_detail

/*
 * Attach a fresh Id, deliver a CommEst as the HCA's engine does for one
 * it raised before (SoftQp::raise_pending), with the hook set for that
 * call only (the caller runs one race at a time).  ETIMEDOUT: the
 * teardown never finished.
 */
inline Result<ConnEventsRace> run_conn_events_race()
{
	using namespace conn_events_detail;
	auto win = WEFT_TRY(make_own<Window>(Gfp::Sleep));
	Window &w = *win;
	w.id = new (Gfp::Sleep) FakeId;
	if (!w.id)
		return Error(err::ENOMEM);
	w.events.attach(*w.id);
	Window::current() = &w;
	conn_events_hook.store(&Window::in_window, Order::Release);
	w.events.handle(Event{EventType::CommEst, nullptr});
	conn_events_hook.store(nullptr, Order::Release);
	auto done = w.torn_down.wait(Timeout::msecs(30000));
	Window::current() = nullptr;
	if (!done)
		return done.error();
	return w.result;
}

} // namespace weft::verbs::testing

#endif
