#!/bin/bash
# make bench-srp: fio 4 KiB random read/write at queue depth 1 and 32 and
# 1 MiB sequential read/write on brd directly, on Weft's SRP (weft0 ->
# weft1, a brd LUN) and on the in-tree SRP over rxe, in one stock-kernel
# guest (srp-in-guest.sh); prints the table (blk-lib.sh).  A benchmark,
# not a test.  Console log: build/logs/bench-srp.log.
set -eu
cd "$(dirname "$0")/../.."
. tests/bench/blk-lib.sh
blk_bench srp brd weft rxe
