#!/bin/bash
# Guest side of `make run` (scripts/run-demo.sh): the test host of
# scripts/demo-lib.sh set up, then each of its sections, then a one-line
# verdict naming what failed.
set -u
. "$WEFT_REPO/scripts/demo-lib.sh"
failed=()
demo_heading "Weft on $(uname -r): modules, OpenSM, two hosts"
if demo_setup; then
	echo "   loaded: $(grep -o '^weft_[a-z_]*' /proc/modules | sort | tr '\n' ' ')"
	echo "   OpenSM (pid $weft_sm_pid) on weft0; weft0/weft1 ports ACTIVE; $A $demo_a here, $B $demo_b in h1"
	for s in $demo_sections; do
		demo_heading "$s"
		"demo_$s" || failed+=("$s")
	done
else
	failed+=(setup)
fi
demo_heading "teardown"
demo_teardown || failed+=(unload)
weft_check_taint || failed+=(taint)
echo "   Weft unloaded"
if [ ${#failed[@]} = 0 ]; then
	echo "WEFT-DEMO: PASS ($demo_sections)"
else
	echo "WEFT-DEMO: FAIL (${failed[*]})"
	exit 1
fi
