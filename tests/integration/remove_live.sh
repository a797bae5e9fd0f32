#!/bin/bash
# Integration: the HCA driver removed while everything runs at once, then
# brought back (issue 21, "device removal under live traffic").  Four HCAs
# under OpenSM; running together:
#   - IPoIB connected mode, iperf3 between h0 (weft0) and h1 (weft1);
#   - IPoIB datagram mode, a ping flood between h2 (weft2) and h3 (weft3);
#   - the verbs client weft_selftest_ulp: checked RC traffic weft0<->weft1;
#   - the CM ULPs (verbs clients too): weft_selftest_cm_server on weft1
#     with 8 connections held by weft_selftest_cm_client hold=8 on weft0;
#   - umad readers: OpenSM itself, and perfquery/saquery polling weft1.
# Then `rmmod weft_hca`.  Every consumer must be told and let go: the
# module goes within the bound, the IPoIB netdevs vanish from their
# namespaces, the verbs client reports its traffic stopped with 0 errors and
# no context is left open, the perfquery/saquery calls fail instead of
# blocking, iperf3 and ping (whose sockets outlive their device, as with any
# netdev) are not stuck in the kernel: they exit when killed; the CM ULPs
# count their 8 connections lost (or, on the server, ended by the client's
# DREQs) and no CM Id is left.  Then the same devices come back, the
# netdevs and the client's traffic with them, and IPoIB carries pings in
# both modes again; the CM server listens again, a fresh
# weft_selftest_cm_client runs 20 cycles against it, and both CM ULPs
# unload.  Finally: weft_umad is refused while OpenSM holds it
# open and goes once OpenSM stops; weft_ipoib is unloaded under iperf3.
# The splat scanner (and kmemleak on the debug kernel) judge the rest.
set -u
fail=0
bad() { echo "remove_live: FAIL: $*"; fail=1; }
param() { cat /sys/module/weft_selftest_ulp/parameters/$1; }
srv=/sys/module/weft_selftest_cm_server/parameters
cli=/sys/module/weft_selftest_cm_client/parameters
cm_ids=/sys/module/weft_cm/parameters/ids
pids=()
rm -f /tmp/remove_live.polls

# up: the four HCAs ACTIVE under OpenSM, their interfaces in h0..h3 with
# 10.81.0.(i+1), h0/h1 in connected mode.
up() {
	local i n
	weft_sm_start weft0 5
	weft_wait_active weft0 weft1 weft2 weft3 || { bad "ports not ACTIVE under OpenSM"; return 1; }
	for i in 0 1 2 3; do
		n=$(weft_ib_netdev weft$i)
		[ -n "$n" ] || { bad "no IPoIB interface for weft$i"; return 1; }
		ip link set "$n" netns h$i || { bad "moving $n to h$i"; return 1; }
		weft_on h$i ip addr add 10.81.0.$((i + 1))/24 dev "$n"
		weft_on h$i ip link set "$n" up
		IF[$i]=$n
	done
	for i in 0 1; do
		weft_on h$i sh -c "echo connected >/sys/class/net/${IF[$i]}/mode" || bad "connected mode on h$i"
	done
	weft_reach h0 10.81.0.2 || bad "no ping h0 -> h1 (connected)"
	weft_reach h2 10.81.0.4 || bad "no ping h2 -> h3 (datagram)"
}
trap 'weft_live_cleanup "${pids[@]}"' EXIT

declare -a IF
for i in 0 1 2 3; do weft_host_add h$i || exit 1; done
weft_load "weft_hca:autoconf=0 hcas=4" || exit 1
up || exit 1
dmesg -C
weft_insmod weft_selftest_ulp || exit 1
weft_ulp_wait 20 || bad "the verbs client's traffic stalled"
weft_insmod weft_selftest_cm_server || { bad "CM server did not load"; exit 1; }
weft_insmod weft_selftest_cm_client hold=8 || { bad "CM client hold=8 did not load"; exit 1; }
[ "$(cat $srv/active)" = 8 ] || bad "CM server has $(cat $srv/active) connections, not 8"
cm_disc=$(cat $srv/disconnected)

# Everything at once.
weft_iperf_server h1 5201 || bad "no iperf3 server in h1"
weft_on h0 iperf3 -c 10.81.0.2 -p 5201 -t 600 --forceflush >/tmp/remove_live.iperf 2>&1 &
pids+=($!)
iperf_pid=$!
weft_on h2 ping -f -s 1000 10.81.0.4 >/tmp/remove_live.ping 2>&1 &
pids+=($!)
ping_pid=$!
(while :; do
	if perfquery -C weft1 -P 1 >/dev/null 2>&1; then echo ok; else echo failed; fi >>/tmp/remove_live.polls
	saquery -C weft1 -P 1 >/dev/null 2>&1
done) &
pids+=($!)
poll_pid=$!
sleep 3
weft_wait_line /tmp/remove_live.iperf ' sec ' || bad "iperf3 did not start: $(head -3 /tmp/remove_live.iperf)"
n=$(param messages)
weft_ulp_wait $((n + 20)) || bad "the verbs client's traffic stalled"

echo "remove_live: rmmod weft_hca under traffic"
timeout 300 rmmod weft_hca || bad "rmmod weft_hca under traffic failed or hung"
[ -z "$(ls /sys/class/infiniband 2>/dev/null)" ] || bad "devices left: $(ls /sys/class/infiniband)"
for i in 0 1 2 3; do
	weft_on h$i test -e "/sys/class/net/${IF[$i]}" && bad "${IF[$i]} still in h$i"
