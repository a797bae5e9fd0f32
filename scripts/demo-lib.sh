#!/bin/bash
# The test host of `make run` and `make shell` (sourced on the guest, after
# tests/harness/guest-lib.sh): the default subnet (two HCAs, one switch)
# under OpenSM, weft0's IPoIB interface in the root namespace as the first
# host (10.77.0.1) and weft1's in namespace h1 as the second (10.77.0.2).
#
# Each demo section is a function demo_<name> that prints what it shows and
# returns non-zero when something it checks is wrong; demo_sections lists
# them in order.  A new capability adds its function and its name there
# (srp, iser).

demo_sections="subnet ipoib counters capture perftest rdma_cm srp iser"
demo_a=10.77.0.1 demo_b=10.77.0.2

demo_heading() { printf '\n== %s\n' "$*"; }
demo_bad() { echo "   !! $*"; return 1; }
# demo_indent CMD...: the command's output, indented, at most $demo_lines lines.
demo_indent() { "$@" 2>&1 | grep -v '^$' | head -n "${demo_lines:-40}" | sed 's/^/   /'; return "${PIPESTATUS[0]}"; }

# demo_setup: load Weft (as insmod from the build), OpenSM, the two hosts;
# sets A and B (the IPoIB interfaces of weft0 and weft1).
demo_setup() {
	weft_load weft_hca:autoconf=0 || return 1
	# The SRP target before OpenSM: its first sweep sees the ports' device management agents.
	weft_insmod weft_srpt || return 1
	weft_sm_start weft0 5
	weft_wait_active weft0 weft1 || { demo_bad "ports not ACTIVE under OpenSM"; return 1; }
	A=$(weft_ib_netdev weft0) B=$(weft_ib_netdev weft1)
	[ -n "$A" ] && [ -n "$B" ] || { demo_bad "no IPoIB interfaces"; return 1; }
	weft_host_add h1 && ip link set "$B" netns h1 || return 1
	ip addr add $demo_a/24 dev "$A" && ip link set "$A" up &&
		weft_on h1 ip addr add $demo_b/24 dev "$B" && weft_on h1 ip link set "$B" up || return 1
	weft_carrier - "$A" 1 && weft_carrier h1 "$B" 1 || { demo_bad "IPoIB: no carrier"; return 1; }
}

demo_teardown() {
	ip netns del h1 2>/dev/null
	weft_sm_stop
	weft_unload
}

demo_subnet() {
	local rc=0
	echo "-- ibstat weft0"
	demo_lines=20 demo_indent ibstat weft0 || rc=1
	echo "-- ibnetdiscover (comments left out)"
	ibnetdiscover -C weft0 -P 1 >/tmp/demo-ibnd 2>&1 || { demo_bad "ibnetdiscover failed"; rc=1; }
	grep -vE '^(#|$)' /tmp/demo-ibnd | sed 's/^/   /'
	[ "$(grep -c '^Ca' /tmp/demo-ibnd)" = 2 ] && [ "$(grep -c '^Switch' /tmp/demo-ibnd)" = 1 ] ||
		demo_bad "ibnetdiscover: not 2 CAs and a switch" || rc=1
	echo "-- iblinkinfo (the switch's unused ports left out)"
	iblinkinfo -C weft0 -P 1 >/tmp/demo-ibli 2>&1 || { demo_bad "iblinkinfo failed"; rc=1; }
	grep -v 'Down/ Polling' /tmp/demo-ibli | sed 's/^/   /'
	[ "$(grep -c 'Active/  LinkUp' /tmp/demo-ibli)" = 4 ] || demo_bad "iblinkinfo: not 4 active link ends" || rc=1
	return $rc
}

# demo_iperf LABEL: iperf3 TCP for 3 s from the first host to the second.
demo_iperf() {
	local out
	# A one-off server (-1): it ends with the client's run.
	weft_on h1 iperf3 -s -1 -D -p 5201 >/dev/null 2>&1 || { demo_bad "iperf3 server did not start"; return 1; }
	for _ in $(seq 300); do
		[ -n "$(weft_on h1 ss -Hltn 'sport = :5201')" ] && break
		sleep 0.1
	done
	out=$(timeout 60 iperf3 -c $demo_b -p 5201 -t 3 -f m 2>&1)
	grep -q receiver <<<"$out" || { echo "$out" | tail -3; demo_bad "iperf3 ($1) failed"; return 1; }
	echo "   iperf3 $1: $(grep receiver <<<"$out" | grep -o '[0-9.]* Mbits/sec') (TCP, 3 s)"
}

