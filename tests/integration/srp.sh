#!/bin/bash
# Integration: SRP block devices (issue 24).  Debian's targetcli exports a
# ramdisk and a fileio LUN through weft_srpt on weft1; weft0 (and weft2)
# log in through weft_srp's add_target, as srp_daemon would, and use the
# disks with lsscsi, sg3-utils, mkfs.ext4 and fio --verify, also while
# the LUN and the target are reset, a cable flaps, OpenSM restarts, the
# target module is reloaded, and the initiator is unloaded under I/O.
#   1. malformed add_target strings: the in-tree errnos (and EINVAL for a
#      max_sect one fast registration cannot hold); the disks with
#      their sizes and vendor strings; a second add_target: EEXIST;
#      malformed logins over the wire: SRP_LOGIN_REJ with their reasons
#      and malformed IUs on a logged-in channel: SRP_RSP "invalid IU" or
#      a counted drop, the target answering a command after each
#   2. data: fio --verify=crc32c, ext4 round trip; on the wire, every
#      command's data fast-registered with a key of its own (srp_pcap.py)
#   3. sg_reset of the LUN and of the target under verified I/O
#   4. a cable flap shorter than fast_io_fail_tmo under verified I/O
#   5. OpenSM restarted under verified I/O
#   6. the target module unloaded and reloaded (the initiator reconnects)
#   7. a second initiator (weft2) on the same target, both verifying
#   8. 64 logins and logouts in a row
#   9. srp_daemon -e -o -n on weft0 logs in by itself (device management agent)
#  9b. srp_daemon as a service: logs in, and after an outage longer than
#      dev_loss_tmo (I/O failed, host removed) logs in again by itself
#  10. the initiator module: refused while a disk is open, clean after
set -u
fail=0
bad() { echo "srp: FAIL: $*"; fail=1; }
cfs=/sys/kernel/config/weft

# A capture ring that holds all of step 2b's capture: a slow reader drops nothing.
weft_load "weft_hca:hcas=0 capture_ring_kb=16384" || exit 1
weft_insmod weft_srpt || exit 1
weft_star 3 || bad "switch, HCAs and cables"
weft_sm_start weft0 2
weft_wait_active weft0 weft1 weft2 || bad "ports not ACTIVE under OpenSM"
weft_targetcli_prep || bad "targetcli"
modprobe -a sd_mod sg || bad "sd_mod, sg"

hexgid() { tr -d : </sys/class/infiniband/"$1"/ports/1/gids/0; }
nguid() { tr -d : </sys/class/infiniband/"$1"/node_guid; }
gid1=$(hexgid weft1)
ng1=$(nguid weft1)
wwn=ib.$gid1
iport() { echo "ib.0000000000000000$(hexgid "$1" | cut -c17-32)"; }
login="id_ext=$ng1,ioc_guid=$ng1,dgid=$gid1,pkey=ffff,service_id=$ng1"
add() { echo "$2" >/sys/class/infiniband_srp/srp-"$1"-1/add_target; }

# The target: a 64 MiB ramdisk (LUN 0) and a 32 MiB file (LUN 1), ACLs for weft0's and weft2's ports.
truncate -s 32M /tmp/srp-fileio
tc_setup() {
	targetcli >/tmp/targetcli.out 2>&1 <<-EOF
	/backstores/ramdisk create name=rd0 size=64M
	/backstores/fileio create name=fi0 file_or_dev=/tmp/srp-fileio
	/srpt create $wwn
	/srpt/$wwn/acls create $(iport weft0)
	/srpt/$wwn/acls create $(iport weft2)
	/srpt/$wwn/acls create ib.$(hexgid weft1 | cut -c17-32)$(hexgid weft0 | cut -c17-32)
	/srpt/$wwn/acls create ib.00000000000000ee$(hexgid weft0 | cut -c17-32)
	/srpt/$wwn/luns create /backstores/ramdisk/rd0
	/srpt/$wwn/luns create /backstores/fileio/fi0
	EOF
}
tc_setup || bad "targetcli setup: $(cat /tmp/targetcli.out)"
[ -d /sys/kernel/config/target/srpt/0x$gid1/tpgt_1/lun/lun_1 ] ||
	bad "LIO has no srpt target with two LUNs: $(tail -5 /tmp/targetcli.out)"

