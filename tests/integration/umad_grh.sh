#!/bin/bash
# Integration: the GRH in umad's address (Documentation/umad.md), on the
# default subnet under OpenSM.  From user space through Debian's
# libibumad (umad_grh.py), PMA Gets from weft0 to weft1's QP1 written with
# grh_present are answered by weft1's PMA through a GRH and read with
# grh_present=1 and weft1's GID; one without stays without; a bad GID
# index and an SMP with a GRH are refused with EINVAL.  A capture of
# weft0's port decoded by tshark shows both directions with LNH = IBA
# global and the GRH fields (IBA 8.3): request SGID weft0, DGID weft1,
# the traffic class, flow label and hop limit written; the answer back
# the other way with hop limit 255; the Get without a GRH as IBA local.
set -u
fail=0
bad() { echo "umad_grh: $*"; fail=1; }
sys=/sys/class/infiniband
tmp=$(mktemp -d)

weft_load weft_hca:autoconf=0 || exit 1
weft_sm_start weft0
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM: $(cat /tmp/opensm.out)"
lid1=$(($(cat $sys/weft1/ports/1/lid)))
gid0=$(cat $sys/weft0/ports/1/gids/0) gid1=$(cat $sys/weft1/ports/1/gids/0)
[ "$lid1" -gt 0 ] || bad "weft1 has no LID"

cat /sys/kernel/debug/weft/weft0/port1/capture >"$tmp/c.pcap" &
reader=$!
sleep 0.5
timeout 120 python3 "$WEFT_REPO/tests/integration/umad_grh.py" "$lid1" "$gid0" "$gid1" || bad "umad_grh.py"
sleep 0.5
kill "$reader"
wait "$reader" 2>/dev/null
weft_sm_stop

# The PMA packets on the wire (class 4: nobody else sends it here), and
# nothing tshark finds malformed or warns about; one tshark run (its start
# is most of this test's time).
weft_pcap_user0 "$tmp/c.pcap" "$tmp/c.147.pcap" || bad "capture is not a Weft pcap"
weft_ib_tshark -r "$tmp/c.147.pcap" -T fields -e infiniband.mad.mgmtclass -e infiniband.mad.method \
	-e infiniband.lrh.lnh -e infiniband.grh.sgid -e infiniband.grh.dgid -e infiniband.grh.tclass \
	-e infiniband.grh.flowlabel -e infiniband.grh.hoplmt -e _ws.expert.severity -e _ws.malformed \
	>"$tmp/fields" 2>"$tmp/tshark.err" || bad "tshark: $(cat "$tmp/tshark.err")"
python3 - "$tmp/fields" "$gid0" "$gid1" <<'PY' || bad "GRH on the wire"
import ipaddress, sys
gid0, gid1 = (ipaddress.IPv6Address(g) for g in sys.argv[2:4])
seen = {"req": 0, "resp": 0, "local": 0}
bad, frames = [], 0
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    frames += 1
    cls, method, lnh, sgid, dgid, tclass, flow, hops, severity = f[:9]
    # IBA 7.7.1: LNH 3 (IBA global) says a GRH follows the LRH, 2 (IBA local) none.
    if any(int(s) >= 0x600000 for s in severity.split(",") if s) or any(f[9:]):
        bad.append("frame %d malformed or flagged: %s" % (frames, line.strip()))
    if not cls or int(cls, 0) != 4:
        continue
    print("umad_grh: PMA method %s LNH %s SGID %s DGID %s TClass %s FlowLabel %s HopLmt %s" % tuple(f[1:8]))
    method, lnh = int(method, 0), int(lnh, 0)
    if lnh == 2:  # the Get without a GRH and its answer
        seen["local"] += 1
        continue
    got = (lnh, ipaddress.IPv6Address(sgid), ipaddress.IPv6Address(dgid), int(tclass, 0), int(flow, 0), int(hops, 0))
    if method == 0x01:
        want, kind = (3, gid0, gid1, 0x20, 0x1234A, 64), "req"
    else:
        want, kind = (3, gid1, gid0, 0x20, 0x1234A, 255), "resp"
    seen[kind] += 1
    if got != want:
        bad.append("method %#x: LNH, SGID, DGID, TClass, FlowLabel, HopLmt %s, want %s" % (method, got, want))
if seen != {"req": 2, "resp": 2, "local": 2}:
    bad.append("PMA packets: %s, want 2 requests and 2 answers with a GRH, 2 without" % seen)
for b in bad:
    print("umad_grh:", b)
sys.exit(1 if bad or not frames else 0)
PY

weft_unload || fail=1
weft_check_taint || fail=1
rm -rf "$tmp"
exit $fail
