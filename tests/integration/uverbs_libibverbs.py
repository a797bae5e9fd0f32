#!/usr/bin/env python3
# Debian's libibverbs (with the stock rxe provider bound by driver id) on
# Weft devices, through ctypes, for tests/integration/uverbs.sh: every
# device opens, port 1 answers with the sysfs LID, and a port the device
# does not have fails with EINVAL from the kernel (QUERY_PORT), which
# ibv_devinfo -i cannot show (it checks the port count itself).
# Usage: uverbs_libibverbs.py DEV=LID...
import ctypes
import errno
import sys

want = dict(a.split("=") for a in sys.argv[1:])
lib = ctypes.CDLL("libibverbs.so.1", use_errno=True)
lib.ibv_get_device_list.restype = ctypes.POINTER(ctypes.c_void_p)
lib.ibv_get_device_list.argtypes = [ctypes.POINTER(ctypes.c_int)]
lib.ibv_get_device_name.restype = ctypes.c_char_p
lib.ibv_get_device_name.argtypes = [ctypes.c_void_p]
lib.ibv_open_device.restype = ctypes.c_void_p
lib.ibv_open_device.argtypes = [ctypes.c_void_p]
lib.ibv_close_device.argtypes = [ctypes.c_void_p]
lib.ibv_free_device_list.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
# The exported ibv_query_port takes the compat ibv_port_attr: state @0, lid @34.
lib.ibv_query_port.argtypes = [ctypes.c_void_p, ctypes.c_uint8, ctypes.c_void_p]

ok = True
n = ctypes.c_int()
devs = lib.ibv_get_device_list(ctypes.byref(n))
names = {}
for i in range(n.value):
    names[lib.ibv_get_device_name(devs[i]).decode()] = devs[i]
print("uverbs_libibverbs: devices", sorted(names))
for name, lid in want.items():
    if name not in names:
        print("uverbs_libibverbs: %s not listed" % name)
        ok = False
        continue
    ctx = lib.ibv_open_device(names[name])
    if not ctx:
        print("uverbs_libibverbs: %s does not open (errno %d)" % (name, ctypes.get_errno()))
        ok = False
        continue
    attr = ctypes.create_string_buffer(256)
    rc = lib.ibv_query_port(ctx, 1, attr)
    state = int.from_bytes(attr.raw[0:4], "little")
    plid = int.from_bytes(attr.raw[34:36], "little")
    print("uverbs_libibverbs: %s port 1: rc %d state %d lid %d" % (name, rc, state, plid))
    if rc != 0 or state != 4 or plid != int(lid):
        print("uverbs_libibverbs: %s port 1 wrong (want ACTIVE, lid %s)" % (name, lid))
        ok = False
    for port in (0, 3):
        rc = lib.ibv_query_port(ctx, port, attr)
        if rc != errno.EINVAL:
            print("uverbs_libibverbs: %s port %d: rc %d, want EINVAL" % (name, port, rc))
            ok = False
    if lib.ibv_close_device(ctx):
        print("uverbs_libibverbs: %s close failed" % name)
        ok = False
lib.ibv_free_device_list(devs)
sys.exit(0 if ok else 1)
