#!/bin/bash
# Build self-test: the C++ rule (scripts/Kbuild.cxx) must refuse an object
# with a static constructor, and accept the same global made constinit.
# Builds two throwaway modules against KDIR with the real kbuild rule.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
kdir=${1:?KDIR}
build=$(cd "${2:?BUILD dir of that kernel (has generated/weft/layout.h)}" && pwd)
cxx=${3:?g++ of the kernel}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

try() { # NAME SOURCE -> exit status of the module build
	local d=$tmp/$1
	mkdir -p "$d"
	ln -s "$repo/scripts" "$repo/include" "$d/"
	ln -s "$build/generated" "$d/generated"
	printf '%s\n' "$2" >"$d/probe.cpp"
	cat >"$d/Kbuild" <<'KB'
include $(KBUILD_EXTMOD)/scripts/Kbuild.cxx
obj-m += weft_probe.o
weft_probe-y := probe.o
KB
	make -s -C "$kdir" M="$d" WEFT_CXX="$cxx" modules >"$d.log" 2>&1
}

ctor='struct Counter { Counter() : n(1) {} int n; };
Counter counter;
extern "C" int weft_probe_value(void);
extern "C" int weft_probe_value(void) { return counter.n; }'
good='struct Counter { constexpr Counter() : n(1) {} int n; };
constinit Counter counter;
extern "C" int weft_probe_value(void);
extern "C" int weft_probe_value(void) { return counter.n; }'

if try ctor "$ctor"; then
	echo "FAIL build/static-ctor-rejected - an object with a static constructor built"
	fail=1
elif grep -q 'static constructors/destructors' "$tmp/ctor.log"; then
	echo "PASS build/static-ctor-rejected"
else
	echo "FAIL build/static-ctor-rejected - failed for another reason: $(grep -m1 -i error "$tmp/ctor.log")"
	fail=1
fi
# The module link may still complain (the probe has no module_init or
# license); what matters is that the object compiled and passed the check.
try good "$good"
if [ -f "$tmp/good/probe.o" ] && ! grep -q 'static constructors' "$tmp/good.log"; then
	echo "PASS build/constinit-global-accepted"
else
	echo "FAIL build/constinit-global-accepted - $(grep -m1 -iE 'error|static' "$tmp/good.log")"
	fail=1
fi
exit $fail
