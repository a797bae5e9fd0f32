#!/bin/bash
# Integration: rdma-core's own test suite (python3-pyverbs 44, shipped in
# /usr/share/doc/rdma-core/tests) on weft0 under OpenSM, as its users run
# it: `run_tests.py --dev weft0`.  Every test must pass or skip, except
# the ones listed below with the reason; and at least $min must pass, so
# that a regression that turns tests into skips is seen; the memory-window
# tests must each pass by name.  (Skipped: vendor tests for mlx5/EFA, RDMA
# CM, raw packet, ODP, XRC, device memory: what the rxe provider or Weft
# do not offer.)
# Then the same suite on the in-tree rxe in this guest (rxe0 on a veth, as
# make bench sets it up), side by side: every test that rxe passes must
# pass on Weft too, or be in $rxe_only with the reason; both lists are
# printed.
set -u
fail=0
bad() { echo "pyverbs: FAIL: $*"; fail=1; }
min=82
# Memory windows (Documentation/uverbs.md): type 1 and 2, bind by ibv_bind_mw,
# by a BIND_MW WR and by the new post_send API, local/remote invalidation.
required="test_mw_type1 test_invalidate_mw_type1 test_mw_type2 test_mw_type2_invalidate_local
	test_mw_type2_invalidate_remote test_mw_type2_invalidate_dealloc test_reg_mw_wrong_type
	test_qp_ex_rc_bind_mw"
# Tests Weft fails, each with why (Documentation/uverbs.md).
declare -A expected=(
	# IBA 1.5's ATOMIC WRITE: not offered by Weft (nor by 6.1's rxe):
	# the WQE completes with IBV_WC_LOC_QP_OP_ERR.
	[test_qp_ex_rc_atomic_write]=1
)

# Tests rxe passes and Weft cannot (Documentation/uverbs.md, "Side by side").
declare -A rxe_only=(
	# RoCE only: an AH without a GRH on a RoCE port; Weft's link layer is IB.
	[test_create_ah_roce]=1
	# Weft's GID tables have no empty entry to query.
	[test_query_gid_ex_bad_flow]=1
)

src=/usr/share/doc/rdma-core/tests
[ -f $src/run_tests.py ] || { echo "pyverbs: python3-pyverbs not installed"; exit 1; }
work=/tmp/pyverbs
rm -rf $work && mkdir -p $work && cp -r $src $work/tests && gunzip -f $work/tests/*.gz

weft_load weft_hca:autoconf=0 || exit 1
weft_sm_start weft0
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM"

(cd $work/tests && timeout 900 python3 run_tests.py --dev weft0 -v) >$work/out.log 2>&1
grep -E '^(Ran|OK|FAILED)' $work/out.log
passed=$(grep -cE ' \.\.\. ok$' $work/out.log)
skipped=$(grep -cE ' \.\.\. skipped' $work/out.log)
echo "pyverbs: $passed passed, $skipped skipped"
[ "$passed" -ge $min ] || bad "only $passed tests passed (want at least $min)"
# A test's verdict ends its line, or the next one when a docstring line is shown (-v).
verdict() {
	awk -v n="$1" 'hit { print; exit } index($0, n " (") == 1 { if (/ \.\.\. /) { print; exit } hit = 1 }' $work/out.log
}
for name in $required; do
	v=$(verdict $name)
	[[ "$v" == *" ... ok" ]] || bad "$name did not pass: ${v:-not run}"
done
# Every FAIL and ERROR, by test name; the expected ones are only reported.
for name in $(grep -E '^(FAIL|ERROR): ' $work/out.log | awk '{print $2}'); do
	if [ -n "${expected[$name]:-}" ]; then
		echo "pyverbs: $name fails, as documented"
	else
		bad "$name failed"
		grep -A14 -E "^(FAIL|ERROR): $name " $work/out.log
	fi
done
grep -qE '^(Ran [0-9]+ tests)' $work/out.log || { bad "the suite did not finish"; tail -n 20 $work/out.log; }

weft_sm_stop
weft_unload || bad "unload failed"

# passed LOG: "name (module.Class)" of every test that passed.
passed() {
	awk 'head != "" && / \.\.\. / { if (/ \.\.\. ok$/) print head; head = ""; next }
	     /^test_[A-Za-z0-9_]+ \(/ { head = $1 " " $2; if (/ \.\.\. /) { if (/ \.\.\. ok$/) print head; head = "" } }' "$1" | sort -u
}
. "$WEFT_REPO/tests/bench/rxe-lib.sh"
cp /etc/modprobe.d/weft-test-host.conf $work/blocked.conf
if bench_rxe_up; then
	(cd $work/tests && timeout 900 python3 run_tests.py --dev rxe0 -v) >$work/rxe.log 2>&1
	rdma link delete rxe0
	ip link delete rv0
	modprobe -r rdma_rxe
	modprobe -r ib_uverbs
	modprobe -r ib_core
	[ -d /sys/module/ib_core ] && { bad "ib_core still loaded after rxe"; lsmod | grep ib_; }
	passed $work/out.log >$work/weft.passed
	passed $work/rxe.log >$work/rxe.passed
	echo "pyverbs side by side: rxe $(wc -l <$work/rxe.passed) passed, Weft $(wc -l <$work/weft.passed)"
	[ "$(wc -l <$work/rxe.passed)" -ge 40 ] || bad "the suite on rxe passed too little to compare"
	comm -23 $work/rxe.passed $work/weft.passed >$work/rxe_only
	while read -r name cls; do
		if [ -n "${rxe_only[$name]:-}" ]; then
			echo "pyverbs: $name $cls passes on rxe only, as documented"
		else
			bad "$name $cls passes on rxe, not on Weft: $(verdict $name)"
		fi
	done <$work/rxe_only
	comm -13 $work/rxe.passed $work/weft.passed | sed 's/^/pyverbs: Weft only: /'
else
	bad "the in-tree rxe could not be set up for the side-by-side run"
fi
cp $work/blocked.conf /etc/modprobe.d/weft-test-host.conf
exit $fail
