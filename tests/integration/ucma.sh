#!/bin/bash
# Integration: librdmacm over weft_ucma (issue 25, user-space half), Debian's
# rdmacm-utils unchanged, two hosts: weft0's IPoIB interface in the root
# namespace (10.78.0.1), weft1's in namespace h1 (10.78.0.2), OpenSM:
#   - /dev/infiniband/rdma_cm (mode 0666) and class/misc/rdma_cm/abi_version 4;
#   - the write() ABI spoken directly (ucma_abi.py): in-tree errnos, Ids
#     per file, AF_IB refused, QUERY of a bound Id, MIGRATE_ID;
#   - MIGRATE_ID of a listener with a request unread (ucma_migrate.py): the
#     request's new Id goes with the event, one taken by number stays with
#     its taker, and migrate-then-destroy rounds beside a busy first file;
#   - rping -s / rping -c -v -V -C 1000 across the namespaces: 1000 pings
#     with their data verified on both sides;
#   - kill -9 of rping in each phase (server listening, client resolving an
#     address nobody answers, client and server mid-run): the peer sees the
#     disconnect (exits), and nothing is left: weft_ucma's files, Ids and
#     events (weft_stats), weft_rdma_cm's Ids and listeners, the verbs
#     objects (`rdma res`);
#   - a connection to a port nobody listens on is refused (rping exits);
#   - a server stopped (SIGSTOP) with a request queued: kill -9 of it (the
#     unread request's new Id goes with the listener, the client is
#     refused), or of the waiting client (the server, resumed, sees it gone).
set -u
fail=0
bad() { echo "ucma: FAIL: $*"; fail=1; }
log=${WEFT_UCMA_LOG:-/tmp/ucma}
mkdir -p $log
stats=/sys/class/misc/rdma_cm/weft_stats
A_IP=10.78.0.1 B_IP=10.78.0.2
# The checkers' kernels run the same paths with fewer pings.
pings=${WEFT_UCMA_PINGS:-1000}

weft_load weft_hca:autoconf=0 || exit 1
weft_sm_start weft0
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM"
A=$(weft_ib_netdev weft0) B=$(weft_ib_netdev weft1)
weft_host_add h1 || bad "netns h1"
ip link set "$B" netns h1 || bad "moving $B into h1"
ip addr add $A_IP/24 dev "$A" && ip link set "$A" up || bad "$A up"
weft_on h1 ip addr add $B_IP/24 dev "$B" && weft_on h1 ip link set "$B" up || bad "$B up"
weft_carrier - "$A" 1 && weft_carrier h1 "$B" 1 || bad "no carrier"
weft_on h1 ping -c 1 -W 5 $A_IP >/dev/null || bad "no IPoIB ping from h1 to $A_IP"

# The node and the ABI version librdmacm reads.
[ -c /dev/infiniband/rdma_cm ] || bad "no /dev/infiniband/rdma_cm"
[ "$(stat -c %a /dev/infiniband/rdma_cm)" = 666 ] || bad "rdma_cm mode $(stat -c %a /dev/infiniband/rdma_cm)"
weft_expect /sys/class/misc/rdma_cm/abi_version $'4\n' || bad "abi_version"
# The ABI spoken directly: framing and size errnos, Ids per file, the AF_IB
# refusal, QUERY of a bound Id, GET_EVENT/poll with nothing queued, MIGRATE_ID.
python3 "$WEFT_REPO/tests/integration/ucma_abi.py" $A_IP "$(tr -d ':' </sys/class/infiniband/weft0/node_guid)" ||
	bad "ucma_abi.py failed"
# MIGRATE_ID of a listener whose request is unread (its new Id goes with
# the event), against a thread busy on the first file.
python3 "$WEFT_REPO/tests/integration/ucma_migrate.py" $A_IP h1 "${WEFT_UCMA_MIGRATE_ROUNDS:-40}" ||
	bad "ucma_migrate.py failed"

