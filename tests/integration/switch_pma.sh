#!/bin/bash
# Integration: the soft switch's PMA (IBA 16.1), reached through the GSI
# (QP1) of its management port 0 (drivers/hca/switch_gsi.cpp), with the
# stock infiniband-diags and OpenSM (issue 27).
#   1. Default subnet after `opensm`: `ibqueryerrors` with no arguments
#      checks every node, the switch included (ClassPortInfo, PortCounters
#      with AllPortSelect, PortCountersExtended), and finds nothing;
#      `perfquery <switch lid> <port>` shows the port toward weft1 counting
#      the MADs sent there, port 0 and PortSelect 0xFF answered, a port the
#      switch lacks refused, -R clearing.
#   2. A configfs subnet (weft0, weft1 on switch ports 1 and 2) under OpenSM:
#      three corruptions injected on weft1's cable toward the switch show
#      in ibqueryerrors as exactly PortRcvErrors == 3 on switch port 2;
#      `ibqueryerrors -k` (a Set with PortSelect 0xFF) clears them; the
#      cable cut and made again shows as LinkDownedCounter == 1 there.
set -u
fail=0
bad() { echo "switch_pma: FAIL: $*"; fail=1; }
sys=/sys/class/infiniband
cfs=/sys/kernel/config/weft
lid_of() { echo $(($(cat $sys/$1/ports/1/lid))); }
# run CMD...: show the command and its output, keep it in $out and its status in $rc.
run() {
	echo "--- $*"
	out=$("$@" 2>&1)
	rc=$?
	echo "$out"
}
# A counter from perfquery's output in $out ("PortXmitPkts:.....123").
field() { sed -n "s/^$1:\.*\([0-9]*\)\$/\1/p" <<<"$out"; }
# The switch's LID and the port its LFT sends LID $1 out of (ibroute).
switch_lid() { ibswitches | sed -n 's/^Switch.* base port 0 lid \([0-9]*\) .*/\1/p' | head -1; }
route_port() { ibroute "$sw_lid" | sed -n "s/^$(printf '0x%04x' "$1") 0*\([0-9][0-9]*\) : .*/\1/p"; }
# ibqueryerrors finds no errors and no failed PMA query on @1 nodes, @2 ports.
clean() {
	run ibqueryerrors
	[ "$rc" = 0 ] || bad "ibqueryerrors exited $rc ($1)"
	grep -q "## Summary: $2 nodes checked, 0 bad nodes found" <<<"$out" || bad "ibqueryerrors: not $2 clean nodes ($1)"
	grep -q "##  *$3 ports checked, 0 ports have errors beyond threshold" <<<"$out" ||
		bad "ibqueryerrors: not $3 clean ports ($1)"
	! grep -q "PMA query failures\|query failed" <<<"$out" || bad "ibqueryerrors: a PMA query failed ($1)"
}

# 1. The default subnet.
weft_load weft_hca:autoconf=0 || exit 1
weft_sm_start weft0
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM: $(cat /tmp/opensm.out)"
sleep 2
lid0=$(lid_of weft0) lid1=$(lid_of weft1)
sw_lid=$(switch_lid)
[ -n "$sw_lid" ] || bad "no switch LID from ibswitches"
nports=$(smpquery nodeinfo "${sw_lid:-0}" | sed -n 's/^NumPorts:\.*//p')
echo "switch LID $sw_lid, $nports ports; weft0 $lid0, weft1 $lid1"
clean "default subnet" 3 $((${nports:-0} + 2))

p1=$(route_port "$lid1")
[ -n "$p1" ] || bad "no route to weft1 in the switch's LFT"
p1=${p1:-1}
run perfquery "$sw_lid" "$p1"
[ "$rc" = 0 ] || bad "perfquery $sw_lid $p1 exited $rc"
grep -q "^# Port counters: Lid $sw_lid port $p1 (CapMask: 0x300)" <<<"$out" || bad "perfquery: header"
xmit=$(field PortXmitPkts) data=$(field PortXmitData)
[ "${xmit:-0}" -gt 0 ] || bad "switch port $p1 PortXmitPkts '$xmit' after OpenSM's sweep"
# Five MADs to weft1's PMA cross that port: its transmit counters move by at least as much.
for _ in 1 2 3 4 5; do perfquery "$lid1" 1 >/dev/null || bad "perfquery $lid1 1"; done
run perfquery "$sw_lid" "$p1"
[ "$(field PortXmitPkts)" -ge $((${xmit:-0} + 5)) ] || bad "PortXmitPkts $xmit -> $(field PortXmitPkts): the MADs to weft1 not counted"
[ "$(field PortXmitData)" -gt "${data:-0}" ] || bad "PortXmitData $data -> $(field PortXmitData)"
run perfquery -x "$sw_lid" "$p1"
grep -q "^# Port extended counters: Lid $sw_lid port $p1" <<<"$out" || bad "perfquery -x: header"
[ "$(field PortUnicastXmitPkts)" -ge 5 ] || bad "PortUnicastXmitPkts '$(field PortUnicastXmitPkts)'"
# -R clears (a Set); the next read shows only what crossed since.
run perfquery -R "$sw_lid" "$p1"
[ "$rc" = 0 ] || bad "perfquery -R exited $rc"
run perfquery "$sw_lid" "$p1"
[ "$(field PortXmitPkts)" -lt 5 ] || bad "PortXmitPkts $(field PortXmitPkts) just after -R"
# Port 0 (the management port) and PortSelect 0xFF; a port the switch lacks: status 0x1c.
run perfquery "$sw_lid" 0
[ "$rc" = 0 ] && grep -q "port 0 " <<<"$out" || bad "perfquery $sw_lid 0"
run perfquery -a "$sw_lid"
[ "$rc" = 0 ] && grep -q "port 255" <<<"$out" || bad "perfquery -a $sw_lid"
run perfquery "$sw_lid" $((${nports:-8} + 1))
[ "$rc" != 0 ] || bad "port $((nports + 1)) of a $nports-port switch answered"
weft_sm_stop
weft_unload || fail=1