demo_mode() { # MODE: both interfaces
	echo "$1" >/sys/class/net/"$A"/mode && weft_on h1 sh -c "echo $1 >/sys/class/net/$B/mode" &&
		echo "   $A and $B: mode $1, MTU $(cat /sys/class/net/"$A"/mtu)"
}

demo_ipoib() {
	local rc=0
	echo "-- $A (weft0, this host, $demo_a) <-> $B (weft1, namespace h1, $demo_b)"
	demo_lines=8 demo_indent ping -c 3 -i 0.3 -w 20 $demo_b || { demo_bad "ping"; rc=1; }
	echo "-- datagram mode (UD)"
	demo_mode datagram || rc=1
	demo_iperf datagram || rc=1
	echo "-- connected mode (RC, RFC 4755)"
	demo_mode connected || rc=1
	weft_pings - $demo_b >/dev/null || { demo_bad "ping in connected mode"; rc=1; }
	demo_iperf connected || rc=1
	echo "   $A: $(ethtool -S "$A" | sed -n 's/^ *\(cm_connections: [0-9]*\)/\1/p') (ethtool -S)"
	demo_mode datagram >/dev/null || rc=1
	return $rc
}

# Extended port counters of weft1's port 1 (its PMA, IBA 16.1.4).
demo_pq() { perfquery -x -C weft1 -P 1 | sed -n "s/^$1:\.*//p"; }
demo_counters() {
	local f before=() after=() i=0 rc=0
	local fields="PortXmitPkts PortRcvPkts PortXmitData PortRcvData"
	for f in $fields; do before+=("$(demo_pq $f)"); done
	echo "-- 50 pings, weft1's port counters around them (perfquery -x)"
	ping -c 50 -i 0.02 -q $demo_b >/dev/null || { demo_bad "pings"; rc=1; }
	for f in $fields; do after+=("$(demo_pq $f)"); done
	for f in $fields; do
		printf '   %-13s %10s -> %10s\n' "$f" "${before[$i]}" "${after[$i]}"
		[ -n "${after[$i]}" ] && [ "${after[$i]:-0}" -ge $((${before[$i]:-0} + 50)) ] ||
			{ demo_bad "$f did not move by 50"; rc=1; }
		i=$((i + 1))
	done
	return $rc
}

# tshark with DLT_USER0 mapped to the InfiniBand dissector: Debian 12's
# tshark 4.0 does not open LINKTYPE_INFINIBAND (247) files, so the copy it
# reads carries link type 147 (Documentation/capture.md).
demo_tshark() {
	tshark -o 'uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""' "$@" 2>/dev/null
}
demo_capture() {
	local f=/sys/kernel/debug/weft/weft1/port1/capture tmp=/tmp/demo-capture reader n bad
	mkdir -p $tmp
	echo "-- capture of weft1's port 1 during 2 pings, decoded by tshark"
	cat $f >$tmp/ib.pcap &
	reader=$!
	sleep 0.5
	ping -c 2 -i 0.3 -q $demo_b >/dev/null || demo_bad "pings"
	sleep 0.5
	kill $reader
	wait $reader 2>/dev/null
	{ head -c 20 $tmp/ib.pcap; printf '\x93\0\0\0'; tail -c +25 $tmp/ib.pcap; } >$tmp/ib147.pcap
	demo_lines=8 demo_indent demo_tshark -r $tmp/ib147.pcap -Y icmp
	echo "   the same packets' InfiniBand headers (LRH, BTH, DETH):"
	printf '   %5s %5s %5s %-6s %-8s %s\n' frame SLID DLID opcode dest-QP Q_Key
	demo_tshark -r $tmp/ib147.pcap -Y icmp -T fields -e frame.number -e infiniband.lrh.slid \
		-e infiniband.lrh.dlid -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.deth.q_key |
		awk '{ printf "   %5s %5s %5s %-6s %-8s %s\n", $1, $2, $3, $4, $5, $6 }'
	n=$(demo_tshark -r $tmp/ib147.pcap -Y 'infiniband && icmp' | wc -l)
	bad=$(demo_tshark -r $tmp/ib147.pcap -Y '_ws.malformed || _ws.expert.severity >= warning' | wc -l)
	echo "   $(demo_tshark -r $tmp/ib147.pcap | wc -l) packets captured, $n ICMP over IPoIB, $bad malformed"
	[ "$n" -ge 4 ] || demo_bad "fewer than 4 ICMP packets decoded" || return 1
	[ "$bad" = 0 ] || demo_bad "tshark flagged $bad packets"
}

