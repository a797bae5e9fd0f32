#!/bin/bash
# Profile job (tests/bench/profile-ipoib.sh, stock kernel): iperf3 TCP over
# Weft's IPoIB in mode $1 between weft0's and weft1's interfaces (two
# namespaces); writes /proc/kallsyms into the job directory and prints
# PROFILE-GO when the stream runs, for the host to sample the vCPUs'
# program counters for the next seconds.  Prints CPU time and the iperf3
# result; asserts nothing.
set -u
. /weft-job/guest-lib.sh
mode=${1:-connected}
weft_ipoib_hosts || { echo "PROFILE note: no IPoIB hosts"; exit 1; }
weft_on h0 sh -c "echo $mode >/sys/class/net/$A/mode"
weft_on h1 sh -c "echo $mode >/sys/class/net/$B/mode"
weft_on h1 iperf3 -s -D -p 5201
for _ in $(seq 1 60); do weft_on h0 ping -c 1 -W 1 10.77.0.2 >/dev/null 2>&1 && break; done
weft_on h0 timeout 60 iperf3 -c 10.77.0.2 -t 24 >/tmp/profile-iperf.out 2>&1 &
load=$!
sleep 3
cat /proc/kallsyms >/weft-job/kallsyms.tmp && mv /weft-job/kallsyms.tmp /weft-job/kallsyms
before=$(head -1 /proc/stat)
echo PROFILE-GO
sleep 14
echo "PROFILE cpu before: $before"
echo "PROFILE cpu after:  $(head -1 /proc/stat)"
while kill -0 $load 2>/dev/null; do sleep 1; done
grep -E "sender|receiver" /tmp/profile-iperf.out | sed 's/^/PROFILE iperf3 /'
weft_on h1 pkill -x iperf3
ip netns del h0
ip netns del h1
weft_sm_stop
sleep 1
weft_unload
exit 0
