#!/bin/bash
# Integration: the `infiniband` sysfs class (core/verbs/shim_ib_sysfs.c) as
# user space reads it.  weft_selftest_ibsysfs.ko registers a fake CA
# (weftfake0, 2 ports) and a fake switch (weftfakesw0); its header comment
# lists their values.  Checks exact file contents (in-tree 6.1 formats),
# Debian's ibstat and ibstatus on them, node_desc writes good and bad, that
# failed adds left nothing, and that unloading under concurrent readers
# removes everything.
set -u
fail=0
sys=/sys/class/infiniband
ca=$sys/weftfake0
sw=$sys/weftfakesw0
bad() { echo "ib_sysfs: FAIL: $*"; fail=1; }

expect() { weft_expect "$@" || fail=1; }
# expect_err ERRNO-TEXT CMD...: CMD fails and says so.
expect_err() {
	local want=$1 out
	shift
	if out=$("$@" 2>&1); then
		bad "'$*' succeeded, want '$want'"
	elif [[ $out != *"$want"* ]]; then
		bad "'$*': '$out', want '$want'"
	fi
}
# expect_ls DIR NAMES: the directory's entries, sorted, space-separated.
expect_ls() {
	local got
	got=$(ls "$1" 2>&1 | sort -V | tr '\n' ' ')
	[ "$got" = "$2 " ] || bad "ls $1: got '$got', want '$2'"
}
write_desc() { printf "$2" >"$1/node_desc"; }

weft_kmemleak_clear
weft_load || exit 1
weft_insmod weft_selftest_ibsysfs || { weft_unload; exit 1; }

# Device files.
expect $ca/node_type $'1: CA\n'
expect $sw/node_type $'2: switch\n'
expect $ca/node_guid $'0006:6a00:d800:0100\n'
expect $ca/sys_image_guid $'0006:6a00:d800:01ff\n'
expect $sw/node_guid $'0006:6a00:e000:0200\n'
expect $ca/fw_ver $'1.2.3\n'
expect $ca/hca_type $'WEFTFAKE\n'
expect $ca/hw_rev $'0x10\n'
expect $ca/board_id $'WEFT-FAKE-0001\n'
expect $ca/node_desc $'weftfake0 fake CA\n'
expect $sw/fw_ver $'2.0.0\n'
expect $sw/node_desc $'weftfakesw0 fake switch\n'
for f in hca_type hw_rev board_id; do
	[ ! -e $sw/$f ] || bad "$sw/$f exists (not given)"
done
expect_ls $ca/ports "1 2"
expect_ls $sw/ports "0"
[ ! -e $sys/weftfakebad0 ] || bad "weftfakebad0 left behind by a failed add"

# Port files.
p=$ca/ports/1
expect $p/lid $'0x11\n'
expect $p/lid_mask_count $'0\n'
expect $p/sm_lid $'0x1\n'
expect $p/sm_sl $'0\n'
expect $p/state $'4: ACTIVE\n'
expect $p/phys_state $'5: LinkUp\n'
expect $p/rate $'100 Gb/sec (4X EDR)\n'
expect $p/cap_mask $'0x02510868\n'
expect $p/link_layer $'InfiniBand\n'
expect_ls $p "cap_mask counters gids hw_counters lid lid_mask_count link_layer phys_state pkeys rate sm_lid sm_sl state"
expect_ls $p/gids "0 1"
expect $p/gids/0 $'fe80:0000:0000:0000:0006:6a00:d800:0101\n'
expect $p/gids/1 $'0000:0000:0000:0000:0000:0000:0000:0000\n'
expect_ls $p/pkeys "0 1"
expect $p/pkeys/0 $'0xffff\n'
expect $p/pkeys/1 $'0x8001\n'
expect_ls $p/counters "VL15_dropped excessive_buffer_overrun_errors link_downed link_error_recovery local_link_integrity_errors multicast_rcv_packets multicast_xmit_packets port_rcv_constraint_errors port_rcv_data port_rcv_errors port_rcv_packets port_rcv_remote_physical_errors port_rcv_switch_relay_errors port_xmit_constraint_errors port_xmit_data port_xmit_discards port_xmit_packets port_xmit_wait symbol_error unicast_rcv_packets unicast_xmit_packets"
expect $p/counters/symbol_error $'65535\n'
expect $p/counters/local_link_integrity_errors $'15\n'
expect $p/counters/link_downed $'3\n'
expect $p/counters/VL15_dropped $'7\n'
expect $p/counters/port_xmit_data $'1234567890123\n'
expect $p/counters/port_rcv_data $'42\n'
expect $p/counters/multicast_rcv_packets $'0\n'
expect_ls $p/hw_counters "mad_replies_dropped out_of_buffer"
expect $p/hw_counters/out_of_buffer $'5000000000\n'
expect $p/hw_counters/mad_replies_dropped $'9\n'
# A real CA's: the MAD layer's count of SMA/PMA answers a full send queue lost (none here).
expect $sys/weft0/ports/1/hw_counters/mad_replies_dropped $'0\n'
p=$ca/ports/2
expect $p/state $'1: DOWN\n'
expect $p/phys_state $'2: Polling\n'
expect $p/rate $'2.5 Gb/sec (1X SDR)\n'
expect $p/lid $'0x0\n'
expect $p/gids/0 $'fe80:0000:0000:0000:0006:6a00:d800:0102\n'
expect_ls $p/pkeys "0"
expect_err "Input/output error" cat $p/counters/symbol_error
p=$sw/ports/0
expect $p/state $'4: ACTIVE\n'
expect $p/rate $'120 Gb/sec (12X QDR)\n'
expect $p/lid $'0x2\n'
expect $p/gids/0 $'fe80:0000:0000:0000:0006:6a00:e000:0200\n'
expect_ls $p "cap_mask gids lid lid_mask_count link_layer phys_state pkeys rate sm_lid sm_sl state"

