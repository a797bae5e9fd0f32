#!/bin/bash
# Integration: where the soft HCAs' completion vectors interrupt (weft_hca
# comp_vector_cpu), seen from IPoIB's NAPI, which runs on the CPU of its
# CQ's vector (vector 0 for port 1).  Two hosts under OpenSM; h0 pings h1
# in a flood from CPU 0; /proc/softirqs says which CPU received.
#   1. A CPU that is not online is refused at load (EINVAL).
#   2. Default: each HCA's vectors start one CPU further on, so h0's
#      interface (weft0) receives the replies on CPU 0 and h1's (weft1)
#      the requests on CPU 1.
#   3. comp_vector_cpu=1: both HCAs' vector 0 on CPU 1; CPU 0 takes next
#      to no receive work.
set -u
fail=0
bad() { echo "hca_vectors: FAIL: $*"; fail=1; }
ncpu=$(nproc)

net_rx() { awk -v c="$1" '$1 == "NET_RX:" { print $(c + 2) }' /proc/softirqs; }

# flood: NET_RX softirqs on CPU 0 and CPU 1 (into r0, r1) while h0 sends 2000 pings from CPU 0.
flood() {
	local a0 a1
	for _ in $(seq 1 60); do
		weft_on h0 ping -c 1 -W 1 10.77.0.2 >/dev/null 2>&1 && break
	done
	a0=$(net_rx 0) a1=$(net_rx 1)
	weft_on h0 taskset -c 0 ping -f -c 2000 -W 1 10.77.0.2 >/tmp/hca-vectors-ping.out 2>&1 ||
		bad "ping flood: $(tail -2 /tmp/hca-vectors-ping.out)"
	r0=$(($(net_rx 0) - a0)) r1=$(($(net_rx 1) - a1))
}

teardown() {
	ip netns del h0 2>/dev/null
	ip netns del h1 2>/dev/null
	weft_sm_stop
	sleep 1
	weft_unload
}

if [ "$ncpu" -lt 2 ]; then
	echo "hca_vectors: needs 2 CPUs, has $ncpu"
	exit 1
fi

# 1. Out of range.
if weft_load "weft_hca:comp_vector_cpu=$ncpu" 2>/dev/null; then
	bad "comp_vector_cpu=$ncpu (not an online CPU) was taken"
fi
weft_unload
grep -q '^weft_hca ' /proc/modules && bad "weft_hca loaded with comp_vector_cpu=$ncpu"
echo "hca_vectors: comp_vector_cpu=$ncpu refused (the insmod failure above is the check)"

# 2. Default placement.
weft_ipoib_hosts || { bad "IPoIB hosts"; teardown; exit 1; }
flood
d0=$r0 d1=$r1
echo "hca_vectors: default: NET_RX cpu0 +$d0 cpu1 +$d1"
[ "$d0" -ge 1000 ] || bad "default: weft0's replies not received on CPU 0 (+$d0)"
[ "$d1" -ge 1000 ] || bad "default: weft1's requests not received on CPU 1 (+$d1)"
teardown

# 3. Both on CPU 1.
weft_ipoib_hosts 1 || { bad "IPoIB hosts with comp_vector_cpu=1"; teardown; exit 1; }
weft_expect /sys/module/weft_hca/parameters/comp_vector_cpu $'1\n' || bad "parameter not shown"
flood
v0=$r0 v1=$r1
echo "hca_vectors: comp_vector_cpu=1: NET_RX cpu0 +$v0 cpu1 +$v1"
[ "$v1" -ge 2000 ] || bad "comp_vector_cpu=1: requests and replies not both received on CPU 1 (+$v1)"
[ "$((v0 * 10))" -le "$v1" ] || bad "comp_vector_cpu=1: CPU 0 still receives (+$v0 against +$v1)"
teardown
weft_check_taint || fail=1
exit $fail
