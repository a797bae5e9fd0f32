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
set -u
. /weft-job/guest-lib.sh
mode=${1:-connected} secs=${2:-10} extra=${3:-}
pcs=/sys/kernel/debug/weft_pcsample
weft_ipoib_hosts || { echo "PROFILE note: no IPoIB hosts"; exit 1; }
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
echo start >$pcs/control
sleep "$secs"
echo stop >$pcs/control
echo "PROFILE cpu before: $before"
echo "PROFILE cpu after:  $(head -1 /proc/stat)"
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
