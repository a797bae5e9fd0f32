#!/bin/bash
# Stock-kernel job (run by tests/run-all.sh through vm-run.sh): every
# integration test in tests/integration/ in one boot, each in its own bash
# with the guest helpers, each bounded in time.  Prints one
# "WEFT-RESULT pass|fail <name>" line per test.
set -u
dir=$WEFT_REPO/tests/integration
fail=0
for t in "$dir"/*.sh; do
	name=$(basename "$t" .sh)
	[ "$name" = run-in-guest ] && continue
	echo "=== integration: $name"
	if timeout 600 bash -c '. /weft-job/guest-lib.sh; . "$1"' "$name" "$t"; then
		weft_result "integration/$name" pass
	else
		weft_result "integration/$name" fail
		fail=1
	fi
done
exit $fail
