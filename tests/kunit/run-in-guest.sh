#!/bin/bash
# Debug-kernel job (run by tests/run-all.sh through vm-run.sh): every KUnit
# suite of Weft, plus a clean load/unload of the production modules, in one
# boot.  Each test module runs its suites when loaded; the console carries
# the KTAP results that tests/harness/ktap.sh reads.  The harness self-test
# module with its deliberately failing case is loaded too: ktap.sh expects
# that suite to fail.  Then the scenarios of tests/debug/, each reporting a
# WEFT-RESULT line.  Ends with a kmemleak scan after everything is unloaded.
set -u
fail=0
step() { "$@" || { echo "kunit-job: failed: $*"; fail=1; }; }

step weft_kmemleak_clear
step weft_load
step weft_insmod weft_kunit
for f in $(find "$WEFT_MODDIR" -name 'weft_*_test.ko' | sort) \
	$(find "$WEFT_MODDIR" -name 'weft_selftest_kunit.ko'); do
	# A suite of a module weft_load leaves out (weft_optional_modules)
	# depends on it: loaded for the suite, removed after it.
	extra=
	for d in $(modinfo -F depends "$f" | tr , ' '); do
		[ -d "/sys/module/$d" ] || { step weft_insmod "$d"; extra="$d $extra"; }
	done
	started=$(date +%s)
	step insmod "$f"
	echo "WEFT-TIME kunit/$(basename "$f" .ko) $(( $(date +%s) - started ))"
	step rmmod "$(basename "$f" .ko)"
	for d in $extra; do
		step rmmod "$d"
	done
done
step rmmod weft_kunit
step weft_unload
# Scenarios that want the debug kernel's checkers on a running stack
# (tests/debug/): each loads and unloads what it needs.
for t in "$WEFT_REPO"/tests/debug/*.sh; do
	[ -e "$t" ] || continue
	name=$(basename "$t" .sh)
	echo "=== debug: $name"
	started=$(date +%s)
	if timeout 900 bash -c '. /weft-job/guest-lib.sh; . "$1"' "$name" "$t"; then
		weft_result "debug/$name" pass
	else
		weft_result "debug/$name" fail
	fi
	echo "WEFT-TIME debug/$name $(( $(date +%s) - started ))"
done
step weft_kmemleak_check
exit $fail
