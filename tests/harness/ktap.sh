#!/bin/bash
# ktap.sh LOG SUITE...: read KUnit's KTAP output from a console log and
# print one line per test case and per suite ("PASS kunit/<suite>/<case>",
# "FAIL ..."), for the listed suites.  A listed suite that never reported is
# a failure.  The harness self-test suite weft_selftest_expected_failure
# must fail, in exactly its case fails_on_purpose: that is reported as a
# PASS of the harness, anything else as a FAIL.  Exit status: 0 when no FAIL.
set -u
log=$1
shift
[ $# -gt 0 ] || { echo "FAIL kunit - no suites to look for (no test modules built?)"; exit 1; }
expected_fail_suite=weft_selftest_expected_failure

sed -E 's/^\[ *[0-9]+\.[0-9]+\] //' "$log" | tr -d '\r' | awk -v want="$*" -v xsuite="$expected_fail_suite" '
	BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) wanted[w[i]] = 1 }
	/^    # Subtest: / { suite = $3; next }
	/^    (not )?ok [0-9]+ / {
		ok = ($1 == "ok"); name = ok ? $3 : $4
		if (name == "-") name = ok ? $4 : $5
		cases[suite, name] = ok; order[suite] = order[suite] " " name
		next
	}
	/^(not )?ok [0-9]+ / {
		ok = ($1 == "ok"); name = ok ? $3 : $4
		if (name == "-") name = ok ? $4 : $5
		if (name in wanted) { result[name] = ok; seen[name] = 1 }
		next
	}
	END {
		bad = 0
		for (s in wanted) {
			if (!(s in seen)) { print "FAIL kunit/" s " - suite never reported"; bad = 1; continue }
			if (s == xsuite) {
				good = !result[s] && cases[s, "passes"] == 1 && ((s SUBSEP "fails_on_purpose") in cases) && cases[s, "fails_on_purpose"] == 0
				print (good ? "PASS" : "FAIL") " harness/kunit-failure-detected - " s " reported as failed"
				if (!good) bad = 1
				continue
			}
			m = split(order[s], cs, " ")
			for (i = 1; i <= m; i++) {
				print (cases[s, cs[i]] ? "PASS" : "FAIL") " kunit/" s "/" cs[i]
				if (!cases[s, cs[i]]) bad = 1
			}
			print (result[s] ? "PASS" : "FAIL") " kunit/" s
			if (!result[s]) bad = 1
		}
		exit bad
	}' | sort -k2
exit "${PIPESTATUS[2]}"
