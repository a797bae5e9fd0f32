#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Weft fabric topologies: generate them, build them through configfs.

A topology file has one object a line ('#' starts a comment):

    switch NAME PORTS          a switch with external ports 1..PORTS (<= 63)
    hca NAME [PORTS]           an HCA with 1 (default) or 2 ports
    cable NAME:PORT NAME:PORT  a cable between two ports, by the names above
    root NAME                  a root for up/down routing (the generators mark
                               a fat tree's spines or cores, one switch of a
                               torus or random graph), for the SM's root
                               GUID file (opensm -a)

NAME is the configfs entry (/sys/kernel/config/weft/{hcas,switches}/NAME);
the kernel names the device (weftN, weftswN) when it is enabled, and the
builder maps one to the other for the cables (Documentation/fabric.md).

    weft-topo.py fattree LEAVES SPINES HCAS_PER_LEAF [LINKS]   two levels
    weft-topo.py fattree3 PODS LEAVES AGGS CORES HCAS_PER_LEAF three levels
    weft-topo.py torus X Y HCAS_PER_SWITCH                     2-D torus
    weft-topo.py random SWITCHES DEGREE HCAS_PER_SWITCH SEED   random graph
        print a topology on stdout
    weft-topo.py build FILE [ROOTS]
                                make it in configfs, cables up; prints one
                                "TOPO key=value ..." line with the counts,
                                the time of each phase and the memory used;
                                writes the root switches' node GUIDs to
                                ROOTS (they must be in /sys/class/infiniband:
                                weft_hca switch_sysfs=1)
    weft-topo.py teardown       remove every configfs entry (cables first)
    weft-topo.py count FILE     "TOPO hcas=N switches=N cables=N"

