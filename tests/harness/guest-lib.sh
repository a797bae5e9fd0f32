#!/bin/bash
# Helpers for scripts that run on a test host (sourced by guest-init.sh).
# Environment: WEFT_REPO, WEFT_MODDIR (Weft modules for this kernel),
# WEFT_KERNEL (stock|debug).

# Production modules of the suite, in load order (weft_rt first, as kbuild
# ordered them), without test and self-test modules (what make install
# installs), and without the ones a test loads itself (weft_optional_modules).
weft_modules() {
	"$WEFT_REPO/scripts/weft-modules.sh" "$WEFT_MODDIR" |
		grep -vE "(^|/)($(weft_optional_modules | paste -sd'|'))\.ko\$"
}
# Production modules that change what the fabric sees and are loaded by
# the tests about them (weft_insmod): the SRP target makes every CA port a
# DM-capable I/O unit (Documentation/srp.md); the iSER modules pull in
# libiscsi and LIO's iSCSI target.  weft_unload removes them.
weft_optional_modules() {
	echo weft_srpt
	echo weft_iser
	echo weft_isert
}

# configfs (Debian: a module; the debug kernel: built in), mounted where
# weft_hca's run-time topology interface appears (Documentation/fabric.md).
weft_configfs() {
	grep -qw configfs /proc/filesystems || modprobe configfs ||
		{ echo "weft_configfs: no configfs"; return 1; }
	mountpoint -q /sys/kernel/config ||
		mount -t configfs configfs /sys/kernel/config ||
		{ echo "weft_configfs: mount failed"; return 1; }
}

# weft_load [MODULE:PARAMS...]: e.g. weft_load weft_hca:hcas=0 for an empty
# fabric; PARAMS are space-separated module parameters.
weft_load() {
	local m name arg params
	weft_configfs || return 1
	for m in $(weft_modules); do
		name=$(basename "$m" .ko)
		weft_kernel_deps "$WEFT_MODDIR/$m" || return 1
		params=
		for arg in "$@"; do
			[ "${arg%%:*}" = "$name" ] && params=${arg#*:}
		done
		# shellcheck disable=SC2086 # params are words
		insmod "$WEFT_MODDIR/$m" $params || { echo "weft_load: insmod $m failed"; return 1; }
	done
}

# The kernel's own modules a Weft module needs (LIO's target_core_mod,
# scsi_transport_srp, ...): insmod does not load them, modprobe does.
weft_kernel_deps() {
	local d
	for d in $(modinfo -F depends "$1" | tr , ' '); do
		case $d in weft_*) continue ;; esac
		[ -d "/sys/module/$d" ] || modprobe -q "$d" ||
			{ echo "weft_load: modprobe $d (for $(basename "$1")) failed"; return 1; }
	done
}

