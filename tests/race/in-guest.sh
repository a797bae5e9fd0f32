#!/bin/bash
# Race-kernel job (tests/race/run.sh through vm-run.sh): every KUnit module
# (the concurrency-heavy suites among them: weft_hca_races, the data path,
# reliability, CM load), then the removal and heavy integration tests named
# as job arguments, each reporting a WEFT-RESULT line.  KCSAN reports go to
# the console, where tests/race/kcsan.sh reads them.
set -u
fail=0
step() { "$@" || { echo "race-job: failed: $*"; fail=1; }; }

step weft_load
step weft_insmod weft_kunit
for f in $(find "$WEFT_MODDIR" -name 'weft_*_test.ko' | sort); do
	step insmod "$f"
	step rmmod "$(basename "$f" .ko)"
done
step rmmod weft_kunit
step weft_unload
# The checker kernels are 5-10 times slower: the same paths at a smaller scale.
export WEFT_STREAM_MESSAGES=20000 WEFT_CM_CYCLES=200 WEFT_RCM_CYCLES=200 WEFT_UCMA_PINGS=100
for name in "$@"; do
	t=$WEFT_REPO/tests/integration/$name.sh
	echo "=== race: $name"
	if timeout 1800 bash -c '. /weft-job/guest-lib.sh; . "$1"' "$name" "$t"; then
		weft_result "race/$name" pass
	else
		weft_result "race/$name" fail
		fail=1
	fi
done
exit $fail
