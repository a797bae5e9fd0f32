#!/bin/bash
# Integration: run-time topology through /sys/kernel/config/weft/
# (Documentation/fabric.md).  Loads the stack with an empty fabric
# (hcas=0), builds two HCAs back to back, then two switches with three HCAs,
# and checks what the infiniband sysfs class and ibstat show (node types,
# port and physical states through cable up/down and autoconf), that bad
# writes are refused with the right errno, that weft_hca cannot be unloaded
# while configfs entries exist, that removing a node under cable churn is
# safe, and that everything tears down to nothing.
set -u
fail=0
cfs=/sys/kernel/config/weft
sys=/sys/class/infiniband
bad() { echo "fabric_config: FAIL: $*"; fail=1; }

expect() { weft_expect "$@" || fail=1; }
# put FILE VALUE: the write must succeed.
put() { printf '%s\n' "$2" >"$1" || bad "write '$2' to $1 failed"; }
# refuse ERRNO-TEXT FILE VALUE: the write must fail, saying so.
refuse() {
	local out
	if out=$( { printf '%s\n' "$3" >"$2"; } 2>&1); then
		bad "write '$3' to $2 succeeded, want '$1'"
	elif [[ $out != *"$1"* ]]; then
		bad "write '$3' to $2: '$out', want '$1'"
	fi
}
# state DEV PORT STATE PHYS: the port as the sysfs class shows it.
state() {
	expect "$sys/$1/ports/$2/state" "$3"$'\n'
	expect "$sys/$1/ports/$2/phys_state" "$4"$'\n'
}
# node KIND NAME [PORTS]: mkdir + ports + enable; prints the device name.
node() {
	mkdir "$cfs/$1/$2" || { bad "mkdir $1/$2"; return 1; }
	[ -z "${3:-}" ] || put "$cfs/$1/$2/ports" "$3"
	put "$cfs/$1/$2/enable" 1
	cat "$cfs/$1/$2/device"
}
# cable NAME A B: mkdir, both ends, up.
cable() {
	mkdir "$cfs/cables/$1" || { bad "mkdir cables/$1"; return 1; }
	put "$cfs/cables/$1/a" "$2"
	put "$cfs/cables/$1/b" "$3"
	put "$cfs/cables/$1/up" 1
}
DOWN="1: DOWN" INIT="2: INIT" ACTIVE="4: ACTIVE" POLLING="2: Polling" LINKUP="5: LinkUp"

weft_kmemleak_clear
# Switches shown in the sysfs class too (they are not by default).
weft_load "weft_hca:hcas=0 switch_sysfs=1" || exit 1
for d in hcas switches cables; do
	[ -d $cfs/$d ] || bad "$cfs/$d missing"
done
[ -z "$(ls $sys 2>/dev/null)" ] || bad "devices with hcas=0: $(ls $sys)"
expect $cfs/topology ""

# --- two HCAs back to back ------------------------------------------------
h0=$(node hcas h0)
h1=$(node hcas h1 2)
echo "back to back: $h0 $h1"
[ -n "$h0" ] && [ -n "$h1" ] || { bad "no device names"; weft_unload; exit 1; }
expect $cfs/hcas/h1/ports $'2\n'
expect $cfs/hcas/h1/enable $'1\n'
expect $sys/$h0/node_type $'1: CA\n'
expect $sys/$h1/node_type $'1: CA\n'
[ "$(ls $sys/$h1/ports | tr '\n' ' ')" = "1 2 " ] || bad "$h1 ports: $(ls $sys/$h1/ports)"
state $h0 1 "$DOWN" "$POLLING"
cable c0 $h0:1 $h1:2
expect $cfs/cables/c0/a "$h0:1"$'\n'
expect $cfs/cables/c0/up $'1\n'
state $h0 1 "$INIT" "$LINKUP"
state $h1 2 "$INIT" "$LINKUP"
state $h1 1 "$DOWN" "$POLLING"
put $cfs/autoconf 1
state $h0 1 "$ACTIVE" "$LINKUP"
state $h1 2 "$ACTIVE" "$LINKUP"
state $h1 1 "$DOWN" "$POLLING"
[ "$(cat $sys/$h0/ports/1/lid)" != 0x0 ] || bad "$h0 port 1 has no LID after autoconf"
put $cfs/cables/c0/up 0
expect $cfs/cables/c0/up $'0\n'
state $h0 1 "$DOWN" "$POLLING"
state $h1 2 "$DOWN" "$POLLING"
put $cfs/cables/c0/up 1
state $h0 1 "$INIT" "$LINKUP"
state $h1 2 "$INIT" "$LINKUP"
put $cfs/cables/c0/up 1 # already up: no change
state $h0 1 "$INIT" "$LINKUP"
echo "--- ibstat $h0"
ibstat $h0 || bad "ibstat $h0 failed"

