#!/bin/bash
# make bench-srp: fio 4 KiB random read/write at queue depth 1 and 32 and
# 1 MiB sequential read/write on brd directly, on Weft's SRP (weft0 ->
# weft1, a brd LUN) and on the in-tree SRP over rxe, in one stock-kernel
# guest (srp-in-guest.sh); prints the table (blk-lib.sh).  A benchmark,
# not a test.  Console log: build/logs/bench-srp.log.
set -eu
cd "$(dirname "$0")/../.."
. tests/bench/blk-lib.sh
log=build/logs/bench-srp.log
mkdir -p build/logs
tests/harness/vm-run.sh --kernel stock --script tests/bench/srp-in-guest.sh --log "$log" \
	--timeout 2400 --mem 3072 --name bench-srp >/dev/null || true
tr -d '\r' <"$log" | grep -E '^(BLK-QUEUE|bench-srp:)' || true
blk_table "$log" brd weft rxe
