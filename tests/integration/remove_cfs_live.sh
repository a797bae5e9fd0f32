#!/bin/bash
# Integration: one HCA removed from a running fabric through configfs
# (rmdir /sys/kernel/config/weft/hcas/h1) while it carries everything, then
# made again under the same name (issue 21, "rmdir of an HCA in configfs").
# A switch with three HCAs under OpenSM on weft0 (h0..h2 are the network
# namespaces of weft0..weft2's IPoIB interfaces).  Running together, all
# aimed at weft1:
#   - IPoIB connected mode: iperf3 from h2 to h1;
#   - IPoIB datagram mode: a ping flood from h0 to h1;
#   - the verbs client weft_selftest_ulp: checked RC traffic weft0<->weft1;
#   - the CM ULPs: weft_selftest_cm_server on weft1 with 8 connections held
#     by weft_selftest_cm_client hold=8 on weft2;
#   - umad: OpenSM's sweeps and perfquery polling weft1's port.
# The rest of the fabric must not notice: h0 <-> h2 keep pinging through
# the removal.  weft1's consumers are told and let go: its netdev goes,
# the verbs client stops with 0 errors, the CM server counts its 8
# connections lost and stops listening, no process is stuck.  Then h1 is
# made again: the device comes back under its name, OpenSM brings it
# Active, its netdev, the verbs client's traffic and the CM server come
# back with it, and the held client connections end as IBA says (their
# peer is gone: DREQ unanswered, time-wait) when the client unloads.
set -u
fail=0
bad() { echo "remove_cfs_live: FAIL: $*"; fail=1; }
cfs=/sys/kernel/config/weft
ulp=/sys/module/weft_selftest_ulp/parameters
srv=/sys/module/weft_selftest_cm_server/parameters
cli=/sys/module/weft_selftest_cm_client/parameters
cm_ids=/sys/module/weft_cm/parameters/ids
pids=()
# host I: weft I's IPoIB interface into hI as 10.82.0.(I+1), up.
host() {
	local n
	n=$(weft_ib_netdev weft$1)
	[ -n "$n" ] || { bad "no IPoIB interface for weft$1"; return 1; }
	ip link set "$n" netns h$1 || { bad "moving $n to h$1"; return 1; }
	weft_on h$1 ip addr add 10.82.0.$(($1 + 1))/24 dev "$n"
	weft_on h$1 ip link set "$n" up
	IF[$1]=$n
}
trap 'weft_live_cleanup "${pids[@]}"' EXIT

declare -a IF
for i in 0 1 2; do weft_host_add h$i || exit 1; done
weft_load "weft_hca:hcas=0" || exit 1
weft_star 3 || { bad "building the star"; exit 1; }
weft_sm_start weft0 5
weft_wait_active weft0 weft1 weft2 || { bad "ports not ACTIVE under OpenSM"; exit 1; }
for i in 0 1 2; do host $i || exit 1; done
for i in 1 2; do
	weft_on h$i sh -c "echo connected >/sys/class/net/${IF[$i]}/mode" || bad "connected mode on h$i"
done
weft_reach h2 10.82.0.2 || bad "no ping h2 -> h1 (connected)"
weft_reach h0 10.82.0.2 || bad "no ping h0 -> h1 (datagram)"
weft_reach h0 10.82.0.3 || bad "no ping h0 -> h2"
dmesg -C
weft_insmod weft_selftest_ulp || exit 1
weft_ulp_wait 20 || bad "the verbs client's traffic stalled"
weft_insmod weft_selftest_cm_server dev=weft1 || { bad "CM server did not load"; exit 1; }
weft_insmod weft_selftest_cm_client dev=weft2 dest=weft1 hold=8 || { bad "CM client hold=8 did not load"; exit 1; }
[ "$(cat $srv/active)" = 8 ] || bad "CM server has $(cat $srv/active) connections, not 8"

weft_iperf_server h1 5201 || bad "no iperf3 server in h1"
weft_on h2 iperf3 -c 10.82.0.2 -p 5201 -t 600 --forceflush >/tmp/remove_cfs.iperf 2>&1 &
iperf_pid=$!
pids+=($!)
weft_on h0 ping -f -s 1000 10.82.0.2 >/tmp/remove_cfs.flood 2>&1 &
flood_pid=$!
pids+=($!)
(while :; do perfquery -C weft1 -P 1 >/dev/null 2>&1; sleep 0.2; done) &
pids+=($!)
poll_pid=$!
sleep 3
weft_wait_line /tmp/remove_cfs.iperf ' sec ' || bad "iperf3 did not start: $(head -3 /tmp/remove_cfs.iperf)"
n=$(cat $ulp/messages)
weft_ulp_wait $((n + 20)) || bad "the verbs client's traffic stalled"
# The bystanders' pings run through the removal.
weft_on h0 ping -i 0.2 -c 100000 10.82.0.3 >/tmp/remove_cfs.bystander 2>&1 &
bystander_pid=$!
pids+=($!)
sleep 2

