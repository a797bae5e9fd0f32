#!/bin/bash
# Build self-test: scripts/check-build-log.sh fails a build log that carries
# a compiler, objtool or modpost warning (none of which fail a 6.1 build by
# themselves) and passes a clean one.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
fail=0
clean='  CXX [M]  /w/build/lib/rt/log.o
  LD [M]  /w/build/lib/rt/weft_rt.o
  MODPOST /w/build/Module.symvers
Skipping BTF generation for /w/build/lib/rt/weft_rt.ko due to unavailability of vmlinux'
printf '%s\n' "$clean" >"$tmp"
if "$repo/scripts/check-build-log.sh" "$tmp" >/dev/null 2>&1; then
	echo "PASS build/log-check-clean"
else
	echo "FAIL build/log-check-clean - a clean log was rejected"
	fail=1
fi
while IFS='|' read -r kind line; do
	printf '%s\n%s\n' "$clean" "$line" >"$tmp"
	if "$repo/scripts/check-build-log.sh" "$tmp" >/dev/null 2>&1; then
		echo "FAIL build/log-check-detects/$kind - not detected: $line"
		fail=1
	else
		echo "PASS build/log-check-detects/$kind"
	fi
done <<'CASES'
compiler|/w/build/lib/rt/log.cpp:12:3: warning: unused variable 'x' [-Wunused-variable]
objtool|/w/build/lib/rt/weft_rt.o: warning: objtool: weft_x()+0x2a: call without frame pointer save/setup
modpost|WARNING: modpost: "weft_missing" [/w/build/lib/rt/weft_rt.ko] undefined!
CASES
exit $fail
