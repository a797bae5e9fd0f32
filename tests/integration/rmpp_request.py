#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# The client of tests/integration/rmpp_request.sh: through libibumad (ctypes),
# an RMPP agent (rmpp_version 1) on CA/port sends the SA at the port's SM LID
# a SubnAdmGetMulti MultiPathRecord (IBA 15.2.5.20, 15.4.2) with one SGID and
# N DGIDs, for each N of NDGIDS (comma-separated): 56 + 24 + 16 * (1 + N)
# bytes, written as one message the kernel cuts into RMPP segments (2 for 12
# DGIDs, 3 for 24).  The answer, a GetMultiResp of PathRecords in RMPP
# segments, is read back whole.  Checks (exit 1 on a failure): status 0, the
# PathRecord attribute, a reassembled answer longer than one MAD, at least
# MIN_RECORDS records, each from the SGID to one of the DGIDs.  Prints
# "N DGIDs: request L bytes, records R, answer L bytes" for each.
import ctypes, struct, sys

ca, port, sgid, counts, min_records = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
dgids = sys.argv[6:]
SA_CLASS, GETMULTI, GETMULTI_RESP, MPR_ATTR, PR_ATTR = 0x03, 0x14, 0x94, 0x003A, 0x0035
SA_HDR, PR_LEN = 56, 64
SGIDCOUNT, DGIDCOUNT = 1 << 19, 1 << 20  # MultiPathRecord component mask bits (IBA 15.2.5.20)
SA_QKEY = 0x80010000


def gid(text):
    return bytes.fromhex(text.replace(":", ""))


def fail(msg):
    print("rmpp_request: FAIL: " + msg)
    sys.exit(1)


um = ctypes.CDLL("libibumad.so.3", use_errno=True)
um.umad_get_mad.restype = ctypes.c_void_p
um.umad_get_mad.argtypes = [ctypes.c_void_p]
um.umad_set_addr.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
um.umad_send.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int]
um.umad_recv.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
um.umad_status.argtypes = [ctypes.c_void_p]
um.umad_open_port.argtypes = [ctypes.c_char_p, ctypes.c_int]
um.umad_register.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_uint8, ctypes.c_void_p]

if um.umad_init() < 0:
    fail("umad_init")
fd = um.umad_open_port(ca.encode(), port)
if fd < 0:
    fail("umad_open_port %s %d: %d" % (ca, port, fd))
agent = um.umad_register(fd, SA_CLASS, 2, 1, None)  # class version 2, rmpp_version 1, send-only
if agent < 0:
    fail("umad_register: %d" % agent)
sm_lid = int(open("/sys/class/infiniband/%s/ports/%d/sm_lid" % (ca, port)).read(), 0)

size = um.umad_size()


def getmulti(ndgid, tid):
    gids = [gid(sgid)] + [gid(dgids[i % len(dgids)]) for i in range(ndgid)]
    # SA header: common MAD header, RMPP header (version 1, Active: the client's
    # RMPP request, IBA 15.4.2), SM_Key, AttributeOffset, ComponentMask.
    hdr = struct.pack(">BBBBHHQHHI", 1, SA_CLASS, 2, GETMULTI, 0, 0, tid, MPR_ATTR, 0, 0)
    hdr += struct.pack(">BBBBII", 1, 1, 1, 0, 0, 0) + struct.pack(">QHHQ", 0, 0, 0, SGIDCOUNT | DGIDCOUNT)
    rec = bytearray(24)
    rec[15], rec[16] = 1, ndgid  # SGIDCount, DGIDCount (after the 8 bits of ServiceID and Independence)
    msg = hdr + bytes(rec) + b"".join(gids)
    assert len(hdr) == SA_HDR
    # The segments' tail: a MAD after the first (IBA 13.6.2.1: 200 data bytes each for SA).
    if len(msg) <= 256:
        fail("%d bytes fit one MAD" % len(msg))

    buf = ctypes.create_string_buffer(size + len(msg))  # umad_alloc() is umad.h's inline calloc
    ctypes.memmove(um.umad_get_mad(buf), msg, len(msg))
    um.umad_set_addr(buf, sm_lid, 1, 0, SA_QKEY)
    if um.umad_send(fd, agent, buf, len(msg), 2000, 3) < 0:
        fail("umad_send of %d bytes: errno %d" % (len(msg), ctypes.get_errno()))

    cap = 1 << 20
    rbuf = ctypes.create_string_buffer(size + cap)
    length = ctypes.c_int(cap)
    got = um.umad_recv(fd, rbuf, ctypes.byref(length), 20000)
    if got < 0:
        fail("umad_recv: %d" % got)
    if um.umad_status(rbuf):
        fail("the request ended with status %d (ETIMEDOUT is 110)" % um.umad_status(rbuf))
    n = length.value
    ans = ctypes.string_at(um.umad_get_mad(rbuf), n)
    method, status, attr = ans[3], struct.unpack_from(">H", ans, 4)[0], struct.unpack_from(">H", ans, 16)[0]
    if method != GETMULTI_RESP or status != 0 or attr != PR_ATTR:
        fail("answer method 0x%x status 0x%x attribute 0x%x" % (method, status, attr))
    if n <= 256:
        fail("the answer is one MAD (%d bytes): no RMPP to test" % n)
    stride = struct.unpack_from(">H", ans, 44)[0] * 8
    if stride != PR_LEN:
        fail("AttributeOffset %d bytes, not a PathRecord's" % stride)
    records = (n - SA_HDR) // stride
    if records < min_records:
        fail("%d path records, expected at least %d" % (records, min_records))
    wanted = set(gids[1:])
    for i in range(records):
        r = ans[SA_HDR + i * stride:SA_HDR + (i + 1) * stride]
        if r[24:40] != gids[0] or r[8:24] not in wanted:
            fail("record %d: SGID %s DGID %s" % (i, r[24:40].hex(), r[8:24].hex()))
        if not struct.unpack_from(">H", r, 40)[0] or not struct.unpack_from(">H", r, 42)[0]:
            fail("record %d has no LIDs" % i)
    print("%d DGIDs: request %d bytes, records %d, answer %d bytes" % (ndgid, len(msg), records, n))


for i, count in enumerate(counts.split(",")):
    getmulti(int(count), 0x1000 + i)
