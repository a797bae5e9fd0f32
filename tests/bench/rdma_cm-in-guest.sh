#!/bin/bash
# make bench-rdma-cm job (run by tests/bench/rdma_cm.sh through vm-run.sh,
# stock kernel): Debian's cmtime (rdmacm-utils) on Weft, weft0's IPoIB
# interface in namespace h0 and weft1's in h1 with OpenSM, then on the
# in-tree rxe (rxe0 on one end of a veth pair, talking to itself, as the
# other benchmarks set it up: rxe-lib.sh), for 100 and 1,000 connections.  Weft's RDMA CM and
# the in-tree one exclude each other, so one stack runs and is unloaded
# before the other.  Prints "CMTIME <stack> <connections> <step> <fields>"
# lines; asserts nothing.
set -u
. /weft-job/guest-lib.sh
. "$WEFT_REPO/tests/bench/rxe-lib.sh"
counts=${WEFT_BENCH_CMTIME:-100 1000}

# run STACK NS_SRV SRV_ADDR NS_CLI CONNS: one cmtime server/client pair.
run() {
	local stack=$1 nss=$2 addr=$3 nsc=$4 n=$5 out=/tmp/cmtime-$1-$5
	# ip netns exec execs timeout: $! is the process our TERM reaches, which passes it on.
	if [ "$nss" = - ]; then
		timeout -s KILL 600 cmtime -b "$addr" -c "$n" >"$out.srv" 2>&1 &
	else
		ip netns exec "$nss" timeout -s KILL 600 cmtime -b "$addr" -c "$n" >"$out.srv" 2>&1 &
	fi
	local srv=$!
	sleep 3
	weft_on "$nsc" timeout -s KILL 600 cmtime -s "$addr" -c "$n" >"$out.cli" 2>&1
	# cmtime's server never exits by itself.
	kill -TERM $srv 2>/dev/null
	wait $srv
	# The client's step table (cmtime 44): "create id    :  total ms  max ms  min us  us / conn".
	awk -v s="$stack" -v n="$n" -F: '/^[a-z][a-z ]*:/ { st = $1; sub(/ +$/, "", st); gsub(/ /, "_", st)
		print "CMTIME " s " " n " " st " " $2 }' "$out.cli"
	tail -n 3 "$out.srv" "$out.cli"
	grep -q . "$out.cli" || echo "CMTIME $stack $n (no output)"
}

# Weft.
weft_load weft_hca:autoconf=0 || exit 1
weft_sm_start weft0
weft_wait_active weft0 weft1 || echo "bench-rdma-cm: ports not ACTIVE"
A=$(weft_ib_netdev weft0) B=$(weft_ib_netdev weft1)
weft_host_add h0 && weft_host_add h1
ip link set "$A" netns h0 && ip link set "$B" netns h1
weft_on h0 ip addr add 10.77.0.1/24 dev "$A" && weft_on h0 ip link set "$A" up
weft_on h1 ip addr add 10.77.0.2/24 dev "$B" && weft_on h1 ip link set "$B" up
weft_carrier h0 "$A" 1 && weft_carrier h1 "$B" 1
weft_on h0 ping -c 1 -W 10 10.77.0.2 >/dev/null
for n in $counts; do run weft h1 10.77.0.2 h0 "$n"; done
echo "CMTIME-IDS weft $(cat /sys/module/weft_rdma_cm/parameters/ids)"
ip netns del h0
ip netns del h1
weft_sm_stop
weft_unload

# The in-tree rxe with its RDMA CM.
if bench_rxe_up; then
	modprobe rdma_ucm
	for n in $counts; do run rxe - 192.168.77.1 - "$n"; done
fi
