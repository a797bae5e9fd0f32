// SPDX-License-Identifier: GPL-2.0
/*
 * weft_selftest_traffic: a kernel-side traffic source for tests that watch
 * the fabric (tests/integration/capture.sh) while there is no user-space
 * verbs yet.  At load it moves a fixed set of messages from weft0 to weft1
 * through the verbs API, checks each completed, logs the QPs and LIDs it
 * used, and holds nothing afterwards:
 *
 *   RC (path MTU 1024): SEND with immediate (64 bytes), SEND (3000 bytes:
 *   first, middle, last), RDMA WRITE (256), RDMA READ (256), Fetch&Add,
 *   Compare&Swap; with the responder's ACKs, read response and atomic ACKs.
 *   UD: one 100-byte SEND (Q_Key 0x1234).
 */
#include <weft/log.h>

#include <weft/verbs/test_pair.h>

using namespace weft;
using namespace weft::verbs;
using namespace weft::verbs::testing;

namespace {
const Logger log("weft_selftest_traffic");

constexpr uint32_t send_len = 3000;
constexpr uint32_t rdma_len = 256;
constexpr uint32_t ud_qkey = 0x1234;

/* Static: a DMA MR covers kernel memory, and nothing here is concurrent. */
uint8_t src[send_len], dst[send_len], remote[rdma_len];
alignas(8) uint64_t atomic_target, atomic_result;

Result<void> complete(Cq *cq, WcOpcode op)
{
	Wc wc = WEFT_TRY(wait_wc(cq));
	if (wc.status != WcStatus::Success || wc.opcode != op) {
		log.err("completion: status %d opcode %d, wanted success opcode %d", static_cast<int>(wc.status),
			static_cast<int>(wc.opcode), static_cast<int>(op));
		return Error(err::EIO);
	}
	return ok();
}

Result<void> post(Side &s, SendWr &wr, void *buf, uint32_t len)
{
	Sge sg{reinterpret_cast<uint64_t>(buf), len, s.mr->lkey};
	wr.sg = Span<const Sge>(&sg, 1);
	return s.qp->post_send(wr);
}

Result<void> rc_traffic(Pair &c)
{
	WEFT_TRY(c.connect(QpType::Rc, iba::Mtu::M1024));
	for (uint32_t i = 0; i < send_len; i++)
		src[i] = static_cast<uint8_t>(i * 7);
	for (int i = 0; i < 2; i++) {
		Sge rsg{reinterpret_cast<uint64_t>(dst), send_len, c.b.mr->lkey};
		RecvWr rwr;
		rwr.sg = Span<const Sge>(&rsg, 1);
		WEFT_TRY(c.b.qp->post_recv(rwr));
	}
	SendWr wr;
	wr.opcode = WrOpcode::SendWithImm;
	wr.imm_data = 0xc0ffee;
	WEFT_TRY(post(c.a, wr, src, 64));
	WEFT_TRY(complete(c.a.cq, WcOpcode::Send));
	WEFT_TRY(complete(c.b.cq, WcOpcode::Recv));
	wr.opcode = WrOpcode::Send;
	WEFT_TRY(post(c.a, wr, src, send_len));
	WEFT_TRY(complete(c.a.cq, WcOpcode::Send));
	WEFT_TRY(complete(c.b.cq, WcOpcode::Recv));
	wr.opcode = WrOpcode::RdmaWrite;
	wr.rdma.remote_addr = reinterpret_cast<uint64_t>(remote);
	wr.rdma.rkey = c.b.mr->rkey;
	WEFT_TRY(post(c.a, wr, src, rdma_len));
	WEFT_TRY(complete(c.a.cq, WcOpcode::RdmaWrite));
	wr.opcode = WrOpcode::RdmaRead;
	WEFT_TRY(post(c.a, wr, dst, rdma_len));
	WEFT_TRY(complete(c.a.cq, WcOpcode::RdmaRead));
	wr.opcode = WrOpcode::AtomicFetchAdd;
	wr.atomic.remote_addr = reinterpret_cast<uint64_t>(&atomic_target);
	wr.atomic.rkey = c.b.mr->rkey;
	wr.atomic.compare_add = 5;
	WEFT_TRY(post(c.a, wr, &atomic_result, 8));
	WEFT_TRY(complete(c.a.cq, WcOpcode::FetchAdd));
	wr.opcode = WrOpcode::AtomicCmpSwap;
	wr.atomic.compare_add = 5;
	wr.atomic.swap = 9;
	WEFT_TRY(post(c.a, wr, &atomic_result, 8));
	WEFT_TRY(complete(c.a.cq, WcOpcode::CompSwap));
	if (__builtin_memcmp(src, dst, send_len) || __builtin_memcmp(src, remote, rdma_len) || atomic_target != 9)
		return Error(err::EIO);
	return ok();
}

Result<void> ud_traffic(UdPair &u)
{
	WEFT_TRY(u.open(ud_qkey));
	Side &a = u.a, &b = u.b;
	Sge rsg{reinterpret_cast<uint64_t>(dst), 40 + 100, b.mr->lkey};
	RecvWr rwr;
	rwr.sg = Span<const Sge>(&rsg, 1);
	WEFT_TRY(b.qp->post_recv(rwr));
	SendWr wr;
	wr.opcode = WrOpcode::Send;
	u.address(wr);
	WEFT_TRY(post(a, wr, src, 100));
	WEFT_TRY(complete(a.cq, WcOpcode::Send));
	return complete(b.cq, WcOpcode::Recv);
}

} // namespace

/* Called by traffic_mod.c's module init: 0 or -errno. */
extern "C" int weft_selftest_traffic_run(void);

int weft_selftest_traffic_run(void)
{
	Pair rc;
	UdPair ud;
	atomic_target = 0;
	auto r = rc_traffic(rc);
	if (r)
		r = ud_traffic(ud);
	if (!r) {
		log.err("traffic failed (errno %d)", r.error().code());
		return r.to_errno();
	}
	/* Parsed by tests/integration/capture.sh. */
	log.info("WEFT-TRAFFIC lid_a=%u lid_b=%u rc_qpn_a=%u rc_qpn_b=%u ud_qpn_a=%u ud_qpn_b=%u", rc.a.lid,
		 rc.b.lid, rc.a.qp->qpn, rc.b.qp->qpn, ud.a.qp->qpn, ud.b.qp->qpn);
	return 0;
}
