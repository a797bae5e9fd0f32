#!/bin/bash
# Integration: OpenSM and infiniband-diags with NO device arguments on the
# default subnet (weft0, weft1, switch weftsw0), as on a host with one real
# HCA (issue 27).  libibumad (rdma-core 44) resolves a default port by
# walking /sys/class/infiniband in readdir order (kernfs: by name hash, not
# alphabetical) and takes the first device with an ACTIVE port, or the
# first switch it meets with its port 0, unchecked.  The soft switch is not
# in that class by default (weft_hca switch_sysfs=0), so the diags land on
# weft0 port 1.
#   1. `opensm` with no -g binds weft0 and brings the subnet up.
#   2. sminfo, ibnetdiscover, iblinkinfo, perfquery, saquery -p,
#      smpquery, ibroute, ibhosts, ibswitches, ibaddr: no -C/-P, their
#      output checked against the subnet.  The switch's base port 0 reads
#      Active (IBA 18.2.1; OpenSM never drives its state).
#   3. switch_sysfs=1: the switch in ibstat, its port 0 Active before and
#      after OpenSM; and, being first in readdir order, what libibumad does
#      with it (no umad device on port 0: the no-argument diags fail).
set -u
fail=0
bad() { echo "diags: FAIL: $*"; fail=1; }
sys=/sys/class/infiniband
log=/tmp/opensm.log
lid_of() { echo $(($(cat $sys/$1/ports/1/lid))); }
# run NAME CMD...: run a diag, show its output in the log, keep it in $out.
run() {
	echo "--- $*"
	out=$("$@" 2>&1)
	local rc=$?
	echo "$out"
	[ $rc = 0 ] || bad "'$*' exited $rc"
	[[ $out != *"can't open UMAD port"* ]] || bad "'$*': $out"
}

weft_load weft_hca:autoconf=0 || exit 1
echo "readdir order: $(ls -f $sys | grep -v "^\.\.\?$" | tr "\n" " ")"
[ "$(ibstat -l | tr '\n' ' ')" = "weft0 weft1 " ] || bad "ibstat -l: $(ibstat -l | tr '\n' ' ')"
[ ! -e $sys/weftsw0 ] || bad "the switch is in $sys by default"

# 1. OpenSM with no port GUID: the first connected local port, weft0's.
rm -f $log
opensm -f $log -s 5 >/tmp/opensm.out 2>&1 &
weft_sm_pid=$!
sleep 0.5
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM: $(cat /tmp/opensm.out)"
sleep 2
lid0=$(lid_of weft0) lid1=$(lid_of weft1)
[ "$lid0" -gt 0 ] && [ "$lid1" -gt 0 ] || bad "no LIDs: $lid0 $lid1"
[ "$(($(cat $sys/weft1/ports/1/sm_lid)))" = "$lid0" ] || bad "the SM is not on weft0: sm_lid $(cat $sys/weft1/ports/1/sm_lid)"
[ $(($(cat $sys/weft0/ports/1/cap_mask) & 2)) = 2 ] || bad "IsSM not set on weft0"

# 2. The diags, no device arguments.
run sminfo
grep -q "^sminfo: sm lid $lid0 sm guid .*SMINFO_MASTER" <<<"$out" || bad "sminfo: not the SM at LID $lid0"
run ibnetdiscover
[ "$(grep -c '^Switch' <<<"$out")" = 1 ] || bad "ibnetdiscover: not one switch"
[ "$(grep -c '^Ca' <<<"$out")" = 2 ] || bad "ibnetdiscover: not two CAs"
[ "$(grep -c '^\(Switch\|Ca\)' <<<"$out")" = 3 ] || bad "ibnetdiscover: not 3 nodes"
grep -q "^Switch.*\"Weft soft switch\" base port 0 lid [1-9]" <<<"$out" || bad "ibnetdiscover: switch line"
sw_lid=$(sed -n 's/^Switch.* base port 0 lid \([0-9]*\) .*/\1/p' <<<"$out")
for l in $lid0 $lid1; do
	grep -q "^\[[0-9]*\].*# \"Weft soft HCA\" lid $l " <<<"$out" || bad "ibnetdiscover: no switch port to LID $l"
