#!/bin/bash
# make bench-ipoib: one stock-kernel guest measures iperf3 TCP over Weft's
# IPoIB (each mode) and over a veth pair in the same guest, then prints the
# medians and the ratio to veth.  A benchmark, not a test.
#   WEFT_BENCH_SECONDS (10) per run, WEFT_BENCH_ROUNDS (3),
#   WEFT_BENCH_IPERF: extra iperf3 client arguments for every run ("-A 0,1" pins
#   the client to CPU 0 and the server to CPU 1),
#   WEFT_BENCH_VECTOR_CPU: the CPU of both HCAs' completion vector 0, where
#   both interfaces' NAPI runs (weft_hca comp_vector_cpu; default: weft0's
#   on CPU 0, weft1's on CPU 1, and then both modes again with both on
#   CPU 1: the rows ending in -vec1).
set -eu
cd "$(dirname "$0")/../.."
log=build/logs/bench-ipoib.log
mkdir -p build/logs
rm -f "$log"
tests/harness/vm-run.sh --kernel stock --script tests/bench/ipoib-in-guest.sh --log "$log" \
	--timeout 1800 --name bench-ipoib -- "${WEFT_BENCH_SECONDS:-10}" "${WEFT_BENCH_ROUNDS:-3}" "${WEFT_BENCH_IPERF:-}" \
	"${WEFT_BENCH_VECTOR_CPU:-}" >/dev/null
tr -d '\r' <"$log" | sed -n 's/.*IPOIB-BENCH /IPOIB-BENCH /p' | awk '
	function median(list,   a, n, i, j, t) {
		n = split(list, a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n ? (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) : 0
	}
	# Each IPoIB run is followed by a veth run: their ratio, per round.
	$2 == "tcp" && $3 == "veth" && last != "" && $4 > 0 { pair[last] = pair[last] " " 100 * lastv / $4 }
	$2 == "tcp" { runs[$3] = runs[$3] " " $4; if (!($3 in seen)) { order[++k] = $3; seen[$3] = 1 } }
	$2 == "tcp" { last = ($3 == "veth") ? "" : $3; lastv = $4 }
	$2 == "tcp-reverse" { rev[$3] = $4 }
	$2 == "mtu" { mtu[$3] = $4 }
	$2 == "rtt" { rtt[$3] = $4 }
	$2 == "note" { print "note:", substr($0, index($0, $3)) }
	END {
		v = median(runs["veth"])
		printf "%-16s %6s %10s %18s %14s %7s %8s %8s\n", "iperf3", "mtu", "TCP Mbit/s", "runs",
			"reverse Mbit/s", "rtt ms", "of veth", "paired"
		for (i = 1; i <= k; i++) {
			m = order[i]; x = median(runs[m])
			printf "%-16s %6s %10.0f %18s %14s %7s %7.1f%% %7s\n", m, (m in mtu) ? mtu[m] : "1500",
				x, runs[m], (m in rev) ? rev[m] : "-", (m in rtt) ? rtt[m] : "-", v ? 100 * x / v : 0,
				(m in pair) ? sprintf("%.1f%%", median(pair[m])) : "-"
		}
		print "of veth: median run over the median veth run; paired: median over rounds of each run"
		print "over the veth run right after it (veth moves 2x between runs, see Documentation/ipoib.md)"
	}'
