#!/bin/bash
# make bench-scale job (tests/topologies/bench-scale.sh through vm-run.sh,
# stock kernel, one 4 GiB guest): fabrics of about a thousand HCAs built
# through configfs and swept by OpenSM with each routing engine that
# applies (scale-lib.sh); prints SCALE-* lines, and fails if a check fails.
#   $@  labels to run (default: all of ft2 ft3 torus random)
set -u
export WEFT_SCALE_SUBS=1 # scale-lib.sh: time the subscription burst after each sweep
. /weft-job/guest-lib.sh
. "$WEFT_REPO/tests/topologies/scale-lib.sh"
fail=0
want=" ${*:-ft2 ft3 torus random} "
run() { [[ $want == *" $1 "* ]] && { scale_run "$@" || fail=1; }; }
# Two levels: 32 leaves of 32 HCAs, each leaf cabled to all 31 spines (63 ports).
run ft2 "fattree 32 31 32" "ftree updn minhop dor" 16
# Three levels: 16 pods of 4 leaves (16 HCAs each) and 2 aggregation switches, 4 cores.
run ft3 "fattree3 16 4 2 4 16" "ftree updn minhop dor" 16
# An 8 x 8 torus of switches with 16 HCAs each (not a fat tree: no ftree).
run torus "torus 8 8 16" "updn minhop dor" 16
# A random graph of 96 switches (5 switch ports each) with 11 HCAs each.
run random "random 96 5 11 7" "updn minhop dor" 16
weft_check_taint || fail=1
echo "SCALE-RESULT $([ $fail = 0 ] && echo pass || echo fail)"
exit $fail
