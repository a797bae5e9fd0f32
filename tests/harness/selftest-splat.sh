#!/bin/bash
# Host-side self-test of splat.sh: each kind of kernel report, as the 6.1
# kernel prints it, must be caught; a clean boot log must pass.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
clean='[    3.903014] Run /init as init process
[   19.476913] weft_rt: Weft kernel C++ runtime loaded
[   20.1] ok 1 weft_rt_alloc'
printf '%s\n' "$clean" >"$tmp/clean"
if ! "$here/splat.sh" "$tmp/clean" 2>/dev/null; then
	echo "FAIL harness/splat-clean-log - a clean log was reported as a splat"
	fail=1
else
	echo "PASS harness/splat-clean-log"
fi
while IFS='|' read -r kind line; do
	printf '%s\n%s\n' "$clean" "$line" >"$tmp/s"
	if "$here/splat.sh" "$tmp/s" 2>/dev/null; then
		echo "FAIL harness/splat-detects/$kind - not detected: $line"
		fail=1
	else
		echo "PASS harness/splat-detects/$kind"
	fi
done <<'CASES'
warning|[   12.1] WARNING: CPU: 1 PID: 212 at lib/rt/x.c:10 weft_x+0x1/0x2 [weft_rt]
bug|[   12.1] BUG: unable to handle page fault for address: ffff8880deadbeef
kasan|[   12.1] BUG: KASAN: slab-use-after-free in weft_y+0x10/0x20 [weft_rt]
oops|[   12.1] Oops: 0000 [#1] PREEMPT SMP KASAN NOPTI
lockdep-circular|[   12.1] WARNING: possible circular locking dependency detected
lockdep-recursive|[   12.1] WARNING: possible recursive locking detected
lockdep-inconsistent|[   12.1] WARNING: inconsistent lock state
atomic-sleep|[   12.1] BUG: sleeping function called from invalid context at mm/slab.c:1
rcu-stall|[   12.1] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:
hung-task|[   12.1] INFO: task insmod:212 blocked for more than 120 seconds.
soft-lockup|[   12.1] watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [insmod:212]
kmemleak|unreferenced object 0xffff888004a1b000 (size 64):
list-corruption|[   12.1] list_add corruption. next->prev should be prev
panic|[   12.1] Kernel panic - not syncing: Fatal exception
CASES
exit $fail
