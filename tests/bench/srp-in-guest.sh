#!/bin/bash
# make bench-srp job (run by tests/bench/srp.sh through vm-run.sh, stock
# kernel): fio (blk-lib.sh's jobs) on (a) a brd ramdisk directly, (b) the
# same ramdisk exported by weft_srpt on weft1 (a LIO block backstore) and
# logged in to by weft_srp on weft0 under OpenSM, (c) the same through the
# in-tree ib_srpt and ib_srp over one rxe device talking to itself
# (rxe-lib.sh; the RDMA CM, as test-hosts.md measured it).  Weft's SRP
# modules and the in-tree ones exclude each other (the class and fabric
# names), so Weft runs and is unloaded first.  Both initiators get the
# same add_target queue options, every disk the same block-layer
# settings.  Prints "BLK ..." lines; asserts nothing.
set -u
. /weft-job/guest-lib.sh
. "$WEFT_REPO/tests/bench/rxe-lib.sh"
. "$WEFT_REPO/tests/bench/blk-lib.sh"
t=/sys/kernel/config/target
opts=max_sect=1024,queue_size=64,max_cmd_per_lun=62

# srp_disk HCA: /dev of the disk behind HCA's SCSI host, once it has its size.
srp_disk() {
	local i h d
	for i in $(seq 1 600); do
		for h in /sys/class/scsi_host/host*; do
			[ "$(cat "$h/local_ib_device" 2>/dev/null)" = "$1" ] || continue
			d=$(ls -1 "$h"/device/target*/*/block 2>/dev/null | head -1)
			[ -n "$d" ] && [ "$(blockdev --getsize64 "/dev/$d" 2>/dev/null || echo 0)" -gt 0 ] &&
				{ echo "/dev/$d"; return 0; }
		done
		sleep 0.2
	done
	return 1
}
srp_logout() {
	local h
	for h in /sys/class/scsi_host/host*; do [ -f "$h/delete" ] && echo 1 >"$h/delete"; done
	sleep 1
}

modprobe brd rd_nr=1 rd_size=131072 || { echo "bench-srp: no brd"; exit 1; }
modprobe -a sd_mod target_core_iblock
blk_fio brd /dev/ram0

# Weft.
weft_load weft_hca:autoconf=0 || exit 1
weft_insmod weft_srpt || exit 1
weft_sm_start weft0
weft_wait_active weft0 weft1 || echo "bench-srp: ports not ACTIVE"
gid1=$(tr -d : </sys/class/infiniband/weft1/ports/1/gids/0)
ng1=$(tr -d : </sys/class/infiniband/weft1/node_guid)
lio_brd "$t/srpt/0x$gid1" "0x0000000000000000$(tr -d : </sys/class/infiniband/weft0/ports/1/gids/0 | cut -c17-32)" ||
	echo "bench-srp: Weft's LIO setup failed"
echo "id_ext=$ng1,ioc_guid=$ng1,dgid=$gid1,pkey=ffff,service_id=$ng1,$opts" \
	>/sys/class/infiniband_srp/srp-weft0-1/add_target || echo "bench-srp: Weft login failed"
if d=$(srp_disk weft0); then blk_fio weft "$d"; else echo "bench-srp: no Weft disk"; fi
srp_logout
weft_lio_clear
weft_sm_stop
weft_unload || echo "bench-srp: Weft did not unload"

# The in-tree ib_srpt + ib_srp over rxe0 (RDMA CM on port 5555): the target
# port named by the rxe port's GUID, the ACL by the initiator's address.
if bench_rxe_up; then
	modprobe -a ib_srpt ib_srp || echo "bench-srp: no ib_srpt/ib_srp"
	mkdir -p $t/srpt
	echo 5555 >$t/srpt/discovery_auth/rdma_cm_port
	guid=$(cut -d: -f5-8 </sys/class/infiniband/rxe0/ports/1/gids/0)
	ng=$(tr -d : </sys/class/infiniband/rxe0/node_guid)
	lio_brd "$t/srpt/$guid" 192.168.77.1 || echo "bench-srp: in-tree LIO setup failed"
	echo "id_ext=$ng,ioc_guid=$ng,dest=192.168.77.1:5555,$opts" \
		>/sys/class/infiniband_srp/srp-rxe0-1/add_target || echo "bench-srp: in-tree login failed"
	if d=$(srp_disk rxe0); then blk_fio rxe "$d"; else echo "bench-srp: no in-tree disk"; dmesg | tail -20; fi
	srp_logout
fi
