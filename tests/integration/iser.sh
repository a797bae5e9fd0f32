#!/bin/bash
# Integration: the iSER initiator weft_iser (issue 26) with Debian's
# open-iscsi: weft0's ib interface in the root namespace (iscsid's,
# 10.77.0.1), weft1's in namespace h1 (10.77.0.2), OpenSM managing.
#   1. the transport: /sys/class/iscsi_transport/iser with caps 0x89, as
#      in-tree; a second registration of the name is refused (insmod
#      again: EEXIST)
#   2. iscsiadm -m discovery -I iser to an address nobody listens on:
#      fails (the RDMA CM's REJ), nothing left behind (RDMA CM Ids,
#      endpoints), weft_iser not held
#   3. with the LIO iSER target (weft_isert, when built): discovery lists
#      the target, login, `iscsiadm -m session -P 3` shows transport iser
#      and a disk; the host takes 512 KiB commands (one fast registration:
#      max_sectors 1024 as in-tree, 128 segments); fio --verify=crc32c
#      (4 KiB and 64 KiB writes read back, then 1 MiB sequential), mkfs.ext4,
#      a file written, caches dropped, read back equal; on the wire (weft0's
#      capture, iser_pcap.py) every command's STag is its own registration
#      and the target's RDMA uses only those; weft_iser's PD has no
#      remote key for all memory (rdma res: no unsafe_global_rkey);
#      rmmod weft_iser refused while logged in, logout, then 3 more
#      login/logout cycles
#   4. rmmod weft_iser clean
set -u
fail=0
bad() { echo "iser: FAIL: $*"; fail=1; }
rcm=/sys/module/weft_rdma_cm/parameters
tr=/sys/class/iscsi_transport/iser
iqn=iqn.2026-12.org.weft:iser-test

# A capture ring that holds all of step 3's capture: a slow reader drops nothing.
weft_load "weft_hca:hcas=0 capture_ring_kb=16384" || exit 1
weft_star 2 || bad "switch, HCAs and cables"
weft_sm_start weft0 2
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM"
A=$(weft_ib_netdev weft0) B=$(weft_ib_netdev weft1)
weft_host_add h1 || exit 1
ip link set "$B" netns h1 || exit 1
ip addr add 10.77.0.1/24 dev "$A"
weft_on h1 ip addr add 10.77.0.2/24 dev "$B"
ip link set "$A" up && weft_on h1 ip link set "$B" up
weft_carrier - "$A" 1 && weft_carrier h1 "$B" 1 || bad "no carrier"
weft_until 20 'ping -c 1 -W 1 10.77.0.2 >/dev/null' || bad "IPoIB: cannot ping h1"
modprobe -a sd_mod scsi_transport_iscsi libiscsi || bad "sd_mod, libiscsi"
ids0=$(cat $rcm/ids)

echo "== 1"
weft_insmod weft_iser || bad "insmod weft_iser"
weft_expect $tr/caps "0x89"$'\n' || bad "caps: $(cat $tr/caps 2>&1), want 0x89"
[ -r $tr/handle ] || bad "no transport handle"
out=$(weft_insmod weft_iser 2>&1) && bad "a second weft_iser loaded"
grep -q "exists" <<<"$out" || bad "second insmod: $out (want EEXIST)"

# iscsid by hand (no systemd); its state stays on the guest's tmpfs overlay.
rm -rf /etc/iscsi/nodes /etc/iscsi/send_targets
mkdir -p /run/lock/iscsi
grep -q '^InitiatorName=' /etc/iscsi/initiatorname.iscsi 2>/dev/null ||
	echo "InitiatorName=iqn.2026-12.org.weft:initiator" >/etc/iscsi/initiatorname.iscsi
initiator=$(sed -n 's/^InitiatorName=//p' /etc/iscsi/initiatorname.iscsi)
# Its own session: iscsid signals its process group when it stops.
setsid iscsid -f >/tmp/iscsid.log 2>&1 &
iscsid_pid=$!
sleep 1
kill -0 "$iscsid_pid" || bad "iscsid exited: $(cat /tmp/iscsid.log)"

