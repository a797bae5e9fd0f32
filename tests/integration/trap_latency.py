#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a trap's time from event to OpenSM's log goes (tests/integration/traps.sh).

    trap_latency.py CAPTURE OPENSM_LOG EVENTS

CAPTURE: Weft's pcap of the SM's port (Documentation/capture.md: CLOCK_REALTIME
timestamps in nanoseconds).  OPENSM_LOG: OpenSM's log, whose lines carry the
time to the microsecond.  EVENTS: one event a line, "NAME TRAP LID T0 SEEN",
T0 the event and SEEN the moment the test's polling saw the log line (ms since
the epoch).  For each event it prints, from T0: the first SubnTrap(Notice) with
that trap number from that LID on the SM's wire, OpenSM's log line of it, and
the test seeing that line.  Measurement only: nothing here is asserted.
"""
import re
import struct
import sys
import time


def wire_traps(path):
    """(time in ms, trap number, SLID) of every SubnTrap(Notice) in the capture."""
    data = open(path, "rb").read()
    out = []
    at = 24
    while at + 16 <= len(data):
        sec, nsec, incl, _ = struct.unpack_from("<IIII", data, at)
        pkt = data[at + 16:at + 16 + incl]
        at += 16 + incl
        # LRH (8), BTH (12), DETH (8): a VL15 SMP without a GRH (LNH 2).
        if len(pkt) < 28 + 70 or pkt[0] >> 4 != 15 or pkt[1] & 3 != 2:
            continue
        mad = pkt[28:]
        attr = struct.unpack_from(">H", mad, 16)[0]
        if mad[1] != 0x01 or mad[3] != 0x05 or attr != 0x0002:
            continue
        slid = struct.unpack_from(">H", pkt, 6)[0]
        number = struct.unpack_from(">H", mad, 64 + 4)[0]
        out.append((sec * 1000 + nsec / 1e6, number, slid))
    return out


LOG = re.compile(r"^(\w{3} +\d+ \d\d:\d\d:\d\d) (\d{6}) .*num:(\d+) .* from LID:(\d+) ")


def log_traps(path):
    """(time in ms, trap number, LID) of every notice OpenSM logged."""
    year = time.localtime().tm_year
    out = []
    for line in open(path, errors="replace"):
        m = LOG.match(line)
        if not m:
            continue
        t = time.mktime(time.strptime(f"{year} {m.group(1)}", "%Y %b %d %H:%M:%S"))
        out.append((t * 1000 + int(m.group(2)) / 1000, int(m.group(3)), int(m.group(4))))
    return out


def first_after(items, t0, number, lid):
    for t, n, l in items:
        if n == number and l == lid and t >= t0 - 5:
            return t
    return None


def main():
    wire = wire_traps(sys.argv[1])
    log = log_traps(sys.argv[2])
    fmt = lambda t, t0: "-" if t is None else f"{t - t0:.0f}"
    print("trap latency (ms after the event): event, trap, on the SM's wire, in OpenSM's log, seen by the test")
    for line in open(sys.argv[3]):
        name, number, lid, t0, seen = line.split()
        number, lid, t0, seen = int(number), int(lid), float(t0), float(seen)
        w = first_after(wire, t0, number, lid)
        g = first_after(log, t0, number, lid)
        print(f"trap-latency {name} {number} wire {fmt(w, t0)} log {fmt(g, t0)} seen {fmt(seen, t0)}")


if __name__ == "__main__":
    main()
