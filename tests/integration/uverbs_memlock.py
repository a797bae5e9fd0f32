#!/usr/bin/env python3
# Memory registration against RLIMIT_MEMLOCK (tests/integration/uverbs_apps.sh):
# through Debian's libibverbs (ctypes), register BIG bytes on DEV and expect
# WANT ("ok" or "ENOMEM"); a registration of one page always succeeds.
# Usage: uverbs_memlock.py DEV BIG WANT
import ctypes
import errno
import mmap
import sys

lib = ctypes.CDLL("libibverbs.so.1", use_errno=True)
vp = ctypes.c_void_p
lib.ibv_get_device_list.restype = ctypes.POINTER(vp)
lib.ibv_get_device_list.argtypes = [ctypes.POINTER(ctypes.c_int)]
lib.ibv_get_device_name.restype = ctypes.c_char_p
lib.ibv_get_device_name.argtypes = [vp]
lib.ibv_open_device.restype = vp
lib.ibv_open_device.argtypes = [vp]
lib.ibv_alloc_pd.restype = vp
lib.ibv_alloc_pd.argtypes = [vp]
lib.ibv_reg_mr.restype = vp
lib.ibv_reg_mr.argtypes = [vp, vp, ctypes.c_size_t, ctypes.c_int]
lib.ibv_dereg_mr.argtypes = [vp]
lib.ibv_dealloc_pd.argtypes = [vp]
lib.ibv_close_device.argtypes = [vp]



def open_pd(dev_name):
    """(context, PD) on DEV_NAME; exits when there is none."""
    n = ctypes.c_int()
    devs = lib.ibv_get_device_list(ctypes.byref(n))
    dev = next((devs[i] for i in range(n.value) if lib.ibv_get_device_name(devs[i]).decode() == dev_name), None)
    if not dev:
        sys.exit("uverbs_memlock: %s not found" % dev_name)
    ctx = lib.ibv_open_device(dev)
    pd = lib.ibv_alloc_pd(ctx) if ctx else None
    if not pd:
        sys.exit("uverbs_memlock: open/alloc_pd failed, errno %d" % ctypes.get_errno())
    return ctx, pd


def register(pd, size):
    """(MR or None, errno, the mapping): SIZE bytes of fresh anonymous memory.
    MAP_NORESERVE: a length beyond the guest's memory maps all the same."""
    buf = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x4000)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    ctypes.set_errno(0)
    mr = lib.ibv_reg_mr(pd, addr, size, 1)  # IBV_ACCESS_LOCAL_WRITE
    return mr, ctypes.get_errno(), buf


def main():
    dev_name, big, want = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    ctx, pd = open_pd(dev_name)
    ok = True
    mr, err, keep = register(pd, 4096)
    if not mr:
        print("uverbs_memlock: one page failed, errno %d" % err)
        ok = False
    else:
        lib.ibv_dereg_mr(mr)
    mr, err, keep = register(pd, big)
    got = "ok" if mr else errno.errorcode.get(err, str(err))
    print("uverbs_memlock: %s: %d bytes -> %s (want %s)" % (dev_name, big, got, want))
    ok = ok and got == want
    if mr:
        lib.ibv_dereg_mr(mr)
    lib.ibv_dealloc_pd(pd)
    lib.ibv_close_device(ctx)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
