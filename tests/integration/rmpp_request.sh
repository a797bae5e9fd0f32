#!/bin/bash
# Integration (issue 27): RMPP for multi-segment requests in both directions.
# On the default subnet under OpenSM (weft0), a libibumad client on weft1
# (rmpp_request.py) sends the SA a SubnAdmGetMulti MultiPathRecord whose
# GIDs need 2 and then 3 RMPP segments: weft1's MAD service cuts the write
# into segments, weft0's reassembles them (ACKing per window) and hands
# OpenSM's SA agent one long read, and OpenSM's multi-segment GetMultiResp
# of PathRecords comes back to the client whole.  OpenSM takes at most 11
# GIDs of a MultiPathRecord (IB_MULTIPATH_MAX_GIDS: what fits one MAD), so
# the answer holds the paths of at most 1 x 10 pairs whatever its length.
# Before the unsolicited reassembly, weft0 dropped the request (counted) and
# the client's request timed out.
set -u
fail=0
bad() { echo "rmpp_request: FAIL: $*"; fail=1; }
dir=$(dirname "${BASH_SOURCE[0]}")
gid_of() { cat /sys/class/infiniband/"$1"/ports/1/gids/0; }

weft_load weft_hca:autoconf=0 || exit 1
weft_sm_start weft0
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM: $(cat /tmp/opensm.out)"
sleep 2
g0=$(gid_of weft0) g1=$(gid_of weft1)
# 12 DGIDs: 56 + 24 + 13 * 16 = 288 bytes, 2 segments; 24: 480 bytes, 3.
out=$(timeout 60 python3 "$dir/rmpp_request.py" weft1 1 "$g1" 12,24 4 "$g0" "$g1" 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || bad "GetMulti with 12 and 24 DGIDs (exit $rc)"
[ "$(grep -c "records" <<<"$out")" = 2 ] || bad "not two answers"
# OpenSM saw well-formed MultiPathRecord requests (its ERR 45xx are the MPR handler's).
grep "ERR 45" /tmp/opensm.log && bad "OpenSM refused a MultiPathRecord request"
weft_sm_stop
weft_unload || fail=1
weft_check_taint || fail=1
exit $fail
