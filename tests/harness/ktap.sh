#!/bin/bash
# ktap.sh LOG SUITE...: read KUnit's KTAP output from a console log and
# print one line per test case of the listed suites: "PASS kunit/<suite>/<case>",
# "FAIL ...", or "SKIP ... - <reason>" for a case KTAP marks "# SKIP" (a
# skip is not a pass).  Cases are counted, not suites: a suite adds a line
# of its own only when it failed without a failing case (its init, say),
# reported no case, or never reported at all.  The harness self-test suite
# weft_selftest_expected_failure must fail, in exactly its case
# fails_on_purpose: that is reported as a PASS of the harness, anything
# else as a FAIL.  Exit status: 0 when no FAIL.
set -u
log=$1
shift
[ $# -gt 0 ] || { echo "FAIL kunit - no suites to look for (no test modules built?)"; exit 1; }
expected_fail_suite=weft_selftest_expected_failure

sed -E 's/^\[ *[0-9]+\.[0-9]+\] //' "$log" | tr -d '\r' | awk -v want="$*" -v xsuite="$expected_fail_suite" '
	BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) wanted[w[i]] = 1 }
	# "ok 3 - name # SKIP reason" (or without the dash): 1 pass, 0 fail, 2 skip.
	function verdict(line) { if (line ~ /^ *not ok /) return 0; return line ~ /# SKIP/ ? 2 : 1 }
	function name_of(line,   f, k) {
		k = split(line, f, " "); i0 = (f[1] == "not") ? 4 : 3
		return f[i0] == "-" ? f[i0 + 1] : f[i0]
	}
	function reason(line) { sub(/.*# SKIP */, "", line); return line }
	/^    # Subtest: / { suite = $3; next }
	/^    (not )?ok [0-9]+ / {
		name = name_of($0); v = verdict($0)
		if (!((suite, name) in cases)) order[suite] = order[suite] " " name
		cases[suite, name] = v; why[suite, name] = reason($0)
		next
	}
	/^(not )?ok [0-9]+ / {
		name = name_of($0)
		if (name in wanted) { result[name] = verdict($0); seen[name] = 1; swhy[name] = reason($0) }
		next
	}
	END {
		bad = 0
		for (s in wanted) {
			if (!(s in seen)) { print "FAIL kunit/" s " - suite never reported"; bad = 1; continue }
			if (s == xsuite) {
				good = result[s] == 0 && cases[s, "passes"] == 1 && ((s SUBSEP "fails_on_purpose") in cases) && cases[s, "fails_on_purpose"] == 0
				print (good ? "PASS" : "FAIL") " harness/kunit-failure-detected - " s " reported as failed"
				if (!good) bad = 1
				continue
			}
			m = split(order[s], cs, " ")
			failed_case = 0
			for (i = 1; i <= m; i++) {
				v = cases[s, cs[i]]
				if (v == 2) { print "SKIP kunit/" s "/" cs[i] " - " why[s, cs[i]]; continue }
				print (v ? "PASS" : "FAIL") " kunit/" s "/" cs[i]
				if (!v) { bad = 1; failed_case = 1 }
			}
			if (m == 0 && result[s] == 2) print "SKIP kunit/" s " - the whole suite: " swhy[s]
			else if (m == 0) { print "FAIL kunit/" s " - no case reported"; bad = 1 }
			else if (result[s] == 0 && !failed_case) { print "FAIL kunit/" s " - the suite failed, no case did"; bad = 1 }
		}
		exit bad
	}' | sort -k2
exit "${PIPESTATUS[2]}"
