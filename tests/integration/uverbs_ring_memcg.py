#!/usr/bin/env python3
# Ring memory is charged to the process's memory cgroup (for
# tests/integration/uverbs_apps.sh, run inside a cgroup whose memory.max
# is far below what is asked): CQs of max_cqe entries (a ring of about
# 4 MiB each) until COUNT are made or one fails.  Prints how many were
# made and the errno; exits 0 when all COUNT were made.
# Usage: uverbs_ring_memcg.py DEV COUNT
import sys

from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pyverbs_error import PyverbsRDMAError

dev, count = sys.argv[1], int(sys.argv[2])
ctx = Context(name=dev)
max_cqe = ctx.query_device().max_cqe
cqs, err = [], None
try:
    for _ in range(count):
        cqs.append(CQ(ctx, max_cqe))
except PyverbsRDMAError as x:
    err = x.error_code
print("uverbs_ring_memcg: %d CQs of %d entries, then errno %s" % (len(cqs), max_cqe, err), flush=True)
sys.exit(0 if len(cqs) == count else 1)
