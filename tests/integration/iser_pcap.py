#!/usr/bin/env python3
# For tests/integration/iser.sh: the iSER initiator's STags as the wire
# shows them, from a Weft port capture (pcap, link type 247: IB packets
# from the LRH).  Every SCSI command with solicited data carries a Read
# STag (RSV) or a Write STag (WSV) that is that command's own fast
# registration (RFC 7145 7.3.5, 7.3.6): a task's successive commands use
# different STags, the target's RDMA WRITEs use only Read STags and its
# RDMA READs only Write STags that commands gave it.  With one DMA MR
# rkey for everything (the old weft_iser) every command reuses its key.
# Prints the counts; exit status 1 on a violation.
# Usage: iser_pcap.py CAPTURE
import struct
import sys

import ib_pcap

cmds, wr_keys, rd_keys = [], set(), set()
for op, pay in ib_pcap.packets(sys.argv[1]):
    # RC SEND First/Only: the iSER header (control type 0x1), then a SCSI Command BHS.
    if op in (0x00, 0x04) and len(pay) >= 76 and pay[0] >> 4 == 1 and pay[28] & 0x3f == 0x01:
        flags = pay[0] & 0x0f
        wstag, rstag = struct.unpack(">I", pay[4:8])[0], struct.unpack(">I", pay[16:20])[0]
        itt = struct.unpack(">I", pay[44:48])[0]
        if flags & 0x08:
            cmds.append((itt & 0x1fff, "W", wstag))
        if flags & 0x04:
            cmds.append((itt & 0x1fff, "R", rstag))
    elif op in (0x06, 0x0a, 0x0b) and len(pay) >= 16:  # RDMA WRITE First/Only(+Imm): RETH
        wr_keys.add(struct.unpack(">I", pay[8:12])[0])
    elif op == 0x0c and len(pay) >= 16:  # RDMA READ Request: RETH
        rd_keys.add(struct.unpack(">I", pay[8:12])[0])

bad = []
if len(cmds) < 10:
    bad.append("only %d commands with STags captured" % len(cmds))
last, reused = {}, 0
for slot, _, key in cmds:
    if last.get(slot) == key:
        reused += 1
    last[slot] = key
if reused:
    bad.append("%d commands reused their task's previous STag" % reused)
rsv = {k for _, t, k in cmds if t == "R"}
wsv = {k for _, t, k in cmds if t == "W"}
if rsv & wsv:
    bad.append("%d STags advertised for both directions" % len(rsv & wsv))
for what, used, given in (("RDMA WRITE", wr_keys, rsv), ("RDMA READ", rd_keys, wsv)):
    if not used:
        bad.append("no %s from the target captured" % what)
    foreign = used - given
    if foreign:
        bad.append("the target's %s used %d keys no command gave for it (%s)" %
                   (what, len(foreign), ", ".join("%#x" % k for k in sorted(foreign)[:4])))
print("iser_pcap: %d STags advertised (%d read, %d write), %d distinct; the target used %d for "
      "RDMA WRITE, %d for RDMA READ" % (len(cmds), len(rsv), len(wsv), len(rsv | wsv), len(wr_keys),
                                        len(rd_keys)))
for b in bad:
    print("iser_pcap:", b)
sys.exit(1 if bad else 0)
