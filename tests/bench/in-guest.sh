#!/bin/bash
# Benchmark job (run by tests/bench/run.sh through vm-run.sh, stock kernel):
# Weft's data path, the memcpy ceiling, then the in-tree rxe with perftest on
# the same guest.  Prints WEFT-BENCH / RXE-BENCH lines; asserts nothing.
set -u
. /weft-job/guest-lib.sh
. "$WEFT_REPO/tests/bench/rxe-lib.sh"
secs=${WEFT_BENCH_SECONDS:-1}

weft_load || exit 1
insmod "$WEFT_MODDIR/tests/bench/weft_bench.ko" seconds_per_point="$secs" || exit 1
for _ in $(seq 1200); do
	dmesg | grep -q "WEFT-BENCH done" && break
	sleep 0.5
done
rmmod weft_bench
weft_unload || exit 1

bench_rxe_up || exit 0
perf() { # tool size extra...: one server/client pair on rxe0
	local tool=$1 size=$2
	shift 2
	$tool -d rxe0 -F -s "$size" "$@" >/tmp/srv.out 2>&1 &
	sleep 1
	timeout 60 $tool -d rxe0 -F -s "$size" "$@" 192.168.77.1 >/tmp/cli.out 2>&1
	wait
	cat /tmp/cli.out
}
for size in 64 256 1024 4096 16384 65536 262144 1048576; do
	for op in write read send; do
		bw=$(perf ib_${op}_bw $size -D $secs | awk -v s=$size '$1 == s { print $4 }' | tail -1)
		echo "RXE-BENCH rc_$op $size ${bw:-0} MB/s"
	done
done
for size in 8 64 512 4096; do
	lat=$(perf ib_send_lat $size -n 2000 | awk -v s=$size '$1 == s { print $5 }' | tail -1)
	echo "RXE-BENCH rc_send_lat $size ${lat:-0} us"
done
rdma link delete rxe0
exit 0
