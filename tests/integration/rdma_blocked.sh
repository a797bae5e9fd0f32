#!/bin/bash
# Integration: a test host keeps the in-tree RDMA stack out.  Debian would
# otherwise auto-load ib_core (e.g. on libibverbs' netlink probe whenever
# weft_uverbs, which answers NETLINK_RDMA itself, is not loaded) and it
# would take the infiniband class and RDMA netlink from Weft.
set -u
fail=0
for m in ib_core ib_uverbs ib_umad rdma_cm ib_ipoib rdma_rxe; do
	if modprobe "$m" 2>/dev/null; then
		echo "rdma_blocked: modprobe $m succeeded"
		fail=1
	fi
	if grep -q "^$m " /proc/modules; then
		echo "rdma_blocked: $m is loaded"
		fail=1
	fi
done
exit $fail