echo "== 1"
# 1. add_target: the in-tree parser's errors, then a login.  max_sect:
# above 4088 sectors one registration (512 pages) cannot hold a command;
# 8388608 x 512 is 2^32 (in 32 bits: no pages at all).
for s in "foo=1,$login" "id_ext=$ng1,ioc_guid=$ng1,dgid=$gid1,pkey=ffff" "${login/dgid=$gid1/dgid=fe80}" \
	"$login,cmd_sg_entries=0" "$login,tl_retry_count=9" "$login,io_class=1234" "pkey=zz,$login" \
	"$login,max_sect=4089" "$login,max_sect=8388608"; do
	err=$(add weft0 "$s" 2>&1) && bad "add_target accepted '$s'"
	grep -q "Invalid argument" <<<"$err" || bad "add_target '$s': $err (want EINVAL)"
done
add weft0 "$login" || bad "add_target refused a good login"
host=
for h in /sys/class/scsi_host/host*; do
	[ "$(cat "$h/local_ib_device" 2>/dev/null)" = weft0 ] && host=$h
done
[ -n "$host" ] || bad "no SCSI host for weft0's target"
weft_expect "$host/id_ext" "0x$ng1"$'\n' || bad "host id_ext"
weft_expect "$host/dgid" "$(cat /sys/class/infiniband/weft1/ports/1/gids/0)"$'\n' || bad "host dgid"
err=$(add weft0 "$login" 2>&1) && bad "a second identical add_target was accepted"
grep -q "File exists" <<<"$err" || bad "duplicate add_target: $err (want EEXIST)"
disk() { # LUN: the /dev node of weft0's LUN
	lsscsi "${host##*/host}:0:0:$1" 2>/dev/null | awk '{print $NF}'
}
for i in $(seq 1 100); do [ -b "$(disk 0)" ] && [ -b "$(disk 1)" ] && break; sleep 0.2; done
rd=$(disk 0) fi=$(disk 1)
lsscsi
[ -b "$rd" ] && [ -b "$fi" ] || bad "the two disks did not appear: $(lsscsi)"
[ "$(blockdev --getsize64 "$rd")" = $((64 << 20)) ] || bad "rd0 size $(blockdev --getsize64 "$rd")"
[ "$(blockdev --getsize64 "$fi")" = $((32 << 20)) ] || bad "fi0 size $(blockdev --getsize64 "$fi")"
sg_inq "$rd" | grep -q "Vendor identification: LIO-ORG" || bad "sg_inq vendor: $(sg_inq "$rd")"
sg_inq "$fi" | grep -q "Product identification: fi0" || bad "sg_inq product of LUN 1"

# 1b. Malformed logins over the wire (a CM client with raw private data,
#     weft_selftest_cm_client pdata=): each rejected with the SRP_LOGIN_REJ
#     reason of SRP 5.2.3 table 11; the target keeps serving (step 2).
login_hex() { # OPCODE IT_IU_LEN BUF_FMT FLAGS TARGET_PORT_ID(32 hex) [INITIATOR_EXT]
	printf '%02x%014x%016x%08x%08x%04x%02x%010x%016x%s%s' "$1" 0 0 "$2" 0 "$3" "$4" 0 "${6:-0}" \
		"$(hexgid weft0 | cut -c17-32)" "$5"
}
tid=$ng1$ng1
for c in "55 64 6 0 $tid 0x10000 bad opcode" "0 64 6 0 ${tid/#?/f} 0x10003 another target port" \
	"0 1048576 6 0 $tid 0x10002 IT IU too large" "0 64 0 0 $tid 0x10004 no buffer format" \
	"0 64 6 3 $tid 0x10000 reserved multichannel action"; do
	set -- $c
	what=${*:7}
	pd=$(login_hex "0x$1" "$2" "$3" "$4" "$5")
	if weft_insmod weft_selftest_cm_client dev=weft0 dest=weft1 service=0x$ng1 pdata=$pd; then
		w=$(cat /sys/module/weft_selftest_cm_client/parameters/reject_word)
		[ "$(printf '%#x' "$w")" = "$6" ] || bad "login with $what: SRP reason $(printf '%#x' "$w"), want $6"
		rmmod weft_selftest_cm_client
	else
		bad "login with $what: not rejected"
	fi
