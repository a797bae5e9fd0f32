#!/usr/bin/env python3
# The uverbs write() ABI of /dev/infiniband/uverbsN spoken directly (no
# libibverbs), for tests/integration/uverbs.sh: the commands Weft answers
# and the in-tree errnos for everything malformed.  Layouts are those of
# <rdma/ib_user_verbs.h>.  Usage: uverbs_abi.py DEV LID NODE_GUID_HEX NPORTS
import ctypes
import errno
import fcntl
import os
import struct
import sys

dev, lid, guid, nports = sys.argv[1], int(sys.argv[2]), int(sys.argv[3], 16), int(sys.argv[4])
ok = True


def bad(*a):
    global ok
    print("uverbs_abi:", *a)
    ok = False


def hdr(cmd, in_words, out_words):
    return struct.pack("<IHH", cmd, in_words, out_words)


def expect_err(what, want, fn, *a):
    try:
        fn(*a)
        bad("%s succeeded, want %s" % (what, errno.errorcode[want]))
    except OSError as e:
        if e.errno != want:
            bad("%s: %s, want %s" % (what, e, errno.errorcode[want]))


def buf(n):
    b = ctypes.create_string_buffer(n)
    return b, ctypes.addressof(b)


GET_CONTEXT, QUERY_DEVICE, QUERY_PORT = 0, 1, 2
EXT = 0x80000000

fd = os.open(dev, os.O_RDWR)
dresp, daddr = buf(176)
presp, paddr = buf(40)
cresp, caddr = buf(8)


def query_port(port, out_words=10):
    return os.write(fd, hdr(QUERY_PORT, 6, out_words) + struct.pack("<QB7x", paddr, port))


# Before GET_CONTEXT there is no context: EINVAL (in-tree ib_uverbs_get_ucontext()).
expect_err("QUERY_DEVICE before GET_CONTEXT", errno.EINVAL, os.write, fd,
           hdr(QUERY_DEVICE, 4, 44) + struct.pack("<Q", daddr))
# The ioctl() ABI is absent, so libibverbs falls back to write().
expect_err("RDMA_VERBS_IOCTL", errno.ENOTTY, fcntl.ioctl, fd, 0xc0181b01, bytes(24))

# GET_CONTEXT: the async event fd and the completion vectors.
if os.write(fd, hdr(GET_CONTEXT, 4, 2) + struct.pack("<Q", caddr)) != 16:
    bad("GET_CONTEXT count")
async_fd, nvec = struct.unpack("<II", cresp.raw)
target = os.readlink("/proc/self/fd/%d" % async_fd)
print("uverbs_abi: async fd %d -> %s, %d completion vectors" % (async_fd, target, nvec))
if "infinibandevent" not in target or nvec < 1:
    bad("GET_CONTEXT response", target, nvec)
