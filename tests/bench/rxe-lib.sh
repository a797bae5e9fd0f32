# Sourced by the benchmark jobs (in-guest.sh, verbs-in-guest.sh): the in-tree
# rxe as the benchmarks set it up.
# shellcheck shell=bash

# bench_rxe_up: rxe0, one device on a veth end (rv0, 192.168.77.1) talking to
# itself (test-hosts.md), veth MTU 9000 so IB MTU 4096 as Weft's connection.
# The test host blocks in-tree RDMA modules; the benchmarks want one of them.
# Prints "RXE-BENCH unavailable" and fails when rxe cannot be set up.
bench_rxe_up() {
	rm -f /etc/modprobe.d/weft-test-host.conf
	modprobe rdma_rxe || { echo "RXE-BENCH unavailable"; return 1; }
	ip link add rv0 mtu 9000 type veth peer name rv1 mtu 9000
	ip addr add 192.168.77.1/24 dev rv0
	ip link set rv0 up
	ip link set rv1 up
	rdma link add rxe0 type rxe netdev rv0 || { echo "RXE-BENCH unavailable"; return 1; }
	sleep 1
}
