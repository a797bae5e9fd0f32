// SPDX-License-Identifier: GPL-2.0
/* The BTH opcode table, IBA 9.2.1 (built at compile time: no static constructor). */
#include <weft/iba/opcode.h>

namespace weft::iba {
namespace {

struct Table {
	OpcodeInfo e[256];
};

constexpr void put(Table &t, Transport tr, uint8_t operation, const char *name, uint8_t hdrs,
		   bool payload, bool first, bool last)
{
	t.e[opcode(tr, operation)] = OpcodeInfo{name, hdrs, true, payload, first, last};
}

/* The operations RC and UC share (IBA 9.2.1: UC has SEND and RDMA WRITE only). */
constexpr void put_send_write(Table &t, Transport tr)
{
	put(t, tr, op::SendFirst, "SEND_FIRST", 0, true, true, false);
	put(t, tr, op::SendMiddle, "SEND_MIDDLE", 0, true, false, false);
	put(t, tr, op::SendLast, "SEND_LAST", 0, true, false, true);
	put(t, tr, op::SendLastImm, "SEND_LAST_IMM", HImmDt, true, false, true);
	put(t, tr, op::SendOnly, "SEND_ONLY", 0, true, true, true);
	put(t, tr, op::SendOnlyImm, "SEND_ONLY_IMM", HImmDt, true, true, true);
	put(t, tr, op::WriteFirst, "RDMA_WRITE_FIRST", HReth, true, true, false);
	put(t, tr, op::WriteMiddle, "RDMA_WRITE_MIDDLE", 0, true, false, false);
	put(t, tr, op::WriteLast, "RDMA_WRITE_LAST", 0, true, false, true);
	put(t, tr, op::WriteLastImm, "RDMA_WRITE_LAST_IMM", HImmDt, true, false, true);
	put(t, tr, op::WriteOnly, "RDMA_WRITE_ONLY", HReth, true, true, true);
	put(t, tr, op::WriteOnlyImm, "RDMA_WRITE_ONLY_IMM", HReth | HImmDt, true, true, true);
}

constexpr Table make_table()
{
	Table t{};
	for (auto &e : t.e)
		e = OpcodeInfo{"INVALID", 0, false, false, false, false};

	put_send_write(t, Transport::Rc);
	put(t, Transport::Rc, op::ReadRequest, "RDMA_READ_REQUEST", HReth, false, true, true);
	put(t, Transport::Rc, op::ReadResponseFirst, "RDMA_READ_RESPONSE_FIRST", HAeth, true, true, false);
	put(t, Transport::Rc, op::ReadResponseMiddle, "RDMA_READ_RESPONSE_MIDDLE", 0, true, false, false);
	put(t, Transport::Rc, op::ReadResponseLast, "RDMA_READ_RESPONSE_LAST", HAeth, true, false, true);
	put(t, Transport::Rc, op::ReadResponseOnly, "RDMA_READ_RESPONSE_ONLY", HAeth, true, true, true);
	put(t, Transport::Rc, op::Acknowledge, "ACKNOWLEDGE", HAeth, false, true, true);
	put(t, Transport::Rc, op::AtomicAcknowledge, "ATOMIC_ACKNOWLEDGE", HAeth | HAtomicAckEth,
	    false, true, true);
	put(t, Transport::Rc, op::CompareSwap, "COMPARE_SWAP", HAtomicEth, false, true, true);
	put(t, Transport::Rc, op::FetchAdd, "FETCH_ADD", HAtomicEth, false, true, true);
	put(t, Transport::Rc, op::SendLastInv, "SEND_LAST_INV", HIeth, true, false, true);
	put(t, Transport::Rc, op::SendOnlyInv, "SEND_ONLY_INV", HIeth, true, true, true);

	put_send_write(t, Transport::Uc);

	/* IBA 9.2.1: UD has only single-packet SENDs, each with a DETH. */
	put(t, Transport::Ud, op::SendOnly, "UD_SEND_ONLY", HDeth, true, true, true);
	put(t, Transport::Ud, op::SendOnlyImm, "UD_SEND_ONLY_IMM", HDeth | HImmDt, true, true, true);
	return t;
}

constinit const Table table = make_table();

} // namespace

const OpcodeInfo &opcode_info(uint8_t opcode)
{
	return table.e[opcode];
}

} // namespace weft::iba
