#!/usr/bin/env python3
# Limits and overruns of user-space verbs through pyverbs (Debian's
# python3-pyverbs over the stock rxe provider), for
# tests/integration/uverbs_apps.sh:
#   - a CQ overrun reaches the async event file as IBV_EVENT_CQ_ERR
#     (in-tree rxe_cq_post() raises it);
#   - a send WQE whose SGE lengths sum beyond 2^31 (the port's
#     max_msg_sz; two of 2^31 wrap to 0 in 32 bits) completes in error;
#   - RESIZE_CQ keeps the completions present, in order, and the new
#     ring takes more than the old one held;
#   - max_ah holds device-wide: AHs of two contexts together stop at the
#     advertised max_ah with rxe's errno (EINVAL, a full pool).
# Usage: uverbs_limits.py DEV
import signal
import sys

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pvcheck import Checks, poll_one
from pyverbs.wr import SGE, SendWR

dev = sys.argv[1]
checks = Checks("uverbs_limits")
bad = checks.bad


QKEY = 0x11111111
ctx = Context(name=dev)
lid = ctx.query_port(1).lid
pd = PD(ctx)
mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
ah = AH(pd, attr=AHAttr(dlid=lid, port_num=1))


def ud_qp(scq, rcq):
    cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=2, max_recv_sge=1)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=scq, rcq=rcq, cap=cap))
    a = QPAttr()
    a.qp_state, a.pkey_index, a.port_num, a.qkey = e.IBV_QPS_INIT, 0, 1, QKEY
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_QKEY)
    a = QPAttr()
    a.qp_state = e.IBV_QPS_RTR
    qp.modify(a, e.IBV_QP_STATE)
    a = QPAttr()
    a.qp_state, a.sq_psn = e.IBV_QPS_RTS, 0
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN)
    return qp


def send(qp, sges, wr_id):
    wr = SendWR(wr_id=wr_id, opcode=e.IBV_WR_SEND, num_sge=len(sges), sg=sges,
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_ud(ah, qp.qp_num, QKEY)
    qp.post_send(wr)



# 1. SGE lengths summing to 2^32 (0 in 32 bits): an error completion, not a 0-byte SEND.
rcq = CQ(ctx, 64)
scq = CQ(ctx, 16)
qp = ud_qp(scq, rcq)
huge = 1 << 31
send(qp, [SGE(mr.buf, huge, mr.lkey), SGE(mr.buf, huge, mr.lkey)], 7)
wc = poll_one(scq)
if wc is None:
    bad("no completion for a send of 2 x 2^31 bytes")
elif wc.status != e.IBV_WC_LOC_QP_OP_ERR:
    bad("send of 2 x 2^31 bytes completed with status %d, want IBV_WC_LOC_QP_OP_ERR" % wc.status)
else:
    print("uverbs_limits: send of 2 x 2^31 bytes: IBV_WC_LOC_QP_OP_ERR")

# 2. RESIZE_CQ (librxe maps the new ring): completions present move over, in order.
from pyverbs.wr import RecvWR
rcq3 = CQ(ctx, 64)
cq3 = CQ(ctx, 4)
qp3 = ud_qp(cq3, rcq3)
for i in range(16):
    qp3.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[SGE(mr.buf, 128, mr.lkey)]))
for i in range(3):
    send(qp3, [SGE(mr.buf, 8, mr.lkey)], i)
for _ in range(3):  # the loopback receives: the sends went
    if poll_one(rcq3) is None:
        bad("RESIZE_CQ: a loopback receive never came")
old_cqe = cq3.cqe
try:
    cq3.resize(100)
except PyverbsRDMAError as x:
    bad("RESIZE_CQ to 100: %s" % x)
got = [poll_one(cq3) for _ in range(3)]
ids = [w.wr_id if w else None for w in got]
if cq3.cqe < 100 or ids != [0, 1, 2]:
    bad("RESIZE_CQ %d -> %d entries, completions %s, want >= 100 and [0, 1, 2]" % (old_cqe, cq3.cqe, ids))
for i in range(3, 3 + 2 * old_cqe):  # more than the old ring held, unpolled
    send(qp3, [SGE(mr.buf, 8, mr.lkey)], i)
ids = []
for _ in range(2 * old_cqe):
    w = poll_one(cq3)
    ids.append(w.wr_id if w and w.status == e.IBV_WC_SUCCESS else None)
if ids != list(range(3, 3 + 2 * old_cqe)):
    bad("after RESIZE_CQ: completions %s" % ids)
try:
    cq3.resize(1 << 30)
    bad("RESIZE_CQ beyond max_cqe succeeded")
except PyverbsRDMAError as x:
    if x.error_code != 22:
        bad("RESIZE_CQ beyond max_cqe: %s, want EINVAL" % x)
print("uverbs_limits: RESIZE_CQ %d -> %d entries, completions kept" % (old_cqe, cq3.cqe))

# 3. CQ overrun: signaled sends into a send CQ nobody polls, beyond its entries.
small = CQ(ctx, 1)
qp2 = ud_qp(small, rcq)
for i in range(small.cqe + 2):
    send(qp2, [SGE(mr.buf, 8, mr.lkey)], i)
seen = []
for _ in range(4):
    ev = ctx.get_async_event()  # blocks (SIGALRM if it never comes)
    seen.append(ev.event_type)
    ev.ack()  # ibv_destroy_cq()/ibv_destroy_qp() wait for the acks of the events read
    if ev.event_type == e.IBV_EVENT_CQ_ERR:
        break
signal.alarm(0)
if e.IBV_EVENT_CQ_ERR not in seen:
    bad("CQ overrun: async events %s, no IBV_EVENT_CQ_ERR" % seen)
else:
    print("uverbs_limits: CQ overrun: async events %s" % seen)

# 4. max_ah, device-wide: two contexts' AHs together.
max_ah = ctx.query_device().max_ah
ctx2 = Context(name=dev)
pd2 = PD(ctx2)
ahs, err = [], None
try:
    for i in range(max_ah + 8):
        ahs.append(AH(pd if i % 2 else pd2, attr=AHAttr(dlid=lid, port_num=1)))
except PyverbsRDMAError as x:
    err = x.error_code
total = len(ahs) + 1  # with the one made above
print("uverbs_limits: %d AHs over two contexts, then errno %s (max_ah %d)" % (total, err, max_ah))
if total != max_ah or err != 22:
    bad("AHs: %d made then errno %s, want max_ah %d then EINVAL" % (total, err, max_ah))
for a in ahs:
    a.close()

sys.exit(0 if checks.ok else 1)
