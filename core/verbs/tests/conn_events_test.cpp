// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the QP event glue of connected ULPs (verbs/conn_events.h).
 *
 * late_comm_est_vs_teardown holds open the window of the race the glue
 * closes (verbs/test_conn_events.h): a CommEst handler holds the Id
 * while the connection's teardown detaches and destroys it.  Without the
 * glue's mutex the teardown finishes inside the window and the handler
 * uses a freed Id (a KASAN report on the debug kernel; the case fails on
 * any kernel).
 */
#include <weft/test.h>
#include <weft/verbs/test_conn_events.h>

using namespace weft;
using namespace weft::verbs;
using weft::test::Test;
using testing::conn_events_detail::FakeId;
using testing::conn_events_detail::Window;

namespace {

Event event(EventType t)
{
	return Event{t, nullptr};
}

void late_comm_est_vs_teardown(Test &t)
{
	auto r = testing::run_conn_events_race();
	WEFT_ASSERT_OK(t, r);
	const testing::ConnEventsRace &race = r.value();
	WEFT_EXPECT_EQ(t, race.hook_calls, 1);
	WEFT_EXPECT_FALSE(t, race.destroyed_in_window);
	WEFT_EXPECT_EQ(t, race.established_live, 1);
	WEFT_EXPECT_EQ(t, race.established_dead, 0);
}

void no_call_after_detach(Test &t)
{
	auto win = make_own<Window>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, win);
	Window &w = *win.value();
	FakeId id;
	Window::current() = &w;
	w.events.handle(event(EventType::CommEst)); /* not attached yet */
	w.events.attach(id);
	w.events.handle(event(EventType::CommEst));
	w.events.detach();
	w.events.handle(event(EventType::CommEst));
	Window::current() = nullptr;
	WEFT_EXPECT_EQ(t, id.calls, 1u);
}

struct Owner {
	int failed = 0;
	static void on_failed(void *o) { static_cast<Owner *>(o)->failed++; }
};

/* IBA 11.6.3.1: the QP's own errors reach the owner, with or without an Id. */
void errors_reach_owner(Test &t)
{
	Owner o;
	ConnEvents ev(on_established<FakeId, Window::established>, Owner::on_failed, &o);
	ev.handle(event(EventType::QpFatal));
	ev.handle(event(EventType::QpReqErr));
	ev.handle(event(EventType::QpAccessErr));
	ev.handle(event(EventType::SqDrained));
	ev.handle(event(EventType::QpLastWqeReached));
	WEFT_EXPECT_EQ(t, o.failed, 3);
	ConnEvents quiet(on_established<FakeId, Window::established>, nullptr, nullptr);
	quiet.handle(event(EventType::QpFatal)); /* no owner callback: nothing */
}

} // namespace

WEFT_TEST_SUITE(weft_verbs_conn_events, WEFT_CASE(errors_reach_owner), WEFT_CASE(late_comm_est_vs_teardown),
		WEFT_CASE(no_call_after_detach));
