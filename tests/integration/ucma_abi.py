#!/usr/bin/env python3
# The rdma_cm write() ABI of /dev/infiniband/rdma_cm spoken directly (no
# librdmacm), for tests/integration/ucma.sh: the framing and size errnos of
# the in-tree ucma.c, Ids per file, the AF_IB refusal librdmacm's probe
# relies on, QUERY of a bound Id (node GUID of the device with the address,
# no ibdev_index), GET_EVENT without events (EAGAIN, poll), DESTROY_ID's
# events_reported, MIGRATE_ID between files, bad user pointers (EFAULT).
# Layouts are those of <rdma/rdma_user_cm.h>.
# Usage: ucma_abi.py LOCAL_IPV4 NODE_GUID_HEX
import ctypes
import errno
import os
import select
import socket
import struct
import sys

local_ip, guid = sys.argv[1], int(sys.argv[2], 16)
ok = True
DEV = "/dev/infiniband/rdma_cm"
(CREATE_ID, DESTROY_ID, BIND_IP, RESOLVE_IP, RESOLVE_ROUTE, QUERY_ROUTE, CONNECT, LISTEN, ACCEPT,
 REJECT, DISCONNECT, INIT_QP_ATTR, GET_EVENT, GET_OPTION, SET_OPTION, NOTIFY, JOIN_IP_MCAST,
 LEAVE_MCAST, MIGRATE_ID, QUERY, BIND, RESOLVE_ADDR, JOIN_MCAST) = range(23)
PS_TCP, PS_IB = 0x0106, 0x013F
AF_IB = 27


def bad(*a):
    global ok
    print("ucma_abi:", *a)
    ok = False


def buf(n):
    b = ctypes.create_string_buffer(n)
    return b, ctypes.addressof(b)


def cmd(fd, c, body, out=0, in_len=None):
    """One command; the header's `in` is the body's length unless told."""
    h = struct.pack("<IHH", c, len(body) if in_len is None else in_len, out)
    return os.write(fd, h + body)


def expect_err(what, want, fn, *a):
    try:
        fn(*a)
        bad("%s succeeded, want %s" % (what, errno.errorcode[want]))
    except OSError as e:
        if e.errno != want:
            bad("%s: %s, want %s" % (what, e, errno.errorcode[want]))


def create_id(fd, ps=PS_TCP, qpt=0, uid=0x1234):
    r, a = buf(4)
    cmd(fd, CREATE_ID, struct.pack("<QQHB5x", uid, a, ps, qpt), 4)
    return struct.unpack("<I", r.raw)[0]


def destroy_id(fd, i):
    r, a = buf(4)
    cmd(fd, DESTROY_ID, struct.pack("<QII", a, i, 0), 4)
    return struct.unpack("<I", r.raw)[0]


def sin(ip, port=0):
    return struct.pack("<H", socket.AF_INET) + struct.pack(">H", port) + socket.inet_aton(ip) + bytes(8)


def sin6_slot(ip, port=0):
    return sin(ip, port) + bytes(12)


def bind(fd, i, sa):
    return cmd(fd, BIND, struct.pack("<IHH", i, len(sa), 0) + sa.ljust(128, b"\0"))


fd = os.open(DEV, os.O_RDWR)
fd2 = os.open(DEV, os.O_RDWR)

# Framing: a short header, an unknown command, a request longer than the
# write are EINVAL; GET_OPTION (none in-tree) ENOSYS; a short request EINVAL,
# a short response room ENOSPC.
expect_err("short header", errno.EINVAL, os.write, fd, b"\0" * 4)
expect_err("unknown command", errno.EINVAL, cmd, fd, 23, b"")
expect_err("in beyond the write", errno.EINVAL, cmd, fd, CREATE_ID, bytes(24), 4, 200)
expect_err("GET_OPTION", errno.ENOSYS, cmd, fd, GET_OPTION, bytes(24))
expect_err("short CREATE_ID", errno.EINVAL, cmd, fd, CREATE_ID, bytes(16), 4)
_, a = buf(4)
expect_err("CREATE_ID with no response room", errno.ENOSPC, cmd, fd, CREATE_ID,
           struct.pack("<QQHB5x", 1, a, PS_TCP, 0), 0)
expect_err("CREATE_ID of an unknown port space", errno.EINVAL, cmd, fd, CREATE_ID,
           struct.pack("<QQHB5x", 1, a, 0x999, 0), 4)
expect_err("CREATE_ID with a bad response pointer", errno.EFAULT, cmd, fd, CREATE_ID,
           struct.pack("<QQHB5x", 1, 8, PS_TCP, 0), 4)

# Ids are per file: another file's Id does not exist there.
i = create_id(fd)
expect_err("DESTROY_ID of another file's Id", errno.ENOENT, destroy_id, fd2, i)
expect_err("LISTEN on another file's Id", errno.ENOENT, cmd, fd2, LISTEN, struct.pack("<II", i, 1))
expect_err("an Id nobody made", errno.ENOENT, cmd, fd, LISTEN, struct.pack("<II", i + 100000, 1))

