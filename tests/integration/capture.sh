#!/bin/bash
# Integration: capture of fabric traffic to pcap (Documentation/capture.md).
# With the default subnet up, capture weft0's port 1 and the switch port
# towards weft1 while weft_selftest_traffic moves RC and UD traffic, then
# have tshark decode both files: no malformed packet and no expert warning,
# the opcodes that traffic must produce, and LIDs and QPNs matching what the
# traffic module used; every record's ICRC and VCRC (computed here as IBA
# 7.8 says: tshark does not check them).  Also: one reader per port (EBUSY), O_NONBLOCK
# (EAGAIN), the module pinned while a capture is open, no drops.
#
# Debian 12's tshark 4.0 cannot open LINKTYPE_INFINIBAND (247) files, so the
# check rewrites the link type of a copy to DLT_USER0 (147) and maps that to
# the infiniband dissector (as tests/hca/dissect.sh does).
set -u
fail=0
tmp=$(mktemp -d)
dbg=/sys/kernel/debug/weft
bad() { echo "capture: FAIL: $*"; fail=1; }

weft_load || exit 1
for f in weft0/port1/capture weftsw0/port2/capture weftsw0/port8/capture weft1/port1/capture_dropped; do
	[ -e "$dbg/$f" ] || bad "no $dbg/$f"
done

# An idle port: the 24-byte file header at once, then EAGAIN without blocking.
python3 - "$dbg/weft1/port1/capture" <<'PY' || bad "O_NONBLOCK read"
import os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
h = os.read(fd, 4096)
magic, major, minor, _, _, snaplen, linktype = struct.unpack("<IHHiIII", h)
assert len(h) == 24 and magic == 0xa1b23c4d and (major, minor) == (2, 4) and linktype == 247, h.hex()
assert snaplen >= 4096 + 64, snaplen
try:
    os.read(fd, 4096)
    sys.exit("read of an empty capture returned instead of EAGAIN")
except BlockingIOError:
    pass
os.close(fd)
PY

cat "$dbg/weft0/port1/capture" >"$tmp/hca.pcap" &
r1=$!
cat "$dbg/weftsw0/port2/capture" >"$tmp/sw.pcap" &
r2=$!
sleep 1
if cat "$dbg/weft0/port1/capture" >/dev/null 2>"$tmp/err"; then
	bad "a second reader of weft0/port1/capture was let in"
elif ! grep -q "busy" "$tmp/err"; then
	bad "second reader: $(cat "$tmp/err") (wanted EBUSY)"
fi
if rmmod weft_hca 2>/dev/null; then
	bad "weft_hca unloaded while a capture file was open"
fi
weft_insmod weft_selftest_traffic || bad "traffic module failed"
sleep 1
# A signal ends a read blocked on an empty ring; closing stops the capture.
kill "$r1" "$r2"
timeout 10 bash -c "wait $r1 $r2" 2>/dev/null
for p in $r1 $r2; do
	! kill -0 "$p" 2>/dev/null || bad "reader $p did not exit on SIGTERM"
done
rmmod weft_selftest_traffic 2>/dev/null
traffic=$(dmesg | tr -d '\r' | sed -n 's/.*WEFT-TRAFFIC //p' | tail -1)
echo "capture: traffic: $traffic"
dropped=$(cat "$dbg/weft0/port1/capture_dropped" "$dbg/weftsw0/port2/capture_dropped" | paste -sd+ | bc)
[ "$dropped" = 0 ] || bad "$dropped records dropped"
packets=$(cat "$dbg/weft0/port1/capture_packets")

ts() { # tshark with DLT_USER0 as InfiniBand
	weft_ib_tshark "$@" 2>>"$tmp/tshark.err"
}
for f in hca sw; do
	python3 - "$tmp/$f.pcap" "$tmp/$f.147.pcap" <<'PY' || bad "$f.pcap: not a well-formed pcap"
import struct, sys, zlib
def crc16(data):  # IBA 7.8.2 VCRC: poly 0x100b reflected, seed 0xffff, inverted
    c = 0xffff
    for byte in data:
        c ^= byte
        for _ in range(8):
            c = (c >> 1) ^ 0xd008 if c & 1 else c >> 1
    return c ^ 0xffff
def icrc(p):  # IBA 7.8.1: CRC-32 with LRH VL, GRH TClass/FlowLabel/HopLmt, BTH Resv8a as ones
    m = bytearray(p[:-6])
    m[0] |= 0xf0
    bth = 8
    if m[1] & 3 == 3:
        m[8] |= 0x0f
        m[9:12] = b"\xff\xff\xff"
        m[15] = 0xff
        bth = 48
    m[bth + 4] = 0xff
    return zlib.crc32(bytes(m))
