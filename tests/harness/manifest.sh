#!/bin/bash
# manifest.sh: what `make check` is expected to run (tests/manifest.txt).
#
#   manifest.sh generate          print the manifest the sources define
#   manifest.sh check MANIFEST RESULTS
#
# The manifest names every Weft test by the name its result line carries:
# each KUnit case (kunit/<suite>/<case>, from the WEFT_TEST_SUITE lists
# of the sources), each integration script on the stock kernel
# (integration/<name>), the heavy ones again on the debug kernel
# (debug-integration/<name>, run-all.sh's list), each debug scenario
# (debug/<name>), each host fuzz target (fuzz/<target>) and the test hosts (debug/kunit-host, ...).  Harness self-checks are not in it (run-all.sh reports
# them apart).  `check` reads RESULTS (run-all.sh's PASS/FAIL/SKIP lines)
# and prints one FAIL line per test of the manifest that reported nothing
# and per reported test of those kinds the manifest does not name, then a
# PASS line when there was neither.  Regenerate after adding or removing
# a test, and commit the change with it: the diff shows what changed.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)

# Guest-machinery checks among the integration scripts: run-all.sh reports them as harness/<name>.
harness_only="integration/netns_hosts integration/rdma_blocked"

generate() {
	cd "$repo" || exit 1
	echo "# Weft's tests as make check reports them: tests/harness/manifest.sh generate > tests/manifest.txt"
	# KUnit: WEFT_TEST_SUITE(name, WEFT_CASE(a), ...) may span lines; the harness's own suite is not Weft's.
	git ls-files '*.cpp' | xargs grep -l 'WEFT_TEST_SUITE(' | grep -v '^include/' | sort |
		while read -r f; do
			awk '/WEFT_TEST_SUITE\(/ { on = 1 } on { printf "%s", $0 } on && /\);/ { on = 0; print "" }' "$f"
		done |
		sed -n 's/.*WEFT_TEST_SUITE(\([a-z0-9_]*\),\(.*\));.*/\1 \2/p' |
		while read -r suite cases; do
			[ "$suite" = weft_selftest_expected_failure ] && continue
			printf '%s\n' "$cases" | grep -o 'WEFT_CASE([a-z0-9_]*)' | sed "s|WEFT_CASE(\(.*\))|kunit/$suite/\1|"
		done | sort
	for t in tests/integration/*.sh; do
		n=$(basename "$t" .sh)
		[ "$n" = run-in-guest ] && continue
		case " $harness_only " in *" integration/$n "*) continue ;; esac
		echo "integration/$n"
	done
	heavy=$(sed -n 's/^[[:space:]]*heavy="\(.*\)"/\1/p' tests/run-all.sh)
	for n in $heavy kmemleak; do echo "debug-integration/$n"; done
	for t in tests/debug/*.sh; do
		[ -e "$t" ] && echo "debug/$(basename "$t" .sh)"
	done
	# Host fuzz targets (tests/fuzz), one result each.
	for t in $(make --no-print-directory -s -C tests/fuzz print-targets); do echo "fuzz/$t"; done
	# The test hosts themselves: each boots, runs its job and shows no splat.
	printf '%s\n' debug/kunit-host debug/integration-host stock/integration-host stock/integration-host-late
}

check() { # MANIFEST RESULTS
	local manifest=$1 results=$2 bad=0 n
	local want got
	want=$(grep -v '^#' "$manifest" | grep -v '^$' | sort -u)
	got=$(sed -n 's/^\(PASS\|FAIL\|SKIP\) \([^ ]*\).*/\2/p' "$results" |
		grep -E '^(kunit|integration|debug|debug-integration|stock|fuzz)/' | sort -u)
	while read -r n; do
		[ -n "$n" ] || continue
		echo "FAIL manifest/missing/$n - in tests/manifest.txt, but it reported nothing"
		bad=1
	done < <(comm -23 <(printf '%s\n' "$want") <(printf '%s\n' "$got"))
	while read -r n; do
		[ -n "$n" ] || continue
		echo "FAIL manifest/unexpected/$n - it ran, but tests/manifest.txt does not name it"
		bad=1
	done < <(comm -13 <(printf '%s\n' "$want") <(printf '%s\n' "$got"))
	[ "$bad" = 0 ] && echo "PASS manifest/complete - $(printf '%s\n' "$want" | grep -c .) tests, each reported once or more"
	return "$bad"
}

case "${1:-}" in
generate) generate ;;
check) shift; check "$@" ;;
*) echo "usage: $0 generate | check MANIFEST RESULTS" >&2; exit 2 ;;
esac