demo_perftest() {
	local log=/tmp/demo-perftest srv rc src
	mkdir -p $log
	echo "-- ib_write_bw over uverbs: server on weft0, client on weft1 (RC, 64 KiB, 500 iterations)"
	# -F: perftest cannot pin down the CPU clock on a loaded TCG host.
	timeout -s KILL 120 ib_write_bw -F -n 500 -d weft0 >$log/srv 2>&1 &
	srv=$!
	for _ in $(seq 100); do ss -ltn | grep -q ':18515 ' && break; sleep 0.1; done
	timeout -s KILL 100 ib_write_bw -F -n 500 -d weft1 localhost >$log/cli 2>&1
	rc=$?
	wait $srv
	src=$?
	grep -E '^ #bytes' $log/cli | sed 's/^/   /'
	grep -E '^ +[0-9]+ +500 ' $log/cli | sed 's/^/   /'
	[ $rc = 0 ] && [ $src = 0 ] || { tail -5 $log/srv $log/cli; demo_bad "ib_write_bw: client $rc, server $src"; return 1; }
	grep -qE '^ +[0-9]+ +500 ' $log/cli || demo_bad "ib_write_bw: no result line"
}

# SRP: weft1 exports a ramdisk with Debian's targetcli (weft_srpt is LIO's
# "srpt" fabric), srp_daemon finds it through the device management agent
# and logs weft0 in; the disk gets a file system.
demo_srp() {
	local gid dev h i
	weft_targetcli_prep && modprobe -a sd_mod || { demo_bad "targetcli, sd_mod"; return 1; }
	gid=$(tr -d : </sys/class/infiniband/weft1/ports/1/gids/0)
	echo "-- targetcli on weft1: a 32 MiB ramdisk, ACL for weft0's port"
	targetcli >/tmp/demo-targetcli 2>&1 <<-EOF
	/backstores/ramdisk create name=demo size=32M
	/srpt create ib.$gid
	/srpt/ib.$gid/luns create /backstores/ramdisk/demo
	/srpt/ib.$gid/acls create ib.0000000000000000$(tr -d : </sys/class/infiniband/weft0/ports/1/gids/0 | cut -c17-32)
	EOF
	echo "-- srp_daemon -o -c on weft0: the SRP targets its device management queries find"
	demo_indent timeout 120 srp_daemon -o -c -i weft0 -p 1
	echo "-- srp_daemon -e -o on weft0: log in to them"
	# Only ports with an enabled LIO target port show their IOC (weft1's here).
	timeout 120 srp_daemon -e -o -i weft0 -p 1 >/tmp/demo-srp_daemon 2>&1
	for i in $(seq 100); do
		dev=$(lsscsi | awk '/LIO-ORG/ {print $NF}' | head -1)
		[ -b "$dev" ] && break
		sleep 0.2
	done
	[ -b "$dev" ] || { demo_bad "no SRP disk"; return 1; }
	demo_indent lsscsi
	mkfs.ext4 -q "$dev" && mkdir -p /mnt/demo-srp && mount "$dev" /mnt/demo-srp || { demo_bad "mkfs/mount $dev"; return 1; }
	dd if=/dev/urandom of=/tmp/demo-pat bs=1M count=4 2>/dev/null
	cp /tmp/demo-pat /mnt/demo-srp/ && sync && echo 3 >/proc/sys/vm/drop_caches &&
		cmp /tmp/demo-pat /mnt/demo-srp/demo-pat || { umount /mnt/demo-srp; demo_bad "file read back differs"; return 1; }
	demo_indent df -h /mnt/demo-srp
	umount /mnt/demo-srp
	for h in /sys/class/scsi_host/host*; do [ -f "$h/id_ext" ] && echo 1 >"$h/delete"; done
	echo "   a 4 MiB file written and read back on $dev"
}

# RDMA CM: Debian's rping (librdmacm through weft_ucma) by IP address from
# this host to the second one, every round trip's data verified.
demo_rdma_cm() {
	local log=/tmp/demo-rping srv rc src
	echo "-- rping: server in h1 on $demo_b, client here, 10 verified round trips (RC, RDMA READ/WRITE)"
	weft_on h1 timeout -s KILL 90 rping -s -a $demo_b -C 10 >$log.srv 2>&1 &
	srv=$!
	for _ in $(seq 50); do weft_on h1 cat /sys/module/weft_rdma_cm/parameters/listeners 2>/dev/null | grep -qv '^0$' && break; sleep 0.2; done
	timeout -s KILL 90 rping -c -a $demo_b -C 10 -v >$log.cli 2>&1
	rc=$?
	wait $srv
	src=$?
	demo_lines=3 demo_indent cat $log.cli
	echo "   ... $(grep -c 'ping data' $log.cli) round trips"
	[ $rc = 0 ] && [ $src = 0 ] && [ "$(grep -c 'ping data' $log.cli)" = 10 ] ||
		{ tail -3 $log.srv $log.cli; demo_bad "rping: client $rc, server $src"; }
}

