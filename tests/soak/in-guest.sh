#!/bin/bash
# Soak job (tests/soak/run.sh through vm-run.sh; job argument: minutes).
# A switch and four HCAs on configfs cables, OpenSM on weft0, and for the
# whole time, at once:
#   - RC: weft_selftest_ulp's checked exchanges weft0<->weft1, over cable c1
#     whose knobs drop, duplicate, reorder and corrupt packets;
#   - IPoIB: iperf3 runs in connected mode h0 -> h1 (weft0, weft1) and in
#     datagram mode h2 -> h3 (weft2, weft3), one after the other;
#   - CM: weft_selftest_cm_client connect/echo/disconnect cycles against
#     weft_selftest_cm_server on weft1, loaded and unloaded in a loop;
#   - management: perfquery and saquery polling weft2;
# while, in turn: cable c3 flaps (down 1-3 s), OpenSM restarts, the RC ULP
# reloads.  Ends with the counters and one verdict line:
#   SOAK-VERDICT pass|fail <minutes> min: <counters>
set -u
minutes=${1:-10}
cfs=/sys/kernel/config/weft
ulp=/sys/module/weft_selftest_ulp/parameters
cli=/sys/module/weft_selftest_cm_client/parameters
fail=0
rm -f /tmp/soak.why
bad() { echo "soak: FAIL: $*"; fail=1; }
declare -A n=([iperf_cm]=0 [iperf_cm_fail]=0 [iperf_dg]=0 [iperf_dg_fail]=0 [cm_rounds]=0
	[cm_fail]=0 [flaps]=0 [sm_restarts]=0 [ulp_reloads]=0 [polls]=0 [ulp_messages]=0)
pids=()
end=0 # set when the traffic starts: N minutes of it, however long the setup took
left() { [ "$(date +%s)" -lt "$end" ]; }

weft_kmemleak_clear
weft_load weft_hca:hcas=0 || exit 1
weft_star 4 || { bad "building the fabric"; exit 1; }
echo ppm=20000 >$cfs/cables/c1/drop && echo ppm=10000 >$cfs/cables/c1/duplicate &&
	echo ppm=10000 >$cfs/cables/c1/reorder && echo ppm=5000 >$cfs/cables/c1/corrupt ||
	bad "fault knobs on c1"
weft_sm_start weft0 5
weft_wait_active weft0 weft1 weft2 weft3 || bad "ports not ACTIVE under OpenSM"
declare -a IF
for i in 0 1 2 3; do
	weft_host_add h$i
	IF[$i]=$(weft_ib_netdev weft$i)
	ip link set "${IF[$i]}" netns h$i
	weft_on h$i ip addr add 10.83.0.$((i + 1))/24 dev "${IF[$i]}"
	weft_on h$i ip link set "${IF[$i]}" up
done
for i in 0 1; do weft_on h$i sh -c "echo connected >/sys/class/net/${IF[$i]}/mode"; done
weft_insmod weft_selftest_ulp || bad "RC ULP"
weft_insmod weft_selftest_cm_server || bad "CM server"

# The traffic loops, each counting into its own file.
iperf_loop() { # NAME CLIENT SERVER ADDR PORT
	local ok=0 ko=0
	weft_iperf_server "$3" "$5"
	while left; do
		if weft_on "$2" timeout 90 iperf3 -c "$4" -p "$5" -t 20 >/tmp/soak.$1.out 2>&1; then
			ok=$((ok + 1))
		else
			# Why, for the report: the exit status (124: the 90 s bound) and iperf3's last line.
			local rc=$?
			echo "$1 run $((ok + ko + 1)) at $(cut -d' ' -f1 /proc/uptime) s: exit $rc: $(tail -1 /tmp/soak.$1.out)" >>/tmp/soak.why
			ko=$((ko + 1))
			sleep 2
		fi
		echo "$ok $ko" >/tmp/soak.$1
	done
}
cm_loop() {
	local ok=0 ko=0
	while left; do
		if weft_insmod weft_selftest_cm_client cycles=50 concurrent=8 2>/dev/null &&
			rmmod weft_selftest_cm_client; then
			ok=$((ok + 1))
		else
			echo "cm round $((ok + ko + 1)) at $(cut -d' ' -f1 /proc/uptime) s: the client's log has why" >>/tmp/soak.why
			ko=$((ko + 1))
			rmmod weft_selftest_cm_client 2>/dev/null
			sleep 2
		fi
		echo "$ok $ko" >/tmp/soak.cm
	done
}
poll_loop() {
	local k=0
	while left; do
		perfquery -C weft2 -P 1 >/dev/null 2>&1
		saquery -C weft2 -P 1 >/dev/null 2>&1
		k=$((k + 1))
		echo "$k" >/tmp/soak.poll
		sleep 1
	done
}
end=$(( $(date +%s) + minutes * 60 ))
iperf_loop ipcm h0 h1 10.83.0.2 5201 & pids+=($!)
iperf_loop ipdg h2 h3 10.83.0.4 5202 & pids+=($!)
cm_loop & pids+=($!)
poll_loop & pids+=($!)

