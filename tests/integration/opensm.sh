#!/bin/bash
# Integration: Debian's OpenSM manages a Weft subnet and Debian's
# infiniband-diags inspect it, as on hardware (issue 4 acceptance).
#   1. The default subnet loaded without the test-only autoconfiguration:
#      ports sit in INIT with no LID until OpenSM, started on weft0, sweeps
#      (directed-route SMPs through weft0's SMI, the switch's SMI and the
#      SMAs), assigns LIDs, programs the switch's LFT and brings every port
#      to ACTIVE.
#   2. The diags: ibstat, sminfo, ibnetdiscover, smpquery by LID and by
#      directed route, ibroute, iblinkinfo, saquery (RMPP through umad).
#   3. A second subnet shape built through configfs: 2 switches, 4 HCAs.
#   4. Killing OpenSM, unloading with it running: no splat, no leak.
set -u
fail=0
bad() { echo "opensm: FAIL: $*"; fail=1; }
sys=/sys/class/infiniband
log=/tmp/opensm.log

port_state() { cat $sys/$1/ports/${2:-1}/state; }

wait_active() { weft_wait_active "$@"; }
start_sm() {
	weft_sm_start "$@"
	sm_pid=$weft_sm_pid
}
stop_sm() { weft_sm_stop; }

# The diags ask through weft0's port 1 named explicitly (-C/-P as given);
# diags.sh runs them with no device arguments.
via="-C weft0 -P 1"

weft_load weft_hca:autoconf=0 || exit 1
for d in weft0 weft1; do
	[ "$(port_state $d)" = "2: INIT" ] || bad "$d before the SM: $(port_state $d)"
	[ "$(cat $sys/$d/ports/1/lid)" = 0x0 ] || bad "$d has a LID before the SM"
done

# 1. OpenSM brings the subnet up.
start_sm weft0
sleep 0.5
wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM: $(port_state weft0) $(port_state weft1)"
sleep 2
sm_lid=$(cat $sys/weft0/ports/1/lid)
[ "$sm_lid" != 0x0 ] || bad "weft0 has no LID"
for d in weft0 weft1; do
	[ "$(cat $sys/$d/ports/1/sm_lid)" = "$sm_lid" ] || bad "$d sm_lid $(cat $sys/$d/ports/1/sm_lid) != $sm_lid"
done
out=$(ibstat weft1)
for want in "State: Active" "Physical state: LinkUp" "SM lid: $((sm_lid))"; do
	grep -qF "$want" <<<"$out" || bad "ibstat weft1 lacks '$want'"
done
grep -q "Base lid: [1-9]" <<<"$out" || bad "ibstat weft1: no base lid"
ibstat weft0 | grep -q "Capability mask: 0x.*" || bad "ibstat weft0: no capability mask"
[ $(( $(cat $sys/weft0/ports/1/cap_mask) & 2 )) = 2 ] || bad "IsSM not set on the SM's port"

