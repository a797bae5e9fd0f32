#!/bin/bash
# Integration: srp_daemon as a service without a periodic rescan (no -R),
# as srptools' service runs it by default: it subscribes at the SA (here
# OpenSM) to traps 64 (GID in service) and 144 (CapabilityMask changed)
# through InformInfo sent from a UD QP of its own (libibverbs on
# weft_uverbs), and logs in to the targets OpenSM's Reports announce.
#   1. A target port appears on weft1 after srp_daemon started (its LIO TPG
#      enabled): weft_srpt's agent shows the IOC and re-announces the port
#      (trap 144 carrying IsDeviceManagementSupported), OpenSM forwards
#      it, srp_daemon asks the agent and logs in.
#   2. That host removed; weft1's cable down until OpenSM reports the GID
#      out of service, then up: OpenSM's trap 64 Report brings srp_daemon
#      to log in again.
set -u
fail=0
bad() { echo "srp_service: FAIL: $*"; fail=1; }
cfs=/sys/kernel/config/weft
t=/sys/kernel/config/target

weft_load weft_hca:hcas=0 || exit 1
weft_insmod weft_srpt || exit 1
weft_star 2 || bad "switch, HCAs and cables"
weft_sm_start weft0 2
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM"
modprobe sd_mod || bad "sd_mod"
hexgid() { tr -d : </sys/class/infiniband/"$1"/ports/1/gids/0; }
gid1=$(hexgid weft1)

# LIO through configfs (as targetcli, which is slow under TCG): a 16 MiB
# ramdisk as LUN 0 of a target port on weft1 with an ACL for weft0, the
# TPG not enabled yet: the agent on weft1 shows no IOC.
rd=$t/core/rd_mcp_0/rd0
tp=$t/srpt/0x$gid1/tpgt_1
acl=$tp/acls/0x0000000000000000$(hexgid weft0 | cut -c17-32)
mkdir -p $rd && echo rd_pages=4096 >$rd/control && echo 1 >$rd/enable || bad "ramdisk"
mkdir -p $tp/lun/lun_0 && ln -s $rd $tp/lun/lun_0/rd0 || bad "LUN 0"
mkdir -p $acl/lun_0 && ln -s $tp/lun/lun_0 $acl/lun_0/rd0 || bad "ACL"

disk_host() { # a SCSI host of weft0 with a disk
	local x
	for x in /sys/class/scsi_host/host*; do
		[ "$(cat "$x/local_ib_device" 2>/dev/null)" = weft0 ] && ls "$x"/device/target*/*/block 2>/dev/null | grep -q sd &&
			{ echo "$x"; return 0; }
	done
	return 1
}
wait_host() { # SECONDS
	local i
	for i in $(seq 1 $(($1 * 5))); do disk_host >/dev/null && return 0; sleep 0.2; done
	return 1
}
reports() { grep -c "get_trap_notices: Got CQE" /tmp/srpd.out; }

# srp_daemon in the background, -V for its trace (stdout, line-buffered):
# wait until it subscribed (two InformInfo answers) and its first scan
# asked both DM-capable ports (neither has an IOC to log in to).
stdbuf -oL -eL srp_daemon -e -V -i weft0 -p 1 >/tmp/srpd.out 2>&1 &
sdpid=$!
for i in $(seq 1 600); do [ "$(grep -c "enter do_port" /tmp/srpd.out)" -ge 2 ] && break; sleep 0.1; done
grep -q "Registering to trap:144" /tmp/srpd.out && [ "$(reports)" -ge 2 ] ||
	bad "srp_daemon did not subscribe: $(cat /tmp/srpd.out)"
sleep 1
disk_host >/dev/null && bad "srp_daemon logged in before there was a target"

echo "== 1"
n0=$(reports)
echo 1 >$tp/enable || bad "enable the TPG"
wait_host 60 || bad "srp_daemon did not log in to the new target port: $(tail -20 /tmp/srpd.out)"
[ "$(reports)" -gt "$n0" ] || bad "srp_daemon logged in without a Report"
h=$(disk_host)
[ -n "$h" ] && echo 1 >"$h/delete"
for i in $(seq 1 100); do [ -n "$h" ] && [ -d "$h" ] || break; sleep 0.1; done

echo "== 2"
n0=$(reports)
o0=$(grep -c "GID out of service" /tmp/opensm.log)
echo 0 >$cfs/cables/c1/up
for i in $(seq 1 300); do [ "$(grep -c "GID out of service" /tmp/opensm.log)" -gt "$o0" ] && break; sleep 0.2; done
[ "$(grep -c "GID out of service" /tmp/opensm.log)" -gt "$o0" ] || bad "OpenSM did not see weft1 go"
disk_host >/dev/null && bad "srp_daemon logged in while weft1 was away"
echo 1 >$cfs/cables/c1/up
weft_wait_active weft1 || bad "weft1 not ACTIVE again"
wait_host 60 || bad "srp_daemon did not log in after trap 64: $(tail -20 /tmp/srpd.out)"
[ "$(reports)" -gt "$n0" ] || bad "srp_daemon logged in again without a Report"
# Only a trap 64 (a GID) makes srp_daemon look the LID up.
grep -q "^lid is" /tmp/srpd.out || bad "srp_daemon logged in again, but not through trap 64"

kill "$sdpid"
wait "$sdpid" 2>/dev/null
h=$(disk_host) && echo 1 >"$h/delete"
for i in $(seq 1 100); do [ -n "$h" ] && [ -d "$h" ] || break; sleep 0.1; done
weft_sm_stop
weft_unload || bad "unload"
weft_check_taint || fail=1
exit $fail
