#!/bin/bash
# Integration: librdmacm applications over weft_ucma (issue 25), Debian's
# rdmacm-utils and perftest unchanged, across two hosts (weft0's IPoIB
# interface in namespace h0, weft1's in h1: weft_ipoib_hosts; ucma.sh has
# the root namespace as one of its hosts), OpenSM:
#   - ucmatose with 100 connections (-c 100), its messages on each;
#   - perftest over RDMA CM (-R): ib_send_bw, ib_write_bw, ib_read_lat
#     (their clients preloaded with listener_wait.c: a perftest bug);
#   - udaddy (UDP port space: SIDR, UD messages);
#   - mckey: a receiver on h1 and a sender on h0 join an IPv4 group (SA
#     MCMemberRecord through the RDMA CM), 10 messages multicast;
#   - cmtime -c 100: connection setup and teardown steps (figures printed),
#     its server (which never exits) ended by SIGTERM;
# and afterwards nothing left (weft_stats, weft_rdma_cm's Ids).
set -u
fail=0
bad() { echo "ucma_apps: FAIL: $*"; fail=1; }
log=${WEFT_UCMA_LOG:-/tmp/ucma_apps}
mkdir -p $log
stats=/sys/class/misc/rdma_cm/weft_stats
A_IP=10.77.0.1

weft_ipoib_hosts || bad "hosts h0 and h1 on IPoIB"
weft_on h1 ping -c 1 -W 5 $A_IP >/dev/null || bad "no IPoIB ping from h1 to $A_IP"

# run NAME SECONDS SERVER-CMD... -- CLIENT-CMD...: the server in h0, the
# client in h1 once the server listens (an RDMA CM listener exists); both
# must exit 0.  Output in $log/NAME.{srv,cli}.  A server that never exits
# (cmtime) is given NOEXIT=1: SIGTERM after the client.
run() {
	local tag=$1 t=$2 srv rc src i
	shift 2
	local scmd=() ccmd=()
	while [ "$1" != -- ]; do scmd+=("$1"); shift; done
	shift
	ccmd=("$@")
	ip netns exec h0 timeout -s KILL "$t" "${scmd[@]}" >"$log/$tag.srv" 2>&1 &
	srv=$!
	for i in $(seq 1 300); do
		[ "$(cat /sys/module/weft_rdma_cm/parameters/listeners)" -ge 1 ] && break
		sleep 0.2
	done
	weft_on h1 timeout -s KILL "$t" "${ccmd[@]}" >"$log/$tag.cli" 2>&1
	rc=$?
	[ -n "${NOEXIT:-}" ] && kill -TERM $srv
	wait $srv
	src=$?
	case "${NOEXIT:-}:$src" in 1:124 | 1:143) src=0 ;; esac # ended by our TERM (timeout passes it on)
	echo "ucma_apps: $tag: client rc $rc, server rc $src"
	if [ $rc != 0 ] || [ $src != 0 ]; then
		bad "$tag: client rc $rc, server rc $src"
		tail -n 8 "$log/$tag.srv" "$log/$tag.cli" | sed 's/^/ucma_apps: FAIL:   /'
		return 1
	fi
}
clean() {
	local i
	for i in $(seq 1 60); do
		grep -q '^files 0$' $stats && grep -q '^ids 0$' $stats && grep -q '^events 0$' $stats &&
			[ "$(cat /sys/module/weft_rdma_cm/parameters/ids)" = 0 ] && return 0
		sleep 0.5
	done
	bad "$1: left behind: $(tr '\n' ' ' <$stats) rdma_cm ids $(cat /sys/module/weft_rdma_cm/parameters/ids)"
}

# ucmatose: 100 connections, each sending and receiving its messages.
run ucmatose 400 ucmatose -c 100 -- ucmatose -s $A_IP -c 100 &&
	{ grep -q 'data transfers complete' $log/ucmatose.cli && grep -q 'test complete' $log/ucmatose.cli &&
		grep -q 'cmatose: disconnecting' $log/ucmatose.srv ||
		bad "ucmatose: no completed transfers and disconnect in the output"; }
clean ucmatose

# perftest over the RDMA CM.  -F: no failure when the CPU clock cannot be pinned (TCG).
# The clients wait for the server's data listener (listener_wait.c says why).
wait_so=$log/listener_wait.so
gcc -O2 -Wall -Werror -shared -fPIC -o $wait_so $WEFT_REPO/tests/integration/listener_wait.c -ldl ||
	bad "listener_wait.c does not build"
perf() {
	local tag=$1
	shift
	run "$tag" 300 "$@" -R -F -n 500 -- env LD_PRELOAD=$wait_so "$@" -R -F -n 500 $A_IP || return
	grep -E '^ +[0-9]+ +500 ' "$log/$tag.cli" | tail -1
	grep -qE '^ +[0-9]+ +500 ' "$log/$tag.cli" || bad "$tag: no result line for 500 iterations"
}
perf send_bw ib_send_bw
perf write_bw ib_write_bw
perf read_lat ib_read_lat
clean perftest

# udaddy: the UDP port space (SIDR), UD messages both ways.
run udaddy 200 udaddy -- udaddy -s $A_IP
clean udaddy

# mckey: the receiver joins first and waits for the sender's 10 messages.
ip netns exec h1 timeout -s KILL 200 stdbuf -oL mckey -m 239.1.2.3 -b 10.77.0.2 -C 10 >$log/mckey.rcv 2>&1 &
rcv=$!
if weft_wait_line $log/mckey.rcv 'receiving data transfers' 120; then
	weft_on h0 timeout -s KILL 200 mckey -m 239.1.2.3 -b $A_IP -s -C 10 >$log/mckey.snd 2>&1 ||
		bad "mckey sender: rc $?"
else
	bad "mckey receiver never joined"
fi
wait $rcv
rc=$?
echo "ucma_apps: mckey: receiver rc $rc"
[ $rc = 0 ] && grep -q 'data transfers complete' $log/mckey.rcv ||
	{ bad "mckey receiver: rc $rc"; tail -n 8 $log/mckey.rcv $log/mckey.snd; }
grep -h 'joined dgid' $log/mckey.rcv $log/mckey.snd
clean mckey

# cmtime: the steps of 100 connections' setup and teardown, timed.
NOEXIT=1 run cmtime 400 cmtime -c 100 -- cmtime -s $A_IP -c 100 && cat $log/cmtime.cli
clean cmtime

weft_sm_stop
ip netns del h0
ip netns del h1
weft_unload || bad "unload failed"
exit $fail