# 2. The diags.
out=$(sminfo $via 2>&1)
echo "$out"
grep -q "sm lid $((sm_lid)) .*SMINFO_MASTER" <<<"$out" || bad "sminfo: $out"
out=$(ibnetdiscover $via 2>&1)
echo "$out"
[ "$(grep -c '^Switch' <<<"$out")" = 1 ] || bad "ibnetdiscover: not one switch"
[ "$(grep -c '^Ca' <<<"$out")" = 2 ] || bad "ibnetdiscover: not two CAs"
grep -q 'Weft soft switch' <<<"$out" || bad "ibnetdiscover: no switch description"
lid1=$(($(cat $sys/weft1/ports/1/lid)))
out=$(smpquery $via nodeinfo $lid1 2>&1)
grep -q "NodeType:.*Channel Adapter" <<<"$out" || bad "smpquery nodeinfo $lid1: $out"
out=$(smpquery $via -D nodeinfo 0,1 2>&1)
grep -q "NodeType:.*Switch" <<<"$out" || bad "smpquery -D nodeinfo 0,1: $out"
out=$(smpquery $via -D nodeinfo 0,1,2 2>&1)
grep -q "NodeType:.*Channel Adapter" <<<"$out" || bad "smpquery -D nodeinfo 0,1,2: $out"
out=$(smpquery $via portinfo $lid1 1 2>&1)
grep -q "LinkState:.*Active" <<<"$out" || bad "smpquery portinfo: $out"
grep -q "SMLid:.*$((sm_lid))" <<<"$out" || bad "smpquery portinfo SMLid: $out"
out=$(smpquery $via pkeys $lid1 1 2>&1)
grep -q "0xffff" <<<"$out" || bad "smpquery pkeys: $out"
sw_lid=$(ibnetdiscover $via 2>/dev/null | sed -n 's/^Switch.*lid \([0-9]*\).*/\1/p' | head -1)
out=$(ibroute $via "${sw_lid:-0}" 2>&1)
echo "$out"
grep -q "$(printf '0x%04x' $lid1) 002" <<<"$out" || bad "ibroute: no LFT entry for weft1 ($lid1) to port 2"
out=$(iblinkinfo $via 2>&1)
echo "$out"
grep -q "Active/  LinkUp" <<<"$out" || bad "iblinkinfo: no active links"
out=$(saquery $via 2>&1)
echo "$out"
[ "$(grep -c 'NodeRecord' <<<"$out")" -ge 3 ] || bad "saquery: fewer than 3 node records"
out=$(saquery $via -p 2>&1 | head -40)
grep -q "PathRecord" <<<"$out" || bad "saquery -p: $out"

# The kernel SA client against OpenSM's SA: weft0's path to weft1 (then
# from the cache), and a join and leave of the IPoIB broadcast group.
dmesg -C
insmod "$WEFT_MODDIR/tests/selftest/weft_selftest_sa.ko" || bad "kernel SA client: $(dmesg | grep SA-RESULT)"
dmesg | grep -o "SA-RESULT.*"
rmmod weft_selftest_sa 2>/dev/null

# OpenSM restarted under RC traffic on an unchanged path: the stream goes
# on (every message once, in order, every send successful).
dmesg -C
insmod "$WEFT_MODDIR/tests/selftest/weft_selftest_stream.ko" messages=30000 &
stream=$!
sleep 1
stop_sm
start_sm weft0
wait "$stream" || bad "the stream failed across an OpenSM restart: $(dmesg | grep STREAM-RESULT)"
dmesg | grep -q "STREAM-RESULT sent 30000 acked 30000 received 30000 bad 0 extra 0 failed success" ||
	bad "stream across the restart: $(dmesg | grep STREAM-RESULT)"
rmmod weft_selftest_stream 2>/dev/null
wait_active weft0 weft1 || bad "not ACTIVE after the restart"
[ "$(cat $sys/weft0/ports/1/lid)" = "$sm_lid" ] || bad "weft0's LID changed across the restart"

stop_sm
grep -B2 -A12 "ERR " $log | head -80

