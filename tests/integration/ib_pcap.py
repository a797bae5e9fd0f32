#!/usr/bin/env python3
# For the capture checks of the integration tests (srp_pcap.py,
# iser_pcap.py): the packets of a Weft port capture (pcap, link type
# 247: IB packets from the LRH) as (BTH opcode, payload after the BTH).
import struct


def packets(path):
    d = open(path, "rb").read()
    assert len(d) >= 24 and struct.unpack("<I", d[20:24])[0] == 247, "not a Weft capture"
    off = 24
    while off + 16 <= len(d):
        incl = struct.unpack("<I", d[off + 8:off + 12])[0]
        p = d[off + 16:off + 16 + incl]
        off += 16 + incl
        if len(p) < 20:
            continue
        o = 8 + (40 if p[1] & 3 == 3 else 0)  # LRH, then the GRH if LNH says so
        yield p[o], p[o + 12:]
