// SPDX-License-Identifier: GPL-2.0
/* Unreliable Datagram, and QP0/QP1 which use it (IBA 9.8, 10.2.5). */
#include "lso.h"
#include "qp.h"
#include "switch.h"
#include "trap.h"

namespace weft::hca {

using verbs::QpType;
using verbs::WcStatus;


/* IBA 9.8.2: the headers of a UD SEND; DETH carries Q_Key and source QP. */
void SoftQp::ud_spec(const SendWqe &w, PacketSpec &s)
{
	const verbs::Ah &ah = *w.wr.ud.ah;
	bool imm = w.wr.opcode == verbs::WrOpcode::SendWithImm;
	s.opcode = iba::opcode(iba::Transport::Ud, imm ? iba::op::SendOnlyImm : iba::op::SendOnly);
	s.se = w.wr.send_flags & verbs::send_flag::solicited;
	s.imm = w.wr.imm_data;
	Port *p = hca.port(eport());
	/* IBA 10.2.5: QP1 sends with the P_Key index of the WR. */
	uint16_t pk = pkey();
	if (type == QpType::Gsi && p && w.wr.ud.pkey_index < Port::pkey_table_len)
		pk = p->pkeys[w.wr.ud.pkey_index].load(Order::Relaxed);
	set_addressing(s, ah.attr, pk);
	s.dqp = w.wr.ud.remote_qpn;
	s.psn = next_psn();
	set_next_psn(s.psn + 1);
	/* IBA 10.2.5: a Q_Key with the high bit set means "use the QP's". */
	s.qkey = (w.wr.ud.remote_qkey & 0x80000000u) ? ea_.qkey : w.wr.ud.remote_qkey;
	s.sqp = qpn;
}

WcStatus SoftQp::ud_transmit(PacketSpec &s)
{
	auto r = transmit(s);
	if (!r)
		return r.error().code() == err::EACCES || r.error().code() == err::EFAULT
			       ? WcStatus::LocProtErr
			       : WcStatus::LocQpOpErr;
	return WcStatus::Success;
}

/* IBA 9.8.2: one packet per message. */
WcStatus SoftQp::ud_send(SendWqe &w)
{
	if (w.wr.opcode == verbs::WrOpcode::Lso)
		return ud_send_lso(w);
	if (w.length > mtu_bytes())
		return WcStatus::LocLenErr;
	PacketSpec s;
	ud_spec(w, s);
	SgFill g = sg_fill_of(hca, pd, w);
	/* IBA 10.7.3.1: the gather list is checked here, so its errors stay local. */
	if (!sg_check(hca, pd, g.sg, 0, w.length))
		return WcStatus::LocProtErr;
	s.fill = sg_fill;
	s.fill_ctx = &g;
	s.fill_len = w.length;
	return ud_transmit(s);
}

/*
 * Large send offload (lso.h): a packet per MSS, each with the segment's
 * headers.  In an engine run, to a unicast LID, the whole-MSS datagrams
 * but the last go as one by-reference burst (PacketBuf::burst): one
 * packet step for the lot instead of one each, as RC's MIDDLE packets.
 * Whatever needs real packets takes it apart (PacketBuf::segment).
 */
WcStatus SoftQp::ud_send_lso(SendWqe &w)
{
	const uint32_t mss = w.wr.lso.mss;
	if (w.wr.lso.hlen + min(mss, w.length) > mtu_bytes())
		return WcStatus::LocLenErr;
	const SgFill data{&hca, &pd, SgRef{w.sge, static_cast<uint32_t>(w.wr.sg.size())}, 0};
	if (!sg_check(hca, pd, data.sg, 0, w.length))
		return WcStatus::LocProtErr;
	const uint32_t n = lso::packets(w.length, mss);
	uint32_t i = 0;
	if (n > 2 && cur_ && w.wr.ud.ah->attr.dlid < multicast_lid_base) {
		lso::BurstFill b;
		b.f.data = data;
		b.wr = &w.wr;
		b.n = n;
		b.total = w.length;
		PacketSpec s;
		ud_spec(w, s);
		s.se = false;
		s.burst = n - 1;
		s.mid_op = s.last_op = s.opcode;
		set_next_psn(next_psn() + s.burst - 1);
		s.fill = lso::fill_burst;
		s.fill_ctx = &b;
		s.fill_len = w.wr.lso.hlen + mss;
		const WcStatus st = ud_transmit(s);
		if (st != WcStatus::Success)
			return st;
		i = n - 1;
	}
	lso::Fill f;
	f.data = data;
	for (; i < n; i++) {
		const uint32_t len = min(mss, w.length - i * mss);
		lso::make_header(w.wr, i, n, len, w.length, f);
		f.data.msg_len = len;
		PacketSpec s;
		ud_spec(w, s);
		/* Each its own message: only the last may ask for an event. */
		s.se = s.se && i + 1 == n;
		s.fill = lso::fill;
		s.fill_ctx = &f;
		s.fill_len = f.hlen + len;
		const WcStatus st = ud_transmit(s);
		if (st != WcStatus::Success)
			return st;
	}
	return WcStatus::Success;
}

/*
 * IBA 10.2.5, 9.6.1.2: check the Q_Key (QP0 has none) and the P_Key, then
 * place the datagram, or each of a burst's (all alike but their payload).
 */
void SoftQp::ud_receive(const Packet &p, PacketBuf &)
{
	Port *in = hca.port(eport());
	if (!p.deth || !in)
		return;
	if (type != QpType::Smi && p.deth->qkey.get() != ea_.qkey) {
		PortCounters::bump(in->counters.bad_qkey, p.burst);
		if (type == QpType::Gsi)
			gsi_key_violation(*in, trap::bad_q_key, p, p.deth->qkey.get());
		return;
	}
	uint16_t pk = p.bth->pkey.get();
	uint16_t pkey_index = 0;
	if (type != QpType::Smi) {
		bool found = false;
		for (uint16_t i = 0; i < Port::pkey_table_len && !found; i++) {
			if (pkey_match(pk, in->pkeys[i].load(Order::Relaxed)) && (type == QpType::Gsi || i == ea_.pkey_index)) {
				pkey_index = i;
				found = true;
			}
		}
		if (!found) {
			PortCounters::bump(in->counters.bad_pkey, p.burst);
			if (type == QpType::Gsi)
				gsi_key_violation(*in, trap::bad_p_key, p, pk);
			return;
		}
	}
	for (uint32_t k = 0; k < p.burst; k++)
		if (!ud_place(p, p.burst > 1 ? p.data.slice(size_t(k) * p.each, p.each) : p.data, pkey_index, *in))
			return;
}

/*
 * Consume a receive WQE (none: the datagram is silently dropped; UD is
 * unreliable, IBA 9.8) and place the GRH (or 40 unused bytes) before the
 * payload (IBA 11.4.1.2).  False once the QP has failed.
 */
bool SoftQp::ud_place(const Packet &p, const Payload &data, uint16_t pkey_index, Port &in)
{
	RecvWqe r;
	if (!take_recv(r)) {
		PortCounters::bump(in.counters.out_of_buffer);
		return true;
	}
	verbs::Wc wc;
	wc.opcode = verbs::WcOpcode::Recv;
	SgRef sg{r.sge, r.nsge};
	size_t room = sg_length(sg);
	if (room < 40 + data.size()) {
		wc.status = WcStatus::LocLenErr;
		return complete_recv(r, wc, true);
	}
	Result<void> copied = ok();
	if (p.grh)
		copied = sg_scatter(hca, pd, sg, 0,
				    Payload::of(ConstBytes(reinterpret_cast<const uint8_t *>(p.grh), 40)));
	/* The message's checksum sum (not the GRH's), taken in the copy. */
	CsumAcc acc;
	if (copied)
		copied = sg_scatter(hca, pd, sg, 40, data, &acc);
	if (!copied) {
		wc.status = WcStatus::LocProtErr;
		complete_recv(r, wc, true);
		to_error();
		return false;
	}
	wc.byte_len = static_cast<uint32_t>(40 + data.size());
	wc.src_qp = iba::Deth::SrcQp::get(p.deth->sqp);
	wc.slid = p.lrh->slid.get();
	wc.sl = iba::Lrh::Sl::get(p.lrh->sl_lnh);
	wc.pkey_index = pkey_index;
	wc.dlid_path_bits = static_cast<uint8_t>(p.lrh->dlid.get() & ((1u << in.lmc.load(Order::Relaxed)) - 1));
	if (p.grh)
		wc.wc_flags |= verbs::wc_flag::grh;
	wc.csum = acc.finish();
	wc.wc_flags |= verbs::wc_flag::csum;
	if (p.immdt) {
		wc.wc_flags |= verbs::wc_flag::with_imm;
		wc.imm_data = p.immdt->imm.get();
	}
	return complete_recv(r, wc, iba::Bth::Se::get(p.bth->flags));
}

} // namespace weft::hca
