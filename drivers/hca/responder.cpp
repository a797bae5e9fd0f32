// SPDX-License-Identifier: GPL-2.0
/*
 * RC and UC responder (IBA 9.7.4-9.7.5, 9.8.3): PSN checking, receive WQE
 * consumption, RDMA WRITE/READ and atomics against remote keys, ACK/NAK.
 */
#include "qp.h"

namespace weft::hca {

using verbs::QpType;
using verbs::WcStatus;
using namespace iba::op;

namespace {

/* IBA 9.3.6: AETH syndrome values. */
constexpr uint8_t syn_ack = 0x1f; /* ACK, no credit count given */
constexpr uint8_t syn_rnr = 0x20;
constexpr uint8_t nak_psn_seq = 0x60, nak_inv_req = 0x61, nak_rem_access = 0x62,
		  nak_rem_op = 0x63;

/* PacketSpec::fill for READ responses: straight from the region to the wire. */
struct MrFill {
	verbs::Mr *mr;
	uint64_t va;
	uint32_t need; /* Device::lookup_remote's recheck */
};

Result<void> mr_fill(void *ctx, size_t off, Bytes dst, CsumAcc *acc)
{
	auto *f = static_cast<MrFill *>(ctx);
	if (!acc)
		return f->mr->read(f->va + off, dst, f->need);
	return f->mr->walk(f->va + off, dst.size(), f->need,
			   [&](uint8_t *p, size_t at, size_t k) -> Result<void> {
				   acc->copy(dst.data() + at, p, k);
				   return ok();
			   });
}

} // namespace

void SoftQp::send_ack(uint8_t syndrome, uint32_t psn)
{
	if (type != QpType::Rc)
		return;
	PacketSpec s;
	set_addressing(s, ea_.ah_attr, pkey());
	s.dqp = ea_.dest_qp_num;
	s.opcode = iba::opcode(iba::Transport::Rc, Acknowledge);
	s.psn = psn & psn_mask;
	s.syndrome = syndrome;
	s.msn = msn_ & psn_mask;
	(void)transmit(s); /* a lost ACK is recovered by the requester's retry */
}

/* A NAK names the PSN it refuses: the expected one (IBA 9.7.5.2). */
void SoftQp::nak(uint8_t syndrome)
{
	send_ack(syndrome, epsn());
}

void SoftQp::count_out_of_buffer()
{
	if (Port *in = hca.port(eport()))
		PortCounters::bump(in->counters.out_of_buffer);
}

bool SoftQp::resp_send(const Packet &p)
{
	/* A burst may hold the message's FIRST and LAST (burst_at). */
	const bool first = iba::opcode_info(p.first_opcode()).first;
	const bool last = iba::opcode_info(p.last_opcode()).last;
	if (first) {
		if (in_send_ || !take_recv(cur_recv_)) {
			if (in_send_) { /* IBA 9.7.5.2.4: FIRST in the middle of a message */
				nak(nak_inv_req);
				to_error();
				return false;
			}
			count_out_of_buffer();
			nak(syn_rnr | (ea_.min_rnr_timer & 0x1f));
			return false;
		}
		in_send_ = true;
		recv_off_ = 0;
		recv_csum_.reset();
	} else if (!in_send_) {
		nak(nak_inv_req);
		to_error();
		return false;
	}
	SgRef sg{cur_recv_.sge, cur_recv_.nsge};
	verbs::Wc wc;
	wc.opcode = verbs::WcOpcode::Recv;
	if (recv_off_ + p.data.size() > sg_length(sg)) {
		/* IBA 9.7.5.2.4: message longer than the buffer. */
		wc.status = WcStatus::LocLenErr;
	} else if (!sg_scatter(hca, pd, sg, recv_off_, p.data, &recv_csum_)) {
		wc.status = WcStatus::LocProtErr;
	}
	if (wc.status != WcStatus::Success) {
		complete_recv(cur_recv_, wc, false);
		in_send_ = false;
		nak(wc.status == WcStatus::LocLenErr ? nak_inv_req : nak_rem_op);
		to_error();
		return false;
	}
	recv_off_ += static_cast<uint32_t>(p.data.size());
	if (last && p.ieth) {
		/* IBA 10.6.3.6, 9.3.9: SEND with Invalidate names an rkey of our PD. */
		uint32_t key = p.ieth->rkey.get();
		if (!hca.invalidate(key, pd, this)) {
			wc.status = WcStatus::RemInvReqErr;
			complete_recv(cur_recv_, wc, false);
			in_send_ = false;
			nak(nak_inv_req);
			to_error();
			return false;
		}
		wc.wc_flags |= verbs::wc_flag::with_inv;
		wc.invalidate_rkey = key;
	}
	if (last) {
		wc.byte_len = recv_off_;
		wc.csum = recv_csum_.finish();
		wc.wc_flags |= verbs::wc_flag::csum;
		wc.src_qp = ea_.dest_qp_num;
		wc.slid = p.lrh->slid.get();
		wc.sl = iba::Lrh::Sl::get(p.lrh->sl_lnh);
		if (p.immdt) {
			wc.wc_flags |= verbs::wc_flag::with_imm;
			wc.imm_data = p.immdt->imm.get();
		}
		in_send_ = false;
		msn_++;
		/* Unreported, the message is not acknowledged either (IBA 11.6.3.1). */
		if (!complete_recv(cur_recv_, wc, iba::Bth::Se::get(p.bth->flags)))
			return false;
	}
	return true;
}

bool SoftQp::resp_write(const Packet &p)
{
	if (p.op->first) {
		uint64_t va = p.reth->va.get();
		uint32_t len = p.reth->dmalen.get();
		uint32_t recheck = 0;
		Ref<verbs::Mr> mr = hca.lookup_remote(p.reth->rkey.get(), *this, va, len,
						      verbs::access::remote_write, recheck);
		/* IBA 10.6.3: QP and region (or window) must both allow remote write. */
		if (!(ea_.qp_access_flags & verbs::access::remote_write) || !mr) {
			nak(nak_rem_access);
			to_error();
			return false;
		}
		write_mr_ = move(mr);
		write_need_ = recheck;
		write_va_ = va;
		write_left_ = write_total_ = len;
		in_write_ = true;
	} else if (!in_write_) {
		nak(nak_inv_req);
		to_error();
		return false;
	}
	size_t n = p.data.size();
	bool bad_len = n > write_left_ || (p.op->last && n != write_left_);
	if (bad_len) {
		nak(nak_inv_req);
		to_error();
		return false;
	}
	RecvWqe r;
	bool imm = p.immdt != nullptr;
	if (imm && !take_recv(r)) {
		count_out_of_buffer();
		nak(syn_rnr | (ea_.min_rnr_timer & 0x1f));
		return false;
	}
	if (n && !mr_place(*write_mr_, write_va_, p.data, write_need_)) {
		nak(nak_rem_access); /* invalidated under our feet */
		to_error();
		return false;
	}
	write_va_ += n;
	write_left_ -= static_cast<uint32_t>(n);
	if (p.op->last) {
		in_write_ = false;
		write_mr_.reset();
		msn_++;
		if (imm) {
			verbs::Wc wc;
			wc.opcode = verbs::WcOpcode::RecvRdmaWithImm;
			wc.byte_len = write_total_;
			wc.wc_flags = verbs::wc_flag::with_imm;
			wc.imm_data = p.immdt->imm.get();
			wc.src_qp = ea_.dest_qp_num;
			wc.slid = p.lrh->slid.get();
			if (!complete_recv(r, wc, iba::Bth::Se::get(p.bth->flags)))
				return false;
		}
	}
	return true;
}

/* IBA 9.7.4.1.3: answer a READ with ceil(len / MTU) response packets. */
void SoftQp::resp_read(const Packet &p, uint32_t psn)
{
	uint64_t va = p.reth->va.get();
	uint32_t len = p.reth->dmalen.get();
	uint32_t recheck = 0;
	Ref<verbs::Mr> mr = hca.lookup_remote(p.reth->rkey.get(), *this, va, len,
					      verbs::access::remote_read, recheck);
	if (!(ea_.qp_access_flags & verbs::access::remote_read) || !mr) {
		nak(nak_rem_access);
		to_error();
		return;
	}
	const uint32_t mtu = mtu_bytes(), n = npackets(len, mtu);
	PacketSpec s;
	set_addressing(s, ea_.ah_attr, pkey());
	s.dqp = ea_.dest_qp_num;
	s.syndrome = syn_ack;
	s.msn = (msn_ + 1) & psn_mask;
	for (uint32_t i = 0, k; i < n; i += k) {
		uint32_t off = i * mtu, chunk = min(mtu, len - min(off, len));
		k = burst_at(i, n);
		s.burst = k;
		uint8_t o = n == 1 ? ReadResponseOnly
			    : i == 0 ? ReadResponseFirst
			    : i + 1 == n ? ReadResponseLast
					 : ReadResponseMiddle;
		s.opcode = s.mid_op = s.last_op = iba::opcode(iba::Transport::Rc, o);
		s.psn = (psn + i) & psn_mask;
		MrFill f{mr.get(), va + off, recheck};
		s.fill = mr_fill;
		s.fill_ctx = &f;
		s.fill_len = chunk;
		if (!transmit(s))
			break;
	}
	if (psn == epsn()) {
		set_epsn(psn + n);
		msn_++;
	}
}

/* IBA 9.4.5, 9.7.5.1.4: execute once, answer duplicates from the history. */
bool SoftQp::resp_atomic(const Packet &p, bool duplicate)
{
	uint32_t psn = iba::Bth::Psn::get(p.bth->psn);
	PacketSpec s;
	set_addressing(s, ea_.ah_attr, pkey());
	s.dqp = ea_.dest_qp_num;
	s.opcode = iba::opcode(iba::Transport::Rc, AtomicAcknowledge);
	s.psn = psn;
	s.syndrome = syn_ack;
	if (duplicate) {
		for (const AtomicRecord &h : history_) {
			if (h.valid && h.psn == psn) {
				s.orig = h.orig;
				s.msn = msn_ & psn_mask;
				(void)transmit(s);
			}
		}
		return true;
	}
	uint64_t va = p.atomic_eth->va.get();
	uint32_t recheck = 0;
	Ref<verbs::Mr> mr = hca.lookup_remote(p.atomic_eth->rkey.get(), *this, va, 8,
					      verbs::access::remote_atomic, recheck);
	if (va & 7) {
		nak(nak_inv_req);
		to_error();
		return false;
	}
	auto addr = mr ? mr->map(va, 8, recheck) : Result<uint8_t *>(Error(err::EACCES));
	if (!(ea_.qp_access_flags & verbs::access::remote_atomic) || !addr) {
		nak(nak_rem_access);
		to_error();
		return false;
	}
	auto *word = reinterpret_cast<uint64_t *>(addr.value());
	uint64_t orig;
	if (operation(p.bth->opcode.get()) == CompareSwap) {
		orig = p.atomic_eth->compare.get();
		__atomic_compare_exchange_n(word, &orig, p.atomic_eth->swap_add.get(), false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_fetch_add(word, p.atomic_eth->swap_add.get(), __ATOMIC_SEQ_CST);
	}
	AtomicRecord &h = history_[history_next_++ % history_.size()];
	h = AtomicRecord{psn, true, orig};
	set_epsn(epsn() + 1);
	msn_++;
	s.orig = orig;
	s.msn = msn_ & psn_mask;
	(void)transmit(s);
	return true;
}

void SoftQp::responder(Packet &p)
{
	Port *in = hca.port(eport());
	/* IBA 9.6.1.2 / 10.9.3: the packet's P_Key must match the QP's. */
	if (!pkey_match(p.bth->pkey.get(), pkey())) {
		if (in)
			PortCounters::bump(in->counters.bad_pkey);
		return;
	}
	/* IBA 11.6.3.1: the first packet at a QP still in RTR establishes it. */
	if (!comm_est_raised_ && sync() == verbs::QpState::Rtr) {
		comm_est_raised_ = true;
		raise_event(verbs::EventType::CommEst);
	}
	/* A burst partly received already: only its new packets count (IBA 9.7.5.1). */
	if (p.burst > 1 && psn_diff(p.psn(), epsn()) < 0 && psn_diff(p.last_psn(), epsn()) >= 0)
		p.skip(static_cast<uint32_t>(psn_diff(epsn(), p.psn())));
	const uint32_t psn = p.psn();
	const uint8_t op = operation(p.bth->opcode.get());
	const int32_t d = psn_diff(psn, epsn());
	if (type == QpType::Uc) {
		/* IBA 9.8.3: a gap drops the message in progress; a FIRST/ONLY restarts. */
		if (d != 0) {
			if (!iba::opcode_info(p.first_opcode()).first)
				return;
			in_send_ = in_write_ = false;
			write_mr_.reset();
			set_epsn(psn);
		}
	} else if (d > 0) {
		/* IBA 9.7.5.2.1: one NAK per sequence error. */
		if (!nak_sent_)
			nak(nak_psn_seq);
		nak_sent_ = true;
		return;
	} else if (d < 0) {
		/* IBA 9.7.5.1: a duplicate is answered, never executed twice. */
		if (op == ReadRequest)
			resp_read(p, psn);
		else if (op == CompareSwap || op == FetchAdd)
			resp_atomic(p, true);
		else if (iba::Bth::AckReq::get(p.bth->psn))
			send_ack(syn_ack, (epsn() - 1) & psn_mask);
		return;
	}
	nak_sent_ = false;
	bool ok;
	switch (op) {
	case SendFirst: case SendMiddle: case SendLast: case SendLastImm: case SendOnly:
	case SendOnlyImm: case SendLastInv: case SendOnlyInv:
		ok = resp_send(p);
		break;
	case WriteFirst: case WriteMiddle: case WriteLast: case WriteLastImm: case WriteOnly:
	case WriteOnlyImm:
		ok = resp_write(p);
		break;
	case ReadRequest:
		if (type == QpType::Rc)
			resp_read(p, psn);
		return;
	case CompareSwap:
	case FetchAdd:
		if (type == QpType::Rc)
			resp_atomic(p, false);
		return;
	default:
		nak(nak_inv_req);
		to_error();
		return;
	}
	if (!ok)
		return;
	set_epsn(epsn() + p.burst);
	if (iba::Bth::AckReq::get(p.bth->psn))
		send_ack(syn_ack, p.last_psn());
}

} // namespace weft::hca
