#!/usr/bin/env python3
# REG_MR is refused on RLIMIT_MEMLOCK before the kernel allocates anything
# its length sizes (tests/integration/uverbs_apps.sh).  Run as root: a
# kprobe on kvmalloc_node() (where both the page list and the pin's page
# array are allocated) records every allocation of 128 KiB or more made
# by a child process while it registers (it opened the device before):
#   - root registering 64 MiB: a page list of 128 KiB, which the probe
#     must see (else it proves nothing);
#   - nobody, with a 64 KiB RLIMIT_MEMLOCK, registering 4 GiB
#     (max_mr_size, a page list of 8 MiB): ENOMEM, and not one such
#     allocation in that child.
# Usage: uverbs_memlock_alloc.py DEV
import errno
import os
import re
import resource
import sys

import uverbs_memlock as um

TRACE = "/sys/kernel/tracing"
PROBE = "weft_test/kvmalloc"
THRESHOLD = 128 << 10


def tracefs(path, text, append=False):
    """Write TEXT to a tracefs file (os.open: Python's append mode seeks, which tracefs refuses)."""
    fd = os.open(os.path.join(TRACE, path), os.O_WRONLY | (os.O_APPEND if append else os.O_TRUNC))
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def probe_on():
    if not os.path.exists(os.path.join(TRACE, "kprobe_events")):
        os.system("mount -t tracefs nodev %s" % TRACE)
    tracefs("kprobe_events", "p:%s kvmalloc_node bytes=%%di:u64\n" % PROBE, True)
    tracefs("events/%s/filter" % PROBE, "bytes >= %d\n" % THRESHOLD)
    tracefs("trace", "")
    tracefs("events/%s/enable" % PROBE, "1\n")


def probe_off():
    tracefs("events/%s/enable" % PROBE, "0\n")
    tracefs("kprobe_events", "-:%s\n" % PROBE, True)


def big_allocations(pid):
    """The sizes the probe saw in process PID."""
    with open(os.path.join(TRACE, "trace")) as f:
        lines = f.read().splitlines()
    pat = re.compile(r"-(\d+)\s+\[\d+\].*bytes=(\d+)")
    return [int(m.group(2)) for m in map(pat.search, lines) if m and int(m.group(1)) == pid]


def child(dev, size, unprivileged):
    """Fork a process that opens DEV, then registers SIZE bytes while the
    probe is on (and only then): (pid, its errno or 0, the sizes seen)."""
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        if unprivileged:
            resource.setrlimit(resource.RLIMIT_MEMLOCK, (65536, 65536))
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)  # every uid non-zero: the capabilities go (CAP_IPC_LOCK)
        ctx, pd = um.open_pd(dev)  # as the registering user: uverbs answers only its opener
        os.write(ready_w, b"r")
        os.read(go_r, 1)
        mr, err, keep = um.register(pd, size)
        if mr:
            um.lib.ibv_dereg_mr(mr)
        os._exit(0 if mr else min(err, 255) or 255)
    os.read(ready_r, 1)
    probe_on()
    try:
        os.write(go_w, b"g")
        _, status = os.waitpid(pid, 0)
        seen = big_allocations(pid)
    finally:
        probe_off()
    return pid, os.waitstatus_to_exitcode(status), seen


def main():
    dev = sys.argv[1]
    ok = True
    _, root_err, seen_root = child(dev, 64 << 20, False)
    _, user_err, seen_user = child(dev, 4 << 30, True)
    print("uverbs_memlock_alloc: root 64 MiB -> %d, allocations %s" % (root_err, seen_root))
    print("uverbs_memlock_alloc: nobody 4 GiB -> %s, allocations %s" %
          (errno.errorcode.get(user_err, str(user_err)), seen_user))
    if root_err != 0 or not seen_root:
        print("uverbs_memlock_alloc: the probe saw no page list of the root registration")
        ok = False
    if user_err != errno.ENOMEM:
        print("uverbs_memlock_alloc: 4 GiB beyond RLIMIT_MEMLOCK not refused with ENOMEM")
        ok = False
    if seen_user:
        print("uverbs_memlock_alloc: REG_MR allocated %d bytes before checking RLIMIT_MEMLOCK" % max(seen_user))
        ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
