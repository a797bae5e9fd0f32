#!/bin/bash
# Integration: user-space verbs programs on Weft (issue 23), Debian's
# binaries with the stock rxe provider, weft0 and weft1 under OpenSM:
#   - libibverbs' examples: ibv_rc/uc/ud/srq_pingpong with their buffers
#     checked (-c), RC also with completion events (-e);
#   - perftest: ib_{send,write,read,atomic}_bw and ib_{send,write,read}_lat
#     over RC, ib_send_bw over UD, a size sweep (-a) of ib_write_bw;
#   - kill -9 of ib_write_bw mid-run: the context and everything in it
#     freed (weft_uverbs unloads: no file left open), the server side
#     recovers, and a new run works;
#   - RLIMIT_MEMLOCK: an unprivileged process beyond its limit gets ENOMEM
#     from ibv_reg_mr, root (CAP_IPC_LOCK) does not; a 4 GiB registration
#     beyond it allocates nothing its length sizes (uverbs_memlock_alloc.py);
#   - limits (uverbs_limits.py): CQ overrun reported as IBV_EVENT_CQ_ERR,
#     SGE lengths beyond max_msg_sz, RESIZE_CQ, max_ah device-wide;
#   - ring memory charged to the memory cgroup (uverbs_ring_memcg.py);
#   - Modify SRQ: resize and limit (uverbs_srq.py).
# Client and server run as two processes on one host, one HCA each.
set -u
fail=0
bad() { echo "uverbs_apps: FAIL: $*"; fail=1; }
here=$WEFT_REPO/tests/integration
log=/tmp/uverbs_apps

weft_load weft_hca:autoconf=0 || exit 1
weft_sm_start weft0
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM"
mkdir -p $log

# run NAME ARGS...: server on weft0, client on weft1 (TCP on localhost);
# both must exit 0; their output is kept in $log/NAME.{srv,cli}.
run() {
	local tag=$1 prog=$2
	shift 2
	timeout -s KILL 120 "$prog" -d weft0 "$@" >"$log/$tag.srv" 2>&1 &
	local srv=$!
	# The server listens on its TCP port before the client may connect.
	for _ in $(seq 100); do ss -ltn | grep -q ':18515 ' && break; sleep 0.1; done
	timeout -s KILL 100 "$prog" -d weft1 "$@" localhost >"$log/$tag.cli" 2>&1
	local rc=$?
	wait $srv
	local src=$?
	if [ $rc != 0 ] || [ $src != 0 ]; then
		bad "$tag: client rc $rc, server rc $src"
		tail -n 8 "$log/$tag.srv" "$log/$tag.cli"
		return 1
	fi
	return 0
}

# The pingpongs check every buffer (-c) and print their rate.
for p in rc uc ud srq; do
	run "$p" "ibv_${p}_pingpong" -n 200 -c && grep -h "iters in" "$log/$p.cli"
done
run rc-events ibv_rc_pingpong -n 200 -c -e && grep -h "iters in" "$log/rc-events.cli"
# Every pingpong exchanged its messages: "200 iters" on both sides.
for t in rc uc ud srq rc-events; do
	[ "$(cat $log/$t.srv $log/$t.cli 2>/dev/null | grep -c '^200 iters')" = 2 ] ||
		bad "$t: no '200 iters' on both sides"
done

# perftest: the results line of each, for all the iterations asked for.  (Its
# figures are not checked: under TCG on a loaded host perftest's cycle
# counting may even print "inf".)
perf() {
	local tag=$1
	shift
	run "$tag" "$@" || return
	grep -E '^ +[0-9]+ +[0-9]+ ' "$log/$tag.cli" | tail -1
	grep -qE '^ +[0-9]+ +500 ' "$log/$tag.cli" || bad "$tag: no result line for 500 iterations"
}
# -F: no failure when perftest cannot pin down the CPU clock (a loaded TCG host).
perf send_bw ib_send_bw -F -n 500
perf write_bw ib_write_bw -F -n 500
perf read_bw ib_read_bw -F -n 500
perf atomic_bw ib_atomic_bw -F -n 500
perf send_lat ib_send_lat -F -n 500
perf write_lat ib_write_lat -F -n 500
perf read_lat ib_read_lat -F -n 500
perf ud_send_bw ib_send_bw -F -n 500 -c UD
run write_bw_sweep ib_write_bw -F -a -n 20 &&
	{ n=$(grep -cE '^ +[0-9]+ +20 ' "$log/write_bw_sweep.cli"); [ "$n" = 23 ] ||
		bad "ib_write_bw -a: $n sizes, want 23 (2 B .. 8 MiB)"; }

