#!/bin/bash
# make bench-scale: fabrics of about 1,024 HCAs and 64-100 switches in one
# 4 GiB stock-kernel guest (bench-in-guest.sh), each swept by OpenSM with
# each routing engine; prints a table (Documentation/scale.md).  Not part
# of make check: it takes far longer than its budget.
#   WEFT_SCALE_RUNS: which fabrics (default "ft2 ft3 torus random")
set -eu
cd "$(dirname "$0")/../.."
log=build/logs/bench-scale.log
mkdir -p build/logs
rm -f "$log"
rc=0
# shellcheck disable=SC2086 # the run labels are words
tests/harness/vm-run.sh --kernel stock --script tests/topologies/bench-in-guest.sh --log "$log" \
	--timeout 7200 --mem 4096 --name bench-scale -- ${WEFT_SCALE_RUNS:-} >/dev/null || rc=$?
tr -d '\r' <"$log" | grep -a "^SCALE-\|^scale:" | awk '
	function v(k,   i) { for (i = 3; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "-" }
	/^scale:/ { print; next }
	$1 == "SCALE-BUILD" { b[$2] = sprintf("%s HCAs, %s switches, %s cables; build %s s (switches %s, HCAs %s, cables %s); %s KiB per HCA, %s KiB per switch, %d MiB in all",
		v("hcas"), v("switches"), v("cables"), v("build_s"), v("switch_s"), v("hca_s"), v("cable_s"), v("hca_kib"), v("switch_kib"), v("total_kib") / 1024); order[++n] = $2 }
	$1 == "SCALE-SWEEP" { s[$2] = s[$2] sprintf("  %-7s SUBNET UP %8s s   all ACTIVE %8s s   subscribed %8s s   nodes %5s   ibtracert %s   ibqueryerrors %s\n",
		$3, v("up_s"), v("active_s"), v("subs_s"), v("nodes"), v("tracert"), v("errors")) }
	$1 == "SCALE-TEARDOWN" { t[$2] = sprintf("%s s (cables %s, HCAs %s, switches %s)", v("teardown_s"), v("cables_s"), v("hcas_s"), v("switches_s")) }
	$1 == "SCALE-RESULT" { r = $2 }
	END {
		for (i = 1; i <= n; i++) { l = order[i]; printf "%s: %s; teardown %s\n%s", l, b[l], t[l], s[l] }
		print "result: " (r == "" ? "incomplete" : r)
	}'
exit $rc
