#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make fuzz-syscalls MINUTES=N [SEED=S] [SYZ_ARGS="ops=N procs=N ..."]: the
# syscall-sequence fuzzer (tests/syzfuzz/README.md) on the debug kernel
# (KASAN, lockdep, kmemleak) for N minutes (default 10), seeds S, S+1, ...
# (default: a random first seed, printed).  WEFT_SYZ_KERNEL=stock runs it
# on Debian's kernel instead.  Exit status 0 only for a pass with no splat.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
minutes=${MINUTES:-10}
seed=${SEED:-$(( $(od -An -N3 -tu4 /dev/urandom) + 1 ))}
kernel=${WEFT_SYZ_KERNEL:-debug}
mkdir -p build/logs build/syzfuzz
gcc -O2 -g -Wall -Wextra -Wno-unused-parameter -pthread -o build/syzfuzz/weft-syzfuzz \
	tests/syzfuzz/weft-syzfuzz.c || exit 1
if [ "$kernel" = debug ]; then
	dk=$(tests/kernel/build-debug-kernel.sh) || exit 1
	make --no-print-directory KDIR="$dk/linux" modules >build/logs/make-syzfuzz.log 2>&1 ||
		{ tail -30 build/logs/make-syzfuzz.log; exit 1; }
else
	make --no-print-directory modules >build/logs/make-syzfuzz.log 2>&1 ||
		{ tail -30 build/logs/make-syzfuzz.log; exit 1; }
fi
log=build/logs/syzfuzz-$kernel.log
echo "fuzz-syscalls: $minutes minutes on the $kernel kernel from seed $seed (log: $log)"
# shellcheck disable=SC2086 # SYZ_ARGS are words
tests/harness/vm-run.sh --kernel "$kernel" --script tests/syzfuzz/in-guest.sh --log "$log" \
	--timeout $((minutes * 60 + 1200)) --mem 3072 -- minutes="$minutes" first="$seed" ${SYZ_ARGS:-}
rc=$?
tr -d '\r' <"$log" | grep -a -E '^syzfuzz: (FAIL|[0-9]+ seeds)|WEFT-RESULT' || true
exit $rc
