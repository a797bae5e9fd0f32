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
bad() { echo "opensm: $*"; fail=1; }
sys=/sys/class/infiniband
log=/tmp/opensm.log

port_state() { cat $sys/$1/ports/${2:-1}/state; }

# wait_active DEV...: every port 1 of DEV... ACTIVE within 60 s.
wait_active() {
	local d i
	for i in $(seq 1 120); do
		for d in "$@"; do
			[ "$(port_state "$d")" = "4: ACTIVE" ] || continue 2
		done
		return 0
	done 2>/dev/null
	return 1
}

start_sm() {
	local guid
	guid=$(ibstat -p "$1" | head -1)
	rm -f $log
	opensm -g "$guid" -f $log -s 5 >/tmp/opensm.out 2>&1 &
	sm_pid=$!
}

stop_sm() {
	local i
	kill "$sm_pid" 2>/dev/null
	for i in $(seq 1 50); do
		kill -0 "$sm_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$sm_pid" 2>/dev/null
	wait "$sm_pid" 2>/dev/null
}

# The diags ask through weft0's port 1: libibumad's default device is the
# first in sysfs order, which may be the soft switch (its port 0 has no umad).
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

stop_sm
grep -B2 -A12 "ERR " $log | head -80
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
start_sm weft0
wait_active weft0 weft1 weft2 weft3 || bad "2x4: ports not ACTIVE: $(cat $cfs/topology)"
cat $cfs/topology
out=$(ibnetdiscover $via 2>&1)
[ "$(grep -c '^Switch' <<<"$out")" = 2 ] || bad "2x4 ibnetdiscover: not two switches"
[ "$(grep -c '^Ca' <<<"$out")" = 4 ] || bad "2x4 ibnetdiscover: not four CAs"
out=$(smpquery $via -D nodeinfo 0,1,3,2 2>&1)
grep -q "NodeType:.*Channel Adapter" <<<"$out" || bad "smpquery -D across two switches: $out"

# 4. The devices go while OpenSM holds umad0 open (its files die with them),
# then OpenSM stops and everything unloads.
weft_fabric_clear
rmmod weft_hca || bad "removing weft_hca under OpenSM"
kill -0 "$sm_pid" 2>/dev/null || bad "OpenSM died when its device went"
stop_sm
weft_unload || bad "unload after OpenSM"
weft_check_taint || fail=1
exit $fail
