#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run.sh OUT RUNS TARGET...: run each fuzz target (README.md) for RUNS
# executions from its committed corpus (every seed and regression input
# runs first), then print one line per target and a summary.  A crash, a
# sanitizer report, a leak, a WARN (host/runtime.c aborts) or an
# allocation over 512 MiB fails the target; its input is kept in
# OUT/crashes/ and its log in OUT/logs/.  Runs are bounded by count and
# seeded, never by time.
set -u
out=$1 runs=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/crashes" "$out/logs"
pass=0 fail=0
for t in "$@"; do
	work=$out/work/$t log=$out/logs/$t.log
	rm -rf "$work"
	mkdir -p "$work" "$here/corpus/$t"
	# alloc_dealloc_mismatch=0: in the kernel new/delete and kmalloc/kmem_cache_alloc/kfree are
	# one allocator (a PacketBuf from the packet cache is freed by delete), on the host they are not.
	if ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:alloc_dealloc_mismatch=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$out/bin/$t" -runs="$runs" -seed=1 -max_len=8192 -malloc_limit_mb=512 -rss_limit_mb=2048 \
		-timeout=60 -print_final_stats=1 -artifact_prefix="$out/crashes/$t-" \
		"$work" "$here/corpus/$t" >"$log" 2>&1; then
		stats=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)
		cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$stats")
		ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$stats")
		eps=$(sed -n 's/^stat::average_exec_per_sec:[[:space:]]*//p' "$log")
		seeds=$(find "$here/corpus/$t" -type f | wc -l)
		case "${eps:-0}" in 0) speed="in under a second" ;; *) speed="$eps exec/s" ;; esac
		echo "ok   fuzz_$t: $runs runs, $seeds seeds, coverage $cov edges / $ft features, $speed"
		pass=$((pass + 1))
	else
		echo "FAIL fuzz_$t: $(grep -m1 -E 'ERROR:|runtime error|WEFT WARN|Assertion' "$log" || echo 'exit status') (log: $log)"
		ls "$out/crashes/$t-"* 2>/dev/null | sed 's/^/     input: /'
		fail=$((fail + 1))
	fi
done
echo "fuzz: $pass passed, $fail failed ($runs runs each)"
[ "$fail" -eq 0 ]
