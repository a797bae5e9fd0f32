#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# The seed sessions of the ucma fuzz target (ucma.cpp): python3 ucma_seeds.py corpus/ucma
# writes seed-passive (listen, requests over the backlog, accept, disconnect,
# teardown), seed-active (resolve, route, queries, connect, device removal, kill)
# seed-mcast-migrate (the AF_IB probe, joins, MIGRATE_ID, LEAVE_MCAST) and
# seed-migrate-listener (MIGRATE_ID of a listener with a request unread).
import struct, os, sys
# Mirrors tests/fuzz/ucma.cpp's driver: records + the bytes command()/event() read after them.
class S:
    def __init__(s, inline=1):
        s.b = bytearray([inline])
    def rec(s, op, arg):
        r = bytes([op]) + arg
        s.b += struct.pack('>H', len(r)) + r
    def cmd(s, f, c, body, idsel=None, fams=None, nonblock=1, mig=None):
        # header (in/out fixed by fix&1, out=512 by fix&2)
        hdr = struct.pack('<IHH', c, 0, 0)
        fix = 1 | 2 | 8
        if idsel is not None: fix |= 4
        if fams is not None: fix |= 32
        if mig is not None: fix |= 64
        s.rec(0, hdr + body)
        s.b += bytes([f, fix])
        L = LAYOUT.get(c, (-1,))
        if idsel is not None and L[0] >= 0: s.b += bytes([idsel])
        if fams is not None: s.b += bytes((fams + [0, 0])[:2])
        if mig is not None and c == 18: s.b += bytes([mig])
        s.b += bytes([nonblock])
    def ev(s, idx, typ, status=0, mc=0, pd=b''):
        s.rec(1, pd)
        s.b += bytes([idx, typ, status, mc])
    def tick(s, ms):
        s.rec(2, b'')
        s.b += bytes([ms])
    def reopen(s):
        s.rec(3, b'')
LAYOUT = {0:(-1,),1:(8,),2:(36,),3:(56,),4:(0,),5:(8,),6:(272,),7:(0,),8:(280,),9:(0,),10:(0,),11:(8,),12:(-1,),14:(8,),15:(0,),16:(44,),17:(8,),18:(8,),19:(8,),20:(0,),21:(0,),22:(16,)}
def create(ps=0x106, qpt=0): return struct.pack('<QQHB5x', 0x1111, 0, ps, qpt)
def in6(fam=2): return struct.pack('<H', fam) + bytes(26)
def bind_ip(): return struct.pack('<Q', 0) + in6() + struct.pack('<I', 0)
def resolve_ip(): return in6() + in6() + struct.pack('<II', 0, 2000)
def u32pair(a=0,b=0): return struct.pack('<II', a, b)
def query(opt=0): return struct.pack('<QII', 0, 0, opt)
def conn(valid=1, pd=b'hello'): return struct.pack('<II', 0x123, 0) + pd.ljust(256, b'\0') + bytes([len(pd), 0, 1, 1, 1, 7, 7, valid])
def connect(): return conn() + u32pair() + u32pair()
def accept(valid=1): return struct.pack('<Q', 0x2222) + conn(valid) + u32pair() + u32pair()
def initqp(state): return struct.pack('<QII', 0, 0, state)
def getev(): return struct.pack('<Q', 0)
def destroy(): return struct.pack('<QII', 0, 0, 0)
def reject(): return struct.pack('<IBB2x', 0, 3, 0) + b'rej'.ljust(256, b'\0')
def setopt(name, ln): return struct.pack('<QIIII', 0, 0, 0, name, ln)
def join_ip(): return struct.pack('<QQ', 0, 0x3333) + in6() + struct.pack('<I', 0)
def join(flags=0): return struct.pack('<QQIHH', 0, 0x4444, 0, 0, flags) + bytes(128)
def bind(): return struct.pack('<IHH', 0, 0, 0) + bytes(128)
def resolve_addr(): return struct.pack('<IIHHI', 0, 2000, 0, 0, 0) + bytes(256)
def migrate(): return struct.pack('<QII', 0, 0, 0)

