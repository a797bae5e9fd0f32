#!/bin/bash
# Integration: OpenSM's own test tool on the default subnet (issue 27).
# `osmtest -f c` writes an inventory of the subnet as the SA reports it;
# `osmtest -f a` then checks every SA query against it: node, port, path
# (by LID pair and by GUID pair), MultiPathRecord (GetMulti, an RMPP
# request from the client, and RMPP answer), GUIDInfo, P_Key, link,
# service and InformInfo records (its flows v and s: osmtest.c runs both
# under -f a); then its flows m, q, e and t.
# Its GetTable answers come back through weft_umad's kernel RMPP: a
# one-record table must read back as one record (IBA 13.6.2.2
# PayloadLength), not padded into three, which is what the GUID-pair path
# validation tripped over ("Source GUID mismatch ... received 0x0").
# osmtest_ftree.sh runs the same on a two-level fat tree.
set -u
fail=0
bad() { echo "osmtest: FAIL: $*"; fail=1; }
db=/tmp/osmtest.dat

weft_load weft_hca:autoconf=0 || exit 1
opensm -f /tmp/opensm.log -s 5 >/tmp/opensm.out 2>&1 &
# shellcheck disable=SC2034 # weft_sm_stop (guest-lib.sh) reads it
weft_sm_pid=$!
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM: $(cat /tmp/opensm.out)"
sleep 2
rm -f $db
cd /tmp || exit 1
out=$(osmtest -f c -i $db 2>&1)
rc=$?
echo "$out" | grep -v "^$"
[ $rc = 0 ] && grep -q 'TEST "Create Inventory" PASS' <<<"$out" || bad "-f c failed (exit $rc)"
[ "$(grep -c '^DEFINE_NODE' $db)" = 3 ] || bad "inventory: not 3 nodes: $(grep -c '^DEFINE_NODE' $db)"
[ "$(grep -c '^DEFINE_PATH' $db)" -ge 4 ] || bad "inventory: $(grep -c '^DEFINE_PATH' $db) paths"

out=$(osmtest -v -f a -i $db -l /tmp/osmtest-a.log 2>&1)
rc=$?
echo "$out" | grep -v "^$"
[ $rc = 0 ] && grep -q 'TEST "All Validations" PASS' <<<"$out" || bad "-f a failed (exit $rc)"
# The path records by GUID pair were all validated (the step that failed).
# The MultiPathRecord queries osmtest must get answered are in the PASS:
# it stops at the first that fails.
grep -q "path records validated using GUID based query" /tmp/osmtest-a.log ||
	bad "the GUID-pair path validation did not run to its end"
# What osmtest logged as errors outside its "expecting errors" brackets.
awk '/Expecting Errors - START/{e=1} /Expecting Errors  -  END/{e=0; next} !e && / ERR [0-9A-F]{4}:/' /tmp/osmtest-a.log
# Its other flows against the same inventory: multicast joins, QoS tables
# (SLtoVL, VLArb), event forwarding and traps 64/65 (the last two are
# "not implemented yet" in osmtest's libibumad build: they pass unchecked).
for flow in m q e t; do
	out=$(timeout 300 osmtest -f $flow -i $db -l /tmp/osmtest-$flow.log 2>&1)
	rc=$?
	grep 'TEST "' <<<"$out"
	[ $rc = 0 ] && grep -q 'TEST ".*" PASS' <<<"$out" || bad "-f $flow failed (exit $rc): $(tail -3 <<<"$out")"
done
weft_sm_stop
grep "ERR " /tmp/opensm.log | head -20
weft_unload || fail=1
weft_check_taint || fail=1
exit $fail
