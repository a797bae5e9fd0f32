// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the QP event glue of connected ULPs (verbs/conn_events.h).
 *
 * late_comm_est_vs_teardown opens the window of the race the glue
 * closes: a CommEst handler has read the attached Id and is about to
 * tell the CM, while the connection's teardown detaches and destroys
 * the Id (as weft_srp's Channel::disconnect and weft_isert's
 * Conn::release do).  The test hook, inside that window, starts the
 * teardown in a work item and waits for it: the Id must not be
 * destroyed before the handler is done with it.  Without the glue's
 * mutex the teardown finishes inside the window and the handler uses a
 * freed Id (a KASAN report on the debug kernel, and the case fails on
 * any kernel).
 */
#include <weft/test.h>
#include <weft/verbs/conn_events.h>
#include <weft/work.h>

using namespace weft;
using namespace weft::verbs;
using weft::test::Test;

namespace {

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

	static void established(FakeId &id);
	static void teardown_fn(Work &w);

	ConnEvents events;
	FakeId *id = nullptr;
	Work teardown;
	Completion started, torn_down;
	int hook_calls = 0;
	bool destroyed_in_window = false;
	Atomic<int> established_live{0}, established_dead{0};
};

Atomic<Window *> current{nullptr};

/* What the ULP's callback does with the Id (cm::established reads and writes it). */
void Window::established(FakeId &id)
{
	Window &w = *current.load(Order::Acquire);
	if (id.magic == FakeId::live)
		w.established_live.fetch_add(1, Order::Relaxed);
	else
		w.established_dead.fetch_add(1, Order::Relaxed);
	id.calls++;
}

/* The ULP's teardown: QP events detached from the Id, then the Id destroyed. */
void Window::teardown_fn(Work &wk)
{
	Window &w = *container_of(&wk, &Window::teardown);
	w.started.complete();
	w.events.detach();
	w.id->magic = 0;
	delete w.id;
	w.torn_down.complete();
}

/* Between the handler's read of the Id and its use: run the teardown, let it finish if it can. */
void in_window(ConnEvents &, void *)
{
	Window &w = *current.load(Order::Acquire);
	w.hook_calls++;
	w.teardown.queue();
	(void)w.started.wait(Timeout::msecs(10000));
	w.destroyed_in_window = w.torn_down.wait(Timeout::msecs(200)).ok();
}

struct HookGuard {
	explicit HookGuard(Window &w)
	{
		current.store(&w, Order::Release);
		conn_events_hook.store(&in_window, Order::Release);
	}
	~HookGuard()
	{
		conn_events_hook.store(nullptr, Order::Release);
		current.store(nullptr, Order::Release);
	}
	WEFT_NOCOPY(HookGuard);
};

Event event(EventType t)
{
	return Event{t, nullptr};
}

void late_comm_est_vs_teardown(Test &t)
{
	auto win = make_own<Window>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, win);
	Window &w = *win.value();
	w.id = new (Gfp::Sleep) FakeId;
	WEFT_ASSERT_TRUE(t, w.id != nullptr);
	w.events.attach(*w.id);
	{
		HookGuard hook(w);
		/* As the HCA's engine delivers a CommEst it raised before (SoftQp::raise_pending). */
		w.events.handle(event(EventType::CommEst));
		WEFT_ASSERT_OK(t, w.torn_down.wait(Timeout::msecs(30000)));
	}
	WEFT_EXPECT_EQ(t, w.hook_calls, 1);
	WEFT_EXPECT_FALSE(t, w.destroyed_in_window);
	WEFT_EXPECT_EQ(t, w.established_live.load(Order::Relaxed), 1);
	WEFT_EXPECT_EQ(t, w.established_dead.load(Order::Relaxed), 0);
}

void no_call_after_detach(Test &t)
{
	auto win = make_own<Window>(Gfp::Sleep);
	WEFT_ASSERT_OK(t, win);
	Window &w = *win.value();
	FakeId id;
	current.store(&w, Order::Release);
	w.events.handle(event(EventType::CommEst)); /* not attached yet */
	w.events.attach(id);
	w.events.handle(event(EventType::CommEst));
	w.events.detach();
	w.events.handle(event(EventType::CommEst));
	current.store(nullptr, Order::Release);
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
