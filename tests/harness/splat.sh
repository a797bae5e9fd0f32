#!/bin/bash
# splat.sh LOG: fail (and print the lines) if a console log shows a kernel
# splat: WARNING, BUG, Oops, KASAN, lockdep reports, RCU stalls, hung tasks,
# soft lockups, kmemleak leak reports, UBSAN, panics.
set -u
pattern='WARNING: CPU:|------------\[ cut here \]|BUG: |Oops|general protection fault|kernel BUG at|KASAN|UBSAN|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|lock held when returning|detected stalls|rcu_.*self-detected stall|blocked for more than [0-9]+ seconds|soft lockup|hard LOCKUP|unreferenced object 0x|Kernel panic|list_(add|del) corruption|ODEBUG:'
# WEFT_SPLAT_IGNORE=KCSAN: KCSAN's data-race reports are judged elsewhere
# (tests/race/kcsan.sh); every other kind of splat still fails.
ignore='^$'
case "${WEFT_SPLAT_IGNORE:-}" in KCSAN) ignore='BUG: KCSAN: |Reported by Kernel Concurrency Sanitizer' ;; esac
if grep -aE "$pattern" "$1" | grep -avE "$ignore" >/tmp/weft-splat.$$; then
	echo "---- kernel splat in $1 ----" >&2
	head -40 /tmp/weft-splat.$$ >&2
	rm -f /tmp/weft-splat.$$
	exit 1
fi
rm -f /tmp/weft-splat.$$
exit 0