done
# A REQ whose private data is too short for a login.
if weft_insmod weft_selftest_cm_client dev=weft0 dest=weft1 service=0x$ng1 pdata=00000000000000000000; then
	rmmod weft_selftest_cm_client
else
	bad "a 10-byte login was not rejected"
fi

# 1c. Malformed IUs on a channel (SRP 5.6-5.7), sent by the same client
#     after a login of its own (initiator_ext 0xee, an ACL of its own; IT IU
#     64 bytes, indirect descriptors only), each followed by a TEST UNIT
#     READY the target must answer: "invalid IU" (CHECK CONDITION,
#     response code 2), "TM function not supported" (4), or a counted drop
#     (module parameter dropped_ius) for an unknown type or an IU too short
#     to carry a tag.
srp_cmd() { # FMT OUT_CNT IN_CNT TAG ADD_CDB_LEN CDB(32 hex) [descriptors, hex]
	printf '02%08x%02x%02x%02x%016x%08x%016x%06x%02x%s%s' 0 "$1" "$2" "$3" "$4" 0 0 0 "$5" "$6" "${7:-}"
}
desc() { printf '%016x%08x%08x' "$1" "$2" "$3"; } # VA KEY LEN
read10=28000000000000000100000000000000
write10=2a000000000000000100000000000000
tur=00000000000000000000000000000000
ius=(
	"$(srp_cmd 0 0 0 1 0 $tur | sed 's/^02/55/')" # an unknown IU type
	"$(srp_cmd 0 0 0 2 16 $tur)"                  # 4 words of additional CDB, none in the IU
	"$(srp_cmd 0x10 1 0 3 0 $write10 "$(desc 0x1000 0x1234 512)")" # direct: not negotiated
	"$(srp_cmd 0x02 0 2 4 0 $read10 "$(desc 0 0 16)00000200$(desc 0x1000 0x1234 256)$(desc 0x2000 0x1234 256)")" # table of one, count two
	"$(srp_cmd 0x02 0 4 5 0 $read10 "$(desc 0 0 64)00000200$(desc 0x1000 0x1234 512)")" # four counted, one there
	"$(printf '01%014x%016x%08x%016x%04x%02x%02x%016x%016x' 0 6 0 0 0 0x77 0 0 0)" # TSK_MGMT function 0x77
	"$(srp_cmd 0 0 0 7 0 $tur | cut -c1-20)"     # 10 bytes
	"$(srp_cmd 0 0 0 8 0 $tur)$(printf '%048d' 0)" # 72 bytes, 64 negotiated
)
# The first probe meets LIO's unit attention (REPORTED LUNS DATA HAS
# CHANGED: the second LUN was mapped after the first), the others are GOOD.
want="-/02 02.02/00 02.02/00 02.02/00 02.02/00 00.04/00 -/00 02.02/00"
drops0=$(cat /sys/module/weft_srpt/parameters/dropped_ius)
pd=$(login_hex 0 64 4 0 "$tid" 0xee)
# Captured on weft0's port for tshark (below).
cat /sys/kernel/debug/weft/weft0/port1/capture >/tmp/srp-iu.pcap &
cap=$!
for i in $(seq 1 50); do [ "$(stat -c %s /tmp/srp-iu.pcap)" -ge 24 ] && break; sleep 0.1; done
if weft_insmod weft_selftest_cm_client dev=weft0 dest=weft1 service=0x$ng1 login=$pd \
	probe="$(srp_cmd 0 0 0 0x7072 0 $tur)" ius="$(IFS=,; echo "${ius[*]}")"; then
	got=$(cat /sys/module/weft_selftest_cm_client/parameters/iu_replies)
	[ "$got" = "$want" ] || bad "malformed IUs answered '$got', want '$want'"
	rmmod weft_selftest_cm_client