# Bad writes: values, names, ports, busy objects.
mkdir $cfs/hcas/spare
for v in 0 3 -1 x 1x 99999999999 ""; do
	refuse "Invalid argument" $cfs/hcas/spare/ports "$v"
done
refuse "Invalid argument" $cfs/hcas/spare/enable 2
refuse "Device or resource busy" $cfs/hcas/h0/ports 2
refuse "Device or resource busy" $cfs/hcas/h0/enable 1
refuse "Device or resource busy" $cfs/hcas/h0/enable 0
refuse "Permission denied" $cfs/hcas/h0/device x
expect $cfs/hcas/spare/device ""
rmdir $cfs/hcas/spare || bad "rmdir of a never enabled HCA"
mkdir $cfs/switches/spare
for v in 0 64 x; do
	refuse "Invalid argument" $cfs/switches/spare/ports "$v"
done
put $cfs/switches/spare/ports 63
rmdir $cfs/switches/spare
refuse "Invalid argument" $cfs/autoconf 2
refuse "Invalid argument" $cfs/autoconf x
mkdir $cfs/cables/bad
refuse "Invalid argument" $cfs/cables/bad/up 1 # no ends yet
refuse "Invalid argument" $cfs/cables/bad/drop count=1
refuse "No such device" $cfs/cables/bad/a nosuch0:1
refuse "Invalid argument" $cfs/cables/bad/a "$h0"
refuse "Invalid argument" $cfs/cables/bad/a "$h0:"
refuse "Invalid argument" $cfs/cables/bad/a "$h0:0"
refuse "Invalid argument" $cfs/cables/bad/a "$h0:3"
refuse "Invalid argument" $cfs/cables/bad/a "$h0:1x"
refuse "Invalid argument" $cfs/cables/bad/a ":1"
put $cfs/cables/bad/a "$h1:1"
refuse "Invalid argument" $cfs/cables/bad/b "$h1:1" # both ends one port
put $cfs/cables/bad/b "$h0:1"
refuse "Device or resource busy" $cfs/cables/bad/up 1 # h0:1 is on c0
refuse "Invalid argument" $cfs/cables/bad/up 2
refuse "Device or resource busy" $cfs/cables/c0/a "$h1:1" # c0 is up
rmdir $cfs/cables/bad
state $h0 1 "$INIT" "$LINKUP" # the refused cable changed nothing

# Fault knobs: syntax, and what reads back.
k=$cfs/cables/c0
for v in "" bogus ppm=1000001 ppm=x count=-1 dir=xy ms=5 "ppm=1 zz=2"; do
	refuse "Invalid argument" $k/drop "$v"
done
refuse "Invalid argument" $k/delay ms=0
refuse "Invalid argument" $k/delay ms=10001
refuse "Invalid argument" $k/reorder ms=x
put $k/drop "count=3 dir=ab"
put $k/corrupt "ppm=1000000"
put $k/delay "ms=20 ppm=5 dir=ba"
expect $k/drop $'ab ppm=0 count=3 injected=0\nba ppm=0 count=0 injected=0\n'
expect $k/corrupt $'ab ppm=1000000 count=0 injected=0\nba ppm=1000000 count=0 injected=0\n'
expect $k/delay $'ab ppm=0 count=0 ms=10 held=0 injected=0\nba ppm=5 count=0 ms=20 held=0 injected=0\n'
expect $k/duplicate $'ab ppm=0 count=0 injected=0\nba ppm=0 count=0 injected=0\n'
expect $k/reorder $'ab ppm=0 count=0 ms=10 held=0 injected=0\nba ppm=0 count=0 ms=10 held=0 injected=0\n'
put $k/corrupt "ppm=0"

# configfs holds weft_hca while entries exist.
if rmmod weft_hca 2>/dev/null; then
	bad "weft_hca unloaded with configfs entries present"
	exit 1
fi

# Removing an HCA takes its cable down; the cable entry stays and says so.
rmdir $cfs/hcas/h1 || bad "rmdir hcas/h1"
[ ! -e $sys/$h1 ] || bad "$sys/$h1 still there after rmdir"
expect $k/up $'0\n'
state $h0 1 "$DOWN" "$POLLING"
refuse "No such device" $k/up 1
rmdir $k $cfs/hcas/h0 || bad "rmdir c0/h0"
[ -z "$(ls $sys 2>/dev/null)" ] || bad "left after back to back: $(ls $sys)"

