#!/bin/bash
# make check-race: Weft under KCSAN.  Builds (once, then from the cache) the
# race kernel (tests/kernel/race.config: KCSAN and lockdep; KCSAN excludes
# KASAN, so it is a kernel of its own), builds Weft for it, and in one guest
# runs every KUnit suite and the concurrency-heavy integration tests
# (removal under traffic, CM, IPoIB connected mode, the fault stream).  Any
# data race KCSAN reports in Weft's code fails the run; the kernel's own are
# listed.  Ends with "N passed, N failed, N skipped", failures and skips listed.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
mkdir -p build/logs
results=build/race-results.txt
: >"$results"
record() { echo "$1 $2${3:+ - $3}" | tee -a "$results"; }
heavy=(unload_under_traffic remove_live remove_cfs_live stream_faults cm rdma_cm ucma ipoib_cm)

start=$(date +%s)
if rk=$(tests/kernel/build-debug-kernel.sh race); then
	record PASS race/kernel
	if make --no-print-directory KDIR="$rk/linux" modules >build/logs/make-race.log 2>&1; then
		record PASS race/build
	else
		tail -30 build/logs/make-race.log
		record FAIL race/build "see build/logs/make-race.log"
		rk=
	fi
else
	record FAIL race/kernel
	rk=
fi
if [ -n "$rk" ]; then
	kver=$(sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' "$rk/linux/include/generated/utsrelease.h")
	suites=$(find "build/$kver" -name 'weft_*_test.ko' | xargs -r nm 2>/dev/null |
		sed -n 's/.* [DdRr] weft_suite_//p' | sort -u | tr '\n' ' ')
	log=build/logs/race.log
	# KCSAN reports are judged by kcsan.sh (Weft's fail, the kernel's are listed).
	WEFT_SPLAT_IGNORE=KCSAN tests/harness/vm-run.sh --kernel debug --kernel-dir "$rk" \
		--script tests/race/in-guest.sh --log "$log" --timeout 5000 --mem 3072 -- "${heavy[@]}"
	rc=$?
	[ "$rc" = 0 ] && record PASS race/host "no splat" || record FAIL race/host "see $log"
	tests/harness/ktap.sh "$log" $suites | sed 's/ kunit\// race-kunit\//' | tee -a "$results"
	for name in "${heavy[@]}"; do
		line=$(tr -d '\r' <"$log" | grep -a "^WEFT-RESULT [a-z]* race/$name\( \|$\)" | tail -1)
		case "$line" in
		"WEFT-RESULT pass "*) record PASS "race/$name" ;;
		*) record FAIL "race/$name" "see $log" ;;
		esac
	done
	tests/race/kcsan.sh "$log" | tee -a /dev/stderr | grep -E '^(PASS|FAIL) ' >>"$results"
fi
passed=$(grep -c '^PASS ' "$results")
failed=$(grep -c '^FAIL ' "$results")
skipped=$(grep -c '^SKIP ' "$results")
echo
grep -E '^(FAIL|SKIP) ' "$results" || true
echo "make check-race: $(( ($(date +%s) - start) / 60 )) min"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
