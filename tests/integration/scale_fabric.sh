#!/bin/bash
# Integration: generated fabrics through configfs under OpenSM (issue 27;
# tests/topologies/, Documentation/scale.md), at a size make check affords:
#   1. a two-level fat tree of 64 HCAs (8 leaves of 8, 4 spines): OpenSM
#      sweeps it with each of its ftree, updn, minhop and dor engines; each
#      time every HCA port comes ACTIVE, ibnetdiscover sees all 76 nodes,
#      ibtracert finds a path between sampled pairs, ibqueryerrors is clean;
#   2. a random graph of 8 switches with 40 HCAs each (320 HCAs): more than
#      256 devices register (the 257th once failed with EIO), every port gets
#      its umad device (once only 64 did, errno 28), and the topology file
#      lists every port (once cut at 4 KiB); OpenSM (minhop) brings it up.
# make bench-scale runs the same checks on 1,024 HCAs.
set -u
. "$WEFT_REPO/tests/topologies/scale-lib.sh"
fail=0
scale_run ft64 "fattree 8 4 8" "ftree updn minhop dor" 8 || fail=1
scale_run rand320 "random 8 3 40 1" "minhop" 8 || fail=1
weft_check_taint || fail=1
exit $fail