# --- two switches, three HCAs ---------------------------------------------
#   ha - s0 - s1 - hc
#        |
#        hb
s0=$(node switches s0 4)
s1=$(node switches s1 4)
ha=$(node hcas a)
hb=$(node hcas b)
hc=$(node hcas c)
echo "switched: $s0 $s1 $ha $hb $hc"
for d in "$s0" "$s1" "$ha" "$hb" "$hc"; do
	[ -n "$d" ] || { bad "a node of the switched shape has no device"; weft_unload; exit 1; }
done
expect $sys/$s0/node_type $'2: switch\n'
expect $sys/$s1/node_type $'2: switch\n'
[ "$(ls $sys/$s0/ports | tr '\n' ' ')" = "0 " ] || bad "$s0 ports: $(ls $sys/$s0/ports)"
# IBA 18.2.1: a base port 0 is up and Active from the start (no link, no state machine).
state $s0 0 "$ACTIVE" "$LINKUP"
cable ca $ha:1 $s0:1
cable cb $hb:1 $s0:2
cable cs $s0:3 $s1:3
cable cc $hc:1 $s1:1
for h in $ha $hb $hc; do
	state $h 1 "$INIT" "$LINKUP"
done
put $cfs/autoconf 1
for h in $ha $hb $hc; do
	state $h 1 "$ACTIVE" "$LINKUP"
done
state $s0 0 "$ACTIVE" "$LINKUP"
state $s1 0 "$ACTIVE" "$LINKUP"
lids=$(cat $sys/$ha/ports/1/lid $sys/$hb/ports/1/lid $sys/$hc/ports/1/lid \
	$sys/$s0/ports/0/lid $sys/$s1/ports/0/lid | sort -u | wc -l)
[ "$lids" = 5 ] || bad "LIDs not unique: $lids distinct"
echo "--- topology"
cat $cfs/topology
grep -qx "$s0:3 $s1:3 ACTIVE lid=0" $cfs/topology || bad "topology: no $s0:3 - $s1:3"
grep -qx "$s1:2 - DOWN lid=0" $cfs/topology || bad "topology: $s1:2 not free"
echo "--- ibstat"
out=$(ibstat 2>&1)
echo "$out"
for d in $ha $hb $hc $s0 $s1; do
	[[ $out == *"'$d'"* ]] || bad "ibstat does not show $d"
done
[ "$(ibstat $hc 1 | grep -c 'State: Active')" = 1 ] || bad "ibstat $hc 1 not Active"

# The inter-switch cable down: its ends go Down, the HCAs' links stay.
put $cfs/cables/cs/up 0
grep -qx "$s0:3 - DOWN lid=0" $cfs/topology || bad "topology: $s0:3 still up"
state $hc 1 "$ACTIVE" "$LINKUP"
put $cfs/cables/cs/up 1
grep -qx "$s0:3 $s1:3 INIT lid=0" $cfs/topology || bad "topology: $s0:3 not INIT after up"

# Removing a switch while its cables flap and its files are read.
(for i in $(seq 30); do
	echo 0 >$cfs/cables/ca/up; echo 1 >$cfs/cables/ca/up
	read -r _ <$cfs/topology; read -r _ <$cfs/cables/ca/up
done 2>/dev/null) &
(for i in $(seq 30); do echo 1 >$cfs/autoconf; done 2>/dev/null) &
sleep 0.2
rmdir $cfs/switches/s0 || bad "rmdir switches/s0"
wait
[ ! -e $sys/$s0 ] || bad "$sys/$s0 still there"
expect $cfs/cables/ca/up $'0\n'
state $ha 1 "$DOWN" "$POLLING"

# Tear down (cables refer to nodes by name: they go first here, but any order works).
for d in $cfs/cables/* $cfs/hcas/* $cfs/switches/*; do
	rmdir "$d" || bad "rmdir $d"
done
[ -z "$(ls $sys 2>/dev/null)" ] || bad "left after teardown: $(ls $sys)"
expect $cfs/topology ""
weft_unload || fail=1
[ ! -d /sys/module/weft_hca ] || bad "weft_hca still loaded"
[ ! -d $cfs ] || bad "$cfs still there after unload"
weft_check_taint || fail=1
weft_kmemleak_check || fail=1
exit $fail