# 2. Errors injected on a cable, seen by the switch.
weft_load weft_hca:hcas=0 || exit 1
for h in h0 h1; do
	mkdir $cfs/hcas/$h && echo 1 >$cfs/hcas/$h/enable || bad "creating $h"
done
mkdir $cfs/switches/s && echo 4 >$cfs/switches/s/ports && echo 1 >$cfs/switches/s/enable || bad "creating the switch"
sw=$(cat $cfs/switches/s/device)
mkdir $cfs/cables/c0 $cfs/cables/c1 &&
	echo weft0:1 >$cfs/cables/c0/a && echo "$sw:1" >$cfs/cables/c0/b && echo 1 >$cfs/cables/c0/up &&
	echo weft1:1 >$cfs/cables/c1/a && echo "$sw:2" >$cfs/cables/c1/b && echo 1 >$cfs/cables/c1/up ||
	bad "cabling"
weft_sm_start weft0
weft_wait_active weft0 weft1 || bad "configfs subnet: ports not ACTIVE under OpenSM"
sleep 2
sw_lid=$(switch_lid)
clean "configfs subnet" 3 6
# weft1 sends its next three packets corrupted; the switch's port 2 drops them (VCRC, IBA 7.8.2).
echo "count=3 dir=ab" >$cfs/cables/c1/corrupt || bad "arming corrupt"
insmod "$WEFT_MODDIR/tests/selftest/weft_selftest_stream.ko" messages=200 ||
	bad "the stream over corruptions failed: $(dmesg | grep STREAM-RESULT | tail -1)"
rmmod weft_selftest_stream 2>/dev/null
grep -q "^ab .*injected=3" $cfs/cables/c1/corrupt || bad "corrupt knob: $(cat $cfs/cables/c1/corrupt)"
run ibqueryerrors
[ "$rc" = 1 ] || bad "ibqueryerrors exited $rc with errors on the fabric"
grep -q "^Errors for 0x[0-9a-f]* \"Weft soft switch\"" <<<"$out" || bad "ibqueryerrors: no errors for the switch"
grep -q "^   GUID 0x[0-9a-f]* port 2: \[PortRcvErrors == 3\]$" <<<"$out" ||
	bad "ibqueryerrors: not exactly PortRcvErrors == 3 on switch port 2"
[ "$(grep -c "^   GUID .* port [0-9]*:" <<<"$out")" = 1 ] || bad "ibqueryerrors: errors on other ports"
grep -q "## Summary: 3 nodes checked, 1 bad nodes found" <<<"$out" || bad "ibqueryerrors: summary"
run perfquery "$sw_lid" 2
[ "$(field PortRcvErrors)" = 3 ] || bad "perfquery $sw_lid 2: PortRcvErrors '$(field PortRcvErrors)'"
# -k: the error counters cleared through PortSelect 0xFF (IBA 16.1.3.5 AllPortSelect).
run ibqueryerrors -k
clean "after ibqueryerrors -k" 3 6
# weft1's cable cut and made again: both ends count a LinkDowned (IBA
# 16.1.3.5), and once OpenSM has the link ACTIVE again ibqueryerrors shows
# it on switch port 2 and on weft1.
echo 0 >$cfs/cables/c1/up && echo 1 >$cfs/cables/c1/up || bad "flapping weft1's cable"
weft_wait_active weft1 || bad "weft1 not ACTIVE again after the flap"
sleep 2
run ibqueryerrors
# OpenSM keeps a dropped port's InformInfo subscriptions (its
# drop_event_subscriptions is FALSE by default), so the Report of weft1's
# own trap 65 (GID out of service) goes to weft1 while its link is down and
# the switch discards it: a PortXmitDiscards on port 2 may come with the
# LinkDowned (core/mad subscribes every port's SA client, mad.md).
grep -Eq "^   GUID 0x[0-9a-f]* port 2: \[LinkDownedCounter == 1\]( \[PortXmitDiscards == [0-9]+\])?$" <<<"$out" ||
	bad "ibqueryerrors: not LinkDownedCounter == 1 on switch port 2"
grep -q "^Errors for \"Weft soft HCA\"" <<<"$out" || bad "ibqueryerrors: no errors for weft1"
run perfquery "$(lid_of weft1)" 1
[ "$(field LinkDownedCounter)" = 1 ] || bad "weft1 LinkDownedCounter '$(field LinkDownedCounter)'"
weft_sm_stop
rmdir $cfs/cables/c0 $cfs/cables/c1 $cfs/switches/s $cfs/hcas/h1 $cfs/hcas/h0 || bad "tearing down"
weft_unload || fail=1
weft_check_taint || fail=1
exit $fail
