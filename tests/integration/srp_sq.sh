#!/bin/bash
# Integration: commands that need more send queue WRs than a target
# channel has (SRP target, issue 45).  weft_srpt with rq_size=2 gives each
# channel a send queue of 8 WRs; the initiator's commands are up to 1 MiB
# (max_sect=2048), and a 1 MiB direct write or read through weft0's SRP
# disk takes more RDMA WRs than that (LIO's buffer is in pages, at most 16
# SGEs go in a WR), which the target posts in rounds of at most the
# queue's size.  Each dd is bounded by a timeout: a command
# waiting for room that never comes is a hang, and a wedged channel.
set -u
fail=0
bad() { echo "srp_sq: FAIL: $*"; fail=1; }

weft_load weft_hca:autoconf=0 || exit 1
weft_insmod weft_srpt rq_size=2 || exit 1
weft_sm_start weft0
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM"
weft_targetcli_prep || bad "targetcli"
modprobe -a sd_mod sg || bad "sd_mod, sg"

hexgid() { tr -d : </sys/class/infiniband/"$1"/ports/1/gids/0; }
gid1=$(hexgid weft1)
ng1=$(tr -d : </sys/class/infiniband/weft1/node_guid)
wwn=ib.$gid1
targetcli >/tmp/targetcli.out 2>&1 <<EOT || bad "targetcli setup: $(tail -5 /tmp/targetcli.out)"
/backstores/ramdisk create name=rd0 size=16M
/srpt create $wwn
/srpt/$wwn/acls create ib.0000000000000000$(hexgid weft0 | cut -c17-32)
/srpt/$wwn/luns create /backstores/ramdisk/rd0
EOT
login="id_ext=$ng1,ioc_guid=$ng1,dgid=$gid1,pkey=ffff,service_id=$ng1,max_sect=2048"
echo "$login" >/sys/class/infiniband_srp/srp-weft0-1/add_target || bad "add_target"
host=
for i in $(seq 1 100); do
	for h in /sys/class/scsi_host/host*; do
		[ "$(cat "$h/local_ib_device" 2>/dev/null)" = weft0 ] && host=$h
	done
	[ -n "$host" ] && [ -b "$(lsscsi "${host##*/host}:0:0:0" | awk '{print $NF}')" ] && break
	sleep 0.2
done
rd=$(lsscsi "${host##*/host}:0:0:0" 2>/dev/null | awk '{print $NF}')
[ -b "$rd" ] || bad "no disk for weft0: $(lsscsi)"

dd if=/dev/urandom of=/tmp/srp-sq.pat bs=1M count=16 2>/dev/null
# A hung command is retried by the SCSI midlayer for minutes: the first failure ends the loop.
for bs in 1M 4M; do
	timeout 90 dd if=/tmp/srp-sq.pat of="$rd" bs=$bs oflag=direct 2>/tmp/srp-sq.err ||
		{ bad "$bs writes did not complete: $(cat /tmp/srp-sq.err)"; break; }
	timeout 90 dd if="$rd" of=/tmp/srp-sq.back bs=$bs count=$((16 / ${bs%M})) iflag=direct \
		2>/tmp/srp-sq.err || { bad "$bs reads did not complete: $(cat /tmp/srp-sq.err)"; break; }
	cmp /tmp/srp-sq.pat /tmp/srp-sq.back || bad "$bs: the data read back differs"
done
# The commands needed more WRs than a round: LIO saw them whole.
blocks=$(cat /sys/block/"${rd##*/}"/queue/max_sectors_kb)
[ "$blocks" -ge 1024 ] || bad "the disk takes at most $blocks KiB a command: no command needed rounds"

[ -n "$host" ] && echo 1 >"$host/delete"
for i in $(seq 1 100); do [ -n "$host" ] && [ -d "$host" ] || break; sleep 0.1; done
weft_lio_clear || bad "LIO configuration not cleared"
rmmod weft_srpt || bad "rmmod weft_srpt"
weft_sm_stop
weft_unload || fail=1
weft_check_taint || fail=1
exit $fail
