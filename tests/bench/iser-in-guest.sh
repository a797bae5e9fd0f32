#!/bin/bash
# make bench-iser job (run by tests/bench/iser.sh through vm-run.sh, stock
# kernel): fio (blk-lib.sh's jobs) on (a) a brd ramdisk directly, (b) the
# same ramdisk as a LIO block backstore exported over iSER by weft_isert
# on weft1 and logged in to by open-iscsi with weft_iser on weft0 (the
# hosts of the iSER tests: IPoIB addresses, weft1 in namespace h1, OpenSM;
# guest-lib's weft_iser_hosts), (c) the same over iSCSI/TCP on a veth pair
# (the target's end in namespace tt; iscsi_tcp), (d) the same through the
# in-tree ib_isert and ib_iser over one rxe device talking to itself
# (rxe-lib.sh).  Weft runs and is unloaded first (the in-tree iSER modules
# and Weft's cannot share a kernel).  Every session gets open-iscsi's
# defaults, every disk blk-lib.sh's block-layer settings.  Prints "BLK
# ..." and "ISCSI-PARAMS ..." lines; asserts nothing.
#   $1 profile (make bench-iser PROFILE=1): only Weft's disk, under fio
#      4 KiB randread at queue depth 32 for $2 seconds (20) sampled by
#      weft_pcsample (as make profile-ipoib); prints "PROFILE ..." lines.
set -u
. /weft-job/guest-lib.sh
. "$WEFT_REPO/tests/bench/rxe-lib.sh"
. "$WEFT_REPO/tests/bench/blk-lib.sh"
iqn=iqn.2026-12.org.weft:bench

# lio_iscsi NETNS IP ISER: the ramdisk as LUN 0 of $iqn for this initiator,
# no authentication, a portal on IP:3260 (iSER if ISER is 1) made and
# switched in NETNS ("-": the root one; LIO binds in the writer's
# namespace, the iSER listener too; nsenter, as `ip netns exec` would hide
# the configfs mount).
lio_iscsi() {
	local tp=/sys/kernel/config/target/iscsi/$iqn/tpgt_1 np mk initiator
	np=$tp/np/$2:3260
	initiator=$(sed -n 's/^InitiatorName=//p' /etc/iscsi/initiatorname.iscsi)
	mkdir -p "$tp" && echo 0 >"$tp/attrib/authentication" || return 1
	mk="mkdir '$np' && { [ $3 = 0 ] || echo 1 >'$np/iser'; }"
	if [ "$1" = - ]; then sh -c "$mk"; else nsenter --net="/run/netns/$1" sh -c "$mk"; fi || return 1
	lio_brd "/sys/kernel/config/target/iscsi/$iqn" "$initiator"
}
# profile_fio STACK DEV: fio 4 KiB randread at queue depth 32 on DEV while
# weft_pcsample samples every CPU for $secs seconds; the profile named by
# pcsample.py.
profile_fio() {
	local pcs=/sys/kernel/debug/weft_pcsample before load
	weft_insmod weft_pcsample || return 1
	fio --name=profile --filename="$2" --rw=randread --bs=4k --iodepth=32 --ioengine=libaio --direct=1 \
		--size=64M --time_based --runtime=$((secs + 4)) >/tmp/profile-fio.out 2>&1 &
	load=$!
	sleep 2
	before=$(head -1 /proc/stat)
	echo start >$pcs/control
	sleep "$secs"
	echo stop >$pcs/control
	echo "PROFILE cpu before: $before"
	echo "PROFILE cpu after:  $(head -1 /proc/stat)"
	wait "$load" # not iscsid, also this shell's child
	grep -E "IOPS=" /tmp/profile-fio.out | sed 's/^/PROFILE fio /'
	cp $pcs/samples /tmp/pcsample.bin
	cp /proc/kallsyms /tmp/kallsyms
	python3 "$WEFT_REPO/tests/bench/pcsample.py" /tmp/pcsample.bin /tmp/kallsyms \
		--symmaps "$WEFT_MODDIR" --top 60 | sed 's/^/PROFILE /'
	rmmod weft_pcsample
}
# iscsi_bench STACK IP IFACE: discovery, login, fio on the session's disk once
# it has its size ($run: blk_fio, or profile_fio), logout.
iscsi_bench() {
	local d
	timeout 60 iscsiadm -m discovery -t st -p "$2" -I "$3" >/dev/null &&
		timeout 60 iscsiadm -m node -T $iqn -p "$2" -I "$3" --login >/dev/null ||
		{ echo "bench-iser: $1 login failed"; dmesg | tail -20; return 1; }
	if weft_until 60 'd=$(weft_iser_disks | head -1) && [ -n "$d" ] &&
		[ "$(blockdev --getsize64 "/dev/$d" 2>/dev/null || echo 0)" -gt 0 ]'; then
		echo "ISCSI-PARAMS $1 $(iscsiadm -m session -P 2 | grep -E 'Iface Transport|MaxRecvDataSegmentLength|MaxXmitDataSegmentLength|FirstBurstLength|MaxBurstLength|ImmediateData|InitialR2T' |
			sed 's/^[[:space:]]*//; s/: /=/' | paste -sd' ')"
		$run "$1" "/dev/$d"
	else
		echo "bench-iser: no $1 disk"
	fi
	timeout 60 iscsiadm -m node -T $iqn -p "$2" -I "$3" --logout >/dev/null || echo "bench-iser: $1 logout failed"
	rm -rf /etc/iscsi/nodes /etc/iscsi/send_targets
}

