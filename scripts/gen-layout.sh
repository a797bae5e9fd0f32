#!/bin/sh
# gen-layout.sh LAYOUT.s OUT.h: turn the DEFINE() markers that lib/rt/layout.c
# leaves in its assembly into #defines (kbuild's asm-offsets technique).
set -eu
in=$1
out=$2
tmp=$out.tmp
{
	echo "/* Generated from lib/rt/layout.c for one kernel: do not edit. */"
	echo "#ifndef WEFT_GENERATED_LAYOUT_H"
	echo "#define WEFT_GENERATED_LAYOUT_H"
	sed -n 's/^[[:space:]]*\.ascii[[:space:]]*"->\([A-Z0-9_]*\) [$#]*\(-\{0,1\}[0-9]*\) .*".*/#define \1 \2/p' "$in"
	echo "#endif"
} >"$tmp"
n=$(grep -c '^#define WEFT_' "$tmp")
[ "$n" -ge 40 ] || { echo "gen-layout.sh: only $n values found in $in" >&2; rm -f "$tmp"; exit 1; }
if cmp -s "$tmp" "$out"; then rm -f "$tmp"; else mv "$tmp" "$out"; fi
