// SPDX-License-Identifier: GPL-2.0
/*
 * What the target puts on its send queue (RFC 7145 7.3): every iSCSI PDU
 * as one SEND of iSER header + BHS + data segment, data-in as RDMA WRITEs
 * to the initiator's Read STag followed by the SCSI Response, data-out as
 * RDMA READs from its Write STag (no R2T PDU).  Send queue room is counted:
 * a post that does not fit answers EAGAIN and LIO retries it later.
 */
#include "isert.h"
#include "parse.h"

namespace weft::isert {

using namespace iser::wire;

bool Conn::reserve(uint32_t n)
{
	SpinGuardBh g(lock_);
	if (sq_avail_ < n)
		return false;
	sq_avail_ -= n;
	outstanding_ += n;
	return true;
}

void Conn::retire(uint32_t n)
{
	bool wake;
	{
		SpinGuardBh g(lock_);
		sq_avail_ += n;
		outstanding_ -= n;
		wake = !outstanding_;
	}
	if (wake)
		wq_.wake_all();
}

int Conn::post_login_send()
{
	if (!reserve(1))
		return -err::EAGAIN;
	uint32_t len;
	{
		SpinGuardBh g(lock_);
		len = login_tx_len_;
	}
	verbs::Sge sge;
	sge.addr = reinterpret_cast<uintptr_t>(login_tx_.data());
	sge.length = len;
	sge.lkey = dom_.mr->lkey;
	verbs::SendWr wr;
	wr.wr_id = k_login_send;
	wr.opcode = verbs::WrOpcode::Send;
	wr.send_flags = verbs::send_flag::signaled;
	wr.sg = Span<const verbs::Sge>(&sge, 1);
	auto r = rc_.qp->post_send(wr);
	if (!r) {
		retire(1);
		return r.to_errno();
	}
	return 0;
}

/* RFC 7145 9.2: the iSER header of a target's PDU: control type, no STags. */
static void fill_header(weft_isert_io &io)
{
	auto *h = reinterpret_cast<Header *>(io.hdrs);
	*h = Header{};
	h->flags.set(opcode::iscsi_ctrl << 4);
}

/*
 * RFC 7145 8.3.2 (as in-tree isert): a SCSI Response invalidates its
 * command's STag (the Read STag, else the Write STag) when the initiator
 * accepted remote invalidation.
 */
static void invalidate_with(verbs::SendWr &wr, const weft_isert_io &io, bool send_w_inv)
{
	const auto *bhs = reinterpret_cast<const Bhs *>(io.hdrs + sizeof(Header));
	const uint32_t stag = io.read_stag ? io.read_stag : io.write_stag;
	if (!send_w_inv || bhs->op() != iscsi_op::scsi_rsp || !stag)
		return;
	wr.opcode = verbs::WrOpcode::SendWithInv;
	wr.invalidate_rkey = stag;
}

static verbs::SendWr send_wr(weft_isert_io &io, verbs::Sge *sge, uint32_t lkey)
{
	fill_header(io);
	sge[0].addr = reinterpret_cast<uintptr_t>(io.hdrs);
	sge[0].length = hdrs_len;
	sge[0].lkey = lkey;
	uint32_t n = 1;
	if (io.data && io.data_len) {
		sge[1].addr = reinterpret_cast<uintptr_t>(io.data);
		sge[1].length = io.data_len;
		sge[1].lkey = lkey;
		n = 2;
	}
	verbs::SendWr wr;
	wr.wr_id = reinterpret_cast<uintptr_t>(&io) | 3; /* k_send */
	wr.opcode = verbs::WrOpcode::Send;
	wr.send_flags = verbs::send_flag::signaled;
	wr.sg = Span<const verbs::Sge>(sge, n);
	return wr;
}

int Conn::send(weft_isert_io &io)
{
	if (!reserve(1))
		return -err::EAGAIN;
	io.n_wr = 1;
	verbs::Sge sge[2];
	verbs::SendWr wr = send_wr(io, sge, dom_.mr->lkey);
	invalidate_with(wr, io, send_w_inv_);
	auto r = rc_.qp->post_send(wr);
	if (!r) {
		retire(1);
		return r.to_errno();
	}
	return 0;
}

/*
 * The RDMA WRs of a transfer (parse::split): counted only, or posted with
 * the last one signaled when it is a READ's.
 */
int Conn::rdma_wrs(weft_isert_io &io, bool write, const weft_isert_seg *segs, uint32_t nsegs,
		   uint32_t offset, uint32_t len, uint32_t rkey, uint64_t va, bool post)
{
	uint64_t remote = va;
	const uint32_t lkey = dom_.mr->lkey;
	return parse::split(segs, nsegs, offset, len, sges_,
			    [&](const parse::Piece *pc, uint32_t n, uint32_t bytes, bool last) -> int {
				    if (post) {
					    verbs::Sge sge[16];
					    for (uint32_t k = 0; k < n; k++) {
						    sge[k].addr = pc[k].kva;
						    sge[k].length = pc[k].len;
						    sge[k].lkey = lkey;
					    }
					    verbs::SendWr wr;
					    const bool sig = last && !write;
					    wr.opcode = write ? verbs::WrOpcode::RdmaWrite
							      : verbs::WrOpcode::RdmaRead;
					    wr.wr_id = reinterpret_cast<uintptr_t>(&io) | (sig ? k_read : k_rdma);
					    wr.send_flags = sig ? verbs::send_flag::signaled : 0;
					    wr.sg = Span<const verbs::Sge>(sge, n);
					    wr.rdma.remote_addr = remote;
					    wr.rdma.rkey = rkey;
					    if (!rc_.qp->post_send(wr))
						    return -err::EIO;
				    }
				    remote += bytes;
				    return 0;
			    });
}

/* RFC 7145 7.3.5 (data-in: RDMA WRITE, then the response) and 7.3.6 (data-out: RDMA READ). */
int Conn::rdma(weft_isert_io &io, bool write, const weft_isert_seg *segs, uint32_t nsegs,
	       uint32_t offset, uint32_t len)
{
	const uint32_t rkey = write ? io.read_stag : io.write_stag;
	/*
	 * RFC 7145 7.3.6 as Linux does it: the Write VA already points past
	 * the unsolicited data; @offset skips it in our buffer only.
	 */
	const uint64_t va = write ? io.read_va : io.write_va;
	if (!len)
		return write ? send(io) : -err::EINVAL;
	if (!rkey)
		return -err::EINVAL; /* no STag for this direction: LIO fails the command */
	const int n = rdma_wrs(io, write, segs, nsegs, offset, len, rkey, va, false);
	if (n <= 0)
		return n ? n : -err::EINVAL;
	const uint32_t total = static_cast<uint32_t>(n) + (write ? 1 : 0);
	if (!reserve(total))
		return -err::EAGAIN;
	io.n_wr = total;
	int r = rdma_wrs(io, write, segs, nsegs, offset, len, rkey, va, true);
	if (r >= 0 && write) {
		/* Behind the WRITEs on the same send queue: placement precedes the response. */
		verbs::Sge sge[2];
		verbs::SendWr wr = send_wr(io, sge, dom_.mr->lkey);
		invalidate_with(wr, io, send_w_inv_);
		if (!rc_.qp->post_send(wr))
			r = -err::EIO;
	}
	if (r < 0) {
		/*
		 * A post refused (the QP is being destroyed): no signaled WR
		 * of this command went, and unsignaled ones complete only as
		 * ignored errors, so the whole reservation comes back now.
		 */
		retire(total);
		failed();
		return r;
	}
	return 0;
}

} // namespace weft::isert
