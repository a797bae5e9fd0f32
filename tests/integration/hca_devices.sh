#!/bin/bash
# Integration: the default subnet (two HCAs behind one switch, autoconfigured
# at load) appears in the infiniband sysfs class as the in-tree kernel would
# show it, and Debian's ibstat/ibstatus read it: CA and switch node types,
# ports ACTIVE/LinkUp with distinct LIDs, port GUIDs in the GID table.  The
# switch is a box on the fabric, not a device of this host: it is in the
# class only with weft_hca switch_sysfs=1 (Documentation/umad.md).
set -u
fail=0
bad() { echo "hca_devices: FAIL: $*"; fail=1; }

weft_load || exit 1
for d in weft0 weft1; do
	[ -d /sys/class/infiniband/$d ] || bad "$d missing from /sys/class/infiniband"
done
[ ! -e /sys/class/infiniband/weftsw0 ] || bad "weftsw0 in /sys/class/infiniband by default"
[ "$(cat /sys/class/infiniband/weft0/node_type)" = "1: CA" ] || bad "weft0 node_type"
lids=""
for d in weft0 weft1; do
	p=/sys/class/infiniband/$d/ports/1
	[ "$(cat $p/state)" = "4: ACTIVE" ] || bad "$d state $(cat $p/state)"
	[ "$(cat $p/phys_state)" = "5: LinkUp" ] || bad "$d phys_state $(cat $p/phys_state)"
	lid=$(cat $p/lid)
	[ "$lid" != 0x0 ] || bad "$d has no LID"
	lids="$lids $lid"
	[ "$(cat $p/pkeys/0)" = 0xffff ] || bad "$d pkeys/0"
	guid=$(ibstat $d 1 | sed -n 's/.*Port GUID: 0x//p')
	gid=$(tr -d ':' <$p/gids/0)
	[ -n "$guid" ] && [ "${gid#fe800000000000000}" != "$gid" ] && [ "${gid: -16}" = "$guid" ] ||
		bad "$d GID $gid does not carry port GUID $guid"
	out=$(ibstat $d)
	echo "$out"
	for want in "CA '$d'" "State: Active" "Physical state: LinkUp" "Rate: 100" \
		"Link layer: InfiniBand" "Number of ports: 1"; do
		grep -qF "$want" <<<"$out" || bad "ibstat $d lacks '$want'"
	done
	ibstatus $d | grep -q "state:.*4: ACTIVE" || bad "ibstatus $d"
done
[ "$(echo $lids | tr ' ' '\n' | sort -u | wc -l)" = 2 ] || bad "LIDs not distinct:$lids"
[ "$(ibstat -l | sort | tr '\n' ' ')" = "weft0 weft1 " ] || bad "ibstat -l: $(ibstat -l)"
weft_unload || fail=1

# The switch shown (switch_sysfs=1): node type 2, port 0 only, LinkUp/Active.
weft_load weft_hca:switch_sysfs=1 || exit 1
[ "$(cat /sys/class/infiniband/weftsw0/node_type 2>&1)" = "2: switch" ] || bad "weftsw0 node_type"
[ "$(ls /sys/class/infiniband/weftsw0/ports | tr '\n' ' ')" = "0 " ] || bad "weftsw0 ports"
out=$(ibstat weftsw0)
echo "$out"
for want in "Switch 'weftsw0'" "Port 0:" "State: Active" "Physical state: LinkUp"; do
	grep -qF "$want" <<<"$out" || bad "ibstat weftsw0 lacks '$want'"
done
ibstat -l | sort | tr '\n' ' ' | grep -q "weft0 weft1 weftsw0" || bad "ibstat -l: $(ibstat -l)"
weft_unload || fail=1
[ ! -e /sys/class/infiniband/weft0 ] || bad "weft0 still in sysfs after unload"
weft_check_taint || fail=1
exit $fail