# iSER: weft1's host (namespace h1) exports a ramdisk over iSER with
# Debian's targetcli (weft_isert is LIO's iSER transport), this host logs
# in with Debian's open-iscsi (`iscsiadm -I iser` through weft_iser), the
# disk gets a file system.
demo_iser() {
	local iqn=iqn.2026-12.org.weft:demo initiator dev i out
	weft_targetcli_prep && modprobe -a sd_mod scsi_transport_iscsi libiscsi || { demo_bad "targetcli, libiscsi"; return 1; }
	weft_insmod weft_isert && weft_insmod weft_iser || { demo_bad "weft_isert, weft_iser"; return 1; }
	rm -rf /etc/iscsi/nodes /etc/iscsi/send_targets
	mkdir -p /run/lock/iscsi
	grep -q '^InitiatorName=' /etc/iscsi/initiatorname.iscsi 2>/dev/null ||
		echo "InitiatorName=iqn.2026-12.org.weft:demo-initiator" >/etc/iscsi/initiatorname.iscsi
	initiator=$(sed -n 's/^InitiatorName=//p' /etc/iscsi/initiatorname.iscsi)
	setsid iscsid -f >/tmp/demo-iscsid.log 2>&1 &
	echo "-- targetcli in h1: a 32 MiB ramdisk on portal $demo_b:3260 with iSER, ACL for $initiator"
	nsenter --net=/run/netns/h1 targetcli >/tmp/demo-targetcli-iser 2>&1 <<-EOF
	/backstores/ramdisk create name=demoiser size=32M
	/iscsi create $iqn
	/iscsi/$iqn/tpg1/portals delete 0.0.0.0 3260
	/iscsi/$iqn/tpg1/portals create $demo_b 3260
	/iscsi/$iqn/tpg1/portals/$demo_b:3260 enable_iser true
	/iscsi/$iqn/tpg1/luns create /backstores/ramdisk/demoiser
	/iscsi/$iqn/tpg1/acls create $initiator
	EOF
	echo "-- iscsiadm -m discovery -t st -p $demo_b -I iser"
	demo_indent timeout 60 iscsiadm -m discovery -t st -p $demo_b -I iser || { demo_bad "discovery"; return 1; }
	echo "-- iscsiadm -m node -T $iqn -p $demo_b -I iser --login"
	demo_indent timeout 60 iscsiadm -m node -T $iqn -p $demo_b -I iser --login || { demo_bad "login"; return 1; }
	for i in $(seq 150); do
		dev=/dev/$(iscsiadm -m session -P 3 2>/dev/null | sed -n 's/.*Attached scsi disk \([a-z]*\).*/\1/p' | head -1)
		[ -b "$dev" ] && break
		sleep 0.2
	done
	iscsiadm -m session -P 3 | grep -E "Iface Transport|Current Portal|Attached scsi disk" | sed 's/^[[:space:]]*/   /'
	[ -b "$dev" ] || { demo_bad "no iSER disk"; return 1; }
	out=0
	mkfs.ext4 -q "$dev" && mkdir -p /mnt/demo-iser && mount "$dev" /mnt/demo-iser || { demo_bad "mkfs/mount $dev"; out=1; }
	if [ $out = 0 ]; then
		dd if=/dev/urandom of=/tmp/demo-pat-iser bs=1M count=4 2>/dev/null
		cp /tmp/demo-pat-iser /mnt/demo-iser/ && sync && echo 3 >/proc/sys/vm/drop_caches &&
			cmp /tmp/demo-pat-iser /mnt/demo-iser/demo-pat-iser || { demo_bad "file read back differs"; out=1; }
		demo_indent df -h /mnt/demo-iser
		umount /mnt/demo-iser
		[ $out = 0 ] && echo "   a 4 MiB file written and read back on $dev"
	fi
	timeout 60 iscsiadm -m node -T $iqn -p $demo_b -I iser --logout >/dev/null || { demo_bad "logout"; out=1; }
	iscsiadm -k 0 >/dev/null 2>&1
	weft_lio_clear
	rmmod weft_iser weft_isert || { demo_bad "rmmod weft_iser weft_isert"; out=1; }
	return $out
}
