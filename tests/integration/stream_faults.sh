#!/bin/bash
# Integration: exactly-once, in-order RC delivery over a faulty cable at
# scale (IBA 9.7).  Two HCAs are cabled back to back through configfs; the
# cable's knobs drop 5 %, duplicate 3 %, reorder 3 % and corrupt 1 % of the
# packets in both directions; weft_selftest_stream sends 100,000 checked
# messages from weft0 to weft1 and its load fails unless each arrived once,
# in order and intact and each send completed successfully.  The knobs
# must show every kind of fault injected, and corrupted packets counted as
# receive errors.
set -u
fail=0
bad() { echo "stream_faults: FAIL: $*"; fail=1; }
cfs=/sys/kernel/config/weft
messages=${WEFT_STREAM_MESSAGES:-100000}

weft_load weft_hca:hcas=0 || exit 1
for h in h0 h1; do
	mkdir $cfs/hcas/$h && echo 1 >$cfs/hcas/$h/enable || bad "creating $h"
done
mkdir $cfs/cables/c && echo weft0:1 >$cfs/cables/c/a && echo weft1:1 >$cfs/cables/c/b &&
	echo 1 >$cfs/cables/c/up && echo 1 >$cfs/autoconf || bad "cabling weft0 to weft1"
echo ppm=50000 >$cfs/cables/c/drop && echo ppm=30000 >$cfs/cables/c/duplicate &&
	echo ppm=30000 >$cfs/cables/c/reorder && echo ppm=10000 >$cfs/cables/c/corrupt ||
	bad "setting the fault knobs"
dmesg -C
start=$(date +%s)
insmod "$WEFT_MODDIR/tests/selftest/weft_selftest_stream.ko" messages=$messages ||
	bad "the stream failed: $(dmesg | grep STREAM-RESULT)"
echo "stream_faults: $(dmesg | grep -o 'STREAM-RESULT.*') in $(($(date +%s) - start)) s"
dmesg | grep -q "STREAM-RESULT sent $messages acked $messages received $messages bad 0 extra 0 failed success errno 0" ||
	bad "unexpected result: $(dmesg | grep STREAM-RESULT)"
for k in drop duplicate reorder corrupt; do
	for d in ab ba; do
		n=$(sed -n "s/^$d .*injected=\([0-9]*\).*/\1/p" $cfs/cables/c/$k)
		[ "${n:-0}" -gt 0 ] || bad "no $k injected in direction $d"
	done
done
errs=$(cat /sys/class/infiniband/weft1/ports/1/counters/port_rcv_errors 2>/dev/null || echo 0)
[ "$errs" -gt 0 ] || bad "corrupted packets were not counted as receive errors at weft1"
rmmod weft_selftest_stream || bad "rmmod weft_selftest_stream"
rmdir $cfs/cables/c $cfs/hcas/h1 $cfs/hcas/h0 || bad "tearing down the configfs entries"
weft_unload || fail=1
weft_check_taint || fail=1
exit $fail
