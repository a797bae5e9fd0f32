#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Sample a QEMU guest's program counters through its monitor (HMP).

perf in the TCG guest wedges it; this profiles from outside instead: every
INTERVAL seconds, "info registers -a" reads each vCPU's RIP, for SECONDS.
Guest kernel and module addresses are resolved against the guest's
/proc/kallsyms (a copy), and the samples summed per symbol.

  sample-pc.py MONITOR_SOCKET KALLSYMS_COPY [--seconds S] [--interval I]
               [--wait-for LOGFILE MARKER] [--top N]
"""
import argparse
import bisect
import collections
import re
import socket
import sys
import time


def hmp(sock, cmd):
    sock.sendall(cmd.encode() + b"\n")
    buf = b""
    while not buf.endswith(b"(qemu) "):
        chunk = sock.recv(65536)
        if not chunk:
            raise EOFError("monitor closed")
        buf += chunk
    return buf.decode(errors="replace")


def load_symbols(path):
    syms = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3 or parts[1] not in "tTwW":
                continue
            addr = int(parts[0], 16)
            if addr == 0:
                continue
            mod = parts[3].strip("[]") if len(parts) > 3 else "kernel"
            syms.append((addr, parts[2], mod))
    syms.sort()
    return syms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("monitor")
    ap.add_argument("kallsyms")
    ap.add_argument("--seconds", type=float, default=8)
    ap.add_argument("--interval", type=float, default=0.01)
    ap.add_argument("--wait-for", nargs=2, metavar=("LOG", "MARKER"))
    ap.add_argument("--top", type=int, default=60)
    a = ap.parse_args()

    if a.wait_for:
        log, marker = a.wait_for
        deadline = time.time() + 900
        while time.time() < deadline:
            try:
                with open(log, "rb") as f:
                    if marker.encode() in f.read():
                        break
            except FileNotFoundError:
                pass
            time.sleep(0.2)
        else:
            sys.exit("sample-pc: marker never seen")

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(a.monitor)
    hmp(sock, "")  # the banner and first prompt
    rip_re = re.compile(r"RIP=([0-9a-f]{16})")
    cpl_re = re.compile(r"CPL=(\d)")
    pcs = []
    end = time.time() + a.seconds
    while time.time() < end:
        out = hmp(sock, "info registers -a")
        for block in out.split("CPU#")[1:]:
            m, c = rip_re.search(block), cpl_re.search(block)
            cpu = block.split()[0] if block.split() else "?"
            if m:
                pcs.append((int(m.group(1), 16), c.group(1) if c else "?", cpu))
        time.sleep(a.interval)
    sock.close()

    # kallsyms appears once the guest has written it.
    deadline = time.time() + 120
    while True:
        try:
            syms = load_symbols(a.kallsyms)
            if syms:
                break
        except FileNotFoundError:
            pass
        if time.time() > deadline:
            sys.exit("sample-pc: no kallsyms copy")
        time.sleep(1)
    addrs = [s[0] for s in syms]
    per_sym = collections.Counter()
    per_mod = collections.Counter()
    per_cpu = collections.Counter()
    per_cpu_sym = collections.defaultdict(collections.Counter)
    for pc, cpl, cpu in pcs:
        if cpl == "3":
            name, mod = "[user]", "user"
        else:
            i = bisect.bisect_right(addrs, pc) - 1
            name, mod = (syms[i][1], syms[i][2]) if i >= 0 else ("?", "?")
        idle = name in ("native_safe_halt", "default_idle", "default_idle_call")
        per_sym[f"{name} [{mod}]"] += 1
        per_mod[mod] += 1
        per_cpu[(cpu, "idle" if idle else mod)] += 1
        per_cpu_sym[cpu][f"{name} [{mod}]"] += 1
    n = len(pcs)
    print(f"sample-pc: {n} samples")
    for mod, k in per_mod.most_common():
        print(f"MOD {100.0 * k / n:5.1f}% {k:6d} {mod}")
    for (cpu, what), k in sorted(per_cpu.items()):
        print(f"CPU{cpu} {100.0 * k / n:5.1f}% {k:6d} {what}")
    for sym, k in per_sym.most_common(a.top):
        print(f"SYM {100.0 * k / n:5.1f}% {k:6d} {sym}")
    for cpu in sorted(per_cpu_sym):
        for sym, k in per_cpu_sym[cpu].most_common(a.top // 3):
            print(f"CPU{cpu}-SYM {100.0 * k / n:5.1f}% {k:6d} {sym}")


if __name__ == "__main__":
    main()
