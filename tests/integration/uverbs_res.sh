#!/bin/bash
# Integration: iproute2's `rdma res` on Weft (resource tracking over RDMA
# netlink, userspace/uverbs/nldev_res.cpp), with Debian's iproute2 and
# rdma-core 44 on a subnet OpenSM brought up:
#   - `rdma res show`: the per-device counts, before, while an
#     ibv_rc_pingpong server holds a context, PD, MR, CQ and QP on weft0
#     (exactly one more of each there, none on weft1), and after it is
#     killed with SIGKILL (back to the counts before);
#   - `rdma res show qp`: the process's RC QP (its LQPN as ibv_rc_pingpong
#     printed it) with its pid and comm, the kernel's QP0/QP1 (weft_mad)
#     and IPoIB's UD QP (weft_ipoib) by KERN_NAME; one QP by its LQPN (the
#     doit form); no pid for a process in another PID namespace;
#   - `rdma res show cq|mr|pd`: the process's objects with its pid, the
#     MR's length, keys for root only (CAP_NET_ADMIN, as in-tree).
set -u
fail=0
bad() { echo "uverbs_res: FAIL: $*"; fail=1; }

# count DEV KIND: KIND's count in DEV's `rdma res show` line.
count() {
	rdma res show 2>/dev/null |
		awk -v d="$1:" -v k="$2" '$2 == d { for (i = 3; i < NF; i++) if ($i == k) print $(i + 1) }'
}
counts() { # DEV: "pd N cq N qp N mr N ctx N"
	local k s=
	for k in pd cq qp mr ctx; do s+="$k $(count "$1" $k) "; done
	echo "${s% }"
}
# wait_counts DEV WANT: until DEV's counts read WANT (60 s).
wait_counts() {
	local i
	for i in $(seq 1 120); do
		[ "$(counts "$1")" = "$2" ] && return 0
		sleep 0.5
	done
	return 1
}

weft_kmemleak_clear
weft_load weft_hca:autoconf=0 || exit 1
weft_sm_start weft0
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM"
ib0=$(weft_ib_netdev weft0)
[ -n "$ib0" ] && ip link set "$ib0" up
sleep 2

out=$(rdma res show 2>&1) || bad "rdma res show failed: $out"
echo "rdma res show (before):"$'\n'"$out"
before0=$(counts weft0) before1=$(counts weft1)
echo "before: weft0: $before0; weft1: $before1"
for d in weft0 weft1; do
	grep -qE "^[0-9]+: $d: pd [0-9]+ cq [0-9]+ qp [0-9]+ cm_id 0 mr [0-9]+ ctx 0 srq [0-9]+" <<<"$out" ||
		bad "rdma res show: no summary line for $d"
done
# The MAD layer's QP0 and QP1 on every port; IPoIB's UD QP once its interface is up.
out=$(rdma res show qp 2>&1) || bad "rdma res show qp failed: $out"
echo "rdma res show qp (kernel):"$'\n'"$out"
for d in weft0 weft1; do
	grep -E "^link $d/1 lqpn 0 " <<<"$out" | grep -q "type SMI.*comm \[weft_mad\]" || bad "no QP0 of $d"
	grep -E "^link $d/1 lqpn 1 " <<<"$out" | grep -q "type GSI.*comm \[weft_mad\]" || bad "no QP1 of $d"
done
grep -E "^link weft0/1 lqpn [0-9]+ " <<<"$out" | grep -q "type UD.*comm \[weft_ipoib\]" ||
	bad "no IPoIB UD QP on weft0/1"

# A process holding objects: an RC ping-pong server waiting for its client.
stdbuf -oL ibv_rc_pingpong -d weft0 -i 1 >/tmp/res-pp.out 2>&1 &
pp=$!
qpn=
for _ in $(seq 1 600); do
	qpn=$(sed -n 's/.*local address:.* QPN 0x\([0-9a-f]*\),.*/\1/p' /tmp/res-pp.out)
	[ -n "$qpn" ] && break
	sleep 0.1
