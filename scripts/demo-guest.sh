#!/bin/bash
# Guest side of `make run`: load the Weft stack and show it.
set -u
echo "== loading Weft on $(uname -r)"
weft_load || exit 1
echo "== loaded modules"
grep '^weft' /proc/modules
for m in $(weft_modules); do
	modinfo "$WEFT_MODDIR/$m" | grep -E '^(filename|description|license|vermagic):'
done
echo "== kernel log"
dmesg | grep -i weft
echo "== unloading"
weft_unload || exit 1
weft_check_taint || exit 1
echo "== Weft loaded and unloaded cleanly"
