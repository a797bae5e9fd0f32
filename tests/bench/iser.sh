#!/bin/bash
# make bench-iser: fio 4 KiB random read/write at queue depth 1 and 32 and
# 1 MiB sequential read/write on brd directly, on Weft's iSER (weft_iser
# on weft0 -> weft_isert on weft1, a brd LUN), on iSCSI/TCP over a veth
# pair and on the in-tree iSER over rxe, in one stock-kernel guest
# (iser-in-guest.sh); prints the table (blk-lib.sh).  A benchmark, not a
# test.  Console log: build/logs/bench-iser.log.
#   PROFILE=1 [SECONDS_SAMPLED=20]: only Weft's disk, 4 KiB randread at
#   queue depth 32 sampled by weft_pcsample; prints the profile (log:
#   build/logs/profile-iser.log).
set -eu
cd "$(dirname "$0")/../.."
. tests/bench/blk-lib.sh
if [ -n "${PROFILE:-}" ]; then
	log=build/logs/profile-iser.log
	tests/harness/vm-run.sh --kernel stock --script tests/bench/iser-in-guest.sh --log "$log" \
		--timeout 1200 --mem 3072 --name profile-iser -- profile "${SECONDS_SAMPLED:-20}" >/dev/null || true
	tr -d '\r' <"$log" | sed -n 's/.*\(PROFILE \|bench-iser: \)/\1/p'
	exit 0
fi
# Columns brd, weft, tcp, rxe: the ratios are weft/brd and weft/rxe.
blk_bench iser brd weft tcp rxe
