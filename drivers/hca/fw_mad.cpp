// SPDX-License-Identifier: GPL-2.0
/* Firmware QPs' MAD datagrams: the UD QP checks and the answer (fw_mad.h). */
#include <weft/iba/mad.h>

#include "fw_mad.h"

namespace weft::hca {

namespace {

/* IBA 4.1.1: a port's one GID, its subnet prefix and its GUID. */
bool for_port_gid(const iba::Grh &g, const Port &port)
{
	const verbs::Gid mine = port.gid();
	return __builtin_memcmp(g.dgid, mine.raw, sizeof(mine.raw)) == 0;
}

} // namespace

FwCheck fw_accept(const Packet &p, const Port &in, Port &keys, uint32_t qkey, FwDatagram &out)
{
	const bool ud_mad = p.deth && p.payload.size() == iba::mad_size &&
			    p.bth->opcode.get() == iba::opcode(iba::Transport::Ud, iba::op::SendOnly);
	if (!ud_mad) {
		PortCounters::bump(keys.counters.no_dest_qp);
		return FwCheck::NotMad;
	}
	if (p.deth->qkey.get() != qkey) {
		PortCounters::bump(keys.counters.bad_qkey);
		return FwCheck::BadQKey;
	}
	if (p.grh && !for_port_gid(*p.grh, keys)) {
		PortCounters::bump(keys.counters.no_dest_qp);
		return FwCheck::NotMad;
	}
	const uint16_t pkey = p.bth->pkey.get();
	bool member = false;
	for (uint16_t i = 0; i < Port::pkey_table_len && !member; i++)
		member = pkey_match(pkey, keys.pkeys[i].load(Order::Relaxed));
	if (!member) {
		PortCounters::bump(keys.counters.bad_pkey);
		return FwCheck::BadPKey;
	}
	out.from = verbs::MadIn();
	out.from.port = in.num;
	out.from.slid = p.lrh->slid.get();
	out.from.sl = iba::Lrh::Sl::get(p.lrh->sl_lnh);
	out.from.src_qp = iba::Deth::SrcQp::get(p.deth->sqp);
	out.pkey = pkey;
	out.mad = p.payload.data();
	out.grh = p.grh;
	return FwCheck::Ok;
}

Result<Own<PacketBuf>> fw_answer(const FwDatagram &to, uint16_t slid, uint32_t sqp, uint32_t qkey, const uint8_t *mad)
{
	PacketSpec s;
	s.sl = to.from.sl;
	s.dlid = to.from.slid;
	s.slid = slid;
	s.opcode = iba::opcode(iba::Transport::Ud, iba::op::SendOnly);
	s.pkey = to.pkey;
	s.dqp = to.from.src_qp;
	s.sqp = sqp;
	s.qkey = qkey;
	s.payload = ConstBytes(mad, iba::mad_size);
	if (to.grh) {
		/* IBA 8.3.1: back from the GID it was sent to, with its class and flow; any hop count. */
		s.sgid = to.grh->dgid;
		s.dgid = to.grh->sgid;
		s.tclass = static_cast<uint8_t>(iba::Grh::TClass::get(to.grh->ver_tclass_flow));
		s.flow = iba::Grh::FlowLabel::get(to.grh->ver_tclass_flow);
		s.hoplmt = 0xff;
	}
	const size_t len = WEFT_TRY(packet_length(s));
	auto pkt = WEFT_TRY(PacketBuf::alloc(Gfp::Atomic, static_cast<uint32_t>(len)));
	pkt->len = static_cast<uint32_t>(WEFT_TRY(build(Bytes(pkt->data(), len), s, false)));
	return pkt;
}

} // namespace weft::hca
