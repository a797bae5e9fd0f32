#!/bin/bash
# IPoIB benchmark job (run by tests/bench/ipoib.sh through vm-run.sh, stock
# kernel): iperf3 TCP over Weft's IPoIB between two hosts of one subnet
# (weft1's interface in a namespace), in every mode the interface offers,
# alternating with a veth pair between two namespaces of the same guest,
# the software ceiling.  Prints IPOIB-BENCH lines; asserts nothing.
#   $1  seconds per iperf3 run (default 10)
#   $2  rounds (default 3)
#   $3  extra iperf3 client arguments (e.g. "-A 0,1")
#   $4  the CPU of both HCAs' completion vector 0 (default: weft_hca's)
set -u
. /weft-job/guest-lib.sh
secs=${1:-10} rounds=${2:-3} extra=${3:-} vector_cpu=${4:-}

# mbits HOST SERVER [iperf3 args]: receiver-side Mbit/s of one TCP run.
mbits() {
	local h=$1 s=$2
	shift 2
	# shellcheck disable=SC2086
	weft_on "$h" timeout $((secs + 30)) iperf3 -c "$s" -t "$secs" -J $extra "$@" 2>/dev/null |
		awk -F'[:,]' '/"sum_received"/ { r = 1 } r && /"bits_per_second"/ { printf "%.0f\n", $2 / 1e6; exit }'
}

weft_ipoib_hosts "$vector_cpu" || { echo "IPOIB-BENCH note: no IPoIB hosts"; exit 1; }
[ -n "$vector_cpu" ] && echo "IPOIB-BENCH note: both HCAs' completion vector 0 (NAPI) on CPU $vector_cpu"
weft_host_add h2
weft_host_add h3
weft_veth h2 10.88.0.1/24 h3 10.88.0.2/24
weft_on h1 iperf3 -s -D -p 5201
weft_on h3 iperf3 -s -D -p 5201

# set_mode MODE: both ends (RFC 4755 connected mode, or datagram).
set_mode() {
	weft_on h0 sh -c "echo $1 >/sys/class/net/$A/mode" &&
		weft_on h1 sh -c "echo $1 >/sys/class/net/$B/mode"
}
# measure LABEL: rounds of IPoIB alternating with veth, one reverse run, RTT.
measure() {
	local ok='' _
	for _ in $(seq 1 60); do
		weft_on h0 ping -c 1 -W 1 10.77.0.2 >/dev/null 2>&1 && { ok=1; break; }
	done
	[ -n "$ok" ] || { echo "IPOIB-BENCH note $1: no ping"; return; }
	echo "IPOIB-BENCH mtu $1 $(weft_on h0 cat "/sys/class/net/$A/mtu")"
	for _ in $(seq 1 "$rounds"); do
		echo "IPOIB-BENCH tcp $1 $(mbits h0 10.77.0.2)"
		echo "IPOIB-BENCH tcp veth $(mbits h2 10.88.0.2)"
	done
	echo "IPOIB-BENCH tcp-reverse $1 $(mbits h0 10.77.0.2 -R)"
	echo "IPOIB-BENCH rtt $1 $(weft_on h0 ping -c 20 -i 0.1 -q 10.77.0.2 | awk -F/ '/rtt/ { print $5 }')"
}

# OpenSM's default broadcast group: IB MTU 2048, so 2044-byte datagrams.
measure datagram
if set_mode connected; then
	measure connected
	set_mode datagram || echo "IPOIB-BENCH note: no switch back to datagram"
else
	echo "IPOIB-BENCH note connected mode refused"
fi
# The same with the partition's broadcast group at IB MTU 4096 (OpenSM
# partitions.conf mtu=5): 4092-byte datagrams, half the packets.
echo "Default=0x7fff, ipoib, mtu=5 : ALL=full;" >/tmp/bench-partitions.conf
weft_sm_stop
weft_sm_start weft0 5 "-P /tmp/bench-partitions.conf"
for _ in $(seq 1 150); do
	[ "$(weft_on h0 cat "/sys/class/net/$A/carrier" 2>/dev/null)" = 1 ] &&
		[ "$(weft_on h1 cat "/sys/class/net/$B/carrier" 2>/dev/null)" = 1 ] &&
		weft_on h0 ip link set "$A" mtu 4092 2>/dev/null &&
		weft_on h1 ip link set "$B" mtu 4092 2>/dev/null && break
	sleep 0.2
done
measure datagram-4k
# A veth pair made to work like IPoIB datagram mode (MTU 2044, no
# checksum, segmentation or GRO offloads): the stack's own per-packet
# cost, to tell it from Weft's.
weft_host_add h4
weft_host_add h5
weft_veth h4 10.89.0.1/24 h5 10.89.0.2/24
for h in h4 h5; do
	weft_on $h ip link set "v-$h" mtu 2044
	weft_on $h ethtool -K "v-$h" tx off rx off sg off tso off gso off gro off >/dev/null 2>&1
done
weft_on h5 iperf3 -s -D -p 5201
sleep 1
for _ in $(seq 1 "$rounds"); do
	echo "IPOIB-BENCH tcp veth-2044-plain $(mbits h4 10.89.0.2)"
done
echo "IPOIB-BENCH mtu veth-2044-plain 2044"
echo "IPOIB-BENCH rtt veth $(weft_on h2 ping -c 20 -i 0.1 -q 10.88.0.2 | awk -F/ '/rtt/ { print $5 }')"

# Both HCAs' completion vector 0 (so both interfaces' NAPI) on CPU 1
# (weft_hca comp_vector_cpu=1), as one pins a real HCA's interrupts away
# from the sending application: connected mode gains, datagram mode loses
# (Documentation/ipoib.md, session 13).  Only when the first run had the
# default placement and there is a CPU 1.
if [ -z "$vector_cpu" ] && [ "$(nproc)" -ge 2 ]; then
	weft_on h1 pkill -x iperf3
	ip netns del h0
	ip netns del h1
	weft_sm_stop
	sleep 1
	if weft_unload && weft_ipoib_hosts 1; then
		# pkill is not confined to a namespace: h3's veth server went too.
		weft_on h1 iperf3 -s -D -p 5201
		weft_on h3 iperf3 -s -D -p 5201
		measure datagram-vec1
		if set_mode connected; then
			measure connected-vec1
		else
			echo "IPOIB-BENCH note connected mode refused (vectors on CPU 1)"
		fi
	else
		echo "IPOIB-BENCH note: no IPoIB hosts with comp_vector_cpu=1"
	fi
fi

weft_on h1 pkill -x iperf3
weft_on h3 pkill -x iperf3
weft_on h5 pkill -x iperf3
for h in h0 h1 h2 h3 h4 h5; do ip netns del $h; done
weft_sm_stop
sleep 1
weft_unload
exit 0
