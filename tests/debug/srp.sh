#!/bin/bash
# Debug kernel (KASAN, lockdep, kmemleak): SRP's paths that tear things
# down, where lock order and lifetimes matter.  The LIO target is made
# through configfs directly (targetcli is tests/integration/srp.sh's),
# weft0 logs in to weft1, verified I/O runs while the LUN is reset, the
# target reset (a new login), weft0's cable flaps; then the target port is
# disabled and removed under a live session (LIO's close of the session
# while commands may be in flight), the initiator reconnects after it is
# made again, and both modules go.  The job's closing kmemleak scan and
# the splat scanner judge what this leaves behind.
set -u
fail=0
bad() { echo "srp: FAIL: $*"; fail=1; }
cfs=/sys/kernel/config/weft
lio=/sys/kernel/config/target

weft_load weft_hca:hcas=0 || exit 1
weft_insmod weft_srpt || exit 1
weft_star 2 || bad "switch, HCAs and cables"
weft_sm_start weft0 2
weft_wait_active weft0 weft1 || bad "ports not ACTIVE"
modprobe -a sd_mod target_core_mod || bad "sd_mod"

gid1=$(tr -d : </sys/class/infiniband/weft1/ports/1/gids/0)
ng1=$(tr -d : </sys/class/infiniband/weft1/node_guid)
iport=0x0000000000000000$(tr -d : </sys/class/infiniband/weft0/ports/1/gids/0 | cut -c17-32)
tpg=$lio/srpt/0x$gid1/tpgt_1
lio_make() {
	mkdir -p $lio/core/rd_mcp_0/rd0 && echo rd_pages=4096 >$lio/core/rd_mcp_0/rd0/control &&
		echo 1 >$lio/core/rd_mcp_0/rd0/enable || return 1
	mkdir -p $tpg/lun/lun_0 && ln -s $lio/core/rd_mcp_0/rd0 $tpg/lun/lun_0/rd0 &&
		mkdir -p $tpg/acls/$iport/lun_0 && ln -s $tpg/lun/lun_0 $tpg/acls/$iport/lun_0/m &&
		echo 1 >$tpg/enable
}
lio_make || bad "LIO target through configfs"
login="id_ext=$ng1,ioc_guid=$ng1,dgid=$gid1,pkey=ffff,service_id=$ng1"
echo "$login" >/sys/class/infiniband_srp/srp-weft0-1/add_target || bad "add_target"
dev=
for i in $(seq 1 200); do
	dev=$(lsscsi | awk '/LIO-ORG/ {print $NF}' | head -1)
	[ -b "$dev" ] && break
	sleep 0.2
done
[ -b "$dev" ] || { bad "no disk"; weft_sm_stop; weft_unload; exit 1; }
host=$(ls -d /sys/class/scsi_host/host* | head -1)
rport=$(ls -d /sys/class/srp_remote_ports/port-*:1 | head -1)
echo 2 >"$rport/reconnect_delay"
echo 120 >"$rport/fast_io_fail_tmo"
vfio() {
	fio --name="$1" --filename="$dev" --rw=randwrite --bs=4k --size=8M --ioengine=libaio --iodepth=8 \
		--direct=1 --verify=crc32c --do_verify=1 --verify_fatal=1 --loops="$2" >/tmp/fio-"$1".out 2>&1
}
vfio resets 2 &
fpid=$!
sleep 1
sg_reset -d "$dev" || bad "LUN reset"
sg_reset -t "$dev" || bad "target reset"
echo 0 >$cfs/cables/c0/up
sleep 3
echo 1 >$cfs/cables/c0/up
wait $fpid || bad "fio: $(tail -3 /tmp/fio-resets.out)"
weft_wait_active weft0 || bad "weft0 not ACTIVE after the flap"

# The target port disabled and removed with the session live, then made again.
vfio gone 1 &
fpid=$!
sleep 1
weft_lio_clear || bad "LIO teardown under a session"
sleep 3
lio_make || bad "LIO target made again"
wait $fpid || bad "fio across the target's removal: $(tail -3 /tmp/fio-gone.out)"
grep -q running "$rport/state" || bad "rport $(cat "$rport/state") after the target came back"

echo 1 >"$host/delete"
weft_lio_clear
weft_sm_stop
weft_unload || bad "unload"
exit $fail