else
	bad "the IU client failed: $(dmesg | grep weft_selftest_cm_client | tail -3)"
fi
drops=$(($(cat /sys/module/weft_srpt/parameters/dropped_ius) - drops0))
[ "$drops" = 2 ] || bad "target dropped $drops IUs, want 2 (unknown type, too short)"
# 1d. tshark's view of that capture (Wireshark has no SRP dissector: its
#     "srp" is H.324's; the IUs are RC SEND payloads to it): no malformed
#     or flagged packet; the CM REQ to the target's service carries the
#     SRP_LOGIN_REQ as its private data (zero-padded to 92 bytes), the REP
#     an SRP_LOGIN_RSP (opcode 0xc0); the 16 IUs and probes are RC SENDs.
sleep 1
kill $cap
wait $cap 2>/dev/null
# Wireshark 4.0's RPC-over-RDMA heuristic throws on any RC SEND payload
# shorter than its header (the 10-byte IU; a hand-made 12-byte SEND of
# zeros too): "[Malformed Packet: RPCoRDMA]".  Not ours to judge: off.
ts() { weft_ib_tshark --disable-heuristic rpcrdma_infiniband "$@" 2>>/tmp/srp-tshark.err; }
if weft_pcap_user0 /tmp/srp-iu.pcap /tmp/srp-iu.147.pcap; then
	flagged=$(ts -r /tmp/srp-iu.147.pcap -Y '_ws.malformed || _ws.expert.severity >= warning' | wc -l)
	[ "$flagged" = 0 ] || bad "tshark flags $flagged packets: $(ts -r /tmp/srp-iu.147.pcap -Y _ws.malformed | head -3)"
	req=$(ts -r /tmp/srp-iu.147.pcap -Y "infiniband.cm.req.serviceid == 0x$ng1" -T fields \
		-e infiniband.cm.req.private | head -1 | tr -d :)
	[ "$req" = "$pd$(printf '%056d' 0)" ] || bad "tshark: REQ private data '$req', want the login '$pd' (+ 28 zero bytes)"
	rep=$(ts -r /tmp/srp-iu.147.pcap -Y 'infiniband.mad.attributeid == 0x0013' -T fields \
		-e infiniband.cm.rep.private | head -1 | tr -d :)
	[ "${rep:0:2}" = c0 ] || bad "tshark: REP private data '$rep' is no SRP_LOGIN_RSP"
	sends=$(ts -r /tmp/srp-iu.147.pcap -Y "infiniband.bth.opcode == 4 && infiniband.lrh.slid == $(cat /sys/class/infiniband/weft0/ports/1/lid)" | wc -l)
	[ "$sends" -ge 16 ] || bad "tshark: $sends RC SENDs from weft0, want the 16 IUs and probes"
else
	bad "weft0's capture is not a pcap"
fi

echo "== 2"
# 2. Data.
vfio() { # NAME DEV [fio options]: verified random writes
	local n=$1 d=$2
	shift 2
	fio --name="$n" --filename="$d" --rw=randwrite --bs=4k --size=24M --ioengine=libaio --iodepth=16 \
		--direct=1 --verify=crc32c --do_verify=1 --verify_fatal=1 "$@" >/tmp/fio-"$n".out 2>&1
}
vfio plain "$rd" || bad "fio verify: $(tail -5 /tmp/fio-plain.out)"
fio --name=seq --filename="$rd" --rw=write --bs=1M --size=32M --direct=1 --ioengine=libaio --iodepth=4 \
	--verify=crc32c --do_verify=1 >/tmp/fio-seq.out 2>&1 || bad "fio 1 MiB verify: $(tail -5 /tmp/fio-seq.out)"