# Partitions (partitions.conf) in the P_Key tables, enforced on the data
# path; and M_Key protection (IBA 14.2.4) under an SM that holds the key.
g0=$(ibstat -p weft0 | head -1)
cat >/tmp/partitions.conf <<EOF
Default=0x7fff, ipoib : ALL=full ;
Both=0x8001 : ALL=full ;
Only0=0x8002 : $g0=full ;
EOF
cat >/tmp/opensm.conf <<EOF
m_key 0x0000000000004d4b
m_key_protection_level 1
m_key_lease_period 60
EOF
start_sm weft0 5 "-P /tmp/partitions.conf -F /tmp/opensm.conf"
has_pkey() { grep -qx "$2" $sys/$1/ports/1/pkeys/* 2>/dev/null; }
for i in $(seq 1 60); do
	has_pkey weft0 0x8002 && has_pkey weft1 0x8001 && break
	sleep 0.5
done
has_pkey weft0 0x8001 && has_pkey weft0 0x8002 || bad "weft0 P_Keys: $(cat $sys/weft0/ports/1/pkeys/* | tr '\n' ' ')"
has_pkey weft1 0x8001 || bad "weft1 lacks 0x8001: $(cat $sys/weft1/ports/1/pkeys/* | tr '\n' ' ')"
has_pkey weft1 0x8002 && bad "weft1 has 0x8002, which only weft0 is in"
idx=$(grep -lx 0x8002 $sys/weft0/ports/1/pkeys/* | head -1)
idx=${idx##*/}
viol() { smpquery $via portinfo "$lid1" 1 2>/dev/null | sed -n "s/^$1:\.*//p"; }
before=$(viol PkeyViolations)
# From weft0's QP1, a MAD in partition 0x8002 to weft1, which is not in it.
python3 - "$lid1" "${idx:-0}" <<'PY' || bad "sending in partition 0x8002"
import fcntl, os, struct, sys
lid, idx = int(sys.argv[1]), int(sys.argv[2])
fd = os.open("/dev/infiniband/umad0", os.O_RDWR)
fcntl.ioctl(fd, 0x1b03)
req = bytearray(struct.pack("<I QQ BBB 3s B x", 0, 0, 0, 1, 0x09, 1, b"\0\0\0", 0))
fcntl.ioctl(fd, 0xc01c1b01, req, True)
agent = struct.unpack_from("<I", req)[0]
hdr = (struct.pack("<IIIII", agent, 0, 0, 0, 0) + struct.pack(">IIH", 1, 0x80010000, lid) +
       bytes(6 + 16 + 4) + struct.pack("<H", idx) + bytes(6))
mad = struct.pack(">BBBBHHQHHI", 1, 0x09, 1, 0x03, 0, 0, 0x42, 0x10, 0, 0) + bytes(232)
for _ in range(3):
    os.write(fd, hdr + mad)
os.close(fd)
PY
sleep 1
after=$(viol PkeyViolations)
[ "${after:-0}" -ge $(( ${before:-0} + 3 )) ] || bad "P_Key violations at weft1: ${before:-?} -> ${after:-?}, want +3"
# The SM holds an M_Key: Gets still answer, a Set without the key is refused and counted.
smpquery $via portinfo "$lid1" 1 >/dev/null 2>&1 || bad "SubnGet refused under M_Key protection level 1"
mk_before=$(viol MkeyViolations)
timeout 20 ibportstate $via "$lid1" 1 disable >/dev/null 2>&1 && bad "ibportstate disable without the M_Key succeeded"
[ "$(port_state weft1)" = "4: ACTIVE" ] || bad "weft1 left ACTIVE by a refused Set: $(port_state weft1)"
mk_after=$(viol MkeyViolations)
[ "${mk_after:-0}" -gt "${mk_before:-0}" ] || bad "M_Key violations at weft1: ${mk_before:-?} -> ${mk_after:-?}"
echo "opensm: P_Key violations ${before:-?} -> ${after:-?}, M_Key violations ${mk_before:-?} -> ${mk_after:-?}"
stop_sm
weft_unload || fail=1

# 3. Two switches, four HCAs, through configfs.
weft_load weft_hca:hcas=0 || exit 1
cfs=/sys/kernel/config/weft
for s in s0 s1; do
	mkdir $cfs/switches/$s && echo 4 >$cfs/switches/$s/ports && echo 1 >$cfs/switches/$s/enable ||
		bad "creating switch $s"
done
for h in h0 h1 h2 h3; do
	mkdir $cfs/hcas/$h && echo 1 >$cfs/hcas/$h/enable || bad "creating $h"
