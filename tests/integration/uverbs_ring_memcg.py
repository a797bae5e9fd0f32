#!/usr/bin/env python3
# Ring memory is charged to the process's memory cgroup (for
# tests/integration/uverbs_apps.sh, run inside a cgroup whose memory.max
# is far below what is asked): CQs of max_cqe entries (a ring of about
# 4 MiB each) until COUNT are made or one fails.  WANT: "all" (every one
# made) or "ENOMEM" (one refused with ENOMEM, the cgroup's limit; never an
# OOM kill).
# Usage: uverbs_ring_memcg.py DEV COUNT WANT
import sys

from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pyverbs_error import PyverbsRDMAError

import errno

dev, count, want = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ctx = Context(name=dev)
max_cqe = ctx.query_device().max_cqe
cqs, err = [], None
try:
    for _ in range(count):
        cqs.append(CQ(ctx, max_cqe))
except PyverbsRDMAError as x:
    err = x.error_code
made = len(cqs)
for c in cqs:  # back under the cgroup's limit before anything else
    c.close()
print("uverbs_ring_memcg: %d CQs of %d entries, then errno %s" % (made, max_cqe, err), flush=True)
got = "all" if made == count else errno.errorcode.get(err, str(err))
sys.exit(0 if got == want else 1)
