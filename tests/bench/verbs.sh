#!/bin/bash
# make bench-verbs: one stock-kernel guest runs Debian's perftest on Weft
# (user-space verbs through weft_uverbs) and on the in-tree rxe, same sizes
# and flags, plus the in-kernel memcpy ceiling; prints one table.  A
# benchmark, not a test.  The console log (every perftest client output
# included) is kept in build/logs/bench-verbs.log.
set -eu
cd "$(dirname "$0")/../.."
log=build/logs/bench-verbs.log
mkdir -p build/logs
tests/harness/vm-run.sh --kernel stock --script tests/bench/verbs-in-guest.sh --log "$log" \
	--timeout 1500 --mem 3072 --name bench-verbs >/dev/null
tr -d '\r' <"$log" | sed -n 's/.*\(PERF\|WEFT-BENCH\) /\1 /p' | awk '
	# perftest reports MB/sec as 2^20 bytes/s; the memcpy ceiling is 10^6 bytes/s.
	function num(x) { return x ~ /^[0-9]+(\.[0-9]+)?$/ ? x + 0 : 0 }
	function fmt(x, f) { return x > 0 ? sprintf(f, x) : "-" }
	$1 == "PERF" { v[$2 " " $3 " " $4] = $5 }
	$1 == "WEFT-BENCH" && $2 == "memcpy" { cpy[$3] = $4 }
	END {
		# "-": no figure (perftest printed none, or "inf", in two tries).
		printf "%-12s %8s %10s %10s %9s %11s %9s\n", "bandwidth", "size", "weft MB/s",
			"rxe MB/s", "weft/rxe", "memcpy MB/s", "weft/cpy"
		n = split("ib_send_bw ib_write_bw ib_read_bw", t, " ")
		m = split("64 256 1024 4096 16384 65536 262144 1048576", sz, " ")
		for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) {
			w = num(v["weft " t[i] " " sz[j]]) * 1.048576; r = num(v["rxe " t[i] " " sz[j]]) * 1.048576
			c = num(cpy[sz[j]])
			printf "%-12s %8s %10s %10s %9s %11s %9s\n", t[i], sz[j], fmt(w, "%.1f"),
				fmt(r, "%.1f"), fmt(w * r ? w / r : 0, "%.2fx"), fmt(c, "%d"),
				fmt(w * c ? 100 * w / c : 0, "%.1f%%")
		}
		printf "\n%-12s %8s %10s %10s %9s\n", "latency", "size", "weft us", "rxe us", "weft/rxe"
		n = split("ib_send_lat ib_write_lat ib_read_lat", t, " ")
		m = split("8 64 512 4096", sz, " ")
		for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) {
			w = num(v["weft " t[i] " " sz[j]]); r = num(v["rxe " t[i] " " sz[j]])
			printf "%-12s %8s %10s %10s %9s\n", t[i], sz[j], fmt(w, "%.2f"), fmt(r, "%.2f"),
				fmt(w * r ? w / r : 0, "%.2fx")
		}
	}'
