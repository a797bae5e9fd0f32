#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""shorten-cxx-symbols.py NM OBJCOPY OBJ: rename long C++ symbols in OBJ.

A kernel with CONFIG_MODVERSIONS keeps each exported or imported symbol name
in a 56-byte field (struct modversion_info), and modpost refuses longer ones
("too long symbol").  Mangled C++ names are often longer.  Every _Z symbol
of more than 55 characters, defined or referenced, is renamed to
weft_cxx_<first 16 hex digits of its SHA-256>: the same name in every object
of every module, so definitions and references still meet.  The map is kept
next to the object (OBJ.symmap) for reading stack traces.
"""
import hashlib
import subprocess
import sys

LIMIT = 55


def main():
    nm, objcopy, obj = sys.argv[1:4]
    out = subprocess.run([nm, obj], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        name = line.split()[-1] if line.split() else ""
        if name.startswith("_Z") and len(name) > LIMIT:
            names.add(name)
    mapfile = obj + ".symmap"
    with open(mapfile, "w") as f:
        for n in sorted(names):
            f.write("%s weft_cxx_%s\n" % (n, hashlib.sha256(n.encode()).hexdigest()[:16]))
    if names:
        subprocess.run([objcopy, "--redefine-syms=" + mapfile, obj], check=True)


if __name__ == "__main__":
    main()
