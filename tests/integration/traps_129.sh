#!/bin/bash
# Integration: trap 129, local link integrity (IBA 14.2.5.1, 14.2.5.6
# LocalPhyErrors, 16.1.3.5 LocalLinkIntegrityErrors; drivers/hca/trap.cpp
# local_phy_error), from a switch to OpenSM (issue 27).  A configfs subnet
# (weft0, weft1 on switch ports 1 and 2) under OpenSM with a LocalPhyErrors
# threshold of 2: three packets from weft1 corrupted on its cable fail the
# VCRC at switch port 2, the third is past the threshold, and
#   - OpenSM logs trap 129 from the switch's LID and port 2 (the time it
#     took printed);
#   - perfquery shows LocalLinkIntegrityErrors 1 and PortRcvErrors 3 on switch
#     port 2.
set -u
fail=0
bad() { echo "traps_129: FAIL: $*"; fail=1; }
cfs=/sys/kernel/config/weft
now() { date +%s%3N; }
field() { sed -n "s/^$1:\.*\([0-9]*\)\$/\1/p" /tmp/pq129.out; }

weft_load weft_hca:hcas=0 || exit 1
weft_star 2 || bad "building weft0, weft1 on weftsw0 ports 1 and 2"
printf 'force_log_flush TRUE\nlocal_phy_errors_threshold 0x02\n' >/tmp/opensm-129.conf
weft_sm_start weft0 5 "-F /tmp/opensm-129.conf"
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM: $(cat /tmp/opensm.out)"
weft_wait_line /tmp/opensm.log "SUBNET UP" 30 || bad "no SUBNET UP"
sleep 1
swlid=$(saquery -C weft0 -P 1 NR | awk -F. '/^[[:space:]]*lid\./ {l = $NF} /node_type.*Switch/ {print l; exit}')
[ -n "$swlid" ] && swlid=$((swlid))
[ -n "$swlid" ] || bad "no switch LID"
perfquery -C weft0 -P 1 -R "${swlid:-0}" 2 >/dev/null 2>&1

# weft1's next three packets are corrupted on the wire (direction ab: weft1 to the switch).
echo "count=3 dir=ab" >$cfs/cables/c1/corrupt || bad "arming corrupt"
t0=$(now)
insmod "$WEFT_MODDIR/tests/selftest/weft_selftest_stream.ko" messages=200 ||
	bad "the stream over corruptions failed: $(dmesg | grep STREAM-RESULT | tail -1)"
rmmod weft_selftest_stream 2>/dev/null
grep -q "^ab .*injected=3" $cfs/cables/c1/corrupt || bad "corrupt knob: $(cat $cfs/cables/c1/corrupt)"
# OpenSM prints the DataDetails' PORTNO after the LID (IBA 14.2.5.1 table 150).
if weft_wait_line /tmp/opensm.log "num:129 .* from LID:${swlid:-0} Port 2 " 30; then
	echo "traps_129: 129 from LID $swlid in OpenSM's log $(( $(now) - t0 )) ms after the corruptions were armed"
else
	bad "no trap 129 from the switch's LID ${swlid:-?}: $(grep -i "notice\|trap" /tmp/opensm.log | tail -3)"
fi
grep "num:129 " /tmp/opensm.log | cut -c1-200
perfquery -C weft0 -P 1 "${swlid:-0}" 2 >/tmp/pq129.out 2>&1 || bad "perfquery: $(cat /tmp/pq129.out)"
echo "switch port 2: LocalLinkIntegrityErrors $(field LocalLinkIntegrityErrors), PortRcvErrors $(field PortRcvErrors)"
[ "$(field LocalLinkIntegrityErrors)" = 1 ] || bad "LocalLinkIntegrityErrors '$(field LocalLinkIntegrityErrors)', want 1"
[ "$(field PortRcvErrors)" = 3 ] || bad "PortRcvErrors '$(field PortRcvErrors)', want 3"
weft_sm_stop
weft_unload || fail=1
weft_check_taint || fail=1
exit $fail