# Remove everything made under /sys/kernel/config/weft/ (cables first: they
# name the nodes); configfs keeps weft_hca loaded while anything is left.
weft_fabric_clear() {
	local cfs=/sys/kernel/config/weft d
	[ -d $cfs ] || return 0
	for d in $cfs/cables/* $cfs/hcas/* $cfs/switches/*; do
		[ -d "$d" ] && rmdir "$d"
	done
	return 0
}

weft_unload() {
	local m
	weft_fabric_clear
	# LIO holds a fabric's module while the fabric has a configfs directory.
	weft_lio_clear
	for m in $(weft_optional_modules) $(weft_modules | tac); do
		m=$(basename "$m" .ko)
		if [ -d "/sys/module/$m" ]; then
			rmmod "$m" || { echo "weft_unload: rmmod $m failed"; return 1; }
		fi
	done
}

# Load one module (test or self-test) from the build by file name, with
# any module parameters that follow.
weft_insmod() {
	local f
	f=$(find "$WEFT_MODDIR" -name "$1.ko" | head -1)
	[ -n "$f" ] || { echo "weft_insmod: $1.ko not built"; return 1; }
	shift
	weft_kernel_deps "$f" || return 1
	insmod "$f" "$@"
}

# Taint flags other than O (out-of-tree, 4096), E (unsigned, 8192) and N
# (262144: a KUnit test module was loaded, as in the race kernel's job, which
# runs the KUnit suites before the integration tests): prints them and fails
# if there are any.
weft_check_taint() {
	local t bad
	t=$(cat /proc/sys/kernel/tainted)
	bad=$(( t & ~(4096 | 8192 | 262144) ))
	if [ "$bad" != 0 ]; then
		echo "weft_check_taint: kernel tainted $t (unexpected bits $bad)"
		return 1
	fi
}

# kmemleak (debug kernel): forget what is known before a test ...
weft_kmemleak_clear() {
	[ -w /sys/kernel/debug/kmemleak ] && echo clear >/sys/kernel/debug/kmemleak
	return 0
}
# ... and report anything the test leaked.  kmemleak ignores objects younger
# than 5 s, hence the wait; it prints "unreferenced object" (a splat).
weft_kmemleak_check() {
	[ -w /sys/kernel/debug/kmemleak ] || return 0
	sleep 6
	echo scan >/sys/kernel/debug/kmemleak
	echo scan >/sys/kernel/debug/kmemleak
	local leaks
	leaks=$(cat /sys/kernel/debug/kmemleak)
	if [ -n "$leaks" ]; then
		echo "$leaks"
		return 1
	fi
}

# tshark reading a Weft capture.  Debian 12's tshark 4.0 cannot open
# LINKTYPE_INFINIBAND (247) files: a copy gets DLT_USER0 (147) as its link
# type (weft_pcap_user0), which this maps to the infiniband dissector.
weft_ib_tshark() {
	tshark -o 'uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""' "$@"
}

# weft_pcap_user0 IN OUT: OUT is the Weft capture IN with DLT_USER0 as its
# link type; fails when IN is not a pcap of link type 247.
weft_pcap_user0() {
	python3 - "$1" "$2" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
assert len(d) >= 24 and struct.unpack("<I", d[20:24])[0] == 247
open(sys.argv[2], "wb").write(d[:20] + struct.pack("<I", 147) + d[24:])
PY
}

# Logical hosts: one network namespace each.
weft_host_add() {
	ip netns add "$1" && ip -n "$1" link set lo up
}
# weft_on HOST CMD...: run in namespace HOST ("-": the root namespace).
weft_on() {
	local host=$1
	shift
	if [ "$host" = - ]; then "$@"; else ip netns exec "$host" "$@"; fi
}
# weft_carrier HOST IF WANT [SECONDS]: the interface's carrier reads WANT in time (30 s).
weft_carrier() {
	local i
	for i in $(seq 1 $((${4:-30} * 5))); do
		[ "$(weft_on "$1" cat /sys/class/net/"$2"/carrier 2>/dev/null)" = "$3" ] && return 0
		sleep 0.2
	done
	return 1
}
# weft_pings HOST ADDR [ping options]: three answered pings within 20 s.
weft_pings() {
	local h=$1 a=$2
	shift 2
	weft_on "$h" timeout 25 ping -c 3 -i 0.3 -w 20 "$@" "$a"
}
# weft_reach HOST ADDR: one answered ping within 60 s (for the debug kernels, which are slow).
weft_reach() {
	local i
	for i in $(seq 1 30); do
		weft_on "$1" ping -c 1 -W 2 "$2" >/dev/null 2>&1 && return 0
	done
	return 1
}
# weft_wait_for FILE VALUE [SECONDS]: until FILE (a module parameter, a
# sysfs or configfs attribute) reads VALUE; 30 s unless told.
weft_wait_for() {
	local i
	for i in $(seq 1 $((${3:-30} * 10))); do
		[ "$(cat "$1" 2>/dev/null)" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
# weft_until SECONDS COMMAND: until COMMAND (evaluated) succeeds.
weft_until() {
	local i
	for i in $(seq 1 $(($1 * 10))); do
		eval "$2" && return 0
		sleep 0.1
	done
	return 1
}
# weft_wait_line FILE REGEX [SECONDS]: until FILE (a tool's output) has a
# line matching REGEX; 60 s unless told, for the tools are slow to start
# on a loaded host.
weft_wait_line() {
	local i
	for i in $(seq 1 $((${3:-60} * 10))); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# weft_iperf_server NS PORT [ARGS...]: an iperf3 server daemon in NS,
# listening on PORT before this returns (iperf3 -D forks before it binds),
# after waiting for an earlier one-off server (-1) on PORT to go; 30 s each.
weft_iperf_server() {
	local ns=$1 port=$2 i
	shift 2
	for i in $(seq 300); do
		[ -z "$(weft_on "$ns" ss -Hltn "sport = :$port")" ] && break
		sleep 0.1
	done
	weft_on "$ns" iperf3 -s -D -p "$port" "$@" >/dev/null 2>&1 || return 1
	for i in $(seq 300); do
		[ -n "$(weft_on "$ns" ss -Hltn "sport = :$port")" ] && return 0
		sleep 0.1
	done
	return 1
}
# weft_stopped PID SECONDS: the process ended within the bound; it is
# killed with SIGKILL after it, and the call fails.
weft_stopped() {
	local i
	for i in $(seq 1 $(($2 * 10))); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$1" 2>/dev/null
	return 1
}
# weft_ulp_wait N: weft_selftest_ulp has exchanged at least N messages
# within 60 s; says how far it got if not.
weft_ulp_wait() {
	local f=/sys/module/weft_selftest_ulp/parameters/messages i
	for i in $(seq 600); do
		[ "$(cat $f 2>/dev/null || echo 0)" -ge "$1" ] && return 0
		sleep 0.1
	done
	echo "weft_selftest_ulp traffic did not reach $1 messages (at $(cat $f 2>/dev/null))"
	return 1
}
# weft_live_cleanup PID...: the exit trap of the tests that run traffic
# through a removal: the processes killed, OpenSM stopped, the selftest
# ULPs unloaded.
weft_live_cleanup() {
	local p
	for p in "$@"; do kill -9 "$p" 2>/dev/null; done
	weft_sm_stop 2>/dev/null
	rmmod weft_selftest_ulp weft_selftest_cm_client weft_selftest_cm_server 2>/dev/null
}
# weft_ipoib_hosts: the default subnet (autoconf off) under OpenSM, weft0's
# IPoIB interface in namespace h0 as 10.77.0.1/24 and weft1's in h1 as
# 10.77.0.2/24, both up; sets A and B to their names.  For the benchmarks.
# weft_ipoib_hosts [CPU]: every HCA's completion vector 0 on that CPU
# (weft_hca comp_vector_cpu), not each HCA on the next.
weft_ipoib_hosts() {
	weft_load "weft_hca:autoconf=0${1:+ comp_vector_cpu=$1}" || return 1
	weft_sm_start weft0
	weft_wait_active weft0 weft1 || echo "weft_ipoib_hosts: ports not active"
	A=$(weft_ib_netdev weft0) B=$(weft_ib_netdev weft1)
	weft_host_add h0 && weft_host_add h1 || return 1
	ip link set "$A" netns h0 && ip link set "$B" netns h1 || return 1
	weft_on h0 ip addr add 10.77.0.1/24 dev "$A" && weft_on h1 ip addr add 10.77.0.2/24 dev "$B" &&
		weft_on h0 ip link set "$A" up && weft_on h1 ip link set "$B" up
}
# weft_cable NAME A B: a configfs cable between ports A and B ("weft0:1"), up.
weft_cable() {
	local c=/sys/kernel/config/weft/cables/$1
	mkdir "$c" && echo "$2" >"$c/a" && echo "$3" >"$c/b" && echo 1 >"$c/up"
}
# weft_star N: switch weftsw0 (N+1 ports, at least 4) and HCAs weft0..N-1 on cables
# c0..cN-1 to its ports 1..N (weft_load with hcas=0 first).
weft_star() {
	local c=/sys/kernel/config/weft i
	local ports=$(($1 + 1 > 4 ? $1 + 1 : 4))
	mkdir $c/switches/s0 && echo $ports >$c/switches/s0/ports && echo 1 >$c/switches/s0/enable || return 1
	for i in $(seq 0 $(($1 - 1))); do
		mkdir $c/hcas/h$i && echo 1 >$c/hcas/h$i/enable && weft_cable c$i weft$i:1 weftsw0:$((i + 1)) || return 1
	done
}
# Cable two hosts with a veth pair: weft_veth HOST_A ADDR_A HOST_B ADDR_B (CIDR).
weft_veth() {
	local a=$1 addr_a=$2 b=$3 addr_b=$4
	ip link add "v-$a" netns "$a" type veth peer name "v-$b" netns "$b" || return 1
	ip -n "$a" addr add "$addr_a" dev "v-$a"
	ip -n "$b" addr add "$addr_b" dev "v-$b"
	ip -n "$a" link set "v-$a" up
	ip -n "$b" link set "v-$b" up
}

# weft_expect FILE CONTENT: the file's exact bytes, trailing newline
# included; says what differs and fails otherwise.
weft_expect() {
	local got
	got=$(cat "$1" 2>&1; echo x)
	got=${got%x}
	[ "$got" = "$2" ] || { echo "weft_expect: $1: got '$got', want '$2'"; return 1; }
}

# OpenSM on a Weft subnet.  weft_sm_start DEV [SWEEP_S] [OPTIONS]: started on
# DEV's port 1 (pid in weft_sm_pid, log in /tmp/opensm.log); weft_sm_stop:
# TERM, then KILL after 5 s.  weft_wait_active DEV...: every port 1 of
# DEV... ACTIVE within 30 s (half the SM's longest sweep interval in tests).
weft_sm_start() {
	local guid
	guid=$(ibstat -p "$1" | head -1)
	rm -f /tmp/opensm.log
	# shellcheck disable=SC2086 # OPTIONS are words
	opensm -g "$guid" -f /tmp/opensm.log -s "${2:-5}" ${3:-} >/tmp/opensm.out 2>&1 &
	weft_sm_pid=$!
}
weft_sm_stop() {
	local i
	kill "$weft_sm_pid" 2>/dev/null
	for i in $(seq 1 50); do
		kill -0 "$weft_sm_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$weft_sm_pid" 2>/dev/null
	wait "$weft_sm_pid" 2>/dev/null
}
# weft_ib_netdev HCA: the IPoIB netdev of the HCA's port 1 (ethtool's
# bus-info reads "HCA:1"), in the current network namespace.
weft_ib_netdev() {
	local n
	for n in /sys/class/net/*; do
		n=${n##*/}
		ethtool -i "$n" 2>/dev/null | grep -qx "bus-info: $1:1" && { echo "$n"; return; }
	done
}
weft_wait_active() {
	local i d ok
	for i in $(seq 1 60); do
		ok=1
		for d in "$@"; do
			[ "$(cat /sys/class/infiniband/"$d"/ports/1/state 2>/dev/null)" = "4: ACTIVE" ] || ok=
		done
		[ -n "$ok" ] && return 0
		sleep 0.5
	done
	return 1
}

