#!/usr/bin/env python3
# Modify SRQ through pyverbs over the stock rxe provider, for
# tests/integration/uverbs_apps.sh (IBA 11.2.3.4):
#   - resize (IBV_SRQ_MAX_WR): librxe maps the new ring; the receive WQEs
#     posted before stay and complete first, in order, and the new ring
#     takes more than the old one could;
#   - a resize below what is posted, or beyond max_srq_wr: EINVAL;
#   - the limit (IBV_SRQ_LIMIT) armed by Modify SRQ: IBV_EVENT_SRQ_LIMIT_REACHED
#     once the count falls below it.
# RC messages from a QP to one whose receives come from the SRQ, on one
# device (through the switch and back).  Usage: uverbs_srq.py DEV
import signal
import sys

import pyverbs.enums as e
from pyverbs.addr import AHAttr
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pvcheck import Checks, poll_one
from pyverbs.wr import SGE, RecvWR, SendWR

dev = sys.argv[1]
checks = Checks("uverbs_srq")
bad = checks.bad


SLOT = 256
ctx = Context(name=dev)
lid = ctx.query_port(1).lid
max_srq_wr = ctx.query_device().max_srq_wr
pd = PD(ctx)
rmr = MR(pd, SLOT * 128, e.IBV_ACCESS_LOCAL_WRITE)
smr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=8, max_sge=1)))
scq, rcq = CQ(ctx, 256), CQ(ctx, 256)


def rc_qp(with_srq):
    cap = QPCap(max_send_wr=128, max_recv_wr=0 if with_srq else 1, max_send_sge=1, max_recv_sge=1)
    return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=scq, rcq=rcq, cap=cap,
                             srq=srq if with_srq else None))


def connect(qp, peer):
    a = QPAttr()
    a.qp_state, a.pkey_index, a.port_num, a.qp_access_flags = e.IBV_QPS_INIT, 0, 1, 0
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)
    a = QPAttr()
    a.qp_state, a.path_mtu, a.dest_qp_num, a.rq_psn = e.IBV_QPS_RTR, e.IBV_MTU_1024, peer, 0
    a.max_dest_rd_atomic, a.min_rnr_timer = 1, 12
    a.ah_attr = AHAttr(dlid=lid, port_num=1)
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN |
              e.IBV_QP_RQ_PSN | e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER)
    a = QPAttr()
    a.qp_state, a.sq_psn, a.timeout, a.retry_cnt, a.rnr_retry, a.max_rd_atomic = \
        e.IBV_QPS_RTS, 0, 14, 7, 7, 1
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN | e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT |
              e.IBV_QP_RNR_RETRY | e.IBV_QP_MAX_QP_RD_ATOMIC)


def post(first, n):
    for i in range(first, first + n):
        slot = i % 128
        srq.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[SGE(rmr.buf + slot * SLOT, SLOT, rmr.lkey)]))



sender, receiver = rc_qp(False), rc_qp(True)
connect(sender, receiver.qp_num)
connect(receiver, sender.qp_num)


def send(i):
    smr.write(i.to_bytes(4, "big"), 4)
    wr = SendWR(wr_id=i, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(smr.buf, 4, smr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    sender.post_send(wr)
    w = poll_one(scq)
    if w is None or w.status != e.IBV_WC_SUCCESS:
        bad("send %d did not complete" % i)


# 1. Resize with WQEs posted: they stay, in order, and the ring takes more.
post(0, 6)
try:
    srq.modify(SrqAttr(max_wr=100), e.IBV_SRQ_MAX_WR)
except PyverbsRDMAError as x:
    bad("Modify SRQ max_wr 8 -> 100: %s" % x)
    sys.exit(1)
got = srq.query().max_wr
if got < 100:
    bad("after resizing to 100 the SRQ has %d WQEs" % got)
post(6, 60)  # 66 posted: the old ring held 8 at most
for i in range(66):
    send(i)
seen = []
for i in range(66):
    w = poll_one(rcq)
    if w is None or w.status != e.IBV_WC_SUCCESS:
        bad("receive %d: %s" % (i, "none" if w is None else "status %d" % w.status))
        break
    data = rmr.read(4, (w.wr_id % 128) * SLOT)
    seen.append((w.wr_id, int.from_bytes(data, "big")))
if seen != [(i, i) for i in range(66)]:
    bad("receives after the resize (wr_id, message): %s" % seen[:12])
else:
    print("uverbs_srq: resized 8 -> %d with 6 posted; 66 messages received in order" % got)

# 2. EINVAL: smaller than what is posted, beyond the device's maximum.
post(66, 20)
for want in (4, max_srq_wr + 1):
    try:
        srq.modify(SrqAttr(max_wr=want), e.IBV_SRQ_MAX_WR)
        bad("Modify SRQ max_wr %d with 20 posted succeeded" % want)
    except PyverbsRDMAError as x:
        if x.error_code != 22:
            bad("Modify SRQ max_wr %d: %s, want EINVAL" % (want, x))
if srq.query().max_wr != got:
    bad("a refused resize changed the SRQ's size")

# 3. The limit armed by Modify SRQ: 20 posted, limit 15, 6 messages take it to 14.
srq.modify(SrqAttr(srq_limit=15), e.IBV_SRQ_LIMIT)
if srq.query().srq_limit != 15:
    bad("srq_limit reads %d after arming 15" % srq.query().srq_limit)
for i in range(66, 72):
    send(i)
    if poll_one(rcq) is None:
        bad("receive %d never came" % i)
ev = ctx.get_async_event()  # blocks (SIGALRM if it never comes)
etype = ev.event_type
ev.ack()
if etype != e.IBV_EVENT_SRQ_LIMIT_REACHED:
    bad("async event %d, want IBV_EVENT_SRQ_LIMIT_REACHED" % etype)
else:
    print("uverbs_srq: IBV_EVENT_SRQ_LIMIT_REACHED below the armed limit")
signal.alarm(0)
# In dependency order: the interpreter's own teardown order is not.
for o in (sender, receiver, srq, scq, rcq, rmr, smr, pd, ctx):
    o.close()
sys.exit(0 if checks.ok else 1)
