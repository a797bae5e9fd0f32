#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The syscall-sequence fuzzer (tests/syzfuzz/README.md) on a test host:
# a configfs fabric (switch, HCAs h0/h1 = weft0/weft1), OpenSM, IPoIB up
# (weft0's interface in the root namespace, weft1's in namespace h1, so
# rdma_cm connections cross the fabric), then weft-syzfuzz for a number of
# seeds (or minutes), each followed by a look at the kernel log; a last
# phase removes and remakes h1 through configfs under the fuzzer; then
# everything is unloaded (a leaked file or object keeps a module: rmmod
# fails) and, standalone, kmemleak scans.
#
# Arguments (WEFT_JOB_ARGS, key=value): seeds=N (how many, default 3),
# first=N (the first seed, default 1), minutes=M (run seeds until M minutes
# have passed instead), ops=N threads=N procs=N (per seed), removal=N (seeds
# in the device-removal phase, default 1), disable=GROUPS (weft-syzfuzz
# --disable), trace=1.  A caller that sources it with SYZ_EMBEDDED=1
# reports the result and scans kmemleak itself.
set -u
syz_fail=0
syz_bad() { echo "syzfuzz: FAIL: $*"; syz_fail=1; }
seeds=3 first=1 minutes=0 ops=400 threads=3 procs=2 removal=1 disable= trace=0
for a in "$@"; do
	case $a in
	seeds=* | first=* | minutes=* | ops=* | threads=* | procs=* | removal=* | disable=* | trace=*)
		declare "${a%%=*}=${a#*=}" ;;
	*) echo "syzfuzz: unknown argument $a"; exit 2 ;;
	esac
done
src=$WEFT_REPO/tests/syzfuzz/weft-syzfuzz.c
bin=$WEFT_REPO/build/syzfuzz/weft-syzfuzz
if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
	# Not built on the host (make fuzz-syscalls builds it): compile it here.
	bin=/tmp/weft-syzfuzz
	gcc -O2 -g -Wall -pthread -o $bin "$src" || { echo "syzfuzz: cannot build $src"; exit 1; }
fi
A_IP=10.83.0.1 B_IP=10.83.0.2

[ "${SYZ_EMBEDDED:-0}" = 1 ] || weft_kmemleak_clear
weft_load weft_hca:hcas=0 || exit 1
weft_star 2 || syz_bad "switch, HCAs and cables"
weft_sm_start weft0 5
weft_wait_active weft0 weft1 || syz_bad "ports not ACTIVE"
A=$(weft_ib_netdev weft0) B=$(weft_ib_netdev weft1)
weft_host_add h1 || syz_bad "netns h1"
if [ -n "$A" ] && [ -n "$B" ]; then
	ip link set "$B" netns h1 || syz_bad "moving $B into h1"
	ip addr add $A_IP/24 dev "$A" && ip link set "$A" up
	weft_on h1 ip addr add $B_IP/24 dev "$B" && weft_on h1 ip link set "$B" up
	weft_on h1 ping -c 1 -W 10 $A_IP >/dev/null || echo "syzfuzz: (no IPoIB ping yet: rdma_cm resolves may fail)"
else
	syz_bad "no IPoIB interfaces"
fi
lids=
for d in weft0 weft1; do
	lids="$lids --lid $(cat /sys/class/infiniband/$d/ports/1/lid)"
done
# uverbsN and rdma_cm are every user's: the last process runs as nobody (--nobody).
common="--nobody --ops $ops --threads $threads --procs $procs --netns /var/run/netns/h1 --addr $A_IP --addr $B_IP $lids --timeout 600"
[ -n "$disable" ] && common="$common --disable $disable"
[ "$trace" = 1 ] && common="$common --trace"
dmesg -c >/dev/null
splat_check() { # SEED
	dmesg -c >/tmp/syzfuzz-dmesg
	if ! "$WEFT_REPO/tests/harness/splat.sh" /tmp/syzfuzz-dmesg; then
		syz_bad "kernel splat during seed $1 (replay: weft-syzfuzz --seed $1 $common)"
		return 1
	fi
}
run_seed() { # SEED [EXTRA...]
	local s=$1 rc
	shift
	echo "syzfuzz: === seed $s"
	# shellcheck disable=SC2086 # options are words
	$bin --seed "$s" $common "$@"
	rc=$?
	[ $rc = 0 ] || syz_bad "weft-syzfuzz --seed $s exited $rc"
	splat_check "$s" || return 1
	return $rc
}

started=$(date +%s)
n=0 s=$first
while :; do
	if [ "$minutes" -gt 0 ]; then
		[ $(( $(date +%s) - started )) -lt $(( minutes * 60 )) ] || break
	else
		[ $n -lt "$seeds" ] || break
	fi
	run_seed $s || break
	n=$((n + 1)) s=$((s + 1))
done
echo "syzfuzz: $n seeds ($first..$((s - 1))) in $(( $(date +%s) - started )) s"

# Device removal: h1 (weft1) removed and made again while the fuzzer runs.
if [ $syz_fail = 0 ]; then
	for i in $(seq 1 "$removal"); do
		run_seed $((s + i - 1)) --remove h1:weft1:c1 || break
	done
	weft_wait_active weft1 || echo "syzfuzz: weft1 not ACTIVE again after the removal phase"
fi

weft_sm_stop
ip netns del h1 2>/dev/null
sleep 1
# Files the fuzzer left are closed with its processes; nothing may keep a module.
weft_unload || syz_bad "unload after the fuzzer (something still holds a module)"
lsmod | grep weft_ && syz_bad "Weft modules left loaded"
splat_check "(teardown after $((s - 1)))"
if [ "${SYZ_EMBEDDED:-0}" != 1 ]; then
	weft_kmemleak_check || syz_bad "kmemleak"
	if [ $syz_fail = 0 ]; then weft_result debug/syzfuzz pass; else weft_result debug/syzfuzz fail; fi
	echo "syzfuzz: $(( $(date +%s) - started )) s of fuzzing"
fi
exit $syz_fail
