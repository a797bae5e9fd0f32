// SPDX-License-Identifier: GPL-2.0
/* KUnit: spinlocks, mutexes, guards, Protected<T> and RCU read sections. */
#include <weft/lock.h>
#include <weft/test.h>
#include <weft/wait.h>
#include <weft/work.h>

using namespace weft;
using weft::test::Test;

namespace {

void spin_guards_lock_and_unlock(Test &t)
{
	SpinLock l(WEFT_LOCK_CLASS("test_spin"));
	WEFT_EXPECT_FALSE(t, l.is_locked());
	{
		SpinGuard g(l);
		WEFT_EXPECT_TRUE(t, l.is_locked());
		l.assert_held();
	}
	WEFT_EXPECT_FALSE(t, l.is_locked());
	{
		SpinGuardBh g(l);
		WEFT_EXPECT_TRUE(t, l.is_locked());
	}
	{
		SpinGuardIrq g(l);
		WEFT_EXPECT_TRUE(t, l.is_locked());
	}
	WEFT_EXPECT_FALSE(t, l.is_locked());
}

void mutex_guard_and_trylock(Test &t)
{
	Mutex m(WEFT_LOCK_CLASS("test_mutex"));
	{
		MutexGuard g(m);
		WEFT_EXPECT_TRUE(t, m.is_locked());
		/* Not recursive: a second acquisition must fail. */
		WEFT_EXPECT_FALSE(t, m.try_lock());
	}
	WEFT_EXPECT_FALSE(t, m.is_locked());
	WEFT_EXPECT_TRUE(t, m.try_lock());
	m.unlock();
	WEFT_EXPECT_EQ(t, m.lock_interruptible(), 0);
	m.unlock();
}

struct Counter {
	int value = 0;
	int updates = 0;
};

void protected_access(Test &t)
{
	Protected<Counter, SpinLock> p(WEFT_LOCK_CLASS("test_protected"));
	p.with([](Counter &c) { c.value = 5; });
	{
		auto locked = p.lock();
		locked->value += 1;
		locked->updates++;
	}
	int v = p.with([](Counter &c) { return c.value * 10 + c.updates; });
	WEFT_EXPECT_EQ(t, v, 61);
}

/* Two work items hammer one Protected counter on two CPUs. */
struct Hammer {
	explicit Hammer(Protected<Counter, SpinLock, SpinGuardBh> *p)
		: counter(p), work(run, WEFT_LOCK_CLASS("test_hammer_work"))
	{
	}
	static void run(Work &w)
	{
		Hammer *h = container_of(&w, &Hammer::work);
		for (int i = 0; i < 20000; i++)
			h->counter->with([](Counter &c) { c.value++; });
	}
	Protected<Counter, SpinLock, SpinGuardBh> *counter;
	Work work;
};

void protected_under_contention(Test &t)
{
	Protected<Counter, SpinLock, SpinGuardBh> p(WEFT_LOCK_CLASS("test_contended"));
	auto wq = WorkQueue::create("weft_test_hammer", false, 2);
	WEFT_ASSERT_OK(t, wq);
	Hammer a(&p), b(&p);
	a.work.queue(wq->raw());
	b.work.queue(wq->raw());
	wq->flush();
	WEFT_EXPECT_EQ(t, p.with([](Counter &c) { return c.value; }), 40000);
}

void rcu_read_guard(Test &t)
{
	{
		RcuReadGuard g;
		WEFT_EXPECT_TRUE(t, weft_rcu_read_lock_held());
	}
	weft_synchronize_rcu();
	WEFT_EXPECT_TRUE(t, true);
}

} // namespace

WEFT_TEST_SUITE(weft_rt_lock, WEFT_CASE(spin_guards_lock_and_unlock),
		WEFT_CASE(mutex_guard_and_trylock), WEFT_CASE(protected_access),
		WEFT_CASE(protected_under_contention), WEFT_CASE(rcu_read_guard));
