/* SPDX-License-Identifier: GPL-2.0 */
/* A test node with one port that keeps what it receives (faults and SMI suites). */
#ifndef WEFT_HCA_TESTS_SINK_H
#define WEFT_HCA_TESTS_SINK_H

#include "../fabric.h"

namespace weft::hca::fixture {

/* A node that keeps what it receives, in arrival order. */
class Sink final : public Node {
public:
	Sink() : port_(*this, 1), lock_(WEFT_LOCK_CLASS("weft_hca_test_sink")) {}
	~Sink() override
	{
		while (PacketBuf *b = got_.pop_front())
			Own<PacketBuf> gone(b);
	}
	void receive(Port &, Own<PacketBuf> pkt) override
	{
		SpinGuardBh g(lock_);
		got_.push_back(*pkt.release());
	}
	Port *port(uint8_t num) override { return num == 1 ? &port_ : nullptr; }
	uint8_t port_count() const override { return 1; }
	bool is_switch() const override { return false; }

	Own<PacketBuf> take()
	{
		SpinGuardBh g(lock_);
		return Own<PacketBuf>(got_.pop_front());
	}
	size_t count()
	{
		SpinGuardBh g(lock_);
		return got_.size();
	}

	Port port_;

private:
	SpinLock lock_;
	PacketQueue got_;
};

} // namespace weft::hca::fixture

#endif