done
dmesg | grep -q "traffic stopped on removal.* 0 errors" ||
	bad "the verbs client did not stop cleanly: $(dmesg | grep selftest_ulp | tail -2)"
dmesg | grep -q "still open at removal" && bad "a context was left open at removal"
# Polls after the removal fail at once (no umad device), they do not block.
polled=$(wc -l </tmp/remove_live.polls)
for _ in $(seq 300); do
	[ "$(wc -l </tmp/remove_live.polls)" -gt $((polled + 2)) ] && break
	sleep 0.1
done
tail -1 /tmp/remove_live.polls | grep -qx failed || bad "perfquery did not fail once weft1 was gone"
[ "$(wc -l </tmp/remove_live.polls)" -gt $((polled + 2)) ] || bad "the perfquery/saquery loop is stuck"
for p in "$iperf_pid" "$ping_pid" "$poll_pid"; do
	kill "$p" 2>/dev/null
	weft_stopped "$p" 30 || bad "process $p ($(cat /proc/$p/comm 2>/dev/null)) stuck after its device went"
done
# The CM ULPs let go in their remove(): the client's 8 held connections
# count as lost; the server's either as lost (weft1 goes before weft0) or
# as ended by the client's DREQs; nothing stays open, no Id is left.
echo "remove_live: CM client lost $(cat $cli/lost), peer disconnects $(cat $cli/peer_disconnects);" \
	"server lost $(cat $srv/lost), disconnected $(( $(cat $srv/disconnected) - cm_disc )), active $(cat $srv/active)," \
	"listening $(cat $srv/listening); CM ids $(cat $cm_ids)"
[ "$(cat $cli/lost)" = 8 ] || bad "CM client lost $(cat $cli/lost) connections to the removal, not 8"
[ $(( $(cat $srv/lost) + $(cat $srv/disconnected) - cm_disc )) = 8 ] ||
	bad "CM server: $(cat $srv/lost) lost + $(( $(cat $srv/disconnected) - cm_disc )) disconnected, not 8"
[ "$(cat $srv/active)" = 0 ] || bad "CM server still has $(cat $srv/active) connections"
[ "$(cat $srv/listening)" = 0 ] || bad "CM server still listening on a removed device"
weft_wait_for $cm_ids 0 || bad "weft_cm holds $(cat $cm_ids) ids with no device left"
weft_sm_stop
weft_on h1 pkill -x iperf3 2>/dev/null

echo "remove_live: the devices come back"
n=$(param messages)
weft_insmod weft_hca autoconf=0 hcas=4 || { bad "weft_hca reload failed"; exit 1; }
up || bad "the fabric did not come back"
weft_ulp_wait $((n + 20)) || bad "the verbs client's traffic stalled"
weft_reach h0 10.81.0.2 || bad "no ping h0 -> h1 after the reload"
# The CM server listens again; the old client unloads; a fresh one runs against the server.
weft_wait_for $srv/listening 1 || bad "CM server not listening after the reload"
dmesg | grep -q "weft_selftest_cm_client.*weft0 is back" || bad "CM client did not see weft0 come back"
rmmod weft_selftest_cm_client || bad "the CM client (hold=8) did not unload after the reload"
weft_insmod weft_selftest_cm_client cycles=20 || bad "a fresh CM client run (cycles=20) failed after the reload"
[ "$(cat $cli/cycles_done 2>/dev/null)" = 20 ] || bad "CM cycles done after the reload: $(cat $cli/cycles_done 2>/dev/null)"
rmmod weft_selftest_cm_client || bad "the fresh CM client did not unload"
rmmod weft_selftest_cm_server || bad "the CM server did not unload after the reload"

# A ULP under traffic: weft_umad is refused while OpenSM has it open.
if rmmod weft_umad 2>/dev/null; then
	bad "weft_umad unloaded while OpenSM held it"
else
	echo "remove_live: rmmod weft_umad refused while OpenSM runs (in use)"
fi
weft_sm_stop
timeout 60 rmmod weft_umad || bad "weft_umad did not unload after OpenSM stopped"
weft_iperf_server h1 5202 || bad "no iperf3 server in h1"
weft_on h0 iperf3 -c 10.81.0.2 -p 5202 -t 600 --forceflush >/tmp/remove_live.iperf2 2>&1 &
iperf_pid=$!
pids+=($!)
sleep 3
weft_wait_line /tmp/remove_live.iperf2 ' sec ' || bad "the second iperf3 did not start"
timeout 300 rmmod weft_ipoib || bad "rmmod weft_ipoib under iperf3 failed or hung"
kill "$iperf_pid" 2>/dev/null
weft_stopped "$iperf_pid" 30 || bad "iperf3 stuck after weft_ipoib went"
weft_on h1 pkill -x iperf3 2>/dev/null
rmmod weft_selftest_ulp || bad "rmmod weft_selftest_ulp"
# Time-wait (at most 30 s) over, no CM Id is left by the ULPs that went.
weft_wait_for $cm_ids 0 60 || bad "weft_cm holds $(cat $cm_ids) ids after its ULPs went"
for i in 0 1 2 3; do ip netns del h$i; done
weft_unload || fail=1
weft_check_taint || fail=1
exit $fail
