#!/usr/bin/env python3
# For tests/integration/srp.sh: the SRP initiator's data descriptors as
# the wire shows them, from a Weft port capture (pcap, link type 247: IB
# packets from the LRH).  Every SRP_CMD with data must carry one direct
# descriptor (SRP 5.6.2.1) whose key is that command's own fast
# registration: a slot's successive commands use different keys, and
# every RDMA READ/WRITE the target sent used a key some command gave it.
# Prints the counts; exit status 1 on a violation.
# Usage: srp_pcap.py CAPTURE
import struct
import sys

import ib_pcap

cmds, reth_keys = [], set()
for op, pay in ib_pcap.packets(sys.argv[1]):
    if op == 0x04 and len(pay) >= 64 and pay[0] == 0x02:  # RC SEND Only: SRP_CMD
        fmt = pay[5]
        tag = struct.unpack(">Q", pay[8:16])[0]
        va, key, ln = struct.unpack(">QII", pay[48:64])
        if fmt:
            cmds.append((tag & 0xffff, fmt, key, ln))
    elif op in (0x06, 0x0a, 0x0c) and len(pay) >= 16:  # RDMA WRITE First/Only, READ Request: RETH
        reth_keys.add(struct.unpack(">I", pay[8:12])[0])

bad = []
keys = [c[2] for c in cmds]
if len(cmds) < 10:
    bad.append("only %d SRP_CMDs with data captured" % len(cmds))
not_direct = [c for c in cmds if c[1] not in (0x01, 0x10)]
if not_direct:
    bad.append("%d commands without a single direct descriptor (buf_fmt %#x)" % (len(not_direct), not_direct[0][1]))
last = {}
reused = 0
for slot, _, key, _ in cmds:
    if last.get(slot) == key:
        reused += 1
    last[slot] = key
if reused:
    bad.append("%d commands reused their slot's previous key" % reused)
foreign = reth_keys - set(keys)
if foreign:
    bad.append("the target used %d keys no command gave it (%s)" % (len(foreign), ", ".join("%#x" % k for k in sorted(foreign)[:4])))
if not reth_keys:
    bad.append("no RDMA READ/WRITE from the target captured")
print("srp_pcap: %d commands with data, %d distinct keys, %d keys used by the target" %
      (len(cmds), len(set(keys)), len(reth_keys)))
for b in bad:
    print("srp_pcap:", b)
sys.exit(1 if bad else 0)
