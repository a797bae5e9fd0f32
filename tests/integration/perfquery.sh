#!/bin/bash
# Integration: the PMA of the soft HCAs (IBA 16.1) through stock perfquery.
# Two HCAs cabled back to back through configfs (autoconf gives LIDs):
# ClassPortInfo (CapMask AllPortSelect|ExtendedWidth), PortCounters of
# both ports, PortXmit/RcvData and Pkts growing with RC
# traffic (weft_selftest_stream), corruptions injected on the cable counted
# in PortRcvErrors exactly (and in sysfs, the same counters), perfquery -R
# and -x -R clearing them, -x (PortCountersExtended), -a (PortSelect 0xFF),
# a port that does not exist refused with a status, and the PMA redirected
# to its own QP (module parameter pma_redirect), which perfquery follows.
set -u
fail=0
bad() { echo "perfquery: FAIL: $*"; fail=1; }
cfs=/sys/kernel/config/weft
out=/tmp/perfquery.out

# perfquery from weft0 port 1 (libibumad could otherwise pick another device),
# and from weft1 about weft0: a back-to-back cable does not carry a MAD to
# its sender's own LID back to it.
pq() { perfquery -C weft0 -P 1 "$@" >$out 2>&1 || { bad "perfquery $*: $(cat $out)"; return 1; }; }
pq1() { perfquery -C weft1 -P 1 "$@" >$out 2>&1 || { bad "perfquery (weft1) $*: $(cat $out)"; return 1; }; }
# A counter from the last output ("PortXmitData:.....123").
field() { sed -n "s/^$1:\.*\([0-9]*\)\$/\1/p" $out; }
expect_field() {
	local v
	v=$(field "$1")
	[ -n "$v" ] && eval "[ $v $2 ]" || bad "$1 is '${v}', want $2 ($3)"
}

weft_load weft_hca:hcas=0 || exit 1
for h in h0 h1; do
	mkdir $cfs/hcas/$h && echo 1 >$cfs/hcas/$h/enable || bad "creating $h"
done
mkdir $cfs/cables/c && echo weft0:1 >$cfs/cables/c/a && echo weft1:1 >$cfs/cables/c/b &&
	echo 1 >$cfs/cables/c/up && echo 1 >$cfs/autoconf || bad "cabling weft0 to weft1"
lid0=$(( $(cat /sys/class/infiniband/weft0/ports/1/lid) ))
lid1=$(( $(cat /sys/class/infiniband/weft1/ports/1/lid) ))
[ "$lid0" -gt 0 ] && [ "$lid1" -gt 0 ] || bad "no LIDs: $lid0 $lid1"

# Each port's counters, asked from the other end.
pq "$lid1" 1 && {
	grep -q "^# Port counters: Lid $lid1 port 1 (CapMask: 0x300)" $out || bad "header: $(head -1 $out)"
	expect_field PortXmitData "-ge 0" "shown"
	expect_field PortRcvPkts "-gt 0" "autoconf and perfquery's own MADs arrived"
}
pq1 "$lid0" 1 && expect_field PortXmitPkts "-gt 0" "weft0 sent MADs"

# Reset both ends, then RC traffic from weft0 to weft1.
pq -R "$lid1" 1
pq1 -R "$lid0" 1
pq "$lid1" 1 && expect_field PortRcvPkts "-lt 10" "just reset"
insmod "$WEFT_MODDIR/tests/selftest/weft_selftest_stream.ko" messages=2000 ||
	bad "the stream failed: $(dmesg | grep STREAM-RESULT | tail -1)"
rmmod weft_selftest_stream 2>/dev/null
pq "$lid1" 1 && {
	expect_field PortRcvPkts "-ge 2000" "2000 messages received"
	rcv_pkts=$(field PortRcvPkts)
	echo "perfquery: weft1 after the stream: PortRcvPkts $rcv_pkts PortRcvData $(field PortRcvData)"
	expect_field PortRcvData "-gt ${rcv_pkts:-0}" "data in 4-byte words, more than a word a packet"
	expect_field PortXmitPkts "-ge 2000" "2000 acknowledgements sent"
}
pq1 "$lid0" 1 && {
	expect_field PortXmitPkts "-ge 2000" "2000 messages sent"
	expect_field PortXmitData "-gt 2000" "their data"
}

