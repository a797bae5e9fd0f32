// SPDX-License-Identifier: GPL-2.0
/*
 * A test ULP: a verbs Client that, once weft0 and weft1 are both present,
 * keeps RC traffic flowing between them (SEND and RDMA WRITE, every byte
 * checked) until one of them is removed or the module unloads.  It exists
 * to remove devices and unload modules *under traffic*: remove() must stop
 * the loop, drain and release everything, with nothing late.
 */
#include <weft/atomic.h>
#include <weft/log.h>
#include <weft/verbs/test_pair.h>
#include <weft/work.h>

#include "ulp.h"

namespace weft::selftest {

using namespace weft::verbs;
using namespace weft::verbs::testing;

namespace {

const Logger log("weft_selftest_ulp");
constexpr uint32_t msg_len = 9000; /* several packets at MTU 1024 */

class Ulp final : public Client {
public:
	Ulp() : Client("weft_selftest_ulp"), work_(run, WEFT_LOCK_CLASS("weft_selftest_ulp")) {}

	/*
	 * Devices come before their ports are ACTIVE (the SM, or autoconf,
	 * runs later): add() only records them; the loop connects once both
	 * ports are up.
	 */
	Result<void> add(Device &dev) override
	{
		bool first = !__builtin_strcmp(dev.name(), "weft0");
		if (!first && __builtin_strcmp(dev.name(), "weft1"))
			return ok();
		(first ? dev0_ : dev1_) = Ref<Device>::share(&dev);
		if (dev0_ && dev1_) {
			stop_.store(false, Order::Release);
			work_.queue();
		}
		return ok();
	}

	/* Two-phase: stop the loop and wait for it, then release the verbs objects. */
	void remove(Device &dev) override
	{
		if (&dev != dev0_.get() && &dev != dev1_.get())
			return;
		stop_.store(true, Order::Release);
		work_.cancel_sync();
		if (pair_) {
			pair_.reset();
			log.info("traffic stopped on removal of %s: %llu messages, %llu errors",
				 dev.name(), static_cast<unsigned long long>(messages.load(Order::Relaxed)),
				 static_cast<unsigned long long>(errors.load(Order::Relaxed)));
		}
		(&dev == dev0_.get() ? dev0_ : dev1_).reset();
	}

	Atomic<uint64_t> messages{0}, errors{0};

private:
	static void run(Work &w) { container_of(&w, &Ulp::work_)->batch(); }

	static bool active(Device &d)
	{
		PortAttr pa;
		return d.query_port(1, pa).ok() && pa.state == PortState::Active;
	}

	Result<void> connect()
	{
		auto p = WEFT_TRY(make_own<Pair>(Gfp::Sleep));
		WEFT_TRY(p->connect(*dev0_, *dev1_, QpType::Rc, iba::Mtu::M1024));
		pair_ = move(p);
		log.info("traffic started");
		return ok();
	}

	/* One SEND and one WRITE, both checked; re-queued until told to stop. */
	void batch()
	{
		if (stop_.load(Order::Acquire))
			return;
		if (!pair_) {
			if (!active(*dev0_) || !active(*dev1_)) {
				weft_msleep(10);
				work_.queue();
				return;
			}
			auto r = connect();
			if (!r) {
				log.err("connecting failed (errno %d)", r.error().code());
				return;
			}
		}
		if (!exchange_once())
			errors.fetch_add(1, Order::Relaxed);
		messages.fetch_add(1, Order::Relaxed);
		weft_ulp_messages = messages.load(Order::Relaxed);
		weft_ulp_errors = errors.load(Order::Relaxed);
		if (!stop_.load(Order::Acquire))
			work_.queue();
	}

	bool exchange_once()
	{
		Pair &c = *pair_;
		Buf src(msg_len), dst(msg_len), remote(msg_len);
		if (!src.p || !dst.p || !remote.p)
			return false;
		src.pattern(static_cast<uint8_t>(messages.load(Order::Relaxed)));
		Sge rs{reinterpret_cast<uint64_t>(dst.p), msg_len, c.b.mr->lkey};
		RecvWr r;
		r.sg = Span<const Sge>(&rs, 1);
		Sge ss{reinterpret_cast<uint64_t>(src.p), msg_len, c.a.mr->lkey};
		SendWr wr;
		wr.sg = Span<const Sge>(&ss, 1);
		wr.opcode = WrOpcode::Send;
		if (!c.b.qp->post_recv(r) || !c.a.qp->post_send(wr))
			return false;
		auto s1 = wait_wc(c.a.cq), r1 = wait_wc(c.b.cq);
		wr.opcode = WrOpcode::RdmaWrite;
		wr.rdma.remote_addr = reinterpret_cast<uint64_t>(remote.p);
		wr.rdma.rkey = c.b.mr->rkey;
		if (!c.a.qp->post_send(wr))
			return false;
		auto s2 = wait_wc(c.a.cq);
		return s1 && r1 && s2 && s1.value().status == WcStatus::Success &&
		       r1.value().status == WcStatus::Success && s2.value().status == WcStatus::Success &&
		       !__builtin_memcmp(src.p, dst.p, msg_len) && !__builtin_memcmp(src.p, remote.p, msg_len);
	}

	Work work_;
	Own<Pair> pair_;
	Ref<Device> dev0_, dev1_;
	Atomic<bool> stop_{true};
};

Ulp *ulp;
alignas(Ulp) unsigned char ulp_storage[sizeof(Ulp)];

} // namespace

} // namespace weft::selftest

uint64_t weft_ulp_messages, weft_ulp_errors;

int weft_selftest_ulp_start(void)
{
	using namespace weft::selftest;
	ulp = new (ulp_storage) Ulp();
	auto r = weft::verbs::register_client(*ulp);
	if (!r)
		ulp->~Ulp();
	return r.to_errno();
}

void weft_selftest_ulp_stop(void)
{
	using namespace weft::selftest;
	weft::verbs::unregister_client(*ulp);
	ulp->~Ulp();
}