# librdmacm's probe at init: an AF_IB bind must fail (then it uses IP only).
sib = struct.pack("<HHI", AF_IB, 0xFFFF, 0) + bytes(16) + struct.pack(">QQ", 0x1060000, 0xFFFF0000) + bytes(8)
p = create_id(fd, PS_IB, 2)
expect_err("BIND of an AF_IB address", errno.EAFNOSUPPORT, bind, fd, p, sib)
expect_err("BIND with a size not its family's", errno.EINVAL, bind, fd, p, sin(local_ip)[:12])
destroy_id(fd, p)

# A bound Id reports its address and device.
cmd(fd, BIND_IP, struct.pack("<Q", 0) + sin6_slot(local_ip, 7999) + struct.pack("<I", i))
r, a = buf(280)
cmd(fd, QUERY, struct.pack("<QII", a, i, 0), 280)
node_guid, port = struct.unpack_from(">QB", r.raw)
src_size = struct.unpack_from("<H", r.raw, 12)[0]
ibdev_index = struct.unpack_from("<I", r.raw, 272)[0]
fam, sport = struct.unpack_from("<H", r.raw, 16)[0], struct.unpack_from(">H", r.raw, 18)[0]
if node_guid != guid or port != 1 or src_size != 16 or fam != socket.AF_INET or sport != 7999:
    bad("QUERY ADDR: guid %x port %d src_size %d family %d port %d" % (node_guid, port, src_size, fam, sport))
if socket.inet_ntoa(r.raw[20:24]) != local_ip:
    bad("QUERY ADDR: source address %s" % socket.inet_ntoa(r.raw[20:24]))
if ibdev_index != 0xFFFFFFFF:
    bad("QUERY ADDR: ibdev_index %#x, want none (match by GUID)" % ibdev_index)
expect_err("QUERY with a short response", errno.ENOSPC, cmd, fd, QUERY, struct.pack("<QII", a, i, 0), 100)
expect_err("QUERY of an unknown option", errno.ENOSYS, cmd, fd, QUERY, struct.pack("<QII", a, i, 9), 280)
r, a = buf(208)
cmd(fd, QUERY_ROUTE, struct.pack("<QII", a, i, 0), 208)
if struct.unpack_from(">Q", r.raw)[0] != guid or r.raw[196] != 1:
    bad("QUERY_ROUTE: guid/port")
# Options: TOS takes one byte; unknown ones and IB_PATH are ENOSYS.
tos, ta = buf(1)
cmd(fd, SET_OPTION, struct.pack("<QIIII", ta, i, 0, 0, 1))
expect_err("SET_OPTION TOS of 4 bytes", errno.EINVAL, cmd, fd, SET_OPTION, struct.pack("<QIIII", ta, i, 0, 0, 4))
expect_err("SET_OPTION unknown", errno.ENOSYS, cmd, fd, SET_OPTION, struct.pack("<QIIII", ta, i, 0, 77, 1))
expect_err("SET_OPTION IB_PATH", errno.ENOSYS, cmd, fd, SET_OPTION, struct.pack("<QIIII", ta, i, 1, 1, 72))
expect_err("INIT_QP_ATTR of a bad state", errno.EINVAL, cmd, fd, INIT_QP_ATTR, struct.pack("<QII", a, i, 9), 144)
expect_err("REJECT with a bad reason", errno.EINVAL, cmd, fd, REJECT, struct.pack("<IBB2x", i, 0, 5) + bytes(256))
expect_err("CONNECT without valid parameters", errno.EINVAL, cmd, fd, CONNECT, bytes(272) + struct.pack("<II", i, 0))

# GET_EVENT with nothing queued: EAGAIN when non-blocking, and poll() says so.
os.set_blocking(fd, False)
ev, ea = buf(336)
expect_err("GET_EVENT, nothing queued", errno.EAGAIN, cmd, fd, GET_EVENT, struct.pack("<Q", ea), 336)
expect_err("GET_EVENT with a short room", errno.ENOSPC, cmd, fd, GET_EVENT, struct.pack("<Q", ea), 100)
pl = select.poll()
pl.register(fd, select.POLLIN)
if pl.poll(0):
    bad("poll: readable with no event")

# LISTEN, then MIGRATE_ID of the listener to the other file: it answers there.
cmd(fd, LISTEN, struct.pack("<II", i, 5))
r, a = buf(4)
cmd(fd2, MIGRATE_ID, struct.pack("<QII", a, i, fd), 4)
expect_err("the migrated Id in its old file", errno.ENOENT, cmd, fd, LISTEN, struct.pack("<II", i, 1))
null = os.open("/dev/null", os.O_RDONLY)
expect_err("MIGRATE_ID from a descriptor not rdma_cm", errno.EINVAL, cmd, fd2, MIGRATE_ID,
           struct.pack("<QII", a, i, null), 4)
os.close(null)
if destroy_id(fd2, i) != 0:
    bad("DESTROY_ID: events reported of an Id that had none")

# Many Ids left for close() to destroy.
for _ in range(50):
    create_id(fd)
os.close(fd)
os.close(fd2)
print("ucma_abi: %s" % ("ok" if ok else "FAILED"))
sys.exit(0 if ok else 1)
