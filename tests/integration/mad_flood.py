#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# One writer of tests/integration/mad_flood.sh: COUNT random and mutated MADs
# through /dev/infiniband/umadN (blocking writes; a full send queue is
# back-pressure and retried), round-robin at the QP0 and QP1 of each LID
# given.  Prints "sent N refused N first N" (refused: EINVAL from the
# sender's own checks, e.g. a directed-route path its SMI discards; first:
# how many of those sent were routed by LID to the first LID given).
import errno, fcntl, os, random, struct, sys, time

dev, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lids = [int(x) for x in sys.argv[4:]]
rng = random.Random(seed)
REG, PKEY = 0xc01c1b01, 0x1b03


def reg(fd, qpn):
    # A send-only agent (class 0) on QP0 or QP1: umad's struct ib_user_mad_reg_req.
    buf = bytearray(struct.pack("<I QQ BBB 3s B x", 0, 0, 0, qpn, 0, 0, b"\0\0\0", 0))
    fcntl.ioctl(fd, REG, buf)
    return struct.unpack_from("<I", buf)[0]


def hdr(agent, lid, qpn):
    qkey = 0 if qpn == 0 else 0x80010000
    return (struct.pack("<IIIII", agent, 0, 0, 0, 0) + struct.pack(">IIH", qpn, qkey, lid) +
            bytes(6 + 16 + 4) + struct.pack("<H", 0) + bytes(6))


def valid(cls, tid):
    # Requests a node answers: NodeInfo/PortInfo/NodeDesc Gets (SMA), PortCounters(Ext)
    # and ClassPortInfo Gets (PMA), a NodeRecord GetTable (SA: unserved there).
    if cls == 0x01:
        attr = rng.choice([0x0011, 0x0015, 0x0010, 0x0012, 0x0014])
        m = struct.pack(">BBBBHHQHHI", 1, 0x01, 1, 0x01, 0, 0, tid, attr, 0, 1 if attr == 0x15 else 0)
        return bytearray(m + bytes(256 - len(m)))
    if cls == 0x81:
        m = bytearray(struct.pack(">BBBBHBBQHHIQHH", 1, 0x81, 1, 0x01, 0, 0, 1, tid, 0x0011, 0, 0, 0,
                                  0xffff, 0xffff))
        m += bytes(256 - len(m))
        m[128 + 1] = 1  # initial path: out of port 1
        return m
    attr = rng.choice([0x0012, 0x001d, 0x0001])
    m = struct.pack(">BBBBHHQHHI", 1, cls, 1, 0x01, 0, 0, tid, attr, 0, 0)
    m = bytearray(m + bytes(256 - len(m)))
    m[40 + 1] = 1  # PortSelect 1
    return m


def junk(qpn, tid):
    if qpn == 0:
        cls = 0x01 if rng.random() < 0.75 else 0x81
    else:
        cls = rng.choice([0x03, 0x04, 0x04, 0x06, 0x07, 0x09, 0x10, 0x21, 0x30, 0x4f])
    if rng.random() < 0.5:
        m = bytearray(rng.randbytes(256))  # random after the class
    else:
        m = valid(cls, tid)  # mutated: a few bytes anywhere after the class changed
        for _ in range(rng.randint(1, 8)):
            m[rng.randrange(2, 256)] = rng.randrange(256)
    m[1] = cls
    if m[0] != 1 and rng.random() < 0.9:
        m[0] = 1  # mostly base version 1, so most reach the agents
    # No SM-class Set: a well-formed Set is obeyed as the SM's would be (a junk LID or
    # LFT would legitimately take the node off the subnet); every other method goes.
    if cls in (0x01, 0x81) and m[3] in (0x02,):
        m[3] = 0x01
    return bytes(m)


fd = os.open(dev, os.O_RDWR)
fcntl.ioctl(fd, PKEY)
agents = {0: reg(fd, 0), 1: reg(fd, 1)}
sent = refused = first = 0
targets = [(lid, qpn) for lid in lids for qpn in (0, 1)]
for i in range(count):
    lid, qpn = targets[i % len(targets)]
    buf = hdr(agents[qpn], lid, qpn) + junk(qpn, (seed << 32) | i)
    for attempt in range(100000):
        try:
            os.write(fd, buf)
            sent += 1
            first += lid == lids[0] and buf[64 + 1] != 0x81
            break
        except OSError as e:
            if e.errno == errno.EINVAL:
                refused += 1
                break
            if e.errno not in (errno.EAGAIN, errno.ENOBUFS, errno.ENOMEM):
                print("mad_flood: write %d: %s" % (i, e))
                sys.exit(1)
            time.sleep(0.001)
    else:
        print("mad_flood: write %d never taken" % i)
        sys.exit(1)
os.close(fd)
print("sent %d refused %d first %d" % (sent, refused, first))