# Nothing of any rping left: no open rdma_cm file, Id or event; no RDMA CM
# Id or listener; no verbs object of a process (rdma res: kernel objects
# show no comm).  Waits up to 30 s for teardown after a kill.
clean() {
	local i what
	for i in $(seq 1 60); do
		what=
		grep -q '^files 0$' $stats && grep -q '^ids 0$' $stats && grep -q '^events 0$' $stats ||
			what="weft_stats: $(tr '\n' ' ' <$stats)"
		[ "$(cat /sys/module/weft_rdma_cm/parameters/ids)" = 0 ] ||
			what="$what rdma_cm ids $(cat /sys/module/weft_rdma_cm/parameters/ids)"
		[ "$(cat /sys/module/weft_rdma_cm/parameters/listeners)" = 0 ] ||
			what="$what rdma_cm listeners $(cat /sys/module/weft_rdma_cm/parameters/listeners)"
		rdma res show qp 2>/dev/null | grep -q 'comm rping' && what="$what rping QP in rdma res"
		rdma res show pd 2>/dev/null | grep -q 'comm rping' && what="$what rping PD in rdma res"
		[ -z "$what" ] && return 0
		sleep 0.5
	done
	bad "$1: left behind: $what"
	return 1
}
# weft_ucma's live Ids now (builtins only: quick on a loaded host).
ids_now() {
	local k v
	while read -r k v; do
		[ "$k" = ids ] && { echo "$v"; return; }
	done <$stats
	echo 0
}
# ids N [SECONDS]: weft_ucma has at least N Ids (the processes got that far).
ids_at_least() {
	local i
	for i in $(seq 1 $((${2:-60} * 5))); do
		[ "$(ids_now)" -ge "$1" ] && return 0
		sleep 0.2
	done
	return 1
}
# gone PID SECONDS: the process exits in time.
gone() {
	local i
	for i in $(seq 1 $(($2 * 5))); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.2
	done
	return 1
}
clean "before any rping"

# 1. 1000 verified pings across the namespaces.
timeout -s KILL 400 stdbuf -oL rping -s -a $A_IP -p 7174 -C $pings -v -V >$log/rping.srv 2>&1 &
srv=$!
ids_at_least 1 || bad "rping server never made an Id"
sleep 0.5
weft_on h1 timeout -s KILL 380 stdbuf -oL rping -c -a $A_IP -p 7174 -C $pings -v -V >$log/rping.cli 2>&1
crc=$?
wait $srv
src=$?
# Distinct pings printed (stdout and stderr share the file: a line may be split).
count_pings() { grep -o 'rdma-ping-[0-9]*:' "$1" | sort -u | wc -l; }
n_cli=$(count_pings $log/rping.cli)
n_srv=$(count_pings $log/rping.srv)
echo "ucma: rping client rc $crc ($n_cli pings), server rc $src ($n_srv pings)"
if [ $crc != 0 ] || [ $src != 0 ] || [ "$n_cli" != $pings ] || [ "$n_srv" != $pings ]; then
	bad "rping -C $pings -v -V: client rc $crc with $n_cli pings, server rc $src with $n_srv pings"
	tail -n 5 $log/rping.srv $log/rping.cli
fi
grep -qi 'mismatch' $log/rping.cli $log/rping.srv && bad "rping data mismatch"
clean "after rping"

# 2. kill -9 of a listening server.
rping -s -a $A_IP -p 7175 -C 1000000 >$log/k1.srv 2>&1 &
srv=$!
ids_at_least 1 && [ "$(cat /sys/module/weft_rdma_cm/parameters/listeners)" -ge 1 ] ||
	{ sleep 2; [ "$(cat /sys/module/weft_rdma_cm/parameters/listeners)" -ge 1 ] || bad "server not listening"; }
kill -9 $srv
wait $srv 2>/dev/null
clean "kill -9 of a listening server"