# The disturbances, in turn, until the time is up.
turn=0
while left; do
	sleep 20
	left || break
	case $((turn % 3)) in
	0)
		echo 0 >$cfs/cables/c3/up
		sleep $((1 + RANDOM % 3))
		echo 1 >$cfs/cables/c3/up
		n[flaps]=$((n[flaps] + 1))
		;;
	1)
		weft_sm_stop
		weft_sm_start weft0 5
		n[sm_restarts]=$((n[sm_restarts] + 1))
		;;
	2)
		n[ulp_messages]=$((n[ulp_messages] + $(cat $ulp/messages)))
		[ "$(cat $ulp/errors)" = 0 ] || bad "RC ULP errors: $(cat $ulp/errors)"
		rmmod weft_selftest_ulp || bad "RC ULP unload"
		weft_insmod weft_selftest_ulp || bad "RC ULP reload"
		n[ulp_reloads]=$((n[ulp_reloads] + 1))
		;;
	esac
	turn=$((turn + 1))
done
for p in "${pids[@]}"; do wait "$p"; done
n[ulp_messages]=$((n[ulp_messages] + $(cat $ulp/messages)))
[ "$(cat $ulp/errors)" = 0 ] || bad "RC ULP errors: $(cat $ulp/errors)"
read -r n[iperf_cm] n[iperf_cm_fail] </tmp/soak.ipcm 2>/dev/null
read -r n[iperf_dg] n[iperf_dg_fail] </tmp/soak.ipdg 2>/dev/null
read -r n[cm_rounds] n[cm_fail] </tmp/soak.cm 2>/dev/null
read -r n[polls] </tmp/soak.poll 2>/dev/null

# Every kind of traffic moved, and the RC stream without a single bad exchange.
[ "${n[iperf_cm]}" -gt 0 ] || bad "no iperf3 run in connected mode completed"
[ "${n[iperf_dg]}" -gt 0 ] || bad "no iperf3 run in datagram mode completed"
[ "${n[cm_rounds]}" -gt 0 ] || bad "no CM round completed"
[ "${n[polls]}" -gt 0 ] || bad "no perfquery/saquery poll ran"
[ "${n[ulp_messages]}" -gt 0 ] || bad "the RC ULP exchanged nothing"
for k in drop duplicate reorder corrupt; do
	sed -n 's/^ab .*injected=\([0-9]*\).*/\1/p' $cfs/cables/c1/$k >/tmp/soak.$k
done
weft_sm_stop
rmmod weft_selftest_ulp weft_selftest_cm_server || bad "unloading the ULPs"
for i in 0 1 2 3; do ip netns del h$i; done
weft_unload || bad "unloading Weft"
weft_kmemleak_check || bad "kmemleak found leaks"
weft_check_taint || bad "tainted"
faults=$(for k in drop duplicate reorder corrupt; do printf '%s=' $k; cat /tmp/soak.$k 2>/dev/null || echo '?'; done | tr '\n' ' ')
counters=""
for k in "${!n[@]}"; do counters="$counters $k=${n[$k]}"; done
counters="$counters faults_c1_ab: $faults"
# Failed runs are allowed (a flap or an SM restart may break one); each is listed with its cause.
[ -s /tmp/soak.why ] && sed 's/^/soak: failed run: /' /tmp/soak.why
echo "SOAK-VERDICT $([ $fail = 0 ] && echo pass || echo fail) $minutes min:$counters"
exit $fail
