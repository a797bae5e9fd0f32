#!/bin/bash
# make shell: the test host of `make run` (Weft loaded, OpenSM, two hosts)
# with a shell on its console, on this terminal.  ./shell-work/ (made if
# missing, git-ignored) is shared writable at the same path in the guest;
# the rest of the host's root is there read-only.  `exit` unloads Weft and
# powers the guest off.  The console log goes to build/logs/shell-stock.log.
#
#   run-shell.sh [--batch FILE]: FILE's lines typed into the shell once it
#   is ready, then exit (a check that needs no terminal; not in make check).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
batch=
[ "${1:-}" = --batch ] && batch=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
scripts/deps.sh
make --no-print-directory modules >/dev/null
mkdir -p shell-work build/logs
log=build/logs/shell-stock.log
rows=24 cols=80
[ -t 0 ] && read -r rows cols < <(stty size)
vm=(tests/harness/vm-run.sh --kernel stock --script scripts/shell-guest.sh --name shell
	--log "$log" --timeout 86400 --mem 2048 --share shell-work --interactive -- "$rows" "$cols")
if [ -z "$batch" ]; then
	WEFT_VM_LOGLEVEL=5 exec "${vm[@]}"
fi
# Batch: type the lines once the shell is there (what QEMU reads before the
# guest opens its console would be lost), then exit.
rm -f "$log"
{
	for _ in $(seq 1800); do
		grep -qa '^weft-shell: ready' "$log" 2>/dev/null && break
		sleep 1
	done
	sleep 1
	cat "$batch"
	echo exit
} | WEFT_VM_LOGLEVEL=5 "${vm[@]}"
