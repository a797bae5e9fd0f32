#!/usr/bin/env python3
# For tests/integration/iser.sh: the iSER initiator's STags as the wire
# shows them, from a Weft port capture (pcap, link type 247: IB packets
# from the LRH).  Every SCSI command with solicited data carries a Read
# STag (RSV) or a Write STag (WSV) that is that command's own fast
# registration (RFC 7145 7.3.5, 7.3.6): no STag advertised twice (a slot's
# key variant changes with each command; a capture of fewer than 256
# commands per slot never wraps), the target's RDMA WRITEs use only Read
# STags and its RDMA READs only Write STags that commands gave it.  With
# one DMA MR rkey for everything (the old weft_iser) every command
# repeats the same key.  The target's SCSI Responses come as Send with
# Invalidate naming keys the commands advertised, each once.
# Prints the counts; exit status 1 on a violation.
# Usage: iser_pcap.py CAPTURE
import struct
import sys

import ib_pcap

cmds, wr_keys, rd_keys, inv_keys = [], set(), set(), []
for op, pay in ib_pcap.packets(sys.argv[1]):
    # RC SEND First/Only: the iSER header (control type 0x1), then a SCSI Command BHS.
    if op in (0x00, 0x04) and len(pay) >= 76 and pay[0] >> 4 == 1 and pay[28] & 0x3f == 0x01:
        flags = pay[0] & 0x0f
        wstag, rstag = struct.unpack(">I", pay[4:8])[0], struct.unpack(">I", pay[16:20])[0]
        if flags & 0x08:
            cmds.append(("W", wstag))
        if flags & 0x04:
            cmds.append(("R", rstag))
    elif op in (0x06, 0x0a, 0x0b) and len(pay) >= 16:  # RDMA WRITE First/Only(+Imm): RETH
        wr_keys.add(struct.unpack(">I", pay[8:12])[0])
    elif op == 0x0c and len(pay) >= 16:  # RDMA READ Request: RETH
        rd_keys.add(struct.unpack(">I", pay[8:12])[0])
    elif op in (0x16, 0x17) and len(pay) >= 4:  # SEND Last/Only with Invalidate: IETH
        inv_keys.append(struct.unpack(">I", pay[0:4])[0])

bad = []
if len(cmds) < 10:
    bad.append("only %d commands with STags captured" % len(cmds))
keys = [k for _, k in cmds]
if len(set(keys)) != len(keys):
    bad.append("%d STags advertised more than once" % (len(keys) - len(set(keys))))
rsv = {k for t, k in cmds if t == "R"}
wsv = {k for t, k in cmds if t == "W"}
if rsv & wsv:
    bad.append("%d STags advertised for both directions" % len(rsv & wsv))
for what, used, given in (("RDMA WRITE", wr_keys, rsv), ("RDMA READ", rd_keys, wsv)):
    if not used:
        bad.append("no %s from the target captured" % what)
    foreign = used - given
    if foreign:
        bad.append("the target's %s used %d keys no command gave for it (%s)" %
                   (what, len(foreign), ", ".join("%#x" % k for k in sorted(foreign)[:4])))
# weft_isert's SCSI Responses invalidate their command's STag (the REQ allows it).
if not inv_keys:
    bad.append("no Send with Invalidate from the target captured")
foreign = set(inv_keys) - set(keys)
if foreign:
    bad.append("the target invalidated %d keys no command gave it (%s)" %
               (len(foreign), ", ".join("%#x" % k for k in sorted(foreign)[:4])))
if len(set(inv_keys)) != len(inv_keys):
    bad.append("%d keys invalidated more than once" % (len(inv_keys) - len(set(inv_keys))))
print("iser_pcap: %d STags advertised (%d read, %d write), %d distinct; the target used %d for "
      "RDMA WRITE, %d for RDMA READ, invalidated %d by Send with Invalidate" %
      (len(cmds), len(rsv), len(wsv), len(rsv | wsv), len(wr_keys), len(rd_keys), len(inv_keys)))
for b in bad:
    print("iser_pcap:", b)
sys.exit(1 if bad else 0)
