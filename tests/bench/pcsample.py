#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Name the samples of weft_pcsample (tests/bench/pcsample.c).

  pcsample.py SAMPLES KALLSYMS [--symmaps BUILD_DIR] [--top N]

SAMPLES is the raw debugfs blob ({u64 ip; u32 cpu; u32 pad} each), KALLSYMS a
copy of the guest's /proc/kallsyms taken while the modules were loaded.
Weft's C++ symbols reach kallsyms as weft_cxx_<hash>; the *.symmap files of
the build (mangled name, hashed name) and c++filt turn them back into C++.
Prints shares per CPU (idle, user, kernel, each module), then the top
symbols overall and per CPU.
"""
import argparse
import bisect
import collections
import glob
import os
import struct
import subprocess

IDLE = {"native_safe_halt", "default_idle", "default_idle_call", "arch_cpu_idle",
        "cpu_idle_poll", "do_idle"}


def load_symbols(path):
    syms = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3 or parts[1] not in "tTwW":
                continue
            addr = int(parts[0], 16)
            if addr:
                mod = parts[3].strip("[]") if len(parts) > 3 else "kernel"
                syms.append((addr, parts[2], mod))
    syms.sort()
    return syms


def cxx_names(build):
    mangled = {}
    for path in glob.glob(os.path.join(build, "**", "*.symmap"), recursive=True):
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2:
                    mangled[parts[1]] = parts[0]
    if not mangled:
        return {}
    keys = list(mangled)
    out = subprocess.run(["c++filt"], input="\n".join(mangled[k] for k in keys),
                         capture_output=True, text=True).stdout.splitlines()
    return dict(zip(keys, out)) if len(out) == len(keys) else {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("samples")
    ap.add_argument("kallsyms")
    ap.add_argument("--symmaps", default="")
    ap.add_argument("--top", type=int, default=40)
    a = ap.parse_args()

    syms = load_symbols(a.kallsyms)
    addrs = [s[0] for s in syms]
    names = cxx_names(a.symmaps) if a.symmaps else {}
    with open(a.samples, "rb") as f:
        raw = f.read()
    per_cpu = collections.Counter()
    per_cpu_what = collections.Counter()
    per_sym = collections.Counter()
    per_cpu_sym = collections.defaultdict(collections.Counter)
    for ip, cpu, _ in struct.iter_unpack("<QII", raw):
        if ip == 0:
            name, mod = "[user]", "user"
        else:
            i = bisect.bisect_right(addrs, ip) - 1
            name, mod = (syms[i][1], syms[i][2]) if i >= 0 else ("?", "?")
            name = names.get(name, name)
        what = "idle" if name in IDLE else mod
        sym = f"{name} [{mod}]"
        per_cpu[cpu] += 1
        per_cpu_what[(cpu, what)] += 1
        per_sym[sym] += 1
        per_cpu_sym[cpu][sym] += 1
    n = sum(per_cpu.values())
    print(f"pcsample: {n} samples")
    if not n:
        return
    for (cpu, what), k in sorted(per_cpu_what.items(), key=lambda x: (x[0][0], -x[1])):
        print(f"CPU{cpu} {100.0 * k / per_cpu[cpu]:5.1f}% {k:6d} {what}")
    for sym, k in per_sym.most_common(a.top):
        print(f"SYM {100.0 * k / n:5.1f}% {k:6d} {sym}")
    for cpu in sorted(per_cpu_sym):
        for sym, k in per_cpu_sym[cpu].most_common(a.top // 2):
            print(f"CPU{cpu}-SYM {100.0 * k / per_cpu[cpu]:5.1f}% {k:6d} {sym}")


if __name__ == "__main__":
    main()
