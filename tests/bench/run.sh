#!/bin/bash
# make bench: one stock-kernel guest measures Weft (RC SEND/WRITE/READ
# bandwidth, SEND latency), the in-kernel memcpy ceiling and the in-tree rxe
# with perftest, then prints one table with ratios.  A benchmark, not a test.
set -eu
cd "$(dirname "$0")/../.."
log=build/logs/bench-stock.log
mkdir -p build/logs
tests/harness/vm-run.sh --kernel stock --script tests/bench/in-guest.sh --log "$log" \
	--timeout 1800 --name bench >/dev/null
tr -d '\r' <"$log" | sed -n 's/.*\(WEFT-BENCH\|RXE-BENCH\) /\1 /p' | awk '
	$1 == "WEFT-BENCH" { weft[$2 " " $3] = $4 }
	$1 == "RXE-BENCH"  { rxe[$2 " " $3] = $4 }
	END {
		printf "%-12s %8s %11s %11s %11s %9s %9s\n", "op", "size", "weft MB/s",
			"rxe MB/s", "memcpy MB/s", "weft/cpy", "weft/rxe"
		n = split("rc_write rc_read rc_send", ops, " ")
		m = split("64 256 1024 4096 16384 65536 262144 1048576", sz, " ")
		for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) {
			k = ops[i] " " sz[j]; c = weft["memcpy " sz[j]]
			printf "%-12s %8s %11s %11s %11s %8.0f%% %8.1fx\n", ops[i], sz[j], weft[k],
				rxe[k], c, c ? 100 * weft[k] / c : 0, rxe[k] ? weft[k] / rxe[k] : 0
		}
		printf "\n%-12s %8s %11s %11s %9s\n", "latency", "size", "weft us", "rxe us", "weft/rxe"
		m = split("8 64 512 4096", ls, " ")
		for (j = 1; j <= m; j++) {
			k = "rc_send_lat " ls[j]; w = weft[k] / 1000
			printf "%-12s %8s %11.1f %11s %8.2fx\n", "rc_send_lat", ls[j], w, rxe[k],
				rxe[k] ? w / rxe[k] : 0
		}
		printf "\n%-8s %11s %11s %17s %11s\n", "copy MB/s", "memcpy", "copy_bytes",
			"kernel_csum_copy", "copy_csum"
		m = split("64 256 1024 4096 16384 65536 262144 1048576", sz, " ")
		for (j = 1; j <= m; j++)
			printf "%-9s %11s %11s %17s %11s\n", sz[j], weft["memcpy " sz[j]],
				weft["copy_bytes " sz[j]], weft["kernel_csum_copy " sz[j]], weft["copy_csum " sz[j]]
	}'
