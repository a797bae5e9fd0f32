#!/bin/bash
# make profile-ipoib [MODE=connected|datagram]: where the CPU time goes while
# iperf3 runs over Weft's IPoIB, modules included (perf wedges the TCG
# guest): tests/bench/sample-pc.py samples the vCPUs' program counters
# through QEMU's monitor for 10 s.  Documentation/benchmarks.md says how to
# read it (MMIO-heavy kernel symbols are over-sampled).
set -eu
cd "$(dirname "$0")/../.."
mode=${1:-connected}
log=build/logs/profile-ipoib.log
mon=$(mktemp -u /tmp/weft-monitor.XXXXXX)
tmpl=/tmp/weft-profile-job.XXXXXX
mkdir -p build/logs
rm -f "$log"
WEFT_VM_MONITOR=$mon WEFT_VM_JOB_DIR=$tmpl tests/harness/vm-run.sh --kernel stock \
	--script tests/bench/profile-ipoib-in-guest.sh --log "$log" --timeout 900 \
	--name profile-ipoib -- "$mode" >/dev/null 2>&1 &
vm=$!
for _ in $(seq 1 100); do [ -S "$mon" ] && break; sleep 0.1; done
job=$(ls -td /tmp/weft-profile-job.* | head -1)
tests/bench/sample-pc.py "$mon" "$job/kallsyms" --seconds 10 --interval 0.005 \
	--wait-for "$log" PROFILE-GO --top 60
wait $vm || true
tr -d '\r' <"$log" | sed -n 's/.*\(PROFILE .*\)/\1/p'