The builder writes the files directly (no process per write); a switch
never needs port 0 named (it is its management port).
"""
import os
import random
import sys
import time

CFS = "/sys/kernel/config/weft"
MAX_SWITCH_PORTS = 63  # drivers/hca/control.cpp


class Topo:
    def __init__(self):
        self.switches = []  # (name, ports)
        self.hcas = []  # (name, ports)
        self.cables = []  # ((name, port), (name, port))
        self.roots = []
        self.used = set()

    def switch(self, name, ports):
        if ports > MAX_SWITCH_PORTS:
            sys.exit(f"weft-topo: switch {name} needs {ports} ports (max {MAX_SWITCH_PORTS})")
        self.switches.append((name, ports))

    def hca(self, name, ports=1):
        self.hcas.append((name, ports))

    def cable(self, a, b):
        for end in (a, b):
            if end in self.used:
                sys.exit(f"weft-topo: port {end[0]}:{end[1]} cabled twice")
            self.used.add(end)
        self.cables.append((a, b))

    def write(self, out):
        for n, p in self.switches:
            print(f"switch {n} {p}", file=out)
        for n, p in self.hcas:
            print(f"hca {n} {p}" if p != 1 else f"hca {n}", file=out)
        for (a, ap), (b, bp) in self.cables:
            print(f"cable {a}:{ap} {b}:{bp}", file=out)
        for n in self.roots:
            print(f"root {n}", file=out)


def fattree(leaves, spines, per_leaf, links=1):
    """Two levels: every leaf has PER_LEAF HCAs and LINKS cables to every spine."""
    t = Topo()
    for s in range(spines):
        t.switch(f"s{s}", leaves * links)
        t.roots.append(f"s{s}")
    for l in range(leaves):
        t.switch(f"l{l}", per_leaf + spines * links)
    for l in range(leaves):
        for h in range(per_leaf):
            t.hca(f"h{l * per_leaf + h}")
            t.cable((f"h{l * per_leaf + h}", 1), (f"l{l}", h + 1))
        for s in range(spines):
            for k in range(links):
                t.cable((f"l{l}", per_leaf + s * links + k + 1), (f"s{s}", l * links + k + 1))
    return t


def fattree3(pods, leaves, aggs, cores, per_leaf):
    """Three levels: PODS pods of LEAVES leaves and AGGS aggregation switches,
    every leaf to every aggregation switch of its pod; CORES core switches
    (a multiple of AGGS), aggregation switch a of every pod to the cores
    a, a + AGGS, a + 2 * AGGS, ..."""
    if cores % aggs:
        sys.exit("weft-topo: fattree3: CORES must be a multiple of AGGS")
    up = cores // aggs
    t = Topo()
    for c in range(cores):
        t.switch(f"c{c}", pods)
        t.roots.append(f"c{c}")
    for p in range(pods):
        for a in range(aggs):
            t.switch(f"a{p}_{a}", leaves + up)
        for l in range(leaves):
            t.switch(f"l{p}_{l}", per_leaf + aggs)
    h = 0
    for p in range(pods):
        for l in range(leaves):
            for i in range(per_leaf):
                t.hca(f"h{h}")
                t.cable((f"h{h}", 1), (f"l{p}_{l}", i + 1))
                h += 1
            for a in range(aggs):
                t.cable((f"l{p}_{l}", per_leaf + a + 1), (f"a{p}_{a}", l + 1))
        for a in range(aggs):
            for k in range(up):
                t.cable((f"a{p}_{a}", leaves + k + 1), (f"c{a + k * aggs}", p + 1))
    return t


def torus(x, y, per_switch):
    """X by Y switches, each cabled to its four neighbours (ports 1-4: +x, -x,
    +y, -y, the order dor routes in) and to PER_SWITCH HCAs (ports 5...)."""
    if x < 3 or y < 3:
        sys.exit("weft-topo: torus: each dimension needs at least 3 switches")
    t = Topo()
    name = lambda i, j: f"t{i % x}_{j % y}"
    for j in range(y):
        for i in range(x):
            t.switch(name(i, j), 4 + per_switch)
    # updn's own guess finds no root in a torus (every switch looks alike).
    t.roots.append(name(0, 0))
    for j in range(y):
        for i in range(x):
            t.cable((name(i, j), 1), (name(i + 1, j), 2))
            t.cable((name(i, j), 3), (name(i, j + 1), 4))
    h = 0
    for j in range(y):
        for i in range(x):
            for k in range(per_switch):
                t.hca(f"h{h}")
                t.cable((f"h{h}", 1), (name(i, j), 5 + k))
                h += 1
    return t


def random_graph(switches, degree, per_switch, seed):
    """A connected random graph: a random spanning tree, then random extra
    cables until every switch has DEGREE switch ports or none can be
    matched; PER_SWITCH HCAs on each switch."""
    rng = random.Random(seed)
    t = Topo()
    names = [f"r{i}" for i in range(switches)]
    for n in names:
        t.switch(n, degree + per_switch)
    t.roots.append(names[0])  # for updn: any switch will do
    free = {n: list(range(1, degree + 1)) for n in names}
    order = names[:]
    rng.shuffle(order)
    for i in range(1, len(order)):
        a = order[i]
        b = rng.choice([n for n in order[:i] if free[n]])
        t.cable((a, free[a].pop(0)), (b, free[b].pop(0)))
    for _ in range(switches * degree):
        open_ = [n for n in names if free[n]]
        if len(open_) < 2:
            break
        a, b = rng.sample(open_, 2)
        t.cable((a, free[a].pop(0)), (b, free[b].pop(0)))
    h = 0
    for n in names:
        for k in range(per_switch):
            t.hca(f"h{h}")
            t.cable((f"h{h}", 1), (n, degree + 1 + k))
            h += 1
    return t


def parse(path):
    t = Topo()
    with open(path) as f:
        for ln, line in enumerate(f, 1):
            w = line.split("#", 1)[0].split()
            if not w:
                continue
            try:
                if w[0] == "switch" and len(w) == 3:
                    t.switch(w[1], int(w[2]))
                elif w[0] == "hca" and len(w) in (2, 3):
                    t.hca(w[1], int(w[2]) if len(w) == 3 else 1)
                elif w[0] == "root" and len(w) == 2:
                    t.roots.append(w[1])
                elif w[0] == "cable" and len(w) == 3:
                    ends = []
                    for e in w[1:]:
                        n, p = e.rsplit(":", 1)
                        ends.append((n, int(p)))
                    t.cable(*ends)
                else:
                    raise ValueError
            except ValueError:
                sys.exit(f"weft-topo: {path}:{ln}: cannot parse '{line.strip()}'")
    return t


def put(path, value):
    with open(path, "w") as f:
        f.write(value)


def used_kib():
    """Memory in use (MemTotal - MemAvailable), KiB."""
    m = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, v = line.split(":")
            m[k] = int(v.split()[0])
    return m["MemTotal"] - m["MemAvailable"]


def build(path, roots_out=None):
    t = parse(path)
    dev = {}
    mem0, t0 = used_kib(), time.monotonic()
    for kind, nodes in (("switches", t.switches), ("hcas", t.hcas)):
        for n, p in nodes:
            d = f"{CFS}/{kind}/{n}"
            os.mkdir(d)
            if kind == "switches" or p != 1:
                put(f"{d}/ports", str(p))
            put(f"{d}/enable", "1")
            with open(f"{d}/device") as f:
                dev[n] = f.read().strip()
        if kind == "switches":
            mem1, t1 = used_kib(), time.monotonic()
    mem2, t2 = used_kib(), time.monotonic()
    for i, ((a, ap), (b, bp)) in enumerate(t.cables):
        d = f"{CFS}/cables/c{i}"
        os.mkdir(d)
        put(f"{d}/a", f"{dev[a]}:{ap}")
        put(f"{d}/b", f"{dev[b]}:{bp}")
        put(f"{d}/up", "1")
    mem3, t3 = used_kib(), time.monotonic()
    if roots_out:
        with open(roots_out, "w") as out:
            for n in t.roots:
                with open(f"/sys/class/infiniband/{dev[n]}/node_guid") as f:
                    print("0x" + f.read().strip().replace(":", ""), file=out)
    ns, nh = len(t.switches), len(t.hcas)
    print(f"TOPO hcas={nh} switches={ns} cables={len(t.cables)}"
          f" switch_s={t1 - t0:.2f} hca_s={t2 - t1:.2f} cable_s={t3 - t2:.2f} build_s={t3 - t0:.2f}"
          f" switch_kib={(mem1 - mem0) // max(ns, 1)} hca_kib={(mem2 - mem1) // max(nh, 1)}"
          f" cables_kib={mem3 - mem2} total_kib={mem3 - mem0}", flush=True)


def teardown():
    t0 = time.monotonic()
    n = 0
    phases = []
    for kind in ("cables", "hcas", "switches"):
        d = f"{CFS}/{kind}"
        if not os.path.isdir(d):
            continue
        t = time.monotonic()
        for e in os.listdir(d):
            os.rmdir(f"{d}/{e}")
            n += 1
        phases.append(f"{kind}_s={time.monotonic() - t:.2f}")
    print(f"TOPO teardown entries={n} teardown_s={time.monotonic() - t0:.2f} {' '.join(phases)}", flush=True)


def main(argv):
    gens = {"fattree": (fattree, 3), "fattree3": (fattree3, 5), "torus": (torus, 3),
            "random": (random_graph, 4)}
    if len(argv) >= 2 and argv[1] in gens:
        fn, n = gens[argv[1]]
        args = [int(a) for a in argv[2:]]
        if len(args) < n or len(args) > n + (argv[1] == "fattree"):
            sys.exit(__doc__)
        fn(*args).write(sys.stdout)
    elif len(argv) in (3, 4) and argv[1] == "build":
        build(*argv[2:])
    elif len(argv) == 3 and argv[1] == "count":
        t = parse(argv[2])
        print(f"TOPO hcas={len(t.hcas)} switches={len(t.switches)} cables={len(t.cables)}")
    elif len(argv) == 2 and argv[1] == "teardown":
        teardown()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
