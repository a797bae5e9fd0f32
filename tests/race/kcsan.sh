#!/bin/bash
# kcsan.sh LOG: the KCSAN data-race reports on a race-kernel console.  A
# report with a frame in a Weft module ("[weft_...]") is Weft's and is a
# FAIL (printed whole); the others are the kernel's own, counted and listed
# by their first line only.  Prints PASS/FAIL lines; exit status 0 when
# Weft has none.
set -u
log=$1
out=$(sed -E 's/^\[ *[0-9]+\.[0-9]+\] //' "$log" | tr -d '\r' | awk '
	/^BUG: KCSAN: / { inrep = 1; rep = $0; weft = 0; next }
	inrep && /^====/ {
		if (weft) { nweft++; print "WEFT " rep; print full "\n" } else { nother++; print "KERNEL " rep }
		inrep = 0; full = ""; next
	}
	inrep { full = full "\n" $0; if ($0 ~ /\[weft_/) weft = 1 }
	END { printf "COUNT %d %d\n", nweft, nother }')
read -r _ nweft nother < <(printf '%s\n' "$out" | grep '^COUNT ')
if [ "$nother" -gt 0 ]; then
	echo "kcsan: $nother report(s) in the kernel's own code (not Weft's):"
	printf '%s\n' "$out" | grep '^KERNEL ' | sort | uniq -c | sed 's/^/  /'
fi
if [ "$nweft" -gt 0 ]; then
	printf '%s\n' "$out" | sed -n '/^WEFT /,/^$/p'
	echo "FAIL race/kcsan-weft - $nweft data-race report(s) in Weft's code (see $log)"
	exit 1
fi
if ! grep -aq 'kcsan: enabled\|KCSAN' "$log"; then
	echo "FAIL race/kcsan-weft - the console does not show KCSAN enabled (see $log)"
	exit 1
fi
echo "PASS race/kcsan-weft - no data race reported in Weft's code"