mkfs.ext4 -q -F "$fi" && mkdir -p /mnt/srp && mount "$fi" /mnt/srp || bad "mkfs/mount"
dd if=/dev/urandom of=/tmp/srp-pat bs=1M count=8 2>/dev/null
cp /tmp/srp-pat /mnt/srp/pat && umount /mnt/srp && mount "$fi" /mnt/srp && cmp /tmp/srp-pat /mnt/srp/pat ||
	bad "ext4 round trip"
umount /mnt/srp
# 2b. On the wire (weft0's port): each command's data fast-registered, one
#     direct descriptor, a new key per command, no other key used.
cat /sys/kernel/debug/weft/weft0/port1/capture >/tmp/srp.pcap &
cap=$!
sleep 0.5
fio --name=cap --filename="$rd" --rw=randrw --bs=64k --size=4M --direct=1 --ioengine=libaio \
	--iodepth=8 --io_size=8M >/tmp/fio-cap.out 2>&1 || bad "fio under capture: $(tail -3 /tmp/fio-cap.out)"
sleep 0.5
kill $cap
wait $cap 2>/dev/null
python3 "$WEFT_REPO/tests/integration/srp_pcap.py" /tmp/srp.pcap || bad "SRP descriptors on the wire"

echo "== 3"
# 3. Resets under verified I/O: LUN reset, target reset (a new login).
vfio resets "$rd" --loops=3 &
fpid=$!
sleep 2
sg_reset -d "$rd" || bad "sg_reset -d (LUN reset) failed"
sleep 1
sg_reset -t "$rd" || bad "sg_reset -t (target reset) failed"
wait $fpid || bad "fio across resets: $(tail -5 /tmp/fio-resets.out)"

echo "== 4"
# 4. A cable flap shorter than fast_io_fail_tmo under verified I/O.
rport=$(ls -d /sys/class/srp_remote_ports/port-"${host##*/host}":1 2>/dev/null)
[ -n "$rport" ] || bad "no srp_remote_ports entry for the host"
echo 2 >"$rport/reconnect_delay" || bad "reconnect_delay"
echo 120 >"$rport/fast_io_fail_tmo" || bad "fast_io_fail_tmo"
echo 300 >"$rport/dev_loss_tmo" || bad "dev_loss_tmo"
vfio flap "$rd" --loops=4 &
fpid=$!
sleep 2
echo 0 >$cfs/cables/c0/up
sleep 4
echo 1 >$cfs/cables/c0/up
weft_wait_active weft0 || bad "weft0 not ACTIVE after the flap"
wait $fpid || bad "fio across a cable flap: $(tail -5 /tmp/fio-flap.out)"
grep -q . "$rport/state" && weft_expect "$rport/state" $'running\n' || bad "rport not running after the flap"

echo "== 5"
# 5. OpenSM restarted under verified I/O.
vfio sm "$rd" --loops=3 &
fpid=$!
sleep 1
weft_sm_stop
weft_sm_start weft0 2
wait $fpid || bad "fio across an OpenSM restart: $(tail -5 /tmp/fio-sm.out)"

echo "== 6"
# 6. The target module unloaded and reloaded: the initiator logs in again.
#    weft0 is off the fabric meanwhile: targetcli enables a target port as
#    it creates it, so a login arriving halfway through the setup would
#    find an ACL without its LUNs (with ib_srpt too).  The I/O goes to the
#    fileio LUN: a ramdisk made again is a new, empty disk.
vfio reload "$fi" --loops=2 &
fpid=$!
sleep 2
echo 0 >$cfs/cables/c0/up
weft_lio_clear || bad "LIO configuration not cleared"
rmmod weft_srpt || bad "rmmod weft_srpt"
insmod "$WEFT_MODDIR"/ulp/srp/weft_srpt.ko || bad "insmod weft_srpt"
tc_setup || bad "targetcli setup again"
echo 1 >$cfs/cables/c0/up
weft_wait_active weft0 || bad "weft0 not ACTIVE after the reload"
wait $fpid || bad "fio across a target reload: $(tail -5 /tmp/fio-reload.out)"
weft_expect "$rport/state" $'running\n' || bad "rport not running after the target came back"

