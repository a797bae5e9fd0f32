#!/bin/bash
# Integration: iSER error recovery under verified I/O (issue 26), Debian's
# open-iscsi (iscsid) logged in through weft_iser to the LIO target on
# weft_isert (hosts: guest-lib's weft_iser_hosts).  Each step runs fio
# --verify=crc32c (rate-limited, so the disruption lands while it writes)
# and disrupts the path once writes reach the disk:
#   1. a cable flap: weft0's cable down until the session fails (NOP-Out
#      every 2 s, 2 s timeout), then up: iscsid relogins, I/O resumes,
#      verify passes
#   2. OpenSM restarted: I/O resumes, verify passes
#   3. the target restarted: the portal's iSER off, the TPG disabled (LIO
#      closes the session), weft_isert unloaded and loaded again, iSER
#      and the TPG back: iscsid relogins (the new weft_isert accepted a
#      connection), I/O resumes, verify passes, the ramdisk kept its data
#   4. the target's HCA removed under I/O (rmdir in configfs; the session's
#      recovery_tmo shortened to 10 s): the removal returns, the session
#      fails, fio gets I/O errors in bounded time (no hang), logout clean
# The harness's splat check covers warnings and hung tasks.
set -u
fail=0
bad() { echo "iser_recovery: FAIL: $*"; fail=1; }
rcm=/sys/module/weft_rdma_cm/parameters
ist=/sys/module/weft_isert/parameters
cfs=/sys/kernel/config/weft
iqn=iqn.2026-12.org.weft:iser-recovery
tpg=/sys/kernel/config/target/iscsi/$iqn/tpgt_1
np=$tpg/np/10.77.0.2:3260

weft_iser_hosts || exit 1
ids0=$(cat $rcm/ids)
weft_iser_target $iqn || bad "target"
node() { timeout 60 iscsiadm -m node -T $iqn -p 10.77.0.2 -I iser "$@"; }
timeout 60 iscsiadm -m discovery -t st -p 10.77.0.2 -I iser >/dev/null || bad "discovery"
# Path loss found by the NOP-Out ping within 4 s (Debian's iscsid.conf: 5 + 5 s).
node -o update -n node.conn[0].timeo.noop_out_interval -v 2 &&
	node -o update -n node.conn[0].timeo.noop_out_timeout -v 2 || bad "node update"
node --login >/dev/null || bad "login"
weft_until 30 'weft_iser_disks | grep -q .' || bad "no disk"
dev=/dev/$(weft_iser_disks | head -1)
sess=$(ls -d /sys/class/iscsi_session/session* | head -1)
writes() { awk '{print $5}' "/sys/block/${dev#/dev/}/stat"; }

# vfio NAME: verified random writes in the background (pid in fpid), at
# most 250 IOPS: 512 writes then 512 reads take at least 4 s, so a
# disruption made once the first writes completed lands inside.
vfio() {
	local w0
	w0=$(writes)
	fio --name="$1" --filename="$dev" --direct=1 --ioengine=libaio --rw=randwrite --bs=4k --size=2M \
		--iodepth=8 --rate_iops=250 --verify=crc32c --verify_fatal=1 --do_verify=1 \
		--output=/tmp/fio-"$1".out >/dev/null 2>&1 &
	fpid=$!
	weft_until 60 '[ "$(writes)" -gt $((w0 + 20)) ]' || bad "$1: fio's writes did not start"
}
# vwait NAME: fio finished and verified.
vwait() {
	wait "$fpid" || bad "$1: fio: $(tail -5 /tmp/fio-"$1".out)"
	grep -q "err= 0" /tmp/fio-"$1".out || bad "$1: fio errors: $(grep err= /tmp/fio-"$1".out)"
	weft_until 60 'iscsiadm -m session -P 1 | grep -q "iSCSI Session State: LOGGED_IN"' ||
		bad "$1: session not logged in: $(iscsiadm -m session -P 1)"
}

echo "== 1 cable flap"
acc0=$(cat $ist/accepted)
vfio flap
echo 0 >$cfs/cables/c0/up
weft_until 60 '[ "$(cat $sess/state)" != LOGGED_IN ]' || bad "the session did not fail with the cable down"
echo "note: session failed at $(date +%s.%N)"
echo 1 >$cfs/cables/c0/up
weft_wait_active weft0 || bad "weft0 not ACTIVE after the flap"
echo "note: weft0 active at $(date +%s.%N)"
weft_until 60 '[ "$(cat $sess/state)" = LOGGED_IN ]'
echo "note: logged in again at $(date +%s.%N)"
vwait flap
[ "$(cat $ist/accepted)" -gt "$acc0" ] || bad "no relogin after the flap"

echo "== 2 OpenSM restart"
vfio sm
weft_sm_stop
weft_sm_start weft0 2
weft_wait_active weft0 weft1 || bad "ports not ACTIVE after the OpenSM restart"
vwait sm

echo "== 3 target restart"
vfio target
# No listener first (relogins meet a REJ and are retried), then LIO drops the session.
echo 0 >$np/iser || bad "iser 0"
echo 0 >$tpg/enable || bad "TPG disable"
weft_until 60 '[ "$(cat $ist/conns)" = 0 ]' || bad "target connections left: $(cat $ist/conns)"
echo 1 >$tpg/enable || bad "TPG enable"
rmmod weft_isert || bad "rmmod weft_isert with the portal's iSER off and no session"
weft_insmod weft_isert || bad "insmod weft_isert again"
nsenter --net=/run/netns/h1 sh -c "echo 1 >$np/iser" || bad "iser 1 again"
vwait target
[ "$(cat $ist/accepted)" -ge 1 ] || bad "no relogin reached the new weft_isert"

echo "== 4 target HCA removed under I/O"
echo 10 >"$sess/recovery_tmo" || bad "recovery_tmo"
fio --name=hca --filename="$dev" --direct=1 --ioengine=libaio --rw=randwrite --bs=4k --size=2M \
	--iodepth=8 --rate_iops=250 --verify=crc32c --do_verify=1 --loops=100 \
	--output=/tmp/fio-hca.out >/dev/null 2>&1 &
fpid=$!
w0=$(writes)
weft_until 60 '[ "$(writes)" -gt $((w0 + 20)) ]' || bad "hca: fio's writes did not start"
timeout 120 rmdir $cfs/hcas/h1 || bad "rmdir hcas/h1 under I/O failed or hung"
echo "note: HCA removed at $(date +%s)"
# NOP-Out timeout (5 + 5 s) or the QP's retries, then recovery_tmo (10 s): bounded.
weft_until 120 '! kill -0 $fpid 2>/dev/null' || bad "fio still running 120 s after the target's HCA went"
echo "note: fio ended at $(date +%s)"
wait "$fpid" && bad "fio succeeded with the target's HCA gone"
grep -qi "error" /tmp/fio-hca.out || bad "fio reported no I/O error: $(tail -5 /tmp/fio-hca.out)"
kill -9 "$fpid" 2>/dev/null
node --logout >/dev/null || bad "logout after the HCA went"
weft_until 30 '[ "$(cat $rcm/ids)" -le "$ids0" ]' || bad "RDMA CM ids $(cat $rcm/ids), want at most $ids0"

weft_iser_down || bad "teardown"
weft_check_taint || fail=1
exit $fail
