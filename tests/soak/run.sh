#!/bin/bash
# make soak MINUTES=N: mixed traffic under disturbances on the debug kernel
# (KASAN, lockdep, kmemleak) for N minutes (default 10): see in-guest.sh.
# Prints the guest's counters and ends with its one-line verdict; exit
# status 0 only for a pass with no kernel splat.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
minutes=${MINUTES:-10}
dk=$(tests/kernel/build-debug-kernel.sh) || exit 1
mkdir -p build/logs
make --no-print-directory KDIR="$dk/linux" modules >build/logs/make-soak.log 2>&1 ||
	{ tail -30 build/logs/make-soak.log; exit 1; }
log=build/logs/soak.log
tests/harness/vm-run.sh --kernel debug --script tests/soak/in-guest.sh --log "$log" \
	--timeout $((minutes * 60 + 1800)) --mem 3072 -- "$minutes"
rc=$?
verdict=$(tr -d '\r' <"$log" | grep -a '^SOAK-VERDICT' | tail -1)
tr -d '\r' <"$log" | grep -a 'soak: FAIL' || true
if [ "$rc" != 0 ] && [ -n "$verdict" ]; then
	verdict=${verdict/SOAK-VERDICT pass/SOAK-VERDICT fail (kernel splat or job failure: see $log)}
fi
echo "${verdict:-SOAK-VERDICT fail: no verdict from the guest (see $log)}"
[ "$rc" = 0 ] && [ "${verdict#SOAK-VERDICT pass}" != "$verdict" ]