if not fcntl.fcntl(async_fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC:
    bad("async fd without close-on-exec")
expect_err("second GET_CONTEXT", errno.EINVAL, os.write, fd, hdr(GET_CONTEXT, 4, 2) + struct.pack("<Q", caddr))
fl = fcntl.fcntl(async_fd, fcntl.F_GETFL)
fcntl.fcntl(async_fd, fcntl.F_SETFL, fl | os.O_NONBLOCK)
expect_err("async read with no event", errno.EAGAIN, os.read, async_fd, 16)
expect_err("async read into 8 bytes", errno.EAGAIN, os.read, async_fd, 8)
fcntl.fcntl(async_fd, fcntl.F_SETFL, fl)

# QUERY_DEVICE.
os.write(fd, hdr(QUERY_DEVICE, 4, 44) + struct.pack("<Q", daddr))
fw = struct.unpack_from("<Q", dresp.raw)[0]
node_guid = struct.unpack_from(">Q", dresp.raw, 8)[0]  # __be64
phys_port_cnt = dresp.raw[171]  # after max_pkeys (u16 @168) and local_ca_ack_delay
print("uverbs_abi: QUERY_DEVICE fw %#x node_guid %016x ports %d" % (fw, node_guid, phys_port_cnt))
if node_guid != guid or phys_port_cnt != nports:
    bad("QUERY_DEVICE: guid %016x ports %d, want %016x %d" % (node_guid, phys_port_cnt, guid, nports))

# QUERY_PORT: LID, state ACTIVE, link layer InfiniBand; bad ports EINVAL.
query_port(1)
plid, state, link_layer = struct.unpack_from("<H", presp.raw, 22)[0], presp.raw[26], presp.raw[37]
print("uverbs_abi: QUERY_PORT 1: lid %d state %d link_layer %d" % (plid, state, link_layer))
if (plid, state, link_layer) != (lid, 4, 1):
    bad("QUERY_PORT 1: lid %d state %d link_layer %d, want %d 4 1" % (plid, state, link_layer, lid))
expect_err("QUERY_PORT 0", errno.EINVAL, query_port, 0)
expect_err("QUERY_PORT %d" % (nports + 2), errno.EINVAL, query_port, nports + 2)

# The extended QUERY_DEVICE.
xresp, xaddr = buf(304)


def ex_query(comp_mask=0, out_words=38, reserved=0):
    return os.write(fd, hdr(EXT | QUERY_DEVICE, 1, out_words) +
                    struct.pack("<QHHI", xaddr, 0, 0, reserved) + struct.pack("<II", comp_mask, 0))


ex_query()
rlen = struct.unpack_from("<I", xresp.raw, 180)[0]
if rlen != 304 or struct.unpack_from(">Q", xresp.raw, 8)[0] != guid:
    bad("EX_QUERY_DEVICE: response_length %d" % rlen)
expect_err("EX_QUERY_DEVICE comp_mask 1", errno.EINVAL, ex_query, 1)
expect_err("EX_QUERY_DEVICE reserved header", errno.EINVAL, ex_query, 0, 38, 1)
expect_err("EX_QUERY_DEVICE response too small", errno.ENOSPC, ex_query, 0, 1)

# Malformed commands, with the in-tree errnos.
expect_err("4-byte write", errno.EINVAL, os.write, fd, b"\0" * 4)
expect_err("unknown command 99", errno.EOPNOTSUPP, os.write, fd, hdr(99, 2, 0))
expect_err("unknown flag bits", errno.EINVAL, os.write, fd, hdr(0x40000001, 4, 44) + struct.pack("<Q", daddr))
expect_err("in_words not the write size", errno.EINVAL, os.write, fd, hdr(QUERY_DEVICE, 5, 44) + struct.pack("<Q", daddr))
expect_err("QUERY_PORT request too short", errno.ENOSPC, os.write, fd, hdr(QUERY_PORT, 4, 10) + struct.pack("<Q", paddr))
expect_err("QUERY_PORT response too short", errno.ENOSPC, query_port, 1, 9)
expect_err("response at a bad address", errno.EFAULT, os.write, fd, hdr(QUERY_DEVICE, 4, 44) + struct.pack("<Q", 16))
expect_err("non-zero bytes past the request", errno.EOPNOTSUPP, os.write, fd,
           hdr(QUERY_DEVICE, 6, 44) + struct.pack("<QQ", daddr, 1))
if os.write(fd, hdr(QUERY_DEVICE, 6, 44) + struct.pack("<QQ", daddr, 0)) != 24:
    bad("zero bytes past the request refused")

# The object commands: handles that name nothing, sizes that do not add up,
# rings that were never offered (the in-tree errnos).
oresp, oaddr = buf(64)
if os.write(fd, hdr(3, 4, 2) + struct.pack("<Q", oaddr)) != 16:
    bad("ALLOC_PD failed")
pd = struct.unpack_from("<I", oresp.raw, 0)[0]
expect_err("DEALLOC_PD of a handle never given", errno.EINVAL, os.write, fd,
           hdr(4, 3, 0) + struct.pack("<I", pd + 1000))
expect_err("DESTROY_QP of a PD's handle", errno.EINVAL, os.write, fd,
           hdr(27, 6, 1) + struct.pack("<QII", oaddr, pd, 0))
expect_err("POST_SEND to no QP", errno.EINVAL, os.write, fd,
           hdr(28, 8, 1) + struct.pack("<QIIII", oaddr, 999, 0, 0, 0))


def create_cq(cqe, out_words=6):
    return os.write(fd, hdr(18, 10, out_words) + struct.pack("<QQIIiI", oaddr, 7, cqe, 0, -1, 0))


expect_err("CREATE_CQ of 0 entries", errno.EINVAL, create_cq, 0)
expect_err("CREATE_CQ beyond max_cqe", errno.EINVAL, create_cq, 1 << 20)
expect_err("CREATE_CQ with no room for the ring's place", errno.EINVAL, create_cq, 16, 2)
expect_err("CREATE_CQ on a fd that is no channel", errno.EBADF, os.write, fd,
           hdr(18, 10, 6) + struct.pack("<QQIIiI", oaddr, 7, 16, 0, fd, 0))

# A completion channel is taken only from the file that made it (in-tree
# ib_uverbs_lookup_comp_file(): EBADF for another file's channel).
def create_cq_on(channel):
    return os.write(fd, hdr(18, 10, 6) + struct.pack("<QQIIiI", oaddr, 7, 16, 0, channel, 0))


fd2 = os.open(dev, os.O_RDWR)
c2resp, c2addr = buf(8)
os.write(fd2, hdr(GET_CONTEXT, 4, 2) + struct.pack("<Q", c2addr))
async2 = struct.unpack_from("<I", c2resp.raw, 0)[0]
os.write(fd2, hdr(17, 4, 1) + struct.pack("<Q", c2addr))
chan2 = struct.unpack_from("<I", c2resp.raw, 0)[0]
expect_err("CREATE_CQ on another uverbs file's channel", errno.EBADF, create_cq_on, chan2)
if os.write(fd, hdr(17, 4, 1) + struct.pack("<Q", oaddr)) != 16:
    bad("CREATE_COMP_CHANNEL failed")
chan1 = struct.unpack_from("<I", oresp.raw, 0)[0]
if create_cq_on(chan1) != 40:
    bad("CREATE_CQ on the file's own channel failed")
elif os.write(fd, hdr(20, 6, 2) + struct.pack("<QII", oaddr, struct.unpack_from("<I", oresp.raw, 0)[0], 0)) != 24:
    bad("DESTROY_CQ of the channel's CQ failed")
for f in (chan2, async2, fd2, chan1):
    os.close(f)

if create_cq(16) != 40:
    bad("CREATE_CQ failed")
cq, cqe = struct.unpack_from("<II", oresp.raw, 0)
off, size = struct.unpack_from("<QI", oresp.raw, 8)
if cqe < 16 or size < 384 + 48 * 16:
    bad("CREATE_CQ: %d entries, ring of %d bytes" % (cqe, size))
import mmap
ring = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=off)
if struct.unpack_from("<II", ring, 0) != (6, cqe):
    bad("CQ ring header: log2 size, mask %s" % (struct.unpack_from("<II", ring, 0),))
