#!/bin/bash
# Integration: OpenSM's test tool on a two-level fat tree (issue 27): two
# leaf switches of two HCAs each, both cabled to two spines, generated and
# built through configfs by tests/topologies/weft-topo.py (`fattree 2 2
# 2`), swept by OpenSM.  `osmtest -f c` writes the inventory (8 nodes, the
# paths between every pair of ports across the spines), `-f a` checks every
# SA query against it (its flows v, validation, and s, service records and
# leases: osmtest.c runs both under -f a), then its other flows against the
# same inventory: m (multicast joins across the tree), q (QoS: SLtoVL and
# VLArb records of every port), e and t (event forwarding, traps 64/65:
# "not implemented yet" in osmtest's libibumad build, they pass without
# checking anything; sa_inform.sh tests InformInfo).  osmtest.sh runs
# every flow on the default subnet.
# Only the management stack is loaded (scale-lib.sh's scale_load: no IPoIB,
# CM or uverbs), as the scale tests do: what osmtest asks is the SA's.
set -u
. "$WEFT_REPO/tests/topologies/scale-lib.sh"
fail=0
bad() { echo "osmtest_ftree: FAIL: $*"; fail=1; }
topo=$WEFT_REPO/tests/topologies/weft-topo.py
db=/tmp/osmtest-ftree.dat

scale_load || exit 1
python3 "$topo" fattree 2 2 2 >/tmp/ftree.topo || bad "generator failed"
python3 "$topo" build /tmp/ftree.topo || bad "building the fat tree failed"
sys=/sys/class/infiniband
hcas=
for d in $sys/weft*; do
	case ${d##*/} in weftsw*) ;; *) hcas="$hcas ${d##*/}" ;; esac
done
echo "HCAs: $hcas"
[ "$(wc -w <<<"$hcas")" = 4 ] || bad "not 4 HCAs: $hcas"
echo "force_log_flush TRUE" >/tmp/opensm-ftree.conf
weft_sm_start weft0 5 "-F /tmp/opensm-ftree.conf"
# shellcheck disable=SC2086 # the device names are words
weft_wait_active $hcas || bad "ports not ACTIVE under OpenSM: $(cat /tmp/opensm.out)"
weft_wait_line /tmp/opensm.log "SUBNET UP" 30 || bad "no SUBNET UP"
sleep 2
echo "osmtest_ftree: built and ACTIVE at $SECONDS s"
ca=(-g "$(ibstat -p weft0 | head -1)")
cd /tmp || exit 1
rm -f $db
out=$(osmtest "${ca[@]}" -f c -i $db 2>&1)
rc=$?
grep 'TEST "' <<<"$out"
[ $rc = 0 ] && grep -q 'TEST "Create Inventory" PASS' <<<"$out" || bad "-f c failed (exit $rc)"
[ "$(grep -c '^DEFINE_NODE' $db)" = 8 ] || bad "inventory: not 8 nodes: $(grep -c '^DEFINE_NODE' $db)"
# Every ordered pair of the 4 HCA ports and the 4 switch port 0s.
[ "$(grep -c '^DEFINE_PATH' $db)" -ge 56 ] || bad "inventory: $(grep -c '^DEFINE_PATH' $db) paths"
echo "osmtest_ftree: -f c done at $SECONDS s"
out=$(osmtest "${ca[@]}" -v -f a -i $db -l /tmp/osmtest-ftree-a.log 2>&1)
rc=$?
grep 'TEST "' <<<"$out"
[ $rc = 0 ] && grep -q 'TEST "All Validations" PASS' <<<"$out" || bad "-f a failed (exit $rc)"
grep -q "path records validated using GUID based query" /tmp/osmtest-ftree-a.log ||
	bad "the GUID-pair path validation did not run to its end"
awk '/Expecting Errors - START/{e=1} /Expecting Errors  -  END/{e=0; next} !e && / ERR [0-9A-F]{4}:/' \
	/tmp/osmtest-ftree-a.log | head -20
echo "osmtest_ftree: -f a done at $SECONDS s"
for flow in m q e t; do
	t0=$SECONDS
	out=$(timeout 120 osmtest "${ca[@]}" -f $flow -i $db -l /tmp/osmtest-ftree-$flow.log 2>&1)
	rc=$?
	echo "osmtest -f $flow: $((SECONDS - t0)) s"
	grep 'TEST "' <<<"$out"
	[ $rc = 0 ] && grep -q 'TEST ".*" PASS' <<<"$out" || bad "-f $flow failed (exit $rc): $(tail -3 <<<"$out")"
done
weft_sm_stop
grep "ERR " /tmp/opensm.log | head -20
python3 "$topo" teardown >/dev/null || bad "teardown failed"
rm -f /var/cache/opensm/guid2lid # the next tests' default subnet: not this fabric's LIDs
echo "osmtest_ftree: torn down at $SECONDS s"
scale_unload || fail=1
weft_check_taint || fail=1
exit $fail
