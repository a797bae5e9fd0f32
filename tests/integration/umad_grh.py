#!/usr/bin/env python3
# For umad_grh.sh: PMA Gets with and without a GRH from weft0 to weft1's
# QP1, through Debian's libibumad (ctypes) on weft0's umad port, and the
# two sends umad must refuse.  Arguments: weft1's LID, weft0's and
# weft1's GIDs.  Checks (IBA 8.3, 13.5.1; in-tree ib_umad's header):
#   - ClassPortInfo and PortCounters Gets written with grh_present (GID
#     index 0, DGID weft1's, traffic class, flow label, hop limit) come
#     back answered, read with grh_present=1, gid = weft1's GID, gid_index
#     0, the request's traffic class and flow label, hop limit 0xff;
#   - one without a GRH comes back with grh_present=0;
#   - a GRH with GID index 3 (weft0 has one GID): EINVAL;
#   - an SMP (QP0) with a GRH: EINVAL.
import ctypes
import errno
import ipaddress
import struct
import sys

TCLASS, FLOW, HOPS = 0x20, 0x1234A, 64
PMA, SMI_LID = 0x04, 0x01
QKEY = 0x80010000


class MadAddr(ctypes.Structure):  # ib_mad_addr_t, the address part of the umad header
    _fields_ = [("qpn", ctypes.c_uint32), ("qkey", ctypes.c_uint32), ("lid", ctypes.c_uint16),
                ("sl", ctypes.c_uint8), ("path_bits", ctypes.c_uint8), ("grh_present", ctypes.c_uint8),
                ("gid_index", ctypes.c_uint8), ("hop_limit", ctypes.c_uint8),
                ("traffic_class", ctypes.c_uint8), ("gid", ctypes.c_uint8 * 16),
                ("flow_label", ctypes.c_uint32), ("pkey_index", ctypes.c_uint16),
                ("reserved", ctypes.c_uint8 * 6)]


assert ctypes.sizeof(MadAddr) == 44
lib = ctypes.CDLL("libibumad.so.3", use_errno=True)
lib.umad_size.restype = ctypes.c_size_t
lib.umad_get_mad.restype = ctypes.c_void_p
lib.umad_get_mad.argtypes = [ctypes.c_void_p]
lib.umad_get_mad_addr.restype = ctypes.POINTER(MadAddr)
lib.umad_get_mad_addr.argtypes = [ctypes.c_void_p]
lib.umad_set_grh.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
lib.umad_open_port.argtypes = [ctypes.c_char_p, ctypes.c_int]

lid1 = int(sys.argv[1])
gid0, gid1 = (ipaddress.IPv6Address(g).packed for g in sys.argv[2:4])
failures = []


def be16(v):  # a big-endian header field read as a host (little-endian) integer
    return struct.unpack(">H", struct.pack("<H", v))[0]


def be32(v):
    return struct.unpack(">I", struct.pack("<I", v))[0]


def check(what, got, want):
    if got != want:
        failures.append("%s: %r, want %r" % (what, got, want))


def mad(cls, method, attr, tid, mod=0, data=b""):
    """A 256-byte MAD: the common header (IBA 13.4.3), data at byte 64 (PMA) or 24."""
    m = struct.pack(">BBBBHHQHHI", 1, cls, 1, method, 0, 0, tid, attr, 0, mod)
    return (m + data).ljust(256, b"\0")


def send(fd, agent, m, lid, qpn, grh=True, gid_index=0):
    """umad_send of @m; returns 0 or the errno it failed with."""
    size = lib.umad_size()
    buf = ctypes.create_string_buffer(size + 256)
    ctypes.memmove(lib.umad_get_mad(buf), m, 256)
    lib.umad_set_addr(buf, lid, qpn, 0, QKEY)
    if grh:
        a = MadAddr(hop_limit=HOPS, traffic_class=TCLASS, flow_label=FLOW)  # flow label host order
        ctypes.memmove(a.gid, gid1, 16)
        lib.umad_set_grh(buf, ctypes.byref(a))
        lib.umad_get_mad_addr(buf).contents.gid_index = gid_index  # umad_set_grh leaves it
    if lib.umad_send(fd, agent, buf, 256, 2000, 3) == 0:
        return 0
    return ctypes.get_errno()


def recv(fd, tid):
    """The answer to TID @tid: (umad status, address, MAD bytes)."""
    size = lib.umad_size()
    buf = ctypes.create_string_buffer(size + 256)
    for _ in range(20):
        n = ctypes.c_int(256)
        if lib.umad_recv(fd, buf, ctypes.byref(n), 5000) < 0:
            break
        m = ctypes.string_at(lib.umad_get_mad(buf), 256)
        a = lib.umad_get_mad_addr(buf).contents
        if struct.unpack_from(">Q", m, 8)[0] & 0xffffffff == tid:
            return lib.umad_status(buf), MadAddr.from_buffer_copy(a), m
    failures.append("no answer to TID %#x" % tid)
    return None


def pma_get(fd, agent, attr, tid, grh):
    data = bytes(40) + bytes([0, 1]) if attr == 0x12 else b""  # PortCounters: PortSelect 1
    check("send TID %#x" % tid, send(fd, agent, mad(PMA, 0x01, attr, tid, data=data), lid1, 1, grh), 0)
    got = recv(fd, tid)
    if not got:
        return
    status, a, m = got
    what = "TID %#x" % tid
    check(what + " umad status", status, 0)
    check(what + " method", m[3], 0x81)
    check(what + " MAD status", struct.unpack_from(">H", m, 4)[0], 0)
    check(what + " lid", be16(a.lid), lid1)
    check(what + " grh_present", a.grh_present, 1 if grh else 0)
    if grh:
        check(what + " gid", bytes(a.gid), gid1)
        check(what + " gid_index", a.gid_index, 0)
        check(what + " hop_limit", a.hop_limit, 0xff)
        check(what + " traffic_class", a.traffic_class, TCLASS)
        check(what + " flow_label", be32(a.flow_label), FLOW)
    print("umad_grh: %s: GetResp, grh_present %d, gid %s" %
          (what, a.grh_present, ipaddress.IPv6Address(bytes(a.gid))))


if lib.umad_init() != 0:
    sys.exit("umad_init failed")
fd = lib.umad_open_port(b"weft0", 1)
if fd < 0:
    sys.exit("umad_open_port(weft0, 1): %d" % fd)
pma = lib.umad_register(fd, PMA, 1, 0, None)
smi = lib.umad_register(fd, SMI_LID, 1, 0, None)
if pma < 0 or smi < 0:
    sys.exit("umad_register: %d %d" % (pma, smi))
pma_get(fd, pma, 0x0001, 0x6701, True)   # ClassPortInfo (IBA 16.1.2)
pma_get(fd, pma, 0x0012, 0x6702, True)   # PortCounters
pma_get(fd, pma, 0x0012, 0x6703, False)  # PortCounters, no GRH
check("GID index 3", send(fd, pma, mad(PMA, 0x01, 0x0001, 0x6704), lid1, 1, True, 3), errno.EINVAL)
check("SMP with a GRH", send(fd, smi, mad(SMI_LID, 0x01, 0x0011, 0x6705), lid1, 0, True), errno.EINVAL)
lib.umad_unregister(fd, smi)
lib.umad_unregister(fd, pma)
lib.umad_close_port(fd)
for f in failures:
    print("umad_grh:", f)
sys.exit(1 if failures else 0)
