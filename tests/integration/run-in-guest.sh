#!/bin/bash
# Integration job (run by tests/run-all.sh through vm-run.sh): integration
# tests from tests/integration/ in one boot, each in its own bash with the
# guest helpers, each bounded in time.  With no job arguments, every test;
# else the named ones, reported under the prefix given first.  Prefix
# "integration" is the stock kernel's run (make check splits it over two
# guests); any other prefix is a checker kernel's (debug, race), which runs
# the heavy tests with three times the bound, at a smaller scale, and checks
# kmemleak after them.  Prints one "WEFT-RESULT pass|fail <prefix>/<name>"
# line per test.
set -u
dir=$WEFT_REPO/tests/integration
prefix=integration bound=600
names=()
if [ $# -gt 0 ]; then
	prefix=$1
	shift
	names=("$@")
else
	for t in "$dir"/*.sh; do
		n=$(basename "$t" .sh)
		[ "$n" = run-in-guest ] || names+=("$n")
	done
fi
checker=0
if [ "$prefix" != integration ]; then
	checker=1
	bound=$((600 * ${WEFT_SLOW:-3}))
	# The checkers' kernels are 5-10 times slower: the same paths at a smaller scale.
	export WEFT_STREAM_MESSAGES=${WEFT_STREAM_MESSAGES:-20000} WEFT_CM_CYCLES=${WEFT_CM_CYCLES:-200} \
		WEFT_RCM_CYCLES=${WEFT_RCM_CYCLES:-200} WEFT_UCMA_PINGS=${WEFT_UCMA_PINGS:-100}
fi
fail=0
# On a kernel with kmemleak (the debug kernel), what the tests leave is checked after them all.
[ "$checker" = 1 ] && weft_kmemleak_clear
for name in "${names[@]}"; do
	t=$dir/$name.sh
	echo "=== $prefix: $name"
	started=$(date +%s)
	if timeout "$bound" bash -c '. /weft-job/guest-lib.sh; . "$1"' "$name" "$t"; then
		weft_result "$prefix/$name" pass
	else
		weft_result "$prefix/$name" fail
		fail=1
	fi
	# What each test costs, for keeping make check's stages within CI's bound.
	echo "WEFT-TIME $prefix/$name $(( $(date +%s) - started ))"
done
if [ "$checker" = 1 ] && [ -w /sys/kernel/debug/kmemleak ]; then
	if weft_kmemleak_check; then weft_result "$prefix/kmemleak" pass; else weft_result "$prefix/kmemleak" fail; fail=1; fi
fi
exit $fail
