#!/usr/bin/env python3
# RDMA netlink resource doits spoken directly (uverbs_res.sh): RES_QP_GET of
# one QP by device, port and LQPN answers that QP (its PID), a QP that is
# not there is ENOENT, a QP without a port is EINVAL, a PD with a port is
# EINVAL (PDs are per device), as the in-tree nldev.c answers; RES_GET with
# DRIVER_DETAILS counts the driver-internal MR (a user QP's send ring) too.
# Usage: uverbs_res_nl.py DEV_INDEX LQPN PID
import errno, os, socket, struct, sys

NETLINK_RDMA, NLDEV = 20, 5
RES_GET, RES_QP_GET, RES_PD_GET = 9, 10, 14
RES_SUMMARY, SUMMARY_NAME, SUMMARY_CURR, DRIVER_DETAILS = 15, 17, 18, 97
DEV_INDEX, PORT_INDEX, RES_LQPN, RES_PID, RES_PDN = 1, 3, 21, 28, 60
NLM_F_REQUEST, NLM_F_ACK, NLMSG_ERROR = 1, 4, 2


def attr(t, v):
    if t == DRIVER_DETAILS:
        return struct.pack("<HHB3x", 5, t, v)
    return struct.pack("<HHI", 8, t, v)


def attrs_of(data):
    got, off = {}, 0
    while off + 4 <= len(data):
        alen, atype = struct.unpack("<HH", data[off:off + 4])
        if alen < 4:
            break
        got.setdefault(atype & 0x3fff, []).append(data[off + 4:off + alen])
        off += (alen + 3) & ~3
    return got


def summary(dev, details):
    extra = [(DRIVER_DETAILS, 1)] if details else []
    _, got = doit(RES_GET, [(DEV_INDEX, dev)] + extra)
    counts = {}
    for entry in attrs_of(got[RES_SUMMARY])[16]:
        e = attrs_of(entry)
        counts[e[SUMMARY_NAME][0].rstrip(b"\0").decode()] = struct.unpack("<Q", e[SUMMARY_CURR][0][:8])[0]
    return counts


def doit(op, attrs):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_RDMA)
    body = b"".join(attr(t, v) for t, v in attrs)
    s.send(struct.pack("<IHHII", 16 + len(body), (NLDEV << 10) + op, NLM_F_REQUEST | NLM_F_ACK, 1, 0) + body)
    data = s.recv(65536)
    s.close()
    length, mtype = struct.unpack("<IH", data[:6])
    if mtype == NLMSG_ERROR:
        return struct.unpack("<i", data[16:20])[0], {}
    return mtype, {t: v[0] for t, v in attrs_of(data[16:length]).items()}


dev, lqpn, pid = (int(a) for a in sys.argv[1:4])
ok = True
mtype, got = doit(RES_QP_GET, [(DEV_INDEX, dev), (PORT_INDEX, 1), (RES_LQPN, lqpn)])
seen = struct.unpack("<I", got[RES_PID])[0] if RES_PID in got else None
print("uverbs_res_nl: QP %d: message type %#x, pid %s" % (lqpn, mtype, seen))
if mtype != (NLDEV << 10) + RES_QP_GET or seen != pid:
    ok = False
for what, op, attrs, want in (
        ("a QP that is not there", RES_QP_GET, [(DEV_INDEX, dev), (PORT_INDEX, 1), (RES_LQPN, 0xfffff0)], errno.ENOENT),
        ("a QP without its port", RES_QP_GET, [(DEV_INDEX, dev), (RES_LQPN, lqpn)], errno.EINVAL),
        ("a PD with a port", RES_PD_GET, [(DEV_INDEX, dev), (PORT_INDEX, 1), (RES_PDN, 0)], errno.EINVAL),
        ("a device that is not there", RES_QP_GET, [(DEV_INDEX, 77), (PORT_INDEX, 1), (RES_LQPN, lqpn)], errno.EINVAL)):
    rc, _ = doit(op, attrs)
    print("uverbs_res_nl: %s: %d" % (what, rc))
    if rc != -want:
        print("uverbs_res_nl: %s: want -%s" % (what, errno.errorcode[want]))
        ok = False
plain, detailed = summary(dev, False), summary(dev, True)
print("uverbs_res_nl: RES_GET %s; with DRIVER_DETAILS %s" % (plain, detailed))
if detailed.get("mr") != plain.get("mr", -1) + 1 or detailed.get("qp") != plain.get("qp"):
    print("uverbs_res_nl: DRIVER_DETAILS should add the send ring's MR, and only it")
    ok = False
sys.exit(0 if ok else 1)