# Writes: node_desc takes text (one trailing newline dropped, cut at 64
# bytes as in-tree); a NUL inside is -EINVAL; read-only files refuse.
write_desc $ca 'weft test node\n' || bad "node_desc write failed"
expect $ca/node_desc $'weft test node\n'
write_desc $ca 'no newline' || bad "node_desc write failed"
expect $ca/node_desc $'no newline\n'
long=$(printf 'x%.0s' {1..70})
write_desc $ca "$long" || bad "long node_desc write failed"
expect $ca/node_desc "${long:0:64}"$'\n'
expect_err "Invalid argument" write_desc $ca 'a\0b'
expect $ca/node_desc "${long:0:64}"$'\n'
expect_err "Operation not supported" write_desc $sw 'x'
expect_err "Permission denied" sh -c "echo 5 >$ca/ports/1/lid"
expect_err "Permission denied" sh -c "echo 5 >$ca/node_guid"

# Debian's infiniband-diags (libibumad reads sysfs only for these).
out=$(ibstat 2>&1)
echo "--- ibstat"
echo "$out"
want_ca="CA 'weftfake0'
	CA type: WEFTFAKE
	Number of ports: 2
	Firmware version: 1.2.3
	Hardware version: 0x10
	Node GUID: 0x00066a00d8000100
	System image GUID: 0x00066a00d80001ff
	Port 1:
		State: Active
		Physical state: LinkUp
		Rate: 100
		Base lid: 17
		LMC: 0
		SM lid: 1
		Capability mask: 0x02510868
		Port GUID: 0x00066a00d8000101
		Link layer: InfiniBand
	Port 2:
		State: Down
		Physical state: Polling
		Rate: 2.5
		Base lid: 0
		LMC: 0
		SM lid: 0
		Capability mask: 0x02510868
		Port GUID: 0x00066a00d8000102
		Link layer: InfiniBand"
want_sw="Switch 'weftfakesw0'
	Switch type: 
	Number of ports: 0
	Firmware version: 2.0.0
	Hardware version: 
	Node GUID: 0x00066a00e0000200
	System image GUID: 0x00066a00e0000200
	Port 0:
		State: Active
		Physical state: LinkUp
		Rate: 120
		Base lid: 2
		LMC: 0
		SM lid: 1
		Capability mask: 0x00000000
		Port GUID: 0x00066a00e0000200
		Link layer: InfiniBand"
[[ $out == *"$want_ca"* ]] || bad "ibstat: weftfake0 not shown as expected"
[[ $out == *"$want_sw"* ]] || bad "ibstat: weftfakesw0 not shown as expected"
out=$(ibstat -p 2>&1)
[[ $out == *0x00066a00d8000101* && $out == *0x00066a00d8000102* ]] ||
	bad "ibstat -p: '$out'"
out=$(ibstatus weftfake0 2>&1)
echo "--- ibstatus weftfake0"
echo "$out"
want="Infiniband device 'weftfake0' port 1 status:
	default gid:	 fe80:0000:0000:0000:0006:6a00:d800:0101
	base lid:	 0x11
	sm lid:		 0x1
	state:		 4: ACTIVE
	phys state:	 5: LinkUp
	rate:		 100 Gb/sec (4X EDR)
	link_layer:	 InfiniBand

Infiniband device 'weftfake0' port 2 status:
	default gid:	 fe80:0000:0000:0000:0006:6a00:d800:0102
	base lid:	 0x0
	sm lid:		 0x0
	state:		 1: DOWN
	phys state:	 2: Polling
	rate:		 2.5 Gb/sec (1X SDR)
	link_layer:	 InfiniBand"
[ "$out" = "$want" ] || bad "ibstatus weftfake0 not as expected"
out=$(ibstatus weftfakesw0 2>&1)
[[ $out == *"state:		 4: ACTIVE"* && $out == *"rate:		 120 Gb/sec (12X QDR)"* ]] ||
	bad "ibstatus weftfakesw0: '$out'"

# Unload while readers hammer the files: del() must wait for them and no
# callback may run after it (the fake WARNs if one does).
for i in 1 2; do
	(while :; do cat $ca/node_desc $ca/ports/*/* $ca/ports/1/counters/* \
		$ca/ports/1/gids/* $sw/ports/0/* >/dev/null 2>&1; done) &
done
sleep 1
rmmod weft_selftest_ibsysfs || bad "rmmod weft_selftest_ibsysfs failed"
kill $(jobs -p) 2>/dev/null
wait 2>/dev/null
[ ! -e $ca ] || bad "$ca still there after rmmod"
[ ! -e $sw ] || bad "$sw still there after rmmod"
[ -d $sys ] || bad "$sys gone while weft_verbs is loaded"
weft_unload || fail=1
[ ! -e $sys ] || bad "$sys still there after weft_verbs unloaded"
weft_check_taint || fail=1
weft_kmemleak_check || fail=1
exit $fail