# kill -9 mid-transfer: nothing stays behind.  (No timeout wrapper: the kill must reach perftest.)
ib_write_bw -F -d weft0 -D 60 >"$log/kill.srv" 2>&1 &
srv=$!
for _ in $(seq 300); do ss -ltn | grep -q ':18515 ' && break; sleep 0.1; done
stdbuf -oL ib_write_bw -F -d weft1 -D 60 localhost >"$log/kill.cli" 2>&1 &
cli=$!
# The addresses are exchanged just before the transfer; the results come after 60 s.
weft_wait_line "$log/kill.cli" 'remote address' || { bad "ib_write_bw -D 60 did not start"; cat "$log"/kill.*; }
sleep 3
kill -9 $cli $srv || { bad "perftest was not running when killed"; cat "$log"/kill.*; }
weft_stopped $cli 30 && weft_stopped $srv 30 || bad "killed perftest did not exit"
wait $cli $srv 2>/dev/null
# Every open uverbs file is gone with its context: the module is unused.
weft_wait_for /sys/module/weft_uverbs/refcnt 0 30 || bad "weft_uverbs still in use after kill -9"
rmmod weft_uverbs || bad "weft_uverbs does not unload after kill -9"
weft_insmod weft_uverbs || bad "weft_uverbs does not load again"
run after-kill ibv_rc_pingpong -n 50 -c || bad "no traffic after kill -9"

# RLIMIT_MEMLOCK: 64 KiB allowed; 1 MiB fails for nobody, not for root.
if setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
	prlimit --memlock=65536 python3 "$here/uverbs_memlock.py" weft0 1048576 ENOMEM; then :
else bad "unprivileged registration beyond RLIMIT_MEMLOCK did not fail with ENOMEM"; fi
prlimit --memlock=65536 python3 "$here/uverbs_memlock.py" weft0 1048576 ok ||
	bad "root (CAP_IPC_LOCK) registration beyond RLIMIT_MEMLOCK failed"
python3 "$here/uverbs_memlock_alloc.py" weft0 ||
	bad "REG_MR beyond RLIMIT_MEMLOCK allocated its page list first, or was not refused"

# CQ overrun to the async file, a wrapping SGE sum, max_ah device-wide.
python3 "$here/uverbs_limits.py" weft0 || bad "uverbs_limits.py failed"
# Modify SRQ: resize with WQEs posted, its refusals, the limit event.
python3 "$here/uverbs_srq.py" weft0 || bad "uverbs_srq.py failed"

# Ring memory is charged to the memory cgroup: 64 CQ rings of about 4 MiB
# do not fit in a cgroup of 96 MiB (ENOMEM, not the cgroup's OOM killer),
# while they do outside it.
cg=/sys/fs/cgroup
[ -e $cg/cgroup.controllers ] || mount -t cgroup2 none $cg
if grep -qw memory $cg/cgroup.controllers 2>/dev/null; then
	echo +memory >$cg/cgroup.subtree_control
	mkdir -p $cg/weft_uverbs_rings
	echo $((96 << 20)) >$cg/weft_uverbs_rings/memory.max
	bash -c 'echo $$ >"$1/cgroup.procs" && exec python3 "$2" weft0 64 ENOMEM' - \
		$cg/weft_uverbs_rings "$here/uverbs_ring_memcg.py" ||
		bad "64 CQ rings of 4 MiB in a 96 MiB memory cgroup: not refused with ENOMEM"
	python3 "$here/uverbs_ring_memcg.py" weft0 64 all || bad "64 CQ rings do not fit outside the cgroup"
	rmdir $cg/weft_uverbs_rings || bad "the test cgroup stays"
elif [ "${WEFT_KERNEL:-stock}" = debug ]; then
	# The debug kernel is built without CONFIG_MEMCG: nothing to charge to there.
	echo "uverbs_apps: ring memory charging not checked (the debug kernel has no memory cgroups)"
else
	bad "no memory cgroup controller in the guest"
fi

weft_sm_stop
weft_unload || bad "unload failed"
exit $fail
