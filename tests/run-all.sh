#!/bin/bash
# make check: Weft's whole test suite.
#
#  1. installs missing Debian packages, builds every module for the stock
#     kernel (W=1, objtool and modpost warnings fail the build), runs
#     sparse over the C shims and the build's self-tests (static
#     constructors are rejected, warnings are caught);
#  2. starts a stock-kernel test host in the background: the integration
#     tests but the long ones named in $stock_late, then the harness
#     self-test that a WARN fails a run;
#  3. meanwhile builds (or reuses) the debug kernel and the modules for it,
#     runs the host fuzzers and the splat scanner's self-test;
#  4. one debug-kernel test host: all KUnit suites + load/unload + kmemleak
#     (a failing KUnit case must fail the run), then a second one with the
#     heavy integration tests under KASAN, lockdep and kmemleak;
#  5. a second stock-kernel test host with the long integration tests,
#     then waits for the first and collects its results;
#  6. the manifest (tests/manifest.txt, tests/harness/manifest.sh): every
#     test it names reported, and nothing ran that it does not name.
# Prints one PASS/FAIL/SKIP line per test (a KUnit case, an integration
# script, a build check) and ends with "N passed, N failed, N skipped" for
# Weft's tests, every skip and failure listed, and the harness's own
# self-checks counted apart (they test the test machinery, not Weft).
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
mkdir -p build/logs
results=build/results.txt
: >"$results"

record() { # PASS|FAIL|SKIP NAME [DETAIL]
	echo "$1 $2${3:+ - $3}" | tee -a "$results"
}
# Each heading says how far into the run it starts: CI stops at 90 minutes.
section() { echo; echo "== $* [$((SECONDS / 60)) min]"; }
# The WEFT-RESULT line of each guest script in LOG (the serial console
# ends lines with CR LF); a script with none is a FAIL.
guest_results() { # LOG PREFIX SCRIPT...
	local log=$1 prefix=$2 t name line
	shift 2
	for t in "$@"; do
		[ -e "$t" ] || [ "$t" = kmemleak ] || continue
		name=$prefix/$(basename "$t" .sh)
		[ "$name" = "$prefix/run-in-guest" ] && continue
		# Checks of the guest machinery itself, not of Weft: reported as the harness's.
		case "$name" in integration/netns_hosts | integration/rdma_blocked) name=harness/${name#*/} ;; esac
		line=$(tr -d '\r' <"$log" | grep -a "^WEFT-RESULT [a-z]* $prefix/$(basename "$t" .sh)\( \|$\)" | tail -1)
		case "$line" in
		"WEFT-RESULT pass "*) record PASS "$name" ;;
		"WEFT-RESULT fail "*) record FAIL "$name" "see $log"; fail_lines "$log" "$(basename "$t" .sh)" ;;
		*) record FAIL "$name" "no result reported (see $log)" ;;
		esac
	done
}
# A failed test's own reasons ("<test>: FAIL: ..." lines), so a run whose
# log is gone (CI keeps only the console) still says what went wrong.
fail_lines() { # LOG TEST
	tr -d '\r' <"$1" | grep -a "^$2: FAIL" | head -16 | sed 's/^/     | /'
}
# The slowest tests of a guest stage (their WEFT-TIME lines), so a stage
# that grows towards CI's bound shows what to trim.
stage_times() { # LOG
	tr -d '\r' <"$1" | grep -a '^WEFT-TIME ' | sort -k3 -n -r | head -8 |
		awk '{ printf "   %5d s  %s\n", $3, $2 }'
}
# Run a checker that prints PASS/FAIL lines itself; a checker that fails
# without saying why (or cannot run at all) is a FAIL of its own.
checker() { # SCRIPT ARGS...
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -E '^(PASS|FAIL|SKIP) ' | tee -a "$results"
	if [ "$rc" != 0 ] && ! printf '%s\n' "$out" | grep -q '^FAIL '; then
		printf '%s\n' "$out" | tail -5
		record FAIL "$(basename "$1")" "exited $rc"
	fi
}

section "dependencies"
if ! scripts/deps.sh; then
	record FAIL setup/deps "apt could not install the build dependencies"
fi

section "build: stock kernel"
stock_ok=0
if make --no-print-directory modules >build/logs/make-stock.log 2>&1; then
	record PASS build/stock-w1-clean
	stock_ok=1
else
	tail -30 build/logs/make-stock.log
	record FAIL build/stock-w1-clean "see build/logs/make-stock.log"
fi

section "sparse"
if make --no-print-directory sparse >build/logs/sparse.log 2>&1; then
	record PASS build/sparse-clean "$(tail -1 build/logs/sparse.log)"
