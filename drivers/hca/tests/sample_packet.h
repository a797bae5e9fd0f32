/* SPDX-License-Identifier: GPL-2.0 */
/* The packet description the soft HCA's KUnit suites build from. */
#ifndef WEFT_HCA_TESTS_SAMPLE_PACKET_H
#define WEFT_HCA_TESTS_SAMPLE_PACKET_H

#include "../packet.h"

namespace weft::hca::fixture {

inline constexpr uint8_t gid_a[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x02, 0xc9, 0xff, 0xfe, 0, 0, 1};
inline constexpr uint8_t gid_b[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x02, 0xc9, 0xff, 0xfe, 0, 0, 2};

inline PacketSpec sample(uint8_t opc, ConstBytes payload, bool grh)
{
	PacketSpec s;
	s.vl = 3;
	s.sl = 5;
	s.dlid = 0x0012;
	s.slid = 0x0034;
	if (grh) {
		s.sgid = gid_a;
		s.dgid = gid_b;
		s.tclass = 0x42;
		s.flow = 0xabcde;
		s.hoplmt = 64;
	}
	s.opcode = opc;
	s.se = true;
	s.ackreq = true;
	s.pkey = 0x8001;
	s.dqp = 0x123456;
	s.psn = 0xfedcba;
	s.qkey = 0x80010000;
	s.sqp = 0x000077;
	s.va = 0x1122334455667788ull;
	s.rkey = 0xcafe;
	s.dmalen = 4096;
	s.swap_add = 7;
	s.compare = 9;
	s.syndrome = 0x1f;
	s.msn = 0x000101;
	s.orig = 0xdeadbeefull;
	s.imm = 0x01020304;
	s.inv_rkey = 0xbeef;
	s.payload = payload;
	return s;
}

} // namespace weft::hca::fixture

#endif