out = sys.argv[1]; os.makedirs(out, exist_ok=True)
seeds = {}
# passive side: listen, a request, its event, accept, established, disconnect, teardown
s = S()
s.cmd(0, 0, create())                     # seen[0] listener
s.cmd(0, 2, bind_ip(), idsel=0, fams=[0])
s.cmd(0, 7, u32pair(0, 2), idsel=0)
s.ev(0, 4, pd=b'req')                     # ConnectRequest on fake Id 0 -> child fake Id 1
s.ev(0, 4, pd=b'req2')
s.ev(0, 4, pd=b'req3')                    # over backlog 2: refused
s.cmd(0, 12, getev())                     # seen[1] child
s.cmd(0, 8, accept(), idsel=1)
s.ev(1, 9)                                # Established
s.cmd(0, 12, getev())
s.cmd(0, 11, initqp(2), idsel=1)
s.cmd(0, 10, struct.pack('<I', 0), idsel=1)
s.ev(1, 10)
s.cmd(0, 12, getev())
s.cmd(0, 1, destroy(), idsel=1)
s.cmd(0, 1, destroy(), idsel=0)           # listener with an unread request
seeds['seed-passive'] = s
# active side: resolve, route, query, connect, response, establish, reject path
s = S()
s.cmd(1, 0, create())
s.cmd(1, 3, resolve_ip(), idsel=0, fams=[0, 0])
s.cmd(1, 12, getev())
s.cmd(1, 4, u32pair(0, 2000), idsel=0)
s.cmd(1, 12, getev())
s.cmd(1, 5, query(), idsel=0)
s.cmd(1, 19, query(0), idsel=0)
s.cmd(1, 19, query(1), idsel=0)
s.cmd(1, 19, query(2), idsel=0)
s.cmd(1, 11, initqp(1), idsel=0)
s.cmd(1, 14, setopt(0, 1), idsel=0)
s.cmd(1, 14, setopt(1, 4), idsel=0)
s.cmd(1, 6, connect(), idsel=0)
s.ev(0, 5, pd=b'rep')
s.cmd(1, 12, getev())
s.cmd(1, 8, accept(0), idsel=0)
s.cmd(1, 15, u32pair(0, 4), idsel=0)
s.ev(0, 11)                                # device removal
s.tick(10)
s.cmd(1, 12, getev())
s.cmd(1, 6, connect(), idsel=0)            # ENXIO now
s.reopen()
seeds['seed-active'] = s
# AF_IB probe, bad sizes, multicast, migrate, kill with everything live
s = S()
s.cmd(0, 0, create(0x13f, 2))
s.cmd(0, 20, bind(), idsel=0, fams=[2])    # AF_IB: EAFNOSUPPORT
s.cmd(0, 20, bind(), idsel=0, fams=[0])
s.cmd(0, 21, resolve_addr(), idsel=0, fams=[1, 1])
s.cmd(0, 0, create(0x111))                 # UDP
s.cmd(0, 21, resolve_addr(), idsel=1, fams=[0, 0])
s.cmd(0, 16, join_ip(), idsel=1, fams=[0])
s.cmd(0, 22, join(1), idsel=1, fams=[1])
s.ev(1, 12, mc=0)
s.ev(1, 12, mc=1)
s.cmd(0, 18, migrate(), idsel=1, mig=1)    # to file B (fd 4)
s.cmd(1, 12, getev())
s.cmd(1, 17, destroy(), idsel=2)
s.cmd(0, 9, reject(), idsel=0)
s.reopen()
seeds['seed-mcast-migrate'] = s
# a listener migrated with its request unread (the new Id goes with the
# event), destroyed there: the new Id is taken off the new file's list
s = S()
s.cmd(0, 0, create())                     # seen[0] listener
s.cmd(0, 2, bind_ip(), idsel=0, fams=[0])
s.cmd(0, 7, u32pair(0, 4), idsel=0)
s.ev(0, 4, pd=b'req')
s.cmd(1, 18, migrate(), idsel=0, mig=0)   # from file A (fd 3) to B
s.cmd(0, 0, create())                     # file A busy meanwhile
s.cmd(1, 1, destroy(), idsel=0)
seeds['seed-migrate-listener'] = s
for k, v in seeds.items():
    open(os.path.join(out, k), 'wb').write(bytes(v.b))
print(len(seeds))
