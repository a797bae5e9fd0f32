#!/bin/bash
# Integration: user-space verbs enumeration and device queries
# (userspace/uverbs, weft_uverbs.ko) with Debian's stock rdma-core 44 and
# iproute2 on a subnet OpenSM brought up:
#   - the infiniband_verbs class, /dev/infiniband/uverbsN (one per CA);
#   - ibv_devices and ibv_devinfo (-v) through RDMA netlink, the stock rxe
#     provider bound by driver id: GUIDs, PORT_ACTIVE, the LID OpenSM
#     assigned, link layer InfiniBand; a bad port fails (EINVAL from
#     QUERY_PORT through libibverbs);
#   - the write() ABI spoken directly: the in-tree errnos (uverbs_abi.py);
#   - `rdma dev`, `rdma link`, `rdma sys`, in the root namespace and another;
#   - weft_uverbs unloaded (no devices for libibverbs) and loaded again;
#   - weft_hca removed under open files (one with a context blocked on its
#     event file): no hang, DEVICE_FATAL then EIO, everything freed.
set -u
fail=0
bad() { echo "uverbs: FAIL: $*"; fail=1; }
sys=/sys/class/infiniband
cls=/sys/class/infiniband_verbs
here=$WEFT_REPO/tests/integration

guid_hex() { tr -d ':' <"$sys/$1/node_guid"; }
lid_of() { echo $(( $(cat "$sys/$1/ports/1/lid") )); }

weft_kmemleak_clear
weft_load weft_hca:autoconf=0 || exit 1
weft_sm_start weft0
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM"
sleep 2
lid0=$(lid_of weft0) lid1=$(lid_of weft1) sm_lid=$(( $(cat $sys/weft0/ports/1/sm_lid) ))
[ "$lid0" -gt 0 ] && [ "$lid1" -gt 0 ] || bad "no LIDs: $lid0 $lid1"

