#!/bin/bash
# Integration (issue 22): user_mad under hostile use, on the default fabric
# (weft0, weft1, weftsw0).  A writer that asks the kernel to take a message
# of any length (a 3 GiB write from a sparse mapping, one byte past the SA
# class's 64 MiB, one past a vendor class's 1 MiB) gets EINVAL at once,
# with no allocation of that size and no WARN; a reader that never reads,
# while another port sends it 8,000 MADs, keeps File::max_queued (4,096) of
# them, the rest dropped and counted in umadN/recv_dropped.  weft0's SMA
# still answers afterwards, and the console stays free of splats (vm-run).
set -u
fail=0
bad() { echo "umad_limits: FAIL: $*"; fail=1; }
cls=/sys/class/infiniband_mad

weft_load || exit 1
lid0=$(( $(cat /sys/class/infiniband/weft0/ports/1/lid) ))
[ "$lid0" -gt 0 ] || { bad "weft0 has no LID"; exit 1; }
if [ "$(cat $cls/umad0/ibdev)" != weft0 ] || [ "$(cat $cls/umad1/ibdev)" != weft1 ]; then
	bad "umad0/umad1 are not weft0/weft1"
	exit 1
fi
dropped_before=$(cat $cls/umad0/recv_dropped) || { bad "no umad0/recv_dropped"; exit 1; }

timeout 300 python3 - "$lid0" "$dropped_before" <<'PY' || fail=1
import errno, fcntl, mmap, os, struct, sys, time
lid0, dropped_before = int(sys.argv[1]), int(sys.argv[2])
ok = True
def bad(*a):
    global ok
    print("umad_limits:", *a); ok = False
REG, PKEY = 0xc01c1b01, 0x1b03
MAX_QUEUED = 4096          # userspace/umad/file.h: File::max_queued
SA_MAX = 64 << 20          # include/weft/mad/service.h: rmpp_max_message(SA)
VENDOR_MAX = 1 << 20       # and of every other RMPP class
def reg(fd, qpn, cls, ver, methods=0, rmpp=0, oui=b"\0\0\0"):
    buf = bytearray(struct.pack("<I QQ BBB 3s B x", 0, methods & (2**64 - 1), methods >> 64,
                                qpn, cls, ver, oui, rmpp))
    fcntl.ioctl(fd, REG, buf)
    return struct.unpack_from("<I", buf)[0]
def hdr(agent, lid, qpn=1, qkey=0x80010000, timeout=0):
    return (struct.pack("<IIIII", agent, 0, timeout, 0, 0) + struct.pack(">IIH", qpn, qkey, lid) +
            bytes(6 + 16 + 4) + struct.pack("<H", 0) + bytes(6))
def mad(cls, ver, method, tid):
    return struct.pack(">BBBBHHQHHI", 1, cls, ver, method, 0, 0, tid, 0x10, 0, 0)
def expect_einval(what, fd, buf):
    try:
        n = os.write(fd, buf)
        bad("%s: wrote %d bytes, want EINVAL" % (what, n))
    except OSError as e:
        if e.errno != errno.EINVAL:
            bad("%s: %s, want EINVAL" % (what, e))

# --- a writer asking for any length ------------------------------------------------
w = os.open("/dev/infiniband/umad0", os.O_RDWR | os.O_NONBLOCK)
fcntl.ioctl(w, PKEY)
sa = reg(w, 1, 0x03, 2, rmpp=1)
vendor = reg(w, 1, 0x32, 1, rmpp=1, oui=b"\x00\x14\x05")
get_table = 0x12
# 3 GiB from a sparse file (read-only shared: no memory committed), only its
# first bytes written: refused before it is read or allocated.
sparse = "/tmp/umad_limits.sparse"
with open(sparse, "wb") as f:
    f.write(hdr(sa, lid0) + mad(0x03, 2, get_table, 1))
    f.truncate(3 << 30)
with open(sparse, "rb") as f:
    m = mmap.mmap(f.fileno(), 3 << 30, prot=mmap.PROT_READ)
expect_einval("3 GiB write", w, memoryview(m))
expect_einval("SA message of 64 MiB + 1", w, memoryview(m)[:64 + SA_MAX + 1])
m.close()
os.unlink(sparse)
big = bytearray(64 + VENDOR_MAX + 1)
big[:64 + 24] = hdr(vendor, lid0) + mad(0x32, 1, 0x01, 2)
expect_einval("vendor message of 1 MiB + 1", w, big)
del big
os.close(w)

# --- a reader that never reads --------------------------------------------------
# weft0's file serves Get of vendor class 0x09 and never reads; weft1 sends it 8,000,
# in bursts that weft0's QP1 receive ring (512) can take.
r = os.open("/dev/infiniband/umad0", os.O_RDWR | os.O_NONBLOCK)
fcntl.ioctl(r, PKEY)
reg(r, 1, 0x09, 1, methods=1 << 0x01)
s = os.open("/dev/infiniband/umad1", os.O_RDWR | os.O_NONBLOCK)
fcntl.ioctl(s, PKEY)
sender = reg(s, 1, 0, 0)  # send-only
sent = 0
retries = 0
for tid in range(8000):
    if tid % 128 == 127:
        time.sleep(0.02)
    while True:
        try:
            os.write(s, hdr(sender, lid0) + mad(0x09, 1, 0x01, tid) + bytes(256 - 24))
            sent += 1
            break
        except OSError as e:
            # A full send queue is back-pressure, not a failure; anything else is.
            if e.errno not in (errno.EAGAIN, errno.ENOBUFS, errno.ENOMEM) or retries > 100000:
                bad("send %d: %s" % (tid, e)); break
            retries += 1
            time.sleep(0.001)
    if not ok:
        break
os.close(s)
# Wait (generously) until every MAD that reached weft0 is queued or dropped.
drop_path = "/sys/class/infiniband_mad/umad0/recv_dropped"
prev, still = -1, 0
for _ in range(600):
    d = int(open(drop_path).read())
    still = still + 1 if d == prev else 0
    prev = d
    if d - dropped_before >= sent - MAX_QUEUED or (d > dropped_before and still >= 50):
        break
    time.sleep(0.1)
dropped = int(open(drop_path).read()) - dropped_before
queued = 0
buf = bytearray(64 + 256)
while True:
    try:
        os.readv(r, [buf])
        queued += 1
    except OSError as e:
        if e.errno != errno.EAGAIN:
            bad("read: %s" % e)
        break
os.close(r)
print("umad_limits: sent %d, queued %d, dropped %d (send retries %d)" % (sent, queued, dropped, retries))
if queued != MAX_QUEUED:
    bad("the reader that never read had %d MADs queued, want the bound, %d" % (queued, MAX_QUEUED))
if dropped <= 0:
    bad("nothing counted in recv_dropped")
if queued + dropped > sent:
    bad("queued %d + dropped %d > sent %d" % (queued, dropped, sent))
sys.exit(0 if ok else 1)
PY

# Closed files' drops stay counted; the SMA still answers.
[ "$(cat $cls/umad0/recv_dropped)" -gt "$dropped_before" ] || bad "recv_dropped lost its count at close"
smpquery -C weft1 -P 1 nodeinfo "$lid0" >/tmp/umad_limits.smp 2>&1 || bad "smpquery after: $(cat /tmp/umad_limits.smp)"
weft_unload || bad "unload"
exit $fail