echo "remove_cfs_live: rmdir hcas/h1 under traffic"
timeout 300 rmdir $cfs/hcas/h1 || bad "rmdir hcas/h1 under traffic failed or hung"
[ ! -e /sys/class/infiniband/weft1 ] || bad "weft1 still in /sys/class/infiniband"
weft_on h1 test -e "/sys/class/net/${IF[1]}" && bad "${IF[1]} still in h1"
[ "$(cat $cfs/cables/c1/up)" = 0 ] || bad "cable c1 still up after its HCA went"
dmesg | grep -q "traffic stopped on removal.* 0 errors" ||
	bad "the verbs client did not stop cleanly: $(dmesg | grep selftest_ulp | tail -2)"
dmesg | grep -q "still open at removal" && bad "a context was left open at removal"
weft_wait_for $srv/lost 8 || bad "CM server lost $(cat $srv/lost) connections to the removal, not 8"
[ "$(cat $srv/active)" = 0 ] || bad "CM server still has $(cat $srv/active) connections"
[ "$(cat $srv/listening)" = 0 ] || bad "CM server still listening on a removed device"
for p in "$iperf_pid" "$flood_pid" "$poll_pid"; do
	kill "$p" 2>/dev/null
	weft_stopped "$p" 30 || bad "process $p ($(cat /proc/$p/comm 2>/dev/null)) stuck after weft1 went"
done
weft_on h1 pkill -x iperf3 2>/dev/null
# The rest of the fabric carried on: h0 -> h2 answered after the removal.
before=$(grep -c 'bytes from' /tmp/remove_cfs.bystander)
for _ in $(seq 100); do
	[ "$(grep -c 'bytes from' /tmp/remove_cfs.bystander)" -ge $((before + 5)) ] && break
	sleep 0.2
done
[ "$(grep -c 'bytes from' /tmp/remove_cfs.bystander)" -ge $((before + 5)) ] ||
	bad "h0 -> h2 stopped answering when weft1 went"
kill "$bystander_pid" 2>/dev/null

echo "remove_cfs_live: hcas/h1 made again"
n=$(cat $ulp/messages)
mkdir $cfs/hcas/h1 && echo 1 >$cfs/hcas/h1/enable || bad "mkdir/enable hcas/h1 again"
dev=$(cat $cfs/hcas/h1/device)
[ "$dev" = weft1 ] || bad "the new HCA is '$dev', not weft1"
# The cable named the old node's port: plugged into the new one again.
echo weft1:1 >$cfs/cables/c1/a && echo 1 >$cfs/cables/c1/up || bad "cable c1 to the new weft1, up"
weft_wait_active weft1 || weft_wait_active weft1 || bad "weft1 not ACTIVE again under OpenSM"
host 1 || exit 1
weft_on h1 sh -c "echo connected >/sys/class/net/${IF[1]}/mode" || bad "connected mode on h1 again"
weft_reach h2 10.82.0.2 || bad "no ping h2 -> h1 after weft1 came back"
weft_reach h0 10.82.0.2 || bad "no ping h0 -> h1 after weft1 came back"
weft_ulp_wait $((n + 20)) || bad "the verbs client's traffic stalled"
weft_wait_for $srv/listening 1 || bad "CM server not listening on the new weft1"
# The held connections' peer is gone: the client's DREQs go unanswered and
# its Ids end through time-wait; nothing is left.
echo "remove_cfs_live: CM client held $(cat $cli/held), peer disconnects $(cat $cli/peer_disconnects);" \
	"server lost $(cat $srv/lost); CM ids $(cat $cm_ids)"
timeout 120 rmmod weft_selftest_cm_client || bad "the CM client (hold=8) did not unload"
weft_insmod weft_selftest_cm_client dev=weft2 dest=weft1 cycles=10 ||
	bad "a fresh CM client run (cycles=10) against the new weft1 failed"
[ "$(cat $cli/cycles_done 2>/dev/null)" = 10 ] || bad "CM cycles done: $(cat $cli/cycles_done 2>/dev/null)"
rmmod weft_selftest_cm_client || bad "the fresh CM client did not unload"
rmmod weft_selftest_cm_server || bad "the CM server did not unload"
rmmod weft_selftest_ulp || bad "rmmod weft_selftest_ulp"
# IPoIB's connected-mode connections hold CM Ids too: it goes last.
echo "remove_cfs_live: $(date +%T) teardown: OpenSM, namespaces, weft_ipoib"
weft_sm_stop
for i in 0 1 2; do ip netns del h$i; done
timeout 120 rmmod weft_ipoib || bad "weft_ipoib did not unload"
weft_wait_for $cm_ids 0 90 || bad "weft_cm holds $(cat $cm_ids) ids after its ULPs went"
echo "remove_cfs_live: $(date +%T) teardown: the fabric"
weft_fabric_clear
echo "remove_cfs_live: $(date +%T) teardown: the modules"
weft_unload || fail=1
weft_check_taint || fail=1
exit $fail
