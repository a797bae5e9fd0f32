#!/bin/bash
# make profile-ipoib [MODE=connected|datagram] [SECONDS_SAMPLED=10] [IPERF="-A 0,1"] [TOP=60]
#   [VECTOR_CPU=1 (both HCAs' completion vector 0 on that CPU)]:
# where the CPU time goes while iperf3 runs over Weft's IPoIB, modules
# included.  perf wedges the TCG guest, so weft_pcsample (tests/bench/
# pcsample.c) samples each CPU from an hrtimer inside the guest;
# Documentation/benchmarks.md says how to read the result.
set -eu
cd "$(dirname "$0")/../.."
mode=${1:-connected}
log=build/logs/profile-ipoib.log
mkdir -p build/logs
rm -f "$log"
tests/harness/vm-run.sh --kernel stock --script tests/bench/profile-ipoib-in-guest.sh --log "$log" \
	--timeout 900 --name profile-ipoib -- "$mode" "${SECONDS_SAMPLED:-10}" "${IPERF:-}" "${TOP:-60}" "${VECTOR_CPU:-}" >/dev/null 2>&1 || true
tr -d '\r' <"$log" | sed -n 's/.*PROFILE \(.*\)/\1/p'
