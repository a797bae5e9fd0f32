#!/usr/bin/env python3
# MIGRATE_ID of a listener whose CONNECT_REQUEST is unread, spoken directly
# to /dev/infiniband/rdma_cm (layouts of <rdma/rdma_user_cm.h>), for
# tests/integration/ucma.sh.  Clients are rping in namespace CLIENT_NS.
#   1. the listener migrated with a request queued: the event is read in the
#      new file and the request's new Id is there (REJECT answers there, the
#      old file does not know it);
#   2. the request's new Id taken alone by its number (MIGRATE_ID to a third
#      file) before the event is read: destroying the listener leaves it to
#      that file (DESTROY_ID there answers);
#   3. ROUNDS times: a listener with a request queued, migrated and destroyed
#      in the other file while a thread creates and destroys Ids in the first
#      (which corrupted the first file's list when the new Id stayed on it).
# Usage: ucma_migrate.py LOCAL_IPV4 CLIENT_NS ROUNDS
import ctypes
import errno
import os
import select
import socket
import struct
import subprocess
import sys
import threading

local_ip, client_ns, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
ok = True
DEV = "/dev/infiniband/rdma_cm"
CREATE_ID, DESTROY_ID, BIND_IP, LISTEN, REJECT, GET_EVENT, MIGRATE_ID = 0, 1, 2, 7, 9, 12, 18
PS_TCP = 0x0106
CONNECT_REQUEST = 4
PORT = 7180
clients = []


def bad(*a):
    global ok
    print("ucma_migrate: FAIL:", *a, flush=True)
    ok = False


def buf(n):
    b = ctypes.create_string_buffer(n)
    return b, ctypes.addressof(b)


def cmd(fd, c, body, out=0):
    return os.write(fd, struct.pack("<IHH", c, len(body), out) + body)


def create_id(fd):
    r, a = buf(4)
    cmd(fd, CREATE_ID, struct.pack("<QQHB5x", 0x77, a, PS_TCP, 0), 4)
    return struct.unpack("<I", r.raw)[0]


def destroy_id(fd, i):
    r, a = buf(4)
    cmd(fd, DESTROY_ID, struct.pack("<QII", a, i, 0), 4)
    return struct.unpack("<I", r.raw)[0]


def migrate(to, frm, i):
    r, a = buf(4)
    cmd(to, MIGRATE_ID, struct.pack("<QII", a, i, frm), 4)


def reject(fd, i):
    cmd(fd, REJECT, struct.pack("<IBB2x", i, 0, 0) + bytes(256))


def listener(fd):
    i = create_id(fd)
    sa = struct.pack("<H", socket.AF_INET) + struct.pack(">H", PORT) + socket.inet_aton(local_ip)
    cmd(fd, BIND_IP, struct.pack("<Q", 0) + sa.ljust(28, b"\0") + struct.pack("<I", i))
    cmd(fd, LISTEN, struct.pack("<II", i, 8))
    return i


def connect_client():
    """An rping client in the other namespace; returns once its request is queued."""
    clients.append(subprocess.Popen(
        ["ip", "netns", "exec", client_ns, "rping", "-c", "-a", local_ip, "-p", str(PORT), "-C", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))


def wait_queued(fd, what):
    p = select.poll()
    p.register(fd, select.POLLIN)
    if not p.poll(120000):
        bad("%s: no CONNECT_REQUEST queued within 120 s" % what)
        return False
    return True


def get_event(fd):
    r, a = buf(336)
    cmd(fd, GET_EVENT, struct.pack("<Q", a), 336)
    _, i, ev = struct.unpack_from("<QII", r.raw)
    return i, ev


def expect_err(what, want, fn, *a):
    try:
        fn(*a)
        bad("%s succeeded, want %s" % (what, errno.errorcode[want]))
    except OSError as e:
        if e.errno != want:
            bad("%s: %s, want %s" % (what, e, errno.errorcode[want]))


def reap():
    for c in clients:
        try:
            c.wait(120)
        except subprocess.TimeoutExpired:
            c.kill()
            c.wait()
    clients.clear()


f1, f2, f3 = (os.open(DEV, os.O_RDWR) for _ in range(3))

# 1. The request's new Id moves with its event.
lis = listener(f1)
connect_client()
if wait_queued(f1, "1"):
    migrate(f2, f1, lis)
    os.set_blocking(f2, False)
    child, ev = get_event(f2)
    if ev != CONNECT_REQUEST:
        bad("1: event %d in the new file, want CONNECT_REQUEST" % ev)
    expect_err("1: REJECT of the new Id in the old file", errno.ENOENT, reject, f1, child)
    try:
        reject(f2, child)
        destroy_id(f2, child)
    except OSError as e:
        bad("1: the request's new Id in the listener's new file: %s" % e)
destroy_id(f2, lis)
reap()

# 2. The new Id taken alone by its number stays with whoever took it.
lis = listener(f1)
connect_client()
if wait_queued(f1, "2"):
    # Numbers come from one counter: the new Id's is past the listener's.
    taken = None
    for n in range(lis + 1, lis + 64):
        try:
            migrate(f3, f1, n)
            taken = n
            break
        except OSError as e:
            if e.errno != errno.ENOENT:
                bad("2: MIGRATE_ID of Id %d: %s" % (n, e))
                break
    if taken is None:
        bad("2: the request's new Id not found by number")
    destroy_id(f1, lis)
    if taken is not None:
        try:
            destroy_id(f3, taken)
        except OSError as e:
            bad("2: the taken Id after its listener went: %s" % e)
else:
    destroy_id(f1, lis)
reap()

# 3. Migrate-and-destroy against a busy first file.
stop = threading.Event()
churn_errors = []


def churn():
    while not stop.is_set():
        try:
            destroy_id(f1, create_id(f1))
        except OSError as e:
            churn_errors.append(e)
            return


t = threading.Thread(target=churn)
t.start()
done = 0
for r in range(rounds):
    lis = listener(f1)
    connect_client()
    if not wait_queued(f1, "3, round %d" % r):
        destroy_id(f1, lis)
        break
    migrate(f2, f1, lis)
    destroy_id(f2, lis)
    done += 1
stop.set()
t.join()
if churn_errors:
    bad("3: creating and destroying Ids in the first file: %s" % churn_errors[0])
reap()
for f in (f1, f2, f3):
    os.close(f)
print("ucma_migrate: %d rounds, %s" % (done, "ok" if ok else "FAILED"), flush=True)
sys.exit(0 if ok else 1)
