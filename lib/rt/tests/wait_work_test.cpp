// SPDX-License-Identifier: GPL-2.0
/* KUnit: completions, wait queues, work items, delayed work, workqueues. */
#include <weft/atomic.h>
#include <weft/test.h>
#include <weft/wait.h>
#include <weft/work.h>

using namespace weft;
using weft::test::Test;

namespace {

struct Signal {
	Signal()
		: wq(WEFT_LOCK_CLASS("test_signal_wq")), work(fire, WEFT_LOCK_CLASS("test_signal_work")),
		  delayed(fire_late, WEFT_LOCK_CLASS("test_signal_dwork"))
	{
	}
	static void fire(Work &w)
	{
		Signal *s = container_of(&w, &Signal::work);
		s->runs.fetch_add(1, Order::Relaxed);
		s->done.complete();
	}
	static void fire_late(DelayedWork &w)
	{
		Signal *s = container_of(&w, &Signal::delayed);
		s->flag.store(true, Order::Release);
		s->runs.fetch_add(1, Order::Relaxed);
		s->wq.wake_all();
	}
	bool flag_set() const { return flag.load(Order::Acquire); }

	/* Declared before the work items, which must be cancelled first. */
	Completion done;
	WaitQueue wq;
	Atomic<bool> flag{false};
	Atomic<int> runs{0};
	Work work;
	DelayedWork delayed;
};

void completion_from_work(Test &t)
{
	Signal s;
	WEFT_EXPECT_TRUE(t, s.work.queue());
	WEFT_EXPECT_OK(t, s.done.wait(Timeout::msecs(5000)));
	WEFT_EXPECT_TRUE(t, s.done.done() || s.runs.load(Order::Relaxed) == 1);
	WEFT_EXPECT_EQ(t, s.runs.load(Order::Relaxed), 1);
}

void completion_times_out(Test &t)
{
	Completion c;
	WEFT_EXPECT_ERR(t, c.wait(Timeout::msecs(20)), err::ETIMEDOUT);
	c.complete();
	WEFT_EXPECT_OK(t, c.wait(Timeout::msecs(20)));
	c.reinit();
	WEFT_EXPECT_FALSE(t, c.done());
}

void waitqueue_wakes_on_condition(Test &t)
{
	Signal s;
	WEFT_EXPECT_TRUE(t, s.delayed.queue(10));
	auto r = s.wq.wait([&s] { return s.flag_set(); }, Timeout::msecs(5000));
	WEFT_EXPECT_OK(t, r);
	WEFT_EXPECT_TRUE(t, s.flag_set());
}

void waitqueue_times_out(Test &t)
{
	WaitQueue wq(WEFT_LOCK_CLASS("test_wq_timeout"));
	int checks = 0;
	auto r = wq.wait([&checks] { return ++checks < 0; }, Timeout::msecs(20));
	WEFT_EXPECT_ERR(t, r, err::ETIMEDOUT);
	WEFT_EXPECT_GE(t, checks, 1);
}

void cancel_pending_delayed_work(Test &t)
{
	Signal s;
	WEFT_EXPECT_TRUE(t, s.delayed.queue(60000));
	WEFT_EXPECT_FALSE(t, s.delayed.queue(60000)); /* already pending */
	WEFT_EXPECT_TRUE(t, s.delayed.cancel_sync());
	WEFT_EXPECT_FALSE(t, s.delayed.cancel_sync());
	WEFT_EXPECT_EQ(t, s.runs.load(Order::Relaxed), 0);
}

void modify_brings_deadline_forward(Test &t)
{
	Signal s;
	s.delayed.queue(60000);
	s.delayed.modify(1);
	WEFT_EXPECT_OK(t, s.wq.wait([&s] { return s.flag_set(); }, Timeout::msecs(5000)));
	WEFT_EXPECT_EQ(t, s.runs.load(Order::Relaxed), 1);
}

void dedicated_workqueue_drains(Test &t)
{
	Signal s;
	{
		auto wq = WorkQueue::create("weft_test_wq", true);
		WEFT_ASSERT_OK(t, wq);
		s.work.queue(wq->raw());
		/* Destroying the queue waits for the queued work. */
	}
	WEFT_EXPECT_EQ(t, s.runs.load(Order::Relaxed), 1);
	WEFT_EXPECT_TRUE(t, s.done.done());
}

} // namespace

WEFT_TEST_SUITE(weft_rt_wait_work, WEFT_CASE(completion_from_work), WEFT_CASE(completion_times_out),
		WEFT_CASE(waitqueue_wakes_on_condition), WEFT_CASE(waitqueue_times_out),
		WEFT_CASE(cancel_pending_delayed_work), WEFT_CASE(modify_brings_deadline_forward),
		WEFT_CASE(dedicated_workqueue_drains));