done
cable() {
	mkdir $cfs/cables/$1 && echo "$2" >$cfs/cables/$1/a && echo "$3" >$cfs/cables/$1/b &&
		echo 1 >$cfs/cables/$1/up || bad "cable $1: $2 - $3"
}
cable c0 weft0:1 weftsw0:1
cable c1 weft1:1 weftsw0:2
cable c2 weft2:1 weftsw1:1
cable c3 weft3:1 weftsw1:2
cable c4 weftsw0:3 weftsw1:3
# A sweep interval longer than the waits below: only trap 128 from the
# switches (IBA 14.2.5.1) makes OpenSM notice the cable cut in time.
start_sm weft0 60
wait_active weft0 weft1 weft2 weft3 || bad "2x4: ports not ACTIVE: $(cat $cfs/topology)"
cat $cfs/topology
out=$(ibnetdiscover $via 2>&1)
[ "$(grep -c '^Switch' <<<"$out")" = 2 ] || bad "2x4 ibnetdiscover: not two switches"
[ "$(grep -c '^Ca' <<<"$out")" = 4 ] || bad "2x4 ibnetdiscover: not four CAs"
out=$(smpquery $via -D nodeinfo 0,1,3,2 2>&1)
grep -q "NodeType:.*Channel Adapter" <<<"$out" || bad "smpquery -D across two switches: $out"

# A cable cut: the SM's sweep notices, routes to weft3 go; re-made, it is ACTIVE again.
lid3=$(($(cat $sys/weft3/ports/1/lid)))
echo 0 >$cfs/cables/c3/up || bad "cutting c3"
[ "$(port_state weft3)" = "1: DOWN" ] || bad "weft3 not DOWN after the cut: $(port_state weft3)"
gone=
for i in $(seq 1 40); do
	out=$(ibnetdiscover $via 2>/dev/null)
	if [ "$(grep -c '^Ca' <<<"$out")" = 3 ]; then gone=1; break; fi
	sleep 0.5
done
[ -n "$gone" ] || bad "weft3 still discovered after its cable was cut"
# The SM's answer to the trap: weft3's LID leaves the far switch's LFT.
sw1=$(smpquery $via -D portinfo 0,1,3 0 2>/dev/null | sed -n 's/^Lid:\.*//p')
routed() { ibroute $via "$sw1" 2>/dev/null | grep -q "^$(printf '0x%04x' "$lid3") "; }
for i in $(seq 1 40); do
	routed || break
	sleep 0.5
done
routed && bad "weft3's LID $lid3 still routed by switch LID ${sw1:-?} after the cut"
echo 1 >$cfs/cables/c3/up || bad "re-making c3"
wait_active weft3 || bad "weft3 not ACTIVE again: $(port_state weft3)"
[ "$(($(cat $sys/weft3/ports/1/lid)))" = "$lid3" ] || bad "weft3 came back with another LID"
routed || bad "weft3's LID $lid3 not routed again by switch LID ${sw1:-?}"
for i in $(seq 1 40); do
	[ "$(ibnetdiscover $via 2>/dev/null | grep -c '^Ca')" = 4 ] && break
	sleep 0.5
done
[ "$(ibnetdiscover $via 2>/dev/null | grep -c '^Ca')" = 4 ] || bad "weft3 not rediscovered"
grep -i "trap\|notice" $log | head -5

# OpenSM killed mid-sweep, then started again; a diag killed mid-request.
stop_sm
start_sm weft0
sleep 0.3
kill -9 "$sm_pid"
wait "$sm_pid" 2>/dev/null
start_sm weft0
sleep 3
wait_active weft0 weft1 weft2 weft3 || bad "not ACTIVE after an OpenSM restart"
timeout -s KILL 0.3 smpquery $via -D nodeinfo 0,1,3,1,2,1 >/dev/null 2>&1
smpquery $via nodeinfo "$lid3" >/dev/null 2>&1 || bad "smpquery after a killed one"

# 4. The devices go while OpenSM holds umad0 open (its files die with them),
# then OpenSM stops and everything unloads.
weft_fabric_clear
rmmod weft_hca || bad "removing weft_hca under OpenSM"
kill -0 "$sm_pid" 2>/dev/null || bad "OpenSM died when its device went"
stop_sm
weft_unload || bad "unload after OpenSM"
weft_check_taint || fail=1
exit $fail