# targetcli as on a Debian host: it asks the system bus for tcmu-runner's
# backstores (and fails without a bus), and keeps its preferences in HOME.
weft_targetcli_prep() {
	if [ ! -S /run/dbus/system_bus_socket ]; then
		mkdir -p /run/dbus
		dbus-daemon --session --fork --address=unix:path=/run/dbus/system_bus_socket ||
			{ echo "weft_targetcli_prep: no D-Bus daemon"; return 1; }
	fi
	export HOME=${HOME:-/tmp}
	[ -w "$HOME" ] || export HOME=/tmp
}

# LIO configuration taken down through configfs, as targetcli's clearconfig
# does (faster than starting targetcli under TCG): every fabric's TPGs
# disabled, mapped LUNs, ACLs, LUNs, TPGs and WWNs removed, then the
# fabric directories (they hold their modules) and the backstores.
weft_lio_clear() {
	local t=/sys/kernel/config/target f w g x
	[ -d $t ] || return 0
	for f in $t/*; do
		case ${f##*/} in core | dbroot | version) continue ;; esac
		for w in "$f"/*/; do
			[ -d "$w" ] && [ "$w" != "$f/discovery_auth/" ] || continue
			for g in "$w"tpgt_*; do
				[ -d "$g" ] || continue
				[ -f "$g/enable" ] && echo 0 >"$g/enable"
				for x in "$g"/acls/*/lun_*/*; do [ -L "$x" ] && rm "$x"; done
				for x in "$g"/acls/*/lun_*; do [ -d "$x" ] && rmdir "$x"; done
				for x in "$g"/acls/*; do [ -d "$x" ] && rmdir "$x"; done
				for x in "$g"/lun/lun_*/*; do [ -L "$x" ] && rm "$x"; done
				for x in "$g"/lun/lun_*; do [ -d "$x" ] && rmdir "$x"; done
				for x in "$g"/np/*; do [ -d "$x" ] && rmdir "$x"; done
				rmdir "$g"
			done
			rmdir "$w"
		done
		rmdir "$f"
	done
	for x in $t/core/*; do
		[ -d "$x" ] && [ "${x##*/}" != alua ] || continue
		for w in "$x"/*; do [ -d "$w" ] && rmdir "$w"; done
		rmdir "$x"
	done
	return 0
}

# The iSER hosts (iser_recovery.sh, iser_sessions.sh): weft0's IPoIB
# interface in the root namespace (iscsid's, 10.77.0.1), weft1's in
# namespace h1 (10.77.0.2, the target's), OpenSM on weft0; weft_iser and
# weft_isert loaded, iscsid running (pid in weft_iscsid_pid), its node
# records reset.
weft_iser_hosts() {
	local a b
	weft_load weft_hca:hcas=0 || return 1
	weft_star 2 || return 1
	weft_sm_start weft0 2
	weft_wait_active weft0 weft1 || { echo "weft_iser_hosts: ports not ACTIVE"; return 1; }
	a=$(weft_ib_netdev weft0) b=$(weft_ib_netdev weft1)
	weft_host_add h1 && ip link set "$b" netns h1 || return 1
	ip addr add 10.77.0.1/24 dev "$a" && ip link set "$a" up || return 1
	weft_on h1 ip addr add 10.77.0.2/24 dev "$b" && weft_on h1 ip link set "$b" up || return 1
	weft_until 20 'ping -c 1 -W 1 10.77.0.2 >/dev/null' || { echo "weft_iser_hosts: no ping"; return 1; }
	modprobe -a sd_mod scsi_transport_iscsi libiscsi target_core_mod iscsi_target_mod || return 1
	weft_insmod weft_iser && weft_insmod weft_isert || return 1
	weft_iscsid_start
}
# weft_iscsid_start: iscsid running (pid in weft_iscsid_pid), its node
# records reset, an initiator name set (also make bench-iser's in-tree runs).
weft_iscsid_start() {
	rm -rf /etc/iscsi/nodes /etc/iscsi/send_targets
	mkdir -p /run/lock/iscsi
	grep -q '^InitiatorName=' /etc/iscsi/initiatorname.iscsi 2>/dev/null ||
		echo "InitiatorName=iqn.2026-12.org.weft:initiator" >/etc/iscsi/initiatorname.iscsi
	# Its own session: iscsid signals its process group when it stops.
	setsid iscsid -f >/tmp/iscsid.log 2>&1 &
	weft_iscsid_pid=$!
	# Ready when its control socket (abstract, ISCSIADM_ABSTRACT_NAMESPACE) listens.
	weft_until 20 'grep -q ISCSIADM_ABSTRACT /proc/net/unix'
	kill -0 "$weft_iscsid_pid" || { echo "weft_iscsid_start: iscsid exited: $(cat /tmp/iscsid.log)"; return 1; }
}
# weft_iser_target IQN: a 32 MiB ramdisk exported over iSER on
# 10.77.0.2:3260 in h1 with an ACL for this initiator, written to LIO's
# configfs as targetcli does (iser.sh runs targetcli itself; it takes
# 15 s to start under TCG).  The portal is made and switched to iSER in
# h1: LIO listens in the namespace of the writer.
weft_iser_target() {
	local c=/sys/kernel/config/target t initiator
	t=$c/iscsi/$1/tpgt_1
	initiator=$(sed -n 's/^InitiatorName=//p' /etc/iscsi/initiatorname.iscsi)
	mkdir -p $c/core/rd_mcp_0/rd0 && echo rd_pages=8192 >$c/core/rd_mcp_0/rd0/control &&
		echo 1 >$c/core/rd_mcp_0/rd0/enable || return 1
	mkdir -p "$t/lun/lun_0" && ln -s $c/core/rd_mcp_0/rd0 "$t/lun/lun_0/rd0" || return 1
	nsenter --net=/run/netns/h1 sh -c "mkdir '$t/np/10.77.0.2:3260' && echo 1 >'$t/np/10.77.0.2:3260/iser'" ||
		return 1
	mkdir -p "$t/acls/$initiator/lun_0" && ln -s "$t/lun/lun_0" "$t/acls/$initiator/lun_0/lun_0" || return 1
	echo 0 >"$t/attrib/authentication" && echo 1 >"$t/enable"
}
# weft_iser_disks: the disks of the iSCSI sessions (sdX, one a line).
weft_iser_disks() {
	iscsiadm -m session -P 3 2>/dev/null | sed -n 's/.*Attached scsi disk \([a-z]*\).*/\1/p'
}
# weft_iser_down: iscsid stopped, LIO cleared, weft_isert and weft_iser
# unloaded, h1 gone, OpenSM stopped, the stack unloaded.
weft_iser_down() {
	local r=0
	iscsiadm -m node -u >/dev/null 2>&1
	iscsiadm -k 0 >/dev/null 2>&1 || kill "$weft_iscsid_pid"
	weft_until 10 '! kill -0 "$weft_iscsid_pid" 2>/dev/null' || { echo "iscsid did not stop"; r=1; }
	weft_lio_clear
	rmmod weft_isert || r=1
	rmmod weft_iser || r=1
	ip netns del h1
	weft_sm_stop
	weft_unload || r=1
	return $r
}

# Test result lines the host side counts.
weft_result() { # NAME pass|fail [detail]
	echo "WEFT-RESULT $2 $1${3:+ - $3}"
}
