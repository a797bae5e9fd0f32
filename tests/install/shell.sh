#!/bin/bash
# shell.sh: make shell without a terminal (not part of make check: it is
# the interactive target, checked here by typing into it).  Types a few
# commands into the test host's shell (scripts/run-shell.sh --batch):
# the fabric is there, a file written in the shared directory reaches the
# host, the read-only host root refuses nothing but keeps no change, and
# `exit` powers the host off with Weft unloaded and exit status 0.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 1
fail=0
bad() { echo "shell: FAIL: $*"; fail=1; }
mark=shell-check-$$
rm -f "shell-work/$mark"
cmds=$(mktemp)
trap 'rm -f "$cmds" "shell-work/$mark"' EXIT
cat >"$cmds" <<EOT
ibstat -l
ping -c 2 -W 5 10.77.0.2 && echo "ping-ok-\$((40 + 2))"
ibv_devices | grep -c weft >$mark
echo written-\$(cat $mark)
EOT
scripts/run-shell.sh --batch "$cmds" >build/logs/shell-check.out 2>&1
rc=$?
# The console without CRs and terminal escapes (readline's bracketed paste).
out=$(tr -d '\r' <build/logs/shell-stock.log | sed 's/\x1b\[[?0-9;]*[a-zA-Z]//g')
[ $rc = 0 ] || bad "run-shell.sh exited $rc"
grep -q '^ping-ok-42' <<<"$out" || bad "no ping from the shell"
grep -qx 'weft0' <<<"$out" || bad "ibstat -l in the shell did not list weft0"
[ "$(cat "shell-work/$mark" 2>/dev/null)" = 2 ] || bad "shell-work/$mark on the host: '$(cat "shell-work/$mark" 2>&1)', want 2"
grep -q '^weft-shell: shell ended' <<<"$out" || bad "the shell's end was not reported"
grep -q '^weft-host: job exit status 0' <<<"$out" || bad "the host did not end with status 0"
[ $fail = 0 ] && echo "shell: PASS" || tail -30 build/logs/shell-check.out
exit $fail