else
	grep -E 'warning|error' build/logs/sparse.log | head -20
	record FAIL build/sparse-clean "see build/logs/sparse.log"
fi

section "build self-tests: static constructors, warning detection"
checker tests/build/build_log_check.sh
if [ "$stock_ok" = 1 ]; then
	stock_kdir=$(make --no-print-directory -s print-kdir)
	stock_kver=$(sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' "$stock_kdir/include/generated/utsrelease.h")
	checker tests/build/static_ctor_rejected.sh "$stock_kdir" "build/$stock_kver" \
		"$(make --no-print-directory -s print-cxx)"
fi

# The stock-kernel stage needs only the stock modules.  Its tests are split
# over two guests: the first runs in the background from here on, beside the
# debug kernel's build and its guests, so that its waits (subnet sweeps,
# timeouts, traffic of fixed length) overlap with their work; the second
# (the long tests named in $stock_late, which no other stage touches) starts
# when the debug kernel's guests are done, so that two guests run until the
# end instead of one.  Every other test, a new one too, is in the first.
stock_late="ipoib ipoib_cm ipoib_pkey remove_live iser_sessions isert"
stock_early=
for t in tests/integration/*.sh; do
	n=$(basename "$t" .sh)
	case " run-in-guest $stock_late " in *" $n "*) continue ;; esac
	stock_early="$stock_early $n"
done
stock_pid=
if [ "$stock_ok" = 1 ]; then
	section "stock kernel test host: integration tests (started in the background)"
	rm -f build/logs/stock-stage.rc build/logs/selftest-warn.rc
	(
		# shellcheck disable=SC2086 # test names are words
		tests/harness/vm-run.sh --kernel stock --script tests/integration/run-in-guest.sh \
			--log build/logs/integration-stock.log --timeout 5400 -- integration $stock_early \
			>build/logs/stock-stage.out 2>&1
		echo $? >build/logs/stock-stage.rc
		# Harness self-test: a WARN on the console must fail a run.
		tests/harness/vm-run.sh --kernel stock --script tests/harness/selftest-warn.sh \
			--log build/logs/selftest-warn-stock.log --timeout 600 2>build/logs/selftest-warn.err
		echo $? >build/logs/selftest-warn.rc
	) &
	stock_pid=$!
fi

section "debug kernel (cached in ${WEFT_CACHE:-/var/cache/weft})"
if dk=$(tests/kernel/build-debug-kernel.sh); then
	record PASS build/debug-kernel
else
	record FAIL build/debug-kernel
	dk=
fi

debug_ok=0
if [ -n "$dk" ]; then
	section "build: debug kernel"
	if make --no-print-directory KDIR="$dk/linux" modules >build/logs/make-debug.log 2>&1; then
		record PASS build/debug-w1-clean
		debug_ok=1
	else
		tail -30 build/logs/make-debug.log
		record FAIL build/debug-w1-clean "see build/logs/make-debug.log"
	fi
fi

# Each fuzz target a Weft test (tests/fuzz/README.md): seeded, bounded by runs, not by time.
section "host fuzzing: the pure parsers under libFuzzer, ASan, UBSan (make fuzz)"
make --no-print-directory fuzz >build/logs/fuzz.log 2>&1
for t in $(make --no-print-directory -s -C tests/fuzz print-targets); do
	line=$(grep -E "^(ok  |FAIL) fuzz_$t:" build/logs/fuzz.log | tail -1)
	case "$line" in
	"ok   "*) record PASS "fuzz/$t" "${line#*: }" ;;
	"FAIL "*) record FAIL "fuzz/$t" "${line#*: }" ;;
	*) record FAIL "fuzz/$t" "did not run (see build/logs/fuzz.log)" ;;
	esac
done

section "harness self-test: splat scanner"
checker tests/harness/selftest-splat.sh

if [ "$debug_ok" = 1 ]; then
	section "debug kernel test host: KUnit, load/unload, kmemleak"
	kver=$(sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' "$dk/linux/include/generated/utsrelease.h")
	# The suites the modules hold, and those the manifest expects (one that vanished is reported).
	suites=$({ find "build/$kver" -name 'weft_*_test.ko' -o -name 'weft_selftest_kunit.ko' |
		xargs -r nm 2>/dev/null | sed -n 's/.* [DdRr] weft_suite_//p'
		sed -n 's|^kunit/\([^/]*\)/.*|\1|p' tests/manifest.txt; } | sort -u | tr '\n' ' ')
	log=build/logs/kunit-debug.log
	case " $suites " in
	*" weft_selftest_expected_failure "*) ;;
	*) record FAIL kunit/suites-found "test modules missing: found '$suites'" ;;
	esac
	if tests/harness/vm-run.sh --kernel debug --script tests/kunit/run-in-guest.sh \
		--log "$log" --timeout 3600 --mem 3072; then
		record PASS debug/kunit-host "modules loaded and unloaded, no splat, no leak"
	else
		grep -a 'kunit-job:' "$log" | head
		record FAIL debug/kunit-host "see $log"
	fi
	stage_times "$log"
	checker tests/harness/ktap.sh "$log" $suites
	checker tests/hca/dissect.sh "$log"
	guest_results "$log" debug tests/debug/*.sh

	# The teardown-heavy integration tests again under KASAN, lockdep and
	# kmemleak: unloading and removing under traffic, and the objects user
	# space holds (verbs) killed mid-use.  The other
	# concurrency-heavy tests (stream_faults, cm, rdma_cm, ucma, ipoib_cm) run
	# under KCSAN in make check-race, and make soak drives the same paths
	# on this kernel: CI's 90 minutes do not hold them all here.
	section "debug kernel test host: heavy integration tests"
	heavy="unload_under_traffic remove_live uverbs_apps"
	log=build/logs/integration-debug.log
	# shellcheck disable=SC2086 # test names are words
	if tests/harness/vm-run.sh --kernel debug --script tests/integration/run-in-guest.sh \
		--log "$log" --timeout 5400 --mem 3072 -- debug-integration $heavy; then
		record PASS debug/integration-host "no splat"
	else
		record FAIL debug/integration-host "see $log"
	fi
	stage_times "$log"
	guest_results "$log" debug-integration $(printf 'tests/integration/%s.sh ' $heavy) kmemleak
fi

if [ -n "$stock_pid" ]; then
	section "stock kernel test host: the long integration tests, beside the first guest"
	log=build/logs/integration-stock-late.log
	# shellcheck disable=SC2086 # test names are words
	if tests/harness/vm-run.sh --kernel stock --script tests/integration/run-in-guest.sh \
		--log "$log" --timeout 5400 -- integration $stock_late; then
		record PASS stock/integration-host-late "no splat"
	else
		record FAIL stock/integration-host-late "see $log"
	fi
	stage_times "$log"
	guest_results "$log" integration $(printf 'tests/integration/%s.sh ' $stock_late)

	section "stock kernel test host: integration tests (waiting for the background guest)"
	wait "$stock_pid"
	cat build/logs/stock-stage.out
	log=build/logs/integration-stock.log
	if [ "$(cat build/logs/stock-stage.rc 2>/dev/null)" = 0 ]; then
		record PASS stock/integration-host "no splat"
	else
		record FAIL stock/integration-host "see $log"
	fi
	stage_times "$log"
	guest_results "$log" integration $(printf 'tests/integration/%s.sh ' $stock_early)

	section "harness self-test: a WARN fails the run"
	log=build/logs/selftest-warn-stock.log
	if grep -aq 'deliberate warning for the harness self-test' "$log" &&
		grep -q 'kernel splat' build/logs/selftest-warn.err; then
		if [ "$(cat build/logs/selftest-warn.rc)" = 0 ]; then
			record FAIL harness/warn-fails-run "a run with a WARN on the console passed"
		else
			record PASS harness/warn-fails-run
		fi
	else
		record FAIL harness/warn-fails-run "the run did not fail because of the WARN (see $log)"
	fi
fi

section "manifest: everything expected ran, nothing unexpected did"
checker tests/harness/manifest.sh check tests/manifest.txt "$results"

# The harness's self-checks (the splat scanner, the build-log checker, a
# failing KUnit case and a WARN failing a run, the guest's namespaces and
# RDMA blocking) are counted apart from Weft's tests.
harness='^(PASS|FAIL|SKIP) (harness/|build/log-check-|build/static-ctor-rejected|build/constinit-global-accepted)'
weft=$(grep -Ev "$harness" "$results")
self=$(grep -E "$harness" "$results")
count() { printf '%s\n' "$2" | grep -c "^$1 "; }
passed=$(count PASS "$weft")
failed=$(count FAIL "$weft")
skipped=$(count SKIP "$weft")
h_passed=$(count PASS "$self")
h_failed=$(count FAIL "$self")
h_skipped=$(count SKIP "$self")
echo
printf '%s\n' "$weft" "$self" | grep -E '^(FAIL|SKIP) ' || true
echo "harness self-checks: $h_passed passed, $h_failed failed, $h_skipped skipped"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] && [ "$h_failed" = 0 ] && [ "$h_skipped" = 0 ] && [ "$passed" -gt 0 ]
