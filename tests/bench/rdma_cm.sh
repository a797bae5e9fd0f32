#!/bin/bash
# make bench-rdma-cm: cmtime (rdmacm-utils) connection setup and teardown
# on Weft and on the in-tree rxe in one stock-kernel guest, for 100 and
# 1,000 connections; prints one table per connection count.  A benchmark,
# not a test.  Console log (each cmtime output included):
# build/logs/bench-rdma-cm.log.
set -eu
cd "$(dirname "$0")/../.."
log=build/logs/bench-rdma-cm.log
mkdir -p build/logs
tests/harness/vm-run.sh --kernel stock --script tests/bench/rdma_cm-in-guest.sh --log "$log" \
	--timeout 2400 --mem 3072 --name bench-rdma-cm >/dev/null || true
tr -d '\r' <"$log" | sed -n 's/.*\(CMTIME\) /\1 /p' | awk '
	# "CMTIME stack conns step total_ms max_ms min_us us_per_conn" (the columns of cmtime 44).
	$1 == "CMTIME" && NF == 8 { k = $3; step = $4
		v[$2 "|" k "|" step] = $8; if (!(k "|" step in seen)) { seen[k "|" step] = 1; order[++n] = k "|" step } }
	END {
		printf "%-6s %-15s %14s %14s %9s\n", "conns", "step", "weft us/conn", "rxe us/conn", "weft/rxe"
		for (i = 1; i <= n; i++) {
			split(order[i], p, "|"); w = v["weft|" order[i]]; r = v["rxe|" order[i]]
			printf "%-6s %-15s %14s %14s %9s\n", p[1], p[2], w == "" ? "-" : w, r == "" ? "-" : r,
				(w + 0 > 0 && r + 0 > 0) ? sprintf("%.2fx", w / r) : "-"
		}
	}'
