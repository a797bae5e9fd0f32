#!/bin/bash
# Integration: the Weft modules load and unload cleanly on this kernel:
# present in lsmod and sysfs while loaded, gone after, and the kernel
# tainted at most O (out of tree) and E (unsigned).
set -u
fail=0
weft_load || fail=1
for m in $(weft_modules); do
	m=$(basename "$m" .ko)
	[ -d "/sys/module/$m" ] || { echo "load_unload: $m not in /sys/module"; fail=1; }
	grep -q "^$m " /proc/modules || { echo "load_unload: $m not in /proc/modules"; fail=1; }
done
grep -q "^weft_rt " /proc/modules || { echo "load_unload: weft_rt missing"; fail=1; }
weft_unload || fail=1
for m in $(weft_modules); do
	m=$(basename "$m" .ko)
	[ ! -d "/sys/module/$m" ] || { echo "load_unload: $m still loaded"; fail=1; }
done
weft_check_taint || fail=1
exit $fail