done
[ -n "$qpn" ] && qpn=$((16#$qpn)) || bad "ibv_rc_pingpong printed no QPN: $(cat /tmp/res-pp.out)"
echo "ibv_rc_pingpong server pid $pp, QPN $qpn"
read -r pd0 cq0 qp0 mr0 ctx0 <<<"$(awk '{ print $2, $4, $6, $8, $10 }' <<<"$before0")"
# One of each (the MR over the QP's send ring is driver-internal: DRIVER_DETAILS only, uverbs_res_nl.py).
want="pd $((pd0 + 1)) cq $((cq0 + 1)) qp $((qp0 + 1)) mr $((mr0 + 1)) ctx $((ctx0 + 1))"
wait_counts weft0 "$want" || bad "weft0 while the process holds objects: $(counts weft0), want $want"
[ "$(counts weft1)" = "$before1" ] || bad "weft1 changed: $(counts weft1), was $before1"
echo "rdma res show (process holding objects):"$'\n'"$(rdma res show 2>&1)"

out=$(rdma res show qp 2>&1)
echo "rdma res show qp:"$'\n'"$out"
line=$(grep -E "^link weft0/1 lqpn $qpn " <<<"$out")
for want in "type RC" "state INIT" "pid $pp " "comm ibv_rc_pingpong" "pdn "; do
	grep -qF "$want" <<<"$line " || bad "rdma res show qp: '$want' missing from '$line'"
done
out=$(rdma res show qp link weft0/1 lqpn "$qpn" 2>&1) || bad "rdma res show qp lqpn $qpn: $out"
echo "rdma res show qp link weft0/1 lqpn $qpn: $out"
grep -q "lqpn $qpn .*pid $pp " <<<"$out " || bad "one QP by LQPN: $out"
out=$(rdma res show qp link weft0/1 lqpn 99999 2>&1)
grep -q "lqpn 99999" <<<"$out" && bad "a QP that is not there: $out"
# The doits themselves, and their errnos.
dev0=$(rdma dev | sed -n 's/^\([0-9]*\): weft0: .*/\1/p')
python3 "$WEFT_REPO/tests/integration/uverbs_res_nl.py" "$dev0" "$qpn" "$pp" || bad "RES doits"

for kind in cq mr pd; do
	out=$(rdma res show $kind 2>&1) || bad "rdma res show $kind failed: $out"
	echo "rdma res show $kind:"$'\n'"$out"
	grep -E "^dev weft0 " <<<"$out" | grep -q "pid $pp comm ibv_rc_pingpong" || bad "no $kind of pid $pp"
	grep -E "^dev weft1 " <<<"$out" | grep -q "pid $pp " && bad "a $kind of pid $pp on weft1"
done
out=$(rdma res show mr 2>&1)
line=$(grep -m1 -E "^dev weft0 .*pid $pp " <<<"$out")
for want in "rkey 0x" "lkey 0x" "mrlen 4096 "; do
	grep -qF "$want" <<<"$line" || bad "the process's MR: '$want' missing from '$line'"
done
n=$(grep -cE "^dev weft0 .*pid $pp " <<<"$out")
[ "$n" = 1 ] || bad "$n MRs of pid $pp listed, want 1"
mrn=$(grep -m1 -E "^dev weft0 .*pid $pp " <<<"$out" | sed -n 's/.* mrn \([0-9]*\) .*/\1/p')
out=$(rdma res show mr dev weft0 mrn "$mrn" 2>&1) || bad "rdma res show mr mrn $mrn: $out"
grep -q "mrn $mrn .*pid $pp " <<<"$out" || bad "one MR by MRN: $out"
grep -E "^dev weft0 " <<<"$(rdma res show cq)" | grep "pid $pp " | grep -q "cqe [1-9]" || bad "CQ without CQE"
grep -E "^dev weft0 " <<<"$(rdma res show pd)" | grep "comm \[weft_ipoib\]" | grep -q "local_dma_lkey 0x" ||
	bad "IPoIB's PD: no local_dma_lkey"

# Unprivileged: no keys (in-tree shows them to CAP_NET_ADMIN only).
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups rdma res show mr 2>&1) ||
	bad "unprivileged rdma res show mr failed: $out"
echo "rdma res show mr (uid 65534):"$'\n'"$out"
grep -q "pid $pp " <<<"$out" || bad "unprivileged: the process's MR not listed"
grep -q "lkey" <<<"$out" && bad "unprivileged: keys shown"
# Another PID namespace cannot see the process: no pid (as in-tree).
out=$(unshare --pid --fork --mount-proc rdma res show qp 2>&1) || bad "rdma res in a PID namespace: $out"
line=$(grep -E "^link weft0/1 lqpn $qpn " <<<"$out")
echo "rdma res show qp (another PID namespace): $line"
[ -n "$line" ] || bad "another PID namespace: QP $qpn not listed"
grep -q " pid " <<<"$line" && bad "another PID namespace sees a pid: $line"

# SIGKILL: the file closes, everything is destroyed, counts go back.
kill -9 "$pp"
wait "$pp" 2>/dev/null
wait_counts weft0 "$before0" || bad "weft0 after kill -9: $(counts weft0), want $before0"
[ "$(counts weft1)" = "$before1" ] || bad "weft1 after kill -9: $(counts weft1), was $before1"
out=$(rdma res show qp 2>&1)
grep -q "lqpn $qpn .*pid" <<<"$out" && bad "QP $qpn still listed after kill -9"
echo "rdma res show (after kill -9):"$'\n'"$(rdma res show 2>&1)"

weft_sm_stop
weft_fabric_clear
weft_unload || fail=1
weft_kmemleak_check || fail=1
weft_check_taint || fail=1
exit $fail