echo "== 2"
out=$(timeout 60 iscsiadm -m discovery -t st -p 10.77.0.2 -I iser 2>&1) &&
	bad "discovery succeeded with no target: $out"
grep -qiE "connect|error" <<<"$out" || bad "discovery with no target: $out"
dmesg | grep -E "WARNING|BUG:|weft_iser" | tail -5
weft_until 30 '[ "$(cat $rcm/ids)" = "$ids0" ]' || bad "RDMA CM ids: $(cat $rcm/ids), want $ids0"
[ "$(cat /sys/module/weft_iser/refcnt)" = 0 ] || bad "weft_iser held: $(cat /sys/module/weft_iser/refcnt)"

echo "== 3"
if find "$WEFT_MODDIR" -name weft_isert.ko | grep -q .; then
	weft_insmod weft_isert || bad "insmod weft_isert"
	weft_targetcli_prep || bad "targetcli"
	echo "note: targetcli at $(date +%s)"
	nsenter --net=/run/netns/h1 targetcli >/tmp/targetcli.out 2>&1 <<-EOT
	/backstores/ramdisk create name=rd0 size=32M
	/iscsi create $iqn
	/iscsi/$iqn/tpg1/portals delete 0.0.0.0 3260
	/iscsi/$iqn/tpg1/portals create 10.77.0.2 3260
	/iscsi/$iqn/tpg1/portals/10.77.0.2:3260 enable_iser true
	/iscsi/$iqn/tpg1/luns create /backstores/ramdisk/rd0
	/iscsi/$iqn/tpg1/acls create $initiator
	EOT
	[ "$(cat /sys/kernel/config/target/iscsi/$iqn/tpgt_1/np/10.77.0.2:3260/iser 2>/dev/null)" = 1 ] ||
		bad "no iSER portal: $(tail -5 /tmp/targetcli.out)"
	echo "note: target ready at $(date +%s)"
	out=$(timeout 60 iscsiadm -m discovery -t st -p 10.77.0.2 -I iser 2>&1) || bad "discovery: $out"
	grep -q "$iqn" <<<"$out" || bad "discovery did not list $iqn: $out"
	out=$(timeout 60 iscsiadm -m node -T $iqn -p 10.77.0.2 -I iser --login 2>&1) || bad "login: $out"
	s=$(iscsiadm -m session -P 3 2>&1)
	grep -q "Iface Transport: iser" <<<"$s" || bad "session transport: $s"
	weft_until 30 'iscsiadm -m session -P 3 | grep -q "Attached scsi disk"' || bad "no disk: $s"
	dev=/dev/$(iscsiadm -m session -P 3 | sed -n 's/.*Attached scsi disk \([a-z]*\).*/\1/p' | head -1)
	[ -b "$dev" ] || bad "no block device: $dev"
	echo "note: logged in at $(date +%s), disk $dev"
	q=/sys/block/${dev##*/}/queue
	[ "$(cat $q/max_hw_sectors_kb)" = 512 ] && [ "$(cat $q/max_segments)" = 128 ] ||
		bad "host limits: max_hw_sectors_kb $(cat $q/max_hw_sectors_kb), max_segments $(cat $q/max_segments) (want 512, 128)"
	# Fast registration only: the DMA MR has local rights (in-tree's "unsafe global rkey" absent).
	pd=$(rdma res show pd 2>&1 | grep "comm \[weft_iser\]")
	grep -q "local_dma_lkey 0x" <<<"$pd" || bad "weft_iser's PD not listed: $pd"
	grep -q "unsafe_global_rkey" <<<"$pd" && bad "weft_iser's DMA MR has remote rights: $pd"
	# Data: reads by the target's RDMA WRITE, writes by immediate data and RDMA READ.
	fio --name=verify --filename="$dev" --direct=1 --ioengine=libaio --rw=randwrite --bs=4k,64k \
		--size=8M --iodepth=8 --verify=crc32c --verify_fatal=1 --do_verify=1 \
		--output=/tmp/iser-fio.out >/dev/null 2>&1 || bad "fio verify: $(tail -20 /tmp/iser-fio.out)"
	grep -q "err= 0" /tmp/iser-fio.out || bad "fio reported errors: $(grep err= /tmp/iser-fio.out)"
	fio --name=seq --filename="$dev" --direct=1 --ioengine=libaio --rw=write --bs=1M --size=8M \
		--iodepth=4 --verify=crc32c --verify_fatal=1 --do_verify=1 \
		--output=/tmp/iser-seq.out >/dev/null 2>&1 || bad "fio 1 MiB verify: $(tail -20 /tmp/iser-seq.out)"
	# On the wire: each command's data registered with a key of its own.
	cat /sys/kernel/debug/weft/weft0/port1/capture >/tmp/iser.pcap &
	cap=$!
	sleep 0.5
	# Reads 16 KiB (RDMA WRITE), writes 4 KiB (immediate data only: no STag, invalidated
	# locally) and 16 KiB (the rest by RDMA READ).
	fio --name=cap --filename="$dev" --direct=1 --ioengine=libaio --rw=randrw --bssplit=16k/100,4k/50:16k/50 \
		--size=2M --iodepth=8 >/tmp/iser-cap.out 2>&1 || bad "fio under capture: $(tail -3 /tmp/iser-cap.out)"
	sleep 0.5
	kill $cap
	wait $cap 2>/dev/null
	dmesg | grep "capture stopped" | tail -1
	python3 "$WEFT_REPO/tests/integration/iser_pcap.py" /tmp/iser.pcap || bad "iSER STags on the wire"
	mkfs.ext4 -q -F "$dev" >/tmp/iser-mkfs.out 2>&1 || bad "mkfs.ext4: $(cat /tmp/iser-mkfs.out)"
	mkdir -p /mnt/iser && mount "$dev" /mnt/iser || bad "mount"
	head -c 3M /dev/urandom >/tmp/iser-file
	cp /tmp/iser-file /mnt/iser/f && umount /mnt/iser || bad "write to ext4"
	echo 3 >/proc/sys/vm/drop_caches
	mount "$dev" /mnt/iser && cmp /tmp/iser-file /mnt/iser/f || bad "ext4 round trip differs"
	umount /mnt/iser
	echo "note: data done at $(date +%s)"
	out=$(rmmod weft_iser 2>&1) && bad "weft_iser unloaded while logged in"
	grep -qi "in use" <<<"$out" || bad "rmmod weft_iser with a session: $out"
	timeout 60 iscsiadm -m node -T $iqn -p 10.77.0.2 -I iser --logout >/dev/null || bad "logout"
	# Logout and login again: each connection's verbs objects and Id go with it.
	for i in 1 2 3; do
		timeout 60 iscsiadm -m node -T $iqn -p 10.77.0.2 -I iser --login >/dev/null || bad "relogin $i"
		timeout 60 iscsiadm -m node -T $iqn -p 10.77.0.2 -I iser --logout >/dev/null || bad "logout $i"
	done
	[ "$(cat /sys/module/weft_iser/refcnt)" = 0 ] || bad "weft_iser held after logout"
	weft_lio_clear
	rmmod weft_isert || bad "rmmod weft_isert"
else
	echo "note: weft_isert not built: the target steps were skipped"
fi

echo "== 4"
iscsiadm -k 0 >/dev/null 2>&1 || kill "$iscsid_pid"
weft_until 10 '! kill -0 "$iscsid_pid" 2>/dev/null' || bad "iscsid did not stop"
rmmod weft_iser || bad "rmmod weft_iser"
[ -d $tr ] && bad "$tr still there"
weft_until 30 '[ "$(cat $rcm/ids)" = "$ids0" ]' || bad "RDMA CM ids: $(cat $rcm/ids), want $ids0"
ip netns del h1
weft_sm_stop
weft_unload || bad "unload failed"
exit $fail
