#!/bin/bash
# Profile job (tests/bench/profile-ipoib.sh, stock kernel): iperf3 TCP over
# Weft's IPoIB in mode $1 between weft0's and weft1's interfaces (two
# namespaces), sampled for $2 seconds by weft_pcsample (an hrtimer per CPU
# recording the interrupted instruction), then named by pcsample.py against
# /proc/kallsyms and the build's symmaps.  Prints CPU time, the profile and
# the iperf3 result; asserts nothing.
#   $1  datagram | connected      $2  seconds sampled (10)
#   $3  extra iperf3 client arguments (e.g. "-A 0,1" to pin both ends)
#   $4  symbols listed (60; half as many per CPU)
#   $5  the CPU of both HCAs' completion vector 0 (default: weft_hca's)
set -u
. /weft-job/guest-lib.sh
mode=${1:-connected} secs=${2:-10} extra=${3:-}
pcs=/sys/kernel/debug/weft_pcsample
weft_ipoib_hosts "${5:-}" || { echo "PROFILE note: no IPoIB hosts"; exit 1; }
weft_insmod weft_pcsample || exit 1
weft_on h0 sh -c "echo $mode >/sys/class/net/$A/mode"
weft_on h1 sh -c "echo $mode >/sys/class/net/$B/mode"
weft_on h1 iperf3 -s -D -p 5201
for _ in $(seq 1 60); do weft_on h0 ping -c 1 -W 1 10.77.0.2 >/dev/null 2>&1 && break; done
# shellcheck disable=SC2086
weft_on h0 timeout $((secs + 60)) iperf3 -c 10.77.0.2 -t $((secs + 6)) $extra >/tmp/profile-iperf.out 2>&1 &
load=$!
sleep 3
before=$(head -1 /proc/stat)
cp /proc/interrupts /tmp/irq.before
echo start >$pcs/control
sleep "$secs"
echo stop >$pcs/control
echo "PROFILE cpu before: $before"
echo "PROFILE cpu after:  $(head -1 /proc/stat)"
# interrupts per second and CPU over the sampled interval (under TCG an
# interrupt, an IPI above all, costs microseconds of APIC emulation)
awk -v secs="$secs" 'NR == FNR { for (i = 2; i <= 3; i++) b[$1, i] = $i; next }
	$1 ~ /:$/ && $2 ~ /^[0-9]+$/ {
		d0 = ($2 - b[$1, 2]) / secs; d1 = ($3 - b[$1, 3]) / secs
		if (d0 + d1 >= 10) printf "PROFILE irq/s %-6s cpu0 %8d cpu1 %8d  %s %s %s %s\n", $1, d0, d1, $4, $5, $6, $7
	}' /tmp/irq.before /proc/interrupts
cp $pcs/samples /tmp/pcsample.bin
cp /proc/kallsyms /tmp/kallsyms
while kill -0 $load 2>/dev/null; do sleep 1; done
grep -E "sender|receiver" /tmp/profile-iperf.out | sed 's/^/PROFILE iperf3 /'
python3 "$WEFT_REPO/tests/bench/pcsample.py" /tmp/pcsample.bin /tmp/kallsyms \
	--symmaps "$WEFT_MODDIR" --top "${4:-60}" | sed 's/^/PROFILE /'
rmmod weft_pcsample
weft_on h1 pkill -x iperf3
ip netns del h0
ip netns del h1
weft_sm_stop
sleep 1
weft_unload
exit 0
