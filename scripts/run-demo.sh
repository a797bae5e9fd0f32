#!/bin/bash
# make run: the main job, for now.  Build Weft for the stock Debian kernel,
# boot a test host on it (QEMU, TCG), load the stack there and show that it
# is there, then unload it.  The guest's console log is kept in build/logs/.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
scripts/deps.sh
make --no-print-directory modules >/dev/null
rc=0
tests/harness/vm-run.sh --kernel stock --script scripts/demo-guest.sh --name demo || rc=$?
# The guest's side of the story, from its console log.
sed -n '/^weft-host: kernel/,/^weft-host: job exit status/p' build/logs/demo-stock.log
exit $rc
