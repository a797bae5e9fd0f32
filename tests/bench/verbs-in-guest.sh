#!/bin/bash
# make bench-verbs job (run by tests/bench/verbs.sh through vm-run.sh, stock
# kernel): Debian's perftest on Weft (weft0 <-> weft1, autoconf, through
# weft_uverbs and the stock rxe provider), then the same runs on the in-tree
# rxe, plus the in-kernel memcpy ceiling of weft_bench.ko.  Weft's uverbs
# and netlink exclude the in-tree ib_core, so one stack runs and is unloaded
# before the other.  Prints PERF / WEFT-BENCH lines; asserts nothing.
set -u
. /weft-job/guest-lib.sh
. "$WEFT_REPO/tests/bench/rxe-lib.sh"
log=/tmp/bench-verbs
mkdir -p $log
bw_sizes="64 256 1024 4096 16384 65536 262144 1048576"
lat_sizes="8 64 512 4096"

# Iterations per bandwidth point: 1000, but no more than 64 MiB in all, so
# that one point takes seconds under TCG on either stack.
bw_iters() { local n=$((67108864 / $1)); [ $n -gt 1000 ] && n=1000; echo $n; }
lat_iters=1000

# pair STACK SRVDEV CLIDEV HOST TOOL SIZE ITERS TAG: one server/client pair;
# prints BW average (MiB/s, perftest's MB/sec) or typical latency (us), or
# nothing when perftest printed no result line.
pair() {
	local sdev=$2 cdev=$3 host=$4 tool=$5 size=$6 n=$7 tag=$8 col
	timeout -s KILL 150 "$tool" -d "$sdev" -F -s "$size" -n "$n" >"$log/$tag.srv" 2>&1 &
	local srv=$!
	for _ in $(seq 200); do ss -ltn | grep -q ':18515 ' && break; sleep 0.1; done
	timeout -s KILL 120 "$tool" -d "$cdev" -F -s "$size" -n "$n" "$host" >"$log/$tag.cli" 2>&1
	wait $srv
	case $tool in *_lat) col=5 ;; *) col=4 ;; esac
	# Let the server's port close before the next pair binds it.
	for _ in $(seq 50); do ss -ltn | grep -q ':18515 ' || break; sleep 0.1; done
	awk -v s="$size" -v c=$col '$1 == s && NF >= c { print $c }' "$log/$tag.cli" | tail -1
}
# perf STACK SRVDEV CLIDEV HOST TOOL SIZE ITERS: "PERF stack tool size value",
# value "-" when neither of two tries gave a positive finite figure
# (perftest's clock calibration under TCG now and then yields "inf").
perf() {
	local v try
	for try in 1 2; do
		v=$(pair "$@" "$1-$5-$6-$try")
		[[ $v =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v v="$v" 'BEGIN { exit !(v > 0) }' && break
		v=-
	done
	echo "PERF $1 $5 $6 $v"
}
sweep_bw() { # STACK SRVDEV CLIDEV HOST
	local tool size
	for tool in ib_send_bw ib_write_bw ib_read_bw; do
		for size in $bw_sizes; do perf "$@" $tool "$size" "$(bw_iters "$size")"; done
	done
}
sweep_lat() { # STACK SRVDEV CLIDEV HOST
	local tool size
	for tool in ib_send_lat ib_write_lat ib_read_lat; do
		for size in $lat_sizes; do perf "$@" $tool "$size" $lat_iters; done
	done
}

# Weft: the copy ceiling first (its own module, fabric idle), then perftest.
weft_load || exit 1
insmod "$WEFT_MODDIR/tests/bench/weft_bench.ko" only=memcpy seconds_per_point=1 || exit 1
for _ in $(seq 600); do
	dmesg | grep -q "WEFT-BENCH done" && break
	sleep 0.5
done
rmmod weft_bench
weft_wait_active weft0 weft1 || { echo "PERF-NOTE weft ports not ACTIVE"; exit 1; }
sweep_bw weft weft0 weft1 localhost
# The latencies of both stacks back to back (Weft's last, rxe's first), so
# that a change of load on the shared host falls between them less often.
sweep_lat weft weft0 weft1 localhost
weft_unload || exit 1

# rxe as make bench sets it up (rxe-lib.sh).
bench_rxe_up || exit 0
sweep_lat rxe rxe0 rxe0 192.168.77.1
sweep_bw rxe rxe0 rxe0 192.168.77.1
rdma link delete rxe0
# The raw perftest outputs, for build/logs (vm-run.sh keeps the console).
for f in "$log"/*.cli; do
	echo "=== $(basename "$f")"
	cat "$f"
done
exit 0