run=blk_fio secs=${2:-20}
[ "${1:-}" = profile ] && run=profile_fio
modprobe brd rd_nr=1 rd_size=131072 || { echo "bench-iser: no brd"; exit 1; }
modprobe -a sd_mod target_core_iblock
[ $run = blk_fio ] && blk_fio brd /dev/ram0

# Weft: weft_iser on weft0 (10.77.0.1) to weft_isert on weft1 (10.77.0.2, in h1).
if weft_iser_hosts && lio_iscsi h1 10.77.0.2 1; then
	iscsi_bench weft 10.77.0.2 iser
else
	echo "bench-iser: Weft's hosts or LIO setup failed"
fi
weft_iser_down || echo "bench-iser: Weft did not come down"
[ $run = blk_fio ] || exit 0

# iSCSI/TCP: the target on tv1 (192.168.78.2, namespace tt), the initiator
# on tv0; MTU 9000 as rxe's veth.
modprobe -a iscsi_tcp iscsi_target_mod
weft_iscsid_start || echo "bench-iser: no iscsid"
ip netns add tt
ip link add tv0 mtu 9000 type veth peer name tv1 mtu 9000 netns tt
ip addr add 192.168.78.1/24 dev tv0 && ip link set tv0 up
ip -n tt addr add 192.168.78.2/24 dev tv1 && ip -n tt link set tv1 up && ip -n tt link set lo up
if weft_until 20 'ping -c 1 -W 1 192.168.78.2 >/dev/null' && lio_iscsi tt 192.168.78.2 0; then
	iscsi_bench tcp 192.168.78.2 default
else
	echo "bench-iser: iSCSI/TCP setup failed"
fi
weft_lio_clear
ip netns del tt

# The in-tree ib_isert + ib_iser over rxe0 (192.168.77.1, both ends).
if bench_rxe_up; then
	if modprobe -a ib_iser ib_isert && lio_iscsi - 192.168.77.1 1; then
		iscsi_bench rxe 192.168.77.1 iser
	else
		echo "bench-iser: in-tree iSER setup failed"
	fi
	weft_lio_clear
fi
iscsiadm -k 0 >/dev/null 2>&1 || kill "$weft_iscsid_pid"
exit 0