# Three corrupted packets from weft0 reach weft1: exactly three PortRcvErrors.
pq -R "$lid1" 1
echo "count=3 dir=ab" >$cfs/cables/c/corrupt || bad "arming corrupt"
insmod "$WEFT_MODDIR/tests/selftest/weft_selftest_stream.ko" messages=200 ||
	bad "the stream over corruptions failed: $(dmesg | grep STREAM-RESULT | tail -1)"
rmmod weft_selftest_stream 2>/dev/null
grep -q "^ab .*injected=3" $cfs/cables/c/corrupt || bad "corrupt knob: $(cat $cfs/cables/c/corrupt)"
pq "$lid1" 1 && expect_field PortRcvErrors "-eq 3" "three corruptions"
sysfs=/sys/class/infiniband/weft1/ports/1/counters
[ "$(cat $sysfs/port_rcv_errors)" = 3 ] || bad "sysfs port_rcv_errors $(cat $sysfs/port_rcv_errors)"

# Extended counters: 64-bit data and packets, unicast and multicast.
pq -x "$lid1" 1 && {
	grep -q "^# Port extended counters: Lid $lid1 port 1" $out || bad "-x header: $(head -1 $out)"
	expect_field PortUnicastRcvPkts "-ge 200" "the stream's packets"
	expect_field PortRcvPkts "-ge 200" "the stream's packets"
}

# perfquery -R: the error counter goes to 0, in sysfs too; -x -R clears the 64-bit ones.
pq -R "$lid1" 1
pq "$lid1" 1 && {
	expect_field PortRcvErrors "-eq 0" "after -R"
	expect_field PortRcvPkts "-lt 10" "after -R"
}
[ "$(cat $sysfs/port_rcv_errors)" = 0 ] || bad "sysfs port_rcv_errors after -R: $(cat $sysfs/port_rcv_errors)"
pq -x -R "$lid1" 1
pq -x "$lid1" 1 && expect_field PortUnicastRcvPkts "-lt 10" "after -x -R"

# PortSelect 0xFF (AllPortSelect) and a port that does not exist (status 0x1c).
pq -a "$lid1" && grep -q "port 255" $out || bad "-a: $(head -1 $out)"
# Refused by the PMA (status 0x1c, "invalid attribute modifier/field"), not lost: a timeout fails too.
if perfquery -d -C weft0 -P 1 "$lid1" 7 >$out 2>&1; then
	bad "port 7 of a one-port HCA answered: $(cat $out)"
elif ! grep -q "error status 0x1c" $out; then
	bad "port 7: not refused with status 0x1c: $(grep -v '^ibwarn.*send\|^$' $out | tail -3 | tr '\n' ' ')"
fi

# Redirection (IBA 13.5.3.3): the PMAs answer QP1 with "redirect" and a
# ClassPortInfo naming their own QP; perfquery follows it and gets the
# counters there.
param=/sys/module/weft_hca/parameters
echo 1 >$param/pma_redirect || bad "switching redirection on"
served=$(cat $param/pma_redirected_served)
pq "$lid1" 1 && expect_field PortXmitData "-gt 0" "through the redirect QP"
pq -R "$lid1" 1
[ "$(cat $param/pma_redirected_served)" -ge $((served + 2)) ] ||
	bad "perfquery did not use the redirect QP: $served -> $(cat $param/pma_redirected_served) served there"
echo 0 >$param/pma_redirect
pq "$lid1" 1 || bad "perfquery after redirection was switched off"

rmdir $cfs/cables/c $cfs/hcas/h1 $cfs/hcas/h0 || bad "tearing down the configfs entries"
weft_unload || fail=1
weft_check_taint || fail=1
exit $fail
