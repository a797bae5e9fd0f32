#!/bin/bash
# Integration: the SRP target's device management agent (IBA 16.3,
# ulp/srp/dm, weft_srpt.ko) found by Debian's srptools, as on hardware.
#   1. The default subnet under OpenSM; weft_srpt loaded: weft1's port has
#      IsDeviceManagementSupported in its PortInfo (smpquery, a live SMP).
#   2. After a sweep, `ibsrpdm` on weft0 shows weft1's I/O unit, but with
#      no LIO target port there its controller (slot 1) is absent:
#      `ibsrpdm -c` lists no target on weft1.
#   3. A LIO target port for weft1 made and enabled (configfs, as
#      targetcli does): the IOC is present (IOUnitInfo's change ID moved)
#      and `ibsrpdm -c` prints weft1's target line exactly: id_ext,
#      ioc_guid and service_id the node GUID, dgid the port GID, pkey
#      ffff, and so does `srp_daemon -o -c`; `ibsrpdm` without -c shows
#      its IOUnitInfo, IOC profile and service entry.
#   4. The target port disabled: the IOC is gone again (change ID moved),
#      `ibsrpdm -c` lists nothing on weft1.
#   5. weft_srpt removed: the bit is clear in PortInfo, and after the next
#      sweep ibsrpdm finds nothing.
set -u
fail=0
bad() { echo "srp_dm: FAIL: $*"; fail=1; }
sys=/sys/class/infiniband
out=/tmp/srp_dm.out

# srp_daemon skips targets a SCSI host already logs in to: it reads /sys/class/scsi_host.
modprobe scsi_mod 2>/dev/null
[ -d /sys/class/scsi_host ] || bad "no /sys/class/scsi_host (scsi_mod)"
weft_load weft_hca:autoconf=0 || exit 1
weft_sm_start weft0
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM"
lid1=$(( $(cat $sys/weft1/ports/1/lid) ))
# ibsrpdm asks through a umad device (umad0 by default): weft0 port 1's.
umad=
for d in /sys/class/infiniband_mad/umad*; do
	[ "$(cat "$d/ibdev"):$(cat "$d/port")" = weft0:1 ] && umad=/dev/infiniband/${d##*/}
done
[ -n "$umad" ] || bad "no umad device for weft0 port 1"

# weft1's identity as ibsrpdm prints it: GUIDs in 16 hex digits, the GID in 32.
node1=$(tr -d : <$sys/weft1/node_guid)
gid1=$(tr -d : <$sys/weft1/ports/1/gids/0)
want="id_ext=$node1,ioc_guid=$node1,dgid=$gid1,pkey=ffff,service_id=$node1"

is_dm() { smpquery -C weft0 -P 1 portinfo "$lid1" 1 2>&1 | grep -q IsDeviceManagementSupported; }
dm_query() { timeout 60 ibsrpdm -d "$umad" "$@" >$out 2>/tmp/srp_dm.err; }
# ibsrpdm_until SECONDS CHECK: ibsrpdm -c again and again (after a sweep
# request) until CHECK holds on its output.
ibsrpdm_until() {
	local i
	for i in $(seq 1 "$1"); do
		kill -HUP "$weft_sm_pid"
		sleep 1
		dm_query -c
		$2 && return 0
	done
	return 1
}
lists_weft1() { grep -qxF "$want" $out; }
lists_none() { ! grep -q id_ext= $out; }

# Before weft_srpt: no DM agent, no bit.
is_dm && bad "weft1 has IsDeviceManagementSupported before weft_srpt"
dm_query -c || bad "ibsrpdm -c before weft_srpt: $(cat /tmp/srp_dm.err)"
lists_none || bad "ibsrpdm found targets before weft_srpt: $(cat $out)"

# 1-2. weft_srpt on every CA port; no LIO target port yet: an I/O unit without its controller.
weft_insmod weft_srpt || bad "insmod weft_srpt"
is_dm || bad "smpquery: weft1 port 1 lacks IsDeviceManagementSupported: $(smpquery -C weft0 -P 1 portinfo "$lid1" 1 | grep -A8 CapMask)"
# weft1's IOUnitInfo change ID, from ibsrpdm's full output.
change_id() { dm_query && grep -A1 "port GID: *$gid1" $out | sed -n 's/.*change ID: *//p'; }
iou_seen() { grep -q "port GID: *$gid1" $out; }
for i in $(seq 1 30); do
	kill -HUP "$weft_sm_pid"
	sleep 1
	dm_query && iou_seen && break
done
iou_seen || bad "ibsrpdm never showed weft1's I/O unit: $(cat $out) $(cat /tmp/srp_dm.err)"
grep -q "Weft SRP target" $out && bad "weft1's IOC present without a LIO target port: $(cat $out)"
c0=$(change_id)
dm_query -c
lists_weft1 && bad "ibsrpdm -c lists weft1 without a LIO target port"

# 3. A LIO target port for weft1 (as targetcli makes it: WWN, TPG 1, enabled).
tp=/sys/kernel/config/target/srpt/0x$gid1
mkdir -p "$tp/tpgt_1" && echo 1 >"$tp/tpgt_1/enable" || bad "LIO target port $tp"
if ibsrpdm_until 30 lists_weft1; then
	echo "srp_dm: ibsrpdm -c: $(cat $out)"
else
	bad "ibsrpdm -c never listed '$want': $(cat $out) $(cat /tmp/srp_dm.err)"
fi
c1=$(change_id)
[ -n "$c0" ] && [ -n "$c1" ] && [ "$c0" != "$c1" ] || bad "change ID did not move with the IOC: '$c0' -> '$c1'"
# srp_daemon itself, once, printing the add_target strings it would write.
timeout 60 srp_daemon -o -c -d "$umad" >$out 2>/tmp/srp_dm.err || bad "srp_daemon -o -c: $(cat /tmp/srp_dm.err)"
lists_weft1 || bad "srp_daemon -o -c does not list '$want': $(cat $out)"
dm_query || bad "ibsrpdm: $(cat /tmp/srp_dm.err)"
for line in "port LID: *$(printf %04x "$lid1")" "port GID: *$gid1" "max controllers: 0x10" \
	"GUID: *$node1" "IO class : 0100" "ID: *Weft SRP target" "service entries: 1" \
	"service\[ *0\]: $node1 / SRP.T10:$node1" "Maximum size of Send Messages in bytes: 4096"; do
	grep -qE "$line" $out || bad "ibsrpdm lacks '$line'"
done

# 4. The target port disabled: the agent hides the IOC at once.
echo 0 >"$tp/tpgt_1/enable" || bad "disable $tp"
dm_query -c || bad "ibsrpdm -c: $(cat /tmp/srp_dm.err)"
lists_weft1 && bad "ibsrpdm -c still lists weft1 with its target port disabled"
c2=$(change_id)
[ -n "$c2" ] && [ "$c2" != "$c1" ] || bad "change ID did not move when the IOC went: '$c1' -> '$c2'"
weft_lio_clear || bad "LIO configuration not cleared"

# 5. Unloaded: the bit goes at once, the SM forgets the port at its next sweep.
rmmod weft_srpt || bad "rmmod weft_srpt"
is_dm && bad "weft1 keeps IsDeviceManagementSupported after rmmod"
ibsrpdm_until 30 lists_none || bad "ibsrpdm -c still lists targets after rmmod: $(cat $out)"

weft_sm_stop
weft_unload || fail=1
weft_check_taint || fail=1
exit $fail
