#!/bin/bash
# Integration: user-space MAD access (userspace/umad, weft_umad.ko) with the
# in-tree user_mad ABI 5 on the default fabric (weft0, weft1, weftsw0):
# the infiniband_mad class and its files, /dev/infiniband/umadN and issmN,
# ibstat, ibping between the two HCAs (vendor class 0x32 over QP1), the
# issm hold (second opener: EAGAIN), malformed writes and ioctls refused
# with the in-tree errnos, a PMA request from Python answered or timed out,
# the module pinned while a file is open, and the devices going away under
# an open file (reads then fail with EIO; nothing hangs).
set -u
fail=0
bad() { echo "umad: FAIL: $*"; fail=1; }
cls=/sys/class/infiniband_mad

weft_kmemleak_clear
weft_load || exit 1

weft_expect $cls/abi_version $'5\n' || fail=1

# One umad and one issm per CA port (switches have no MAD port), numbered from 0.
declare -A umad_of
for d in $cls/umad*; do
	n=${d##*umad}
	dev=$(cat "$d/ibdev") port=$(cat "$d/port")
	umad_of[$dev:$port]=$n
	[ -c /dev/infiniband/umad$n ] || bad "/dev/infiniband/umad$n missing"
	[ -c /dev/infiniband/issm$n ] || bad "/dev/infiniband/issm$n missing"
	weft_expect $cls/issm$n/ibdev "$dev"$'\n' || fail=1
	weft_expect $cls/issm$n/port "$port"$'\n' || fail=1
done
[ "${#umad_of[@]}" = 2 ] || bad "umad devices: ${!umad_of[*]} (want weft0:1 weft1:1)"
[ -n "${umad_of[weft0:1]:-}" ] && [ -n "${umad_of[weft1:1]:-}" ] || bad "no umad for weft0:1/weft1:1"
[ "${umad_of[weft0:1]:-}" = 0 ] || bad "weft0 port 1 is umad${umad_of[weft0:1]:-?}, want umad0"

# sysfs-only tools still work with the class present.
ibstat >/tmp/ibstat.out 2>&1 || bad "ibstat failed: $(cat /tmp/ibstat.out)"
grep -q "CA 'weft0'" /tmp/ibstat.out || bad "ibstat: no weft0"
[ "$(ibstat -p | wc -l)" -ge 2 ] || bad "ibstat -p: $(ibstat -p 2>&1)"

# ibping: a server on weft0, five pings from weft1 to its LID.
lid0=$(( $(cat /sys/class/infiniband/weft0/ports/1/lid) ))
[ "$lid0" -gt 0 ] || bad "weft0 has no LID"
ibping -S -C weft0 -P 1 >/tmp/ibping-server.out 2>&1 &
server=$!
sleep 1
if out=$(timeout 60 ibping -C weft1 -P 1 -c 5 -L "$lid0" 2>&1); then
	echo "$out" | tail -3
	[[ $out == *"5 packets transmitted, 5 received"* ]] || bad "ibping: $out"
else
	bad "ibping failed: $out"
fi
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
kill -0 "$server" 2>/dev/null && bad "ibping server did not exit"

# issm0: one holder; a second O_NONBLOCK opener gets EAGAIN; free again after close.
python3 - <<'PY' || fail=1
import errno, os, sys
cap = "/sys/class/infiniband/weft0/ports/1/cap_mask"
def is_sm():
    return int(open(cap).read(), 0) & 0x2
ok = True
a = os.open("/dev/infiniband/issm0", os.O_RDWR)
held_bit = is_sm()
try:
    os.open("/dev/infiniband/issm0", os.O_RDWR | os.O_NONBLOCK)
    print("umad: second issm0 open succeeded"); ok = False
except OSError as e:
    if e.errno != errno.EAGAIN:
        print("umad: second issm0 open:", e); ok = False
os.close(a)
# IBA 14.2.5.6 (PortInfo:CapabilityMask.IsSM): set while issm0 is held, clear once it is not.
if not held_bit:
    print("umad: IsSM not set while issm0 is held"); ok = False
if is_sm():
    print("umad: IsSM still set after close"); ok = False
b = os.open("/dev/infiniband/issm0", os.O_RDWR | os.O_NONBLOCK)
os.close(b)
sys.exit(0 if ok else 1)
PY

# Malformed input: the in-tree errnos, no splat.
python3 - "$lid0" <<'PY' || fail=1
import errno, fcntl, os, select, struct, sys
lid0 = int(sys.argv[1])
ok = True
def expect_err(what, want, fn, *a):
    global ok
    try:
        fn(*a)
        print("umad: %s succeeded, want %s" % (what, errno.errorcode[want])); ok = False
    except OSError as e:
        if e.errno != want:
            print("umad: %s: %s, want %s" % (what, e, errno.errorcode[want])); ok = False
REG, UNREG, PKEY, REG2 = 0xc01c1b01, 0x40041b02, 0x1b03, 0xc0281b04
def reg_req(qpn, cls, ver, mask=0, rmpp=0):
    return struct.pack("<I QQ BBB 3s B x", 0, mask & (2**64 - 1), mask >> 64, qpn, cls, ver, b"\0\0\0", rmpp)
fd = os.open("/dev/infiniband/umad0", os.O_RDWR | os.O_NONBLOCK)
fcntl.ioctl(fd, PKEY)
expect_err("unknown ioctl", errno.ENOTTY, fcntl.ioctl, fd, 0x1b42)
expect_err("register qpn 5", errno.EINVAL, fcntl.ioctl, fd, REG, reg_req(5, 4, 1))
expect_err("register SM class on QP1", errno.EINVAL, fcntl.ioctl, fd, REG, reg_req(1, 0x81, 1))
expect_err("register rmpp 2", errno.EINVAL, fcntl.ioctl, fd, REG, reg_req(1, 3, 2, rmpp=2))
r2 = bytearray(struct.pack("<I I BBH I QQ I B3x", 0, 1, 4, 1, 0, 0x80, 0, 0, 0, 0))
expect_err("register2 bad flags", errno.EINVAL, fcntl.ioctl, fd, REG2, r2, True)
if struct.unpack_from("<I", r2, 12)[0] != 1:
    print("umad: register2 supported flags not written back"); ok = False
expect_err("read empty", errno.EAGAIN, os.read, fd, 320)
expect_err("short write", errno.EINVAL, os.write, fd, b"\0" * 10)
expect_err("write to unregistered agent 0", errno.EIO, os.write, fd, b"\0" * 320)
expect_err("write to agent 40", errno.EINVAL, os.write, fd, struct.pack("<I", 40) + b"\0" * 316)
buf = bytearray(reg_req(1, 4, 1))
fcntl.ioctl(fd, REG, buf, True)
agent = struct.unpack_from("<I", buf)[0]
expect_err("enable pkey after register", errno.EINVAL, fcntl.ioctl, fd, PKEY)
expect_err("unregister 99", errno.EINVAL, fcntl.ioctl, fd, UNREG, struct.pack("<I", 99))
# A PMA ClassPortInfo Get to our own LID: the answer (or ETIMEDOUT) comes back.
def hdr(agent, timeout, lid, qpn, qkey):
    # struct ib_user_mad_hdr: host-order u32s, big-endian address, then GRH fields and pkey_index
    return (struct.pack("<IIIII", agent, 0, timeout, 2, 0) + struct.pack(">IIH", qpn, qkey, lid) +
            bytes(6 + 16 + 4) + struct.pack("<H", 0) + bytes(6))
mad = struct.pack(">BBBBHHQHHI", 1, 4, 1, 1, 0, 0, 0x12345678, 1, 0, 0) + b"\0" * 232
expect_err("write too long", errno.EINVAL, os.write, fd, hdr(agent, 100, lid0, 1, 0x80010000) + mad + b"\0" * 8)
expect_err("SM class via QP1 agent", errno.EINVAL, os.write, fd, hdr(agent, 100, lid0, 1, 0x80010000) + b"\x01\x81" + mad[2:])
if os.write(fd, hdr(agent, 100, lid0, 1, 0x80010000) + mad) != 320:
    print("umad: write count"); ok = False
if not select.select([fd], [], [], 5)[0]:
    print("umad: nothing to read after a request"); ok = False
else:
    expect_err("read into a small buffer", errno.EINVAL, os.read, fd, 100)
    m = os.read(fd, 320)
    aid, status = struct.unpack_from("<II", m)
    tid = struct.unpack_from(">Q", m, 64 + 8)[0]
    print("umad: PMA request: status %d, %d bytes" % (status, len(m)))
    if aid != agent or status not in (0, errno.ETIMEDOUT) or tid & 0xffffffff != 0x12345678:
        print("umad: unexpected answer", aid, status, hex(tid)); ok = False
    if status == 0 and (len(m) != 320 or struct.unpack_from(">H", m, 28)[0] != lid0):
        print("umad: response length/lid", len(m)); ok = False
fcntl.ioctl(fd, UNREG, struct.pack("<I", agent))
os.close(fd)
sys.exit(0 if ok else 1)
PY

# An open file pins the module.
rm -f /tmp/umad-held /tmp/umad-ready
python3 -c 'import os, time; fd = os.open("/dev/infiniband/umad1", os.O_RDWR); open("/tmp/umad-held", "w").close(); time.sleep(60)' &
holder=$!
for _ in $(seq 100); do [ -e /tmp/umad-held ] && break; sleep 0.1; done
[ -e /tmp/umad-held ] || bad "holder never opened umad1"
if rmmod weft_umad 2>/dev/null; then
	bad "weft_umad unloaded with a file open"
	weft_insmod weft_umad # put it back for the rest
fi
kill "$holder"; wait "$holder" 2>/dev/null

# The devices go away under an open file with an agent and a request outstanding:
# blocked reader wakes with EIO, close works, nothing leaks or hangs.
python3 - "$lid0" <<'PY' &
import errno, fcntl, os, struct, sys, time
lid0 = int(sys.argv[1])
fd = os.open("/dev/infiniband/umad1", os.O_RDWR)
buf = bytearray(struct.pack("<I QQ BBB 3s B x", 0, 0, 0, 1, 4, 1, b"\0\0\0", 0))
fcntl.ioctl(fd, 0xc01c1b01, buf, True)
# the 56-byte header (no ENABLE_PKEY)
h = struct.pack("<IIIII", 0, 0, 60000, 0, 0) + struct.pack(">IIH", 1, 0x80010000, 0xbeef) + bytes(6 + 16 + 4)
os.write(fd, h + struct.pack(">BBBBHHQHHI", 1, 4, 1, 1, 0, 0, 1, 1, 0, 0) + b"\0" * 232)
open("/tmp/umad-ready", "w").close()
try:
    os.read(fd, 312)
    print("umad: read after removal succeeded"); sys.exit(1)
except OSError as e:
    if e.errno not in (errno.EIO, errno.ENODEV):
        print("umad: read after removal:", e); sys.exit(1)
os.close(fd)
sys.exit(0)
PY
reader=$!
for _ in $(seq 100); do [ -e /tmp/umad-ready ] && break; sleep 0.1; done
sleep 0.5
weft_fabric_clear
rmmod weft_hca || bad "rmmod weft_hca with a umad file open failed"
[ ! -e /dev/infiniband/umad0 ] || bad "umad0 left after the devices went"
timeout 20 tail --pid="$reader" -f /dev/null || bad "reader still blocked after removal"
wait "$reader" || bad "reader after removal failed"
ls $cls | grep -q umad && bad "class entries left: $(ls $cls)"

weft_unload || fail=1
weft_kmemleak_check || fail=1
weft_check_taint || fail=1
exit $fail