# 3. kill -9 of a client resolving an address nobody answers (ARP in
# progress: rping gives it 2 s).  A loaded host may miss that window: up to
# five tries, each checked for leftovers.
caught=
for try in 1 2 3 4 5; do
	# (ip netns exec execs the program: $! is rping's pid, as it is below.)
	ip netns exec h1 rping -c -a 10.78.0.99 -p 7176 -C 10 >$log/k2.cli 2>&1 &
	cli=$!
	for i in $(seq 1 600); do
		[ "$(ids_now)" -ge 1 ] && break
		kill -0 $cli 2>/dev/null || break
		sleep 0.05
	done
	if [ "$(ids_now)" -ge 1 ] && kill -9 $cli 2>/dev/null; then
		caught=$try
	fi
	wait $cli 2>/dev/null
	clean "kill -9 of a resolving client (try $try)"
	[ -n "$caught" ] && break
done
[ -n "$caught" ] || bad "never caught rping while it resolved (5 tries): $(cat $log/k2.cli)"

# 4. No listener on the port: the client is refused and exits.
weft_on h1 timeout -s KILL 60 rping -c -a $A_IP -p 7177 -C 10 >$log/refused.cli 2>&1
rc=$?
[ $rc != 0 ] && [ $rc != 137 ] || bad "rping to a port nobody listens on: rc $rc"
clean "refused connection"

# 5./6. kill -9 of one side mid-run: the other sees the disconnect and exits.
midrun() { # NAME VICTIM(srv|cli)
	local srv cli
	stdbuf -oL rping -s -a $A_IP -p 7178 -C 1000000 -v >$log/$1.srv 2>&1 &
	srv=$!
	ids_at_least 1
	sleep 0.5
	ip netns exec h1 stdbuf -oL rping -c -a $A_IP -p 7178 -C 1000000 -v >$log/$1.cli 2>&1 &
	cli=$!
	# Connected and pinging: the client has printed some data.
	weft_wait_line $log/$1.cli '^ping data: rdma-ping-20:' 120 || bad "$1: no pings before the kill"
	if [ "$2" = srv ]; then
		kill -9 $srv
		gone $cli 60 || { bad "$1: the client did not see the server go"; kill -9 $cli; }
	else
		kill -9 $cli
		gone $srv 60 || { bad "$1: the server did not see the client go"; kill -9 $srv; }
	fi
	wait $srv $cli 2>/dev/null
	clean "$1"
}
midrun kill-client cli
midrun kill-server srv

# 7./8. A server that does not read its events (stopped): the request waits
# in its queue with the new Id made for it.
stopped() { # NAME VICTIM(srv|cli)
	local srv cli i
	rping -s -a $A_IP -p 7179 -C 10 >$log/$1.srv 2>&1 &
	srv=$!
	ids_at_least 1
	sleep 0.5
	kill -STOP $srv
	ip netns exec h1 rping -c -a $A_IP -p 7179 -C 10 >$log/$1.cli 2>&1 &
	cli=$!
	# listener, the request's new Id, the client's: the request is queued.
	ids_at_least 3 || bad "$1: no queued request ($(tr '\n' ' ' <$stats))"
	grep -q '^events [1-9]' $stats || bad "$1: no queued event ($(tr '\n' ' ' <$stats))"
	if [ "$2" = srv ]; then
		# The listener goes with its unread request: the client is refused.
		kill -9 $srv
		gone $cli 60 || { bad "$1: the client did not see the server go"; kill -9 $cli; }
	else
		# The client goes while its REQ waits; the server then reads a stale request.
		kill -9 $cli
		kill -CONT $srv
		gone $srv 60 || { bad "$1: the server did not see the client go"; kill -9 $srv; }
	fi
	kill -CONT $srv 2>/dev/null
	wait $srv $cli 2>/dev/null
	clean "$1"
}
stopped stopped-server-killed srv
stopped stopped-server-client-killed cli

echo "ucma: $(tr '\n' ' ' <$stats)"
weft_sm_stop
ip netns del h1
weft_unload || bad "unload failed"
exit $fail