echo "== 7"
# 7. A second initiator on the same target.
add weft2 "$login" || bad "add_target on weft2"
host2=
for i in $(seq 1 100); do
	for h in /sys/class/scsi_host/host*; do
		[ "$(cat "$h/local_ib_device" 2>/dev/null)" = weft2 ] && host2=$h
	done
	[ -n "$host2" ] && [ -b "$(lsscsi "${host2##*/host}:0:0:0" | awk '{print $NF}')" ] && break
	sleep 0.2
done
rd2=$(lsscsi "${host2##*/host}:0:0:0" | awk '{print $NF}')
[ -b "$rd2" ] || bad "weft2's disk did not appear"
vfio two-a "$rd" --offset=0 --size=16M &
fpid=$!
vfio two-b "$rd2" --offset=32M --size=16M || bad "fio on weft2: $(tail -5 /tmp/fio-two-b.out)"
wait $fpid || bad "fio on weft0 beside weft2: $(tail -5 /tmp/fio-two-a.out)"
echo 1 >"$host2/delete"

echo "== 8"
# 8. 64 logins and logouts.
echo 1 >"$host/delete"
for i in $(seq 1 100); do [ -d "$host" ] || break; sleep 0.1; done
[ -d "$host" ] && bad "the host did not go after delete"
for n in $(seq 1 64); do
	add weft0 "$login" || { bad "login $n failed"; break; }
	h=
	for x in /sys/class/scsi_host/host*; do
		[ "$(cat "$x/local_ib_device" 2>/dev/null)" = weft0 ] && h=$x
	done
	[ -n "$h" ] || { bad "login $n: no host"; break; }
	echo 1 >"$h/delete"
	for i in $(seq 1 200); do [ -d "$h" ] || break; sleep 0.05; done
	[ -d "$h" ] && { bad "logout $n: the host stayed"; break; }
done
echo "64 logins and logouts done"

echo "== 9"
# 9. srp_daemon finds the target through its device management agent and
#    logs in by itself (-n: initiator_ext is the target port's GUID, for
#    which the target has an ACL of its own).  Every port has an agent,
#    but only weft1's shows its controller: it has a LIO target port.
timeout 300 srp_daemon -e -o -n -i weft0 -p 1 >/tmp/srp_daemon.out 2>&1
h=
for i in $(seq 1 100); do
	for x in /sys/class/scsi_host/host*; do
		[ "$(cat "$x/local_ib_device" 2>/dev/null)" = weft0 ] && h=$x
	done
	[ -n "$h" ] && [ -b "$(lsscsi "${h##*/host}:0:0:0" | awk '{print $NF}')" ] && break
	sleep 0.2
done
[ -n "$h" ] && [ -b "$(lsscsi "${h##*/host}:0:0:0" | awk '{print $NF}')" ] ||
	bad "srp_daemon did not log in: $(cat /tmp/srp_daemon.out)"
[ -n "$h" ] && echo 1 >"$h/delete"
for i in $(seq 1 100); do [ -n "$h" ] && [ -d "$h" ] || break; sleep 0.1; done

echo "== 9b"
# 9b. srp_daemon as a service (in the background with a periodic rescan,
#     as srptools' service runs it) logs in by itself; then a long outage:
#     I/O fails after fast_io_fail_tmo, the host goes after dev_loss_tmo
#     (shortened here), and when the cable returns the service logs in
#     again.  rport timers: seconds; detection needs I/O on the dead path.
weft0_host() { # a SCSI host of weft0 whose LUN 0 is a disk
	local x
	for x in /sys/class/scsi_host/host*; do
		[ "$(cat "$x/local_ib_device" 2>/dev/null)" = weft0 ] &&
			[ -b "$(lsscsi "${x##*/host}:0:0:0" | awk '{print $NF}')" ] && { echo "$x"; return 0; }
	done
	return 1
}
wait_host() { # SECONDS: until weft0 has a host with a disk
	local i
	for i in $(seq 1 $(($1 * 5))); do weft0_host >/dev/null && return 0; sleep 0.2; done
	return 1
}
srp_daemon -e -n -R 5 -i weft0 -p 1 >/tmp/srp_daemon_svc.out 2>&1 &
sdpid=$!
wait_host 120 || bad "srp_daemon (service) did not log in: $(cat /tmp/srp_daemon_svc.out)"
h=$(weft0_host)
d=$(lsscsi "${h##*/host}:0:0:0" | awk '{print $NF}')
rp=/sys/class/srp_remote_ports/port-${h##*/host}:1
echo 1 >"$rp/reconnect_delay" && echo 2 >"$rp/fast_io_fail_tmo" && echo 6 >"$rp/dev_loss_tmo" ||
	bad "rport timers on $rp"
echo 0 >$cfs/cables/c0/up
# The read meets the dead path: the transport fails it after fast_io_fail_tmo.
timeout 120 dd if="$d" of=/dev/null bs=4k count=1 iflag=direct 2>/tmp/srp-dd.err &&
	bad "a read through the lost path succeeded"
grep -q "Input/output error" /tmp/srp-dd.err || bad "the read did not fail with EIO: $(cat /tmp/srp-dd.err)"
for i in $(seq 1 600); do [ -d "$h" ] || break; sleep 0.2; done
[ -d "$h" ] && bad "the SCSI host stayed after dev_loss_tmo ($(cat "$rp/state" 2>/dev/null))"
[ -d "$rp" ] && bad "the remote port stayed after dev_loss_tmo"
echo 1 >$cfs/cables/c0/up
weft_wait_active weft0 || bad "weft0 not ACTIVE after the outage"
wait_host 180 || bad "srp_daemon did not log in again after the outage: $(tail -5 /tmp/srp_daemon_svc.out)"
h=$(weft0_host)
d=$(lsscsi "${h##*/host}:0:0:0" | awk '{print $NF}')
dd if="$d" of=/dev/null bs=4k count=16 iflag=direct 2>/dev/null || bad "read after the return failed"
kill "$sdpid"
wait "$sdpid" 2>/dev/null
echo 1 >"$h/delete"
for i in $(seq 1 100); do [ -d "$h" ] || break; sleep 0.1; done

echo "== 10"
# 10. The initiator under I/O: refused while a disk is in use, then clean.
add weft0 "$login" || bad "login before the unload"
# The disk once it has its size (an O_DIRECT open of a disk still being
# revalidated fails with EINVAL: seen under load).
for i in $(seq 1 300); do
	d=$(lsscsi | awk '/rd0/ {print $NF}' | head -1)
	[ -b "$d" ] && [ "$(blockdev --getsize64 "$d" 2>/dev/null || echo 0)" -gt 0 ] && break
	sleep 0.2
done
ref0=$(cat /sys/module/weft_srp/refcnt)
vfio unload "$d" --loops=3 &
fpid=$!
# fio holds the disk open once the open took its reference on the SCSI
# host's module: wait for that, not for a fixed time.
for i in $(seq 1 600); do
	[ "$(cat /sys/module/weft_srp/refcnt)" -gt "$ref0" ] && break
	kill -0 "$fpid" 2>/dev/null || break
	sleep 0.1
done
[ "$(cat /sys/module/weft_srp/refcnt)" -gt "$ref0" ] || bad "fio never held $d open: $(tail -5 /tmp/fio-unload.out)"
rmmod weft_srp 2>/dev/null && bad "weft_srp unloaded with a disk open"
wait $fpid || bad "fio while rmmod was refused: $(tail -5 /tmp/fio-unload.out)"
rmmod weft_srp || bad "rmmod weft_srp with its disks idle"
[ -d /sys/class/infiniband_srp ] && bad "class infiniband_srp left behind"

weft_sm_stop
weft_unload || bad "unload"
weft_check_taint || fail=1
exit $fail
