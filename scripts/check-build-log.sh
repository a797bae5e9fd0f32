#!/bin/sh
# check-build-log.sh LOG: the build must be warning-free (W=1), including
# objtool and modpost, which do not fail a 6.1 build on their own.
set -eu
if grep -nE 'warning:|WARNING:|objtool|[Ee]rror:' "$1" | grep -v 'Skipping BTF generation'; then
	echo "check-build-log: warnings in $1 (see above)" >&2
	exit 1
fi
