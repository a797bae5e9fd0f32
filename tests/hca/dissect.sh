#!/bin/bash
# dissect.sh LOG: take the packets the KUnit case weft_hca_packet/
# dump_for_dissector logged ("WEFT-PKT <hex>"), write them to a pcap, and
# have tshark decode them.  Debian 12's tshark (4.0) cannot read
# LINKTYPE_INFINIBAND (247) pcaps ("network type 247 unknown"), so the file
# uses DLT_USER0 (147) mapped to Wireshark's infiniband dissector.  Checks that tshark
# marks none malformed and reads back, for every packet, the opcode, DLID,
# P_Key, DestQP and PSN that packet_test.cpp put in.
set -u
log=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tr -d '\r' <"$log" | sed -n 's/.*WEFT-PKT \([0-9a-f]*\).*/\1/p' >"$tmp/hex"
count=$(wc -l <"$tmp/hex")
if [ "$count" -lt 74 ]; then
	echo "FAIL hca/tshark-decodes-packets - only $count packets in the log"
	exit 1
fi
python3 - "$tmp/hex" "$tmp/p.pcap" <<'PY'
import struct, sys
hexes = [l.strip() for l in open(sys.argv[1]) if l.strip()]
with open(sys.argv[2], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 147))
    for i, h in enumerate(hexes):
        b = bytes.fromhex(h)
        f.write(struct.pack("<IIII", i, 0, len(b), len(b)))
        f.write(b)
PY
ts() { # tshark with DLT_USER0 as InfiniBand; a tshark that fails fails the check
	tshark -o 'uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""' "$@" 2>"$tmp/err" ||
		{ echo "FAIL hca/tshark-runs - $(grep -v 'Running as user' "$tmp/err" | head -1)"; exit 1; }
}
frames=$(ts -r "$tmp/p.pcap" -Y infiniband -T fields -e frame.number | wc -l)
if [ "$frames" != "$count" ]; then
	echo "FAIL hca/tshark-runs - tshark decoded $frames of $count packets as InfiniBand"
	exit 1
fi
fields=$(ts -r "$tmp/p.pcap" -T fields -E separator=, -e frame.number \
	-e infiniband.bth.opcode -e infiniband.lrh.dlid -e infiniband.bth.p_key \
	-e infiniband.bth.destqp -e infiniband.bth.psn)
malformed=$(ts -r "$tmp/p.pcap" -Y '_ws.malformed || _ws.expert.severity >= warning' | wc -l)
fail=0
if [ "$malformed" != 0 ]; then
	echo "FAIL hca/tshark-no-malformed - $malformed packets malformed or flagged"
	ts -r "$tmp/p.pcap" -Y '_ws.malformed || _ws.expert.severity >= warning' | head -5
	fail=1
else
	echo "PASS hca/tshark-no-malformed - $count packets"
fi
# Expected: each packet's opcode from its own BTH; the other fields are fixed by the test.
bad=$(printf '%s\n' "$fields" | python3 -c '
import sys
hexes = [l.strip() for l in open(sys.argv[1]) if l.strip()]
rows = [l.strip().split(",") for l in sys.stdin if l.strip()]
if len(rows) != len(hexes):
    print("tshark read %d packets of %d" % (len(rows), len(hexes)))
for h, r in zip(hexes, rows):
    b = bytes.fromhex(h)
    bth = 48 if (b[1] & 3) == 3 else 8
    want = [b[bth], 0x12, 0x8001, 0x123456, 0xfedcba]
    try:
        got = [int(x, 0) for x in r[1:6]]
    except ValueError:
        got = r[1:6]
    if got != want:
        print("packet %s: got %s want %s" % (r[0], r[1:6], [hex(w) for w in want]))
' "$tmp/hex")
if [ -n "$bad" ]; then
	echo "FAIL hca/tshark-reads-fields - $(echo "$bad" | head -3 | tr '\n' ';')"
	fail=1
else
	echo "PASS hca/tshark-reads-fields - opcode, DLID, P_Key, DestQP, PSN of $count packets"
fi
exit $fail
