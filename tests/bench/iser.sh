#!/bin/bash
# make bench-iser: fio 4 KiB random read/write at queue depth 1 and 32 and
# 1 MiB sequential read/write on brd directly, on Weft's iSER (weft_iser
# on weft0 -> weft_isert on weft1, a brd LUN), on iSCSI/TCP over a veth
# pair and on the in-tree iSER over rxe, in one stock-kernel guest
# (iser-in-guest.sh); prints the table (blk-lib.sh).  A benchmark, not a
# test.  Console log: build/logs/bench-iser.log.
set -eu
cd "$(dirname "$0")/../.."
. tests/bench/blk-lib.sh
# Columns brd, weft, tcp, rxe: the ratios are weft/brd and weft/rxe.
blk_bench iser brd weft tcp rxe
