#!/usr/bin/env python3
# REG_MR is refused on RLIMIT_MEMLOCK before the kernel allocates anything
# its length sizes (tests/integration/uverbs_apps.sh).  Run as root: a
# kprobe on kvmalloc_node() (where both the page list and the pin's page
# array are allocated) records every allocation of 128 KiB or more while
#   - a root child registers 64 MiB: a page list of 128 KiB, which the
#     probe must see (else it proves nothing);
#   - a child as nobody with a 64 KiB RLIMIT_MEMLOCK registers 4 GiB
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


def tracefs(path, text, mode="w"):
    with open(os.path.join(TRACE, path), mode) as f:
        f.write(text)


def probe_on():
    if not os.path.exists(os.path.join(TRACE, "kprobe_events")):
        os.system("mount -t tracefs nodev %s" % TRACE)
    tracefs("kprobe_events", "p:%s kvmalloc_node size=%%di:u64\n" % PROBE, "a")
    tracefs("events/%s/filter" % PROBE, "size >= %d\n" % THRESHOLD)
    tracefs("trace", "")
    tracefs("events/%s/enable" % PROBE, "1\n")


def probe_off():
    tracefs("events/%s/enable" % PROBE, "0\n")
    tracefs("kprobe_events", "-:%s\n" % PROBE, "a")


def big_allocations(pid):
    """The sizes the probe saw in process PID."""
    with open(os.path.join(TRACE, "trace")) as f:
        lines = f.read().splitlines()
    pat = re.compile(r"-(\d+)\s+\[\d+\].*size=(\d+)")
    return [int(m.group(2)) for m in map(pat.search, lines) if m and int(m.group(1)) == pid]


def child(dev, size, unprivileged):
    """Fork a process that registers SIZE bytes; (pid, its errno or 0)."""
    pid = os.fork()
    if pid == 0:
        if unprivileged:
            resource.setrlimit(resource.RLIMIT_MEMLOCK, (65536, 65536))
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)  # every uid non-zero: the capabilities go (CAP_IPC_LOCK)
        ctx, pd = um.open_pd(dev)
        mr, err, keep = um.register(pd, size)
        if mr:
            um.lib.ibv_dereg_mr(mr)
        os._exit(0 if mr else min(err, 255) or 255)
    _, status = os.waitpid(pid, 0)
    return pid, os.waitstatus_to_exitcode(status)


def main():
    dev = sys.argv[1]
    ok = True
    probe_on()
    try:
        root_pid, root_err = child(dev, 64 << 20, False)
        user_pid, user_err = child(dev, 4 << 30, True)
        seen_root, seen_user = big_allocations(root_pid), big_allocations(user_pid)
    finally:
        probe_off()
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