# The class and the char devices: one uverbsN per CA, none for the switch.
weft_expect $cls/abi_version $'6\n' || fail=1
declare -A uverbs_of
for d in $cls/uverbs*; do
	[ -d "$d" ] || continue
	n=${d##*/}
	ib=$(cat "$d/ibdev")
	uverbs_of[$ib]=$n
	weft_expect "$d/abi_version" $'2\n' || fail=1
	node=/dev/infiniband/$n
	[ -c "$node" ] || { bad "$node missing"; continue; }
	[ "$(stat -c %a "$node")" = 666 ] || bad "$node mode $(stat -c %a "$node"), want 666"
	rdev=$(printf '%d:%d' 0x"$(stat -c %t "$node")" 0x"$(stat -c %T "$node")")
	[ "$(cat "$d/dev")" = "$rdev" ] || bad "$n/dev $(cat "$d/dev") != $node $rdev"
done
[ "${#uverbs_of[@]}" = 2 ] && [ -n "${uverbs_of[weft0]:-}" ] && [ -n "${uverbs_of[weft1]:-}" ] ||
	bad "uverbs devices: ${!uverbs_of[*]} (want weft0 weft1)"

# ibv_devices: both HCAs with their node GUIDs (and not the switch).
out=$(ibv_devices 2>&1)
echo "$out"
for d in weft0 weft1; do
	grep -qE "^\s+$d\s+$(guid_hex $d)\s*$" <<<"$out" || bad "ibv_devices: no '$d $(guid_hex $d)'"
done
grep -q weftsw0 <<<"$out" && bad "ibv_devices lists the switch"

# ibv_devinfo: transport, node GUID, PORT_ACTIVE, the LIDs, link layer.
for d in weft0 weft1; do
	out=$(ibv_devinfo -d $d 2>&1) || bad "ibv_devinfo -d $d failed: $out"
	lid=$(lid_of $d)
	for want in $'transport:\t\t\tInfiniBand (0)' $'node_guid:\t\t\t'"$(cat $sys/$d/node_guid)" \
		$'state:\t\t\tPORT_ACTIVE (4)' $'port_lid:\t\t'"$lid" $'sm_lid:\t\t\t'"$sm_lid" \
		$'link_layer:\t\tInfiniBand' $'phys_port_cnt:\t\t\t1'; do
		grep -qF "$want" <<<"$out" || bad "ibv_devinfo -d $d lacks '$want'"
	done
done
ibv_devinfo -d weft0 | sed -n 1,20p
out=$(ibv_devinfo -v -d weft1 2>&1) || bad "ibv_devinfo -v failed: $out"
for want in $'phys_state:\t\tLINK_UP (5)' "GID[  0]:" $'max_qp:' $'num_comp_vectors:' $'active_speed:\t\t25.0 Gbps (32)'; do
	grep -qF "$want" <<<"$out" || bad "ibv_devinfo -v lacks '$want'"
done
grep -F "GID[  0]" <<<"$out"
out=$(ibv_devinfo -d weft0 -i 3 2>&1) && bad "ibv_devinfo -i 3 succeeded: $out"
echo "ibv_devinfo -d weft0 -i 3: $out"

# libibverbs itself: a bad port is EINVAL from the kernel's QUERY_PORT.
python3 "$here/uverbs_libibverbs.py" weft0="$lid0" weft1="$lid1" || fail=1
# The write() ABI directly, with its errnos.
python3 "$here/uverbs_abi.py" "/dev/infiniband/${uverbs_of[weft1]:-uverbs1}" "$lid1" "$(guid_hex weft1)" 1 || fail=1

# iproute2's rdma tool over the same netlink.
rdma_check() { # NS
	local out
	out=$(weft_on "$1" rdma dev 2>&1) || bad "[$1] rdma dev failed: $out"
	echo "[$1] rdma dev:"$'\n'"$out"
	grep -q weftsw0 <<<"$out" && bad "[$1] rdma dev lists the switch (not in /sys/class/infiniband)"
	for d in weft0 weft1; do
		grep -qE "^[0-9]+: $d: node_type ca fw 1\.0\.0 node_guid $(cat $sys/$d/node_guid) sys_image_guid " <<<"$out" ||
			bad "[$1] rdma dev: no $d line"
	done
	out=$(weft_on "$1" rdma link 2>&1) || bad "[$1] rdma link failed: $out"
	echo "[$1] rdma link:"$'\n'"$out"
	grep -qE "^link weft0/1 subnet_prefix fe80:0000:0000:0000 lid $lid0 sm_lid $sm_lid lmc 0 state ACTIVE physical_state LINK_UP" <<<"$out" ||
		bad "[$1] rdma link: no weft0/1 line"
	grep -qE "^link weft1/1 .*lid $lid1 sm_lid $sm_lid .*state ACTIVE" <<<"$out" || bad "[$1] rdma link: no weft1/1 line"
	out=$(weft_on "$1" rdma sys 2>&1) || bad "[$1] rdma sys failed: $out"
	grep -q "netns shared" <<<"$out" || bad "[$1] rdma sys: $out"
}
rdma_check -
out=$(rdma dev show weft1 -d 2>&1) || bad "rdma dev show weft1 -d: $out"
grep -q "caps: <" <<<"$out" || bad "rdma dev -d: no caps: $out"
out=$(rdma link show weft0/2 2>&1) && bad "rdma link show weft0/2 succeeded: $out"
echo "rdma res (uverbs_res.sh checks it): $(rdma res 2>&1)"
# Another namespace sees the same devices (shared mode).
weft_host_add h1 || bad "netns h1"
rdma_check h1
out=$(weft_on h1 ibv_devices 2>&1)
grep -q weft1 <<<"$out" || bad "[h1] ibv_devices: $out"
ip netns del h1

# Unloaded: libibverbs finds nothing (its netlink probe must not load
# ib_core); loaded again: both devices back.
rmmod weft_uverbs || bad "rmmod weft_uverbs failed"
[ -e $cls ] && bad "$cls left after rmmod"
ls /dev/infiniband/uverbs* >/dev/null 2>&1 && bad "uverbs nodes left after rmmod"
out=$(ibv_devices 2>&1)
grep -q weft0 <<<"$out" && bad "ibv_devices without weft_uverbs: $out"
grep -q '^ib_core ' /proc/modules && bad "ib_core got loaded"
weft_insmod weft_uverbs || bad "weft_uverbs reload failed"
out=$(ibv_devices 2>&1)
grep -q weft0 <<<"$out" && grep -q weft1 <<<"$out" || bad "ibv_devices after reload: $out"
ibv_devinfo -d weft1 | grep -qF "PORT_ACTIVE" || bad "ibv_devinfo after reload"

# Open files pin the module; removing the devices under them does not hang.
weft_sm_stop
dev0=/dev/infiniband/${uverbs_of[weft0]:-uverbs0} dev1=/dev/infiniband/${uverbs_of[weft1]:-uverbs1}
sleep 60 <"$dev0" &
sleeper=$!
rm -f /tmp/uverbs-ready
python3 - "$dev1" <<'PY' &
import ctypes, errno, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
resp = ctypes.create_string_buffer(8)
os.write(fd, struct.pack("<IHHQ", 0, 4, 2, ctypes.addressof(resp)))  # GET_CONTEXT
afd = struct.unpack("<I", resp.raw[:4])[0]
open("/tmp/uverbs-ready", "w").close()
ev = os.read(afd, 16)  # blocks until the device goes
element, etype = struct.unpack("<QI", ev[:12])
print("uverbs: event after removal: type %d element %d" % (etype, element))
ok = etype == 8  # IB_EVENT_DEVICE_FATAL
try:
    os.read(afd, 16)
    print("uverbs: second event read succeeded"); ok = False
except OSError as e:
    if e.errno != errno.EIO:
        print("uverbs: second event read:", e); ok = False
q = ctypes.create_string_buffer(176)
try:
    os.write(fd, struct.pack("<IHHQ", 1, 4, 44, ctypes.addressof(q)))  # QUERY_DEVICE
    print("uverbs: QUERY_DEVICE after removal succeeded"); ok = False
except OSError as e:
    if e.errno != errno.EIO:
        print("uverbs: QUERY_DEVICE after removal:", e); ok = False
os.close(afd)
os.close(fd)
sys.exit(0 if ok else 1)
PY
holder=$!
for _ in $(seq 100); do [ -e /tmp/uverbs-ready ] && break; sleep 0.1; done
[ -e /tmp/uverbs-ready ] || bad "holder never got a context"
rmmod weft_uverbs 2>/dev/null && bad "weft_uverbs unloaded with files open"
weft_fabric_clear
timeout 60 rmmod weft_hca || bad "rmmod weft_hca with uverbs files open failed or hung"
timeout 20 tail --pid="$holder" -f /dev/null || bad "event reader still blocked after removal"
wait "$holder" || bad "holder after removal failed"
ls $cls | grep -q uverbs && bad "class entries left: $(ls $cls)"
[ -e "$dev0" ] && bad "$dev0 left after removal"
out=$(ibv_devices 2>&1)
grep -q weft <<<"$out" && bad "ibv_devices after removal: $out"
kill "$sleeper" 2>/dev/null
wait "$sleeper" 2>/dev/null

weft_unload || fail=1
weft_kmemleak_check || fail=1
weft_check_taint || fail=1
exit $fail
