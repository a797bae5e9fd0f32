#!/bin/bash
# make run: build Weft for the stock Debian kernel, boot a test host on it
# (QEMU, TCG) and show a working fabric there with the real tools
# (scripts/demo-guest.sh, scripts/demo-lib.sh), ending with a one-line
# verdict.  The job's output is shown as it comes, without the kernel's
# console messages; the whole console log is kept in build/logs/demo-stock.log.
# Exits non-zero when a section failed or the host did not finish cleanly.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
scripts/deps.sh
make --no-print-directory modules >/dev/null
log=build/logs/demo-stock.log
mkdir -p build/logs
rm -f "$log"
: >"$log"
# The job's lines, from the console log as the guest writes it: between the
# job's start and end, without kernel messages ("[   12.345678] ...").
tailpid=build/logs/.demo-tail.pid
{ tail -n +1 -F "$log" 2>/dev/null & echo $! >"$tailpid"; wait; } |
	awk '{ gsub(/\r/, "") } /^weft-host: kernel/ { on = 1; next } /^weft-host: job exit status/ { exit }
		on && !/^\[ *[0-9]+\.[0-9]+\]/ { print; fflush() }' &
shower=$!
rc=0
tests/harness/vm-run.sh --kernel stock --script scripts/demo-guest.sh --name demo \
	--log "$log" --timeout 900 --mem 2048 2>build/logs/demo-vm-run.out || rc=$?
sleep 1
kill "$(cat "$tailpid")" 2>/dev/null || true
wait "$shower" 2>/dev/null || true
rm -f "$tailpid"
cat build/logs/demo-vm-run.out >&2
verdict=$(tr -d '\r' <"$log" | grep -a '^WEFT-DEMO: ' | tail -1 || true)
if [ "$rc" = 0 ] && [[ $verdict == "WEFT-DEMO: PASS"* ]]; then
	echo "make run: PASS (console log: $log)"
else
	echo "make run: FAIL (${verdict:-no verdict from the test host}; guest exit $rc; console log: $log)"
	exit 1
fi