d = open(sys.argv[1], "rb").read()
assert struct.unpack_from("<I", d, 0)[0] == 0xa1b23c4d and struct.unpack_from("<I", d, 20)[0] == 247
off, n = 24, 0
while off < len(d):
    sec, nsec, incl, orig = struct.unpack_from("<IIII", d, off)
    assert nsec < 10**9 and incl == orig and off + 16 + incl <= len(d), (off, incl, orig)
    p = d[off + 16:off + 16 + incl]
    got_i, got_v = struct.unpack_from("<IH", p, len(p) - 6)
    assert (got_i, got_v) == (icrc(p), crc16(p[:-2])), ("record %d: ICRC/VCRC %#x/%#x, want %#x/%#x" %
                                                       (n, got_i, got_v, icrc(p), crc16(p[:-2])))
    off += 16 + incl
    n += 1
assert off == len(d)
print("capture: %s: %d records, %d bytes, ICRC and VCRC of each correct" % (sys.argv[1].rsplit("/", 1)[1], n, len(d)))
open(sys.argv[2], "wb").write(d[:20] + struct.pack("<I", 147) + d[24:])
PY
	frames=$(ts -r "$tmp/$f.147.pcap" -Y infiniband -T fields -e frame.number | wc -l)
	all=$(ts -r "$tmp/$f.147.pcap" -T fields -e frame.number | wc -l)
	flagged=$(ts -r "$tmp/$f.147.pcap" -Y '_ws.malformed || _ws.expert.severity >= warning' | wc -l)
	echo "capture: tshark $f.pcap: $all frames, $frames InfiniBand, $flagged malformed or flagged"
	[ "$all" -gt 0 ] && [ "$frames" = "$all" ] || bad "$f.pcap: $frames of $all frames decoded as InfiniBand"
	[ "$flagged" = 0 ] || { bad "$f.pcap: $flagged frames malformed or flagged";
		ts -r "$tmp/$f.147.pcap" -Y '_ws.malformed || _ws.expert.severity >= warning' | head -5; }
	ts -r "$tmp/$f.147.pcap" -T fields -E separator=, -e infiniband.bth.opcode -e infiniband.lrh.slid \
		-e infiniband.lrh.dlid -e infiniband.bth.destqp >"$tmp/$f.fields"
done
[ "$(wc -l <"$tmp/hca.fields")" = "$packets" ] || bad "weft0/port1: capture_packets $packets, file $(wc -l <"$tmp/hca.fields")"
# The same packets pass both (in either order when both directions are busy).
sort "$tmp/hca.fields" >"$tmp/hca.sorted"
sort "$tmp/sw.fields" >"$tmp/sw.sorted"
if ! cmp -s "$tmp/hca.sorted" "$tmp/sw.sorted"; then
	bad "the switch port towards weft1 saw other packets than weft0's port"
	diff "$tmp/hca.sorted" "$tmp/sw.sorted" | head -20
fi
# Every packet is between weft0 and weft1 and for the QP the traffic used;
# every opcode the traffic must produce is there.
python3 - "$tmp/hca.fields" "$traffic" <<'PY' || bad "fields"
import sys
t = dict(kv.split("=") for kv in sys.argv[2].split())
t = {k: int(v) for k, v in t.items()}
a, b = t["lid_a"], t["lid_b"]
want = {0x05: "SEND only imm", 0x00: "SEND first", 0x01: "SEND middle", 0x02: "SEND last",
        0x0a: "WRITE only", 0x0c: "READ request", 0x10: "READ response only", 0x11: "ACK",
        0x12: "atomic ACK", 0x13: "CmpSwap", 0x14: "FetchAdd", 0x64: "UD SEND only"}
seen, bad = set(), 0
for line in open(sys.argv[1]):
    op, slid, dlid, qpn = (int(x, 0) for x in line.strip().split(","))
    seen.add(op)
    if op in (0x10, 0x11, 0x12):
        exp = (b, a, t["rc_qpn_a"])
    elif op == 0x64:
        exp = (a, b, t["ud_qpn_b"])
    else:
        exp = (a, b, t["rc_qpn_b"])
    if (slid, dlid, qpn) != exp:
        print("opcode %#x: SLID %d DLID %d QPN %#x, want %s" % (op, slid, dlid, qpn, exp))
        bad += 1
missing = [v for k, v in want.items() if k not in seen]
if missing:
    print("missing opcodes:", ", ".join(missing))
print("capture: opcodes seen:", " ".join("%#04x" % o for o in sorted(seen)))
sys.exit(1 if bad or missing else 0)
PY
dmesg | tr -d '\r' | grep -E 'weft_hca: .*capture (started|stopped)' | tail -4
weft_unload || fail=1
weft_check_taint || fail=1
rm -rf "$tmp"
exit $fail