ring.close()
expect_err("mmap of an offset never offered", errno.EINVAL, mmap.mmap, fd, 4096, mmap.MAP_SHARED,
           mmap.PROT_READ, 0, off + (1 << 30))
expect_err("mmap longer than the ring", errno.EINVAL, mmap.mmap, fd, size + 4096, mmap.MAP_SHARED,
           mmap.PROT_READ, 0, off)
expect_err("DEALLOC_PD of a CQ's handle", errno.EINVAL, os.write, fd, hdr(4, 3, 0) + struct.pack("<I", cq + 500))
if os.write(fd, hdr(20, 6, 2) + struct.pack("<QII", oaddr, cq, 0)) != 24:
    bad("DESTROY_CQ failed")
expect_err("DESTROY_CQ twice", errno.EINVAL, os.write, fd, hdr(20, 6, 2) + struct.pack("<QII", oaddr, cq, 0))

# Memory windows: QUERY_DEVICE's max_mw and cap flags (MEM_WINDOW, TYPE_2B);
# ALLOC_MW (14) of type 1 and 2 on a PD, the in-tree EINVAL for another
# type or a handle that names no PD; DEALLOC_MW (16); a PD with a window: EBUSY.
os.write(fd, hdr(QUERY_DEVICE, 4, 44) + struct.pack("<Q", daddr))
caps, max_mw = struct.unpack_from("<I", dresp.raw, 60)[0], struct.unpack_from("<I", dresp.raw, 120)[0]
if max_mw == 0 or (caps >> 17) & 1 == 0 or (caps >> 24) & 1 == 0:
    bad("QUERY_DEVICE: max_mw %d, device_cap_flags %#x (want MEM_WINDOW, TYPE_2B)" % (max_mw, caps))


def alloc_mw(pd_handle, mw_type):
    return os.write(fd, hdr(14, 6, 2) + struct.pack("<QIB3x", oaddr, pd_handle, mw_type))


expect_err("ALLOC_MW of type 3", errno.EINVAL, alloc_mw, pd, 3)
expect_err("ALLOC_MW of type 0", errno.EINVAL, alloc_mw, pd, 0)
expect_err("ALLOC_MW on no PD", errno.EINVAL, alloc_mw, pd + 1000, 1)
mws = []
for t in (1, 2):
    if alloc_mw(pd, t) != 24:
        bad("ALLOC_MW of type %d failed" % t)
    h, rkey = struct.unpack_from("<II", oresp.raw, 0)
    if rkey == 0:
        bad("ALLOC_MW of type %d: rkey 0" % t)
    mws.append(h)
expect_err("DEALLOC_PD with windows", errno.EBUSY, os.write, fd, hdr(4, 3, 0) + struct.pack("<I", pd))
expect_err("DEALLOC_MW of a PD's handle", errno.EINVAL, os.write, fd, hdr(16, 3, 0) + struct.pack("<I", pd))
for h in mws:
    if os.write(fd, hdr(16, 3, 0) + struct.pack("<I", h)) != 12:
        bad("DEALLOC_MW failed")
expect_err("DEALLOC_MW twice", errno.EINVAL, os.write, fd, hdr(16, 3, 0) + struct.pack("<I", mws[0]))
if os.write(fd, hdr(4, 3, 0) + struct.pack("<I", pd)) != 12:
    bad("DEALLOC_PD failed")

os.close(async_fd)
os.close(fd)
sys.exit(0 if ok else 1)