done
run ibswitches
[ "$(grep -c '^Switch' <<<"$out")" = 1 ] || bad "ibswitches: not one switch"
grep -q "\"Weft soft switch\" base port 0 lid ${sw_lid:-x} lmc 0" <<<"$out" || bad "ibswitches: switch at LID ${sw_lid:-?}"
run ibhosts
[ "$(grep -c '^Ca.*"Weft soft HCA"' <<<"$out")" = 2 ] || bad "ibhosts: not two HCAs"
run iblinkinfo
grep -q "Switch: .* Weft soft switch:" <<<"$out" || bad "iblinkinfo: no switch"
[ "$(grep -c "Active/  LinkUp.*\"Weft soft HCA\"" <<<"$out")" = 2 ] || bad "iblinkinfo: not two active links to HCAs"
run perfquery
grep -q "^# Port counters: Lid $lid0 port 1 " <<<"$out" || bad "perfquery: not weft0's port 1 (LID $lid0)"
v=$(sed -n 's/^PortRcvPkts:\.*//p' <<<"$out")
[ "${v:-0}" -gt 0 ] || bad "perfquery: PortRcvPkts '${v}'"
run saquery -p
grep -q "PathRecord dump" <<<"$out" || bad "saquery -p: no path records"
grep -q "dlid\.*$lid1$" <<<"$out" || bad "saquery -p: no path to weft1 ($lid1)"
run saquery
[ "$(grep -c 'NodeRecord dump' <<<"$out")" = 3 ] || bad "saquery: not 3 node records"
run smpquery nodeinfo "$lid1"
grep -q "^# Node info: Lid $lid1" <<<"$out" && grep -q "NodeType:\.*Channel Adapter" <<<"$out" ||
	bad "smpquery nodeinfo $lid1"
run smpquery nodeinfo 1
grep -q "^# Node info: Lid 1" <<<"$out" || bad "smpquery nodeinfo 1"
run smpquery portinfo "${sw_lid:-0}" 0
grep -q "LinkState:\.*Active" <<<"$out" || bad "switch port 0 not Active after OpenSM's sweep"
grep -q "PhysLinkState:\.*LinkUp" <<<"$out" || bad "switch port 0 not LinkUp"
run ibroute "${sw_lid:-0}"
grep -q "^Unicast lids .* of switch .*Lid ${sw_lid:-x} " <<<"$out" || bad "ibroute: header"
grep -q "$(printf '0x%04x' "$lid1") 00[1-8] : (Channel Adapter" <<<"$out" || bad "ibroute: no route to weft1"
run ibaddr
grep -q "^GID fe80::.* LID start $(printf '0x%x' "$lid0") end $(printf '0x%x' "$lid0")" <<<"$out" ||
	bad "ibaddr: not weft0's LID $lid0"
run ibportstate "${sw_lid:-0}" 0
grep -q "LinkState:\.*Active" <<<"$out" || bad "ibportstate: switch port 0 not Active"
weft_sm_stop
grep -B2 -A12 "ERR " $log | head -40
weft_unload || fail=1

# 3. The switch shown in the sysfs class (switch_sysfs=1).
weft_load "weft_hca:autoconf=0 switch_sysfs=1" || exit 1
[ "$(ibstat -l | tr '\n' ' ')" = "weft0 weft1 weftsw0 " ] || bad "switch_sysfs=1: ibstat -l: $(ibstat -l | tr '\n' ' ')"
[ "$(cat $sys/weftsw0/ports/0/state)" = "4: ACTIVE" ] || bad "switch port 0 before the SM: $(cat $sys/weftsw0/ports/0/state)"
weft_sm_start weft0
weft_wait_active weft0 weft1 || bad "switch_sysfs=1: ports not ACTIVE under OpenSM"
sleep 2
out=$(ibstat weftsw0 0)
echo "$out"
grep -q "State: Active" <<<"$out" || bad "ibstat: switch port 0 not Active after OpenSM's sweep"
grep -q "Base lid: [1-9]" <<<"$out" || bad "ibstat: switch port 0 has no LID"
# libibumad's pick (readdir order) with the switch shown: the switch if it
# comes first, and its port 0 has no umad device.
first=$(ls -f $sys | grep -v '^\.' | head -1)
out=$(sminfo 2>&1)
echo "sminfo (first in readdir order: $first): $out"
if [ "$first" = weftsw0 ]; then
	[[ $out == *"can't open UMAD port"* ]] || bad "switch first in readdir order, yet sminfo: $out"
else
	[[ $out == *SMINFO_MASTER* ]] || bad "sminfo with $first first: $out"
fi
out=$(sminfo -C weft0 -P 1 2>&1)
[[ $out == *SMINFO_MASTER* ]] || bad "sminfo -C weft0 -P 1: $out"
weft_sm_stop
weft_unload || fail=1
weft_check_taint || fail=1
exit $fail
