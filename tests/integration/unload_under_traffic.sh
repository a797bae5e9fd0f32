#!/bin/bash
# Integration: a verbs client (weft_selftest_ulp) keeps checked RC traffic
# running between weft0 and weft1; then (1) the HCA driver is unloaded under
# that traffic, so both devices go away while QPs are busy, and comes back,
# (2) the client itself is unloaded under traffic, and (3) on two HCAs
# cabled back to back through configfs, one HCA is removed (rmdir) under
# traffic.  Each time: traffic
# had moved without a single corrupted exchange, every module unloads, no
# context is reported leaked, nothing hangs (the runner's timeout) and the
# kernel is not tainted beyond O/E (a splat fails the whole run).
set -u
fail=0
bad() { echo "unload_under_traffic: FAIL: $*"; fail=1; }
param() { cat /sys/module/weft_selftest_ulp/parameters/$1; }


weft_load || exit 1
weft_insmod weft_selftest_ulp || exit 1
weft_ulp_wait 20 || bad "the verbs client's traffic stalled"
rmmod weft_hca || bad "rmmod weft_hca under traffic failed"
n=$(param messages)
sleep 0.5
[ "$(param messages)" = "$n" ] || bad "traffic continued after the devices were removed"
insmod "$WEFT_MODDIR/drivers/hca/weft_hca.ko" || bad "weft_hca reload failed"
weft_ulp_wait $((n + 20)) || bad "the verbs client's traffic stalled"
rmmod weft_selftest_ulp || bad "rmmod of the client under traffic failed"
dmesg | grep -q "traffic stopped on removal" || bad "the client never saw a removal"
dmesg | grep -q "still open at removal" && bad "a context was left open at device removal"
errors=$(dmesg | sed -n 's/.*traffic stopped on removal.* \([0-9]*\) errors/\1/p' | sort -n | tail -1)
[ "${errors:-1}" = 0 ] || bad "corrupted or failed exchanges: ${errors:-unknown}"
weft_unload || fail=1

# (3) one device removed at run time, under traffic.
cfs=/sys/kernel/config/weft
weft_load weft_hca:hcas=0 || exit 1
for h in h0 h1; do
	mkdir $cfs/hcas/$h && echo 1 >$cfs/hcas/$h/enable || bad "creating $h"
done
mkdir $cfs/cables/c && echo weft0:1 >$cfs/cables/c/a && echo weft1:1 >$cfs/cables/c/b &&
	echo 1 >$cfs/cables/c/up && echo 1 >$cfs/autoconf || bad "cabling weft0 to weft1"
dmesg -C
weft_insmod weft_selftest_ulp || exit 1
weft_ulp_wait 20 || bad "the verbs client's traffic stalled"
rmdir $cfs/hcas/h1 || bad "rmdir of weft1 under traffic failed"
[ ! -e /sys/class/infiniband/weft1 ] || bad "weft1 still in sysfs after rmdir"
dmesg | grep -q "traffic stopped on removal of weft1: .* 0 errors" ||
	bad "the client did not stop cleanly on removal of weft1: $(dmesg | grep selftest_ulp)"
dmesg | grep -q "still open at removal" && bad "a context was left open at removal of weft1"
rmmod weft_selftest_ulp || bad "rmmod of the client failed"
rmdir $cfs/cables/c $cfs/hcas/h0 || bad "tearing down the configfs entries"
weft_unload || fail=1
weft_check_taint || fail=1
exit $fail
