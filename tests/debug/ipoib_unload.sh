#!/bin/bash
# Debug kernel (KASAN, lockdep, kmemleak): IPoIB torn down under traffic.
# Two hosts of an OpenSM-managed subnet (weft1's interface in namespace
# h1); P_Key children (partition 0x8002, given by OpenSM's
# partitions.conf) made both ways, one deleted with `ip link del` while a
# ping flood runs over it; connected mode on both ends; then, with an RC
# connection up, rmmod weft_ipoib while iperf3 and a ping flood run.  The job's closing
# kmemleak scan and the splat scanner judge what this leaves behind.
set -u
fail=0
bad() { echo "ipoib_unload: FAIL: $*"; fail=1; }
ip4a=10.79.0.1 ip4b=10.79.0.2


weft_load weft_hca:autoconf=0 || exit 1
# The children's partition, so that they come up and really carry traffic.
printf '%s\n' "Default=0x7fff, ipoib : ALL=full;" "P2=0x8002, ipoib : ALL=full;" >/tmp/unload-partitions.conf
weft_sm_start weft0 5 "-P /tmp/unload-partitions.conf"
weft_wait_active weft0 weft1 || bad "ports not active"
A=$(weft_ib_netdev weft0) B=$(weft_ib_netdev weft1)
[ -n "$A" ] && [ -n "$B" ] || { bad "no IPoIB interfaces"; weft_unload; exit 1; }
weft_host_add h0
weft_host_add h1
ip link set "$A" netns h0 && ip link set "$B" netns h1 || bad "moving the interfaces"
weft_on h0 ip addr add $ip4a/24 dev "$A"
weft_on h1 ip addr add $ip4b/24 dev "$B"
weft_on h0 ip link set "$A" up
weft_on h1 ip link set "$B" up
weft_reach h0 $ip4b || bad "no ping in datagram mode"

# Children: one by sysfs, one by rtnl; the rtnl one deleted under a ping flood.
weft_on h0 sh -c "echo 0x8002 >/sys/class/net/$A/create_child" || bad "create_child"
weft_on h1 ip link add link "$B" name "$B.c2" type ipoib pkey 0x8002 || bad "ip link add type ipoib"
weft_on h0 ip addr add 10.79.2.1/24 dev "$A.8002"
weft_on h0 ip link set "$A.8002" up
weft_on h1 ip addr add 10.79.2.2/24 dev "$B.c2"
weft_on h1 ip link set "$B.c2" up
weft_carrier h0 "$A.8002" 1 60 && weft_carrier h1 "$B.c2" 1 60 || bad "children without carrier"
weft_reach h1 10.79.2.1 || bad "no ping between the children"
# A deadline, not a kill: ping prints its statistics at the end.
weft_on h1 timeout 60 ping -f -w 10 -I "$B.c2" 10.79.2.1 >/tmp/unload-flood.out 2>&1 &
flood=$!
sleep 4
weft_on h1 ip link del "$B.c2" || bad "ip link del of the child"
wait $flood # not a bare wait: OpenSM is a child of this shell too
grep -q " [1-9][0-9]* received" /tmp/unload-flood.out || bad "the flood on the child got no answer: $(tail -2 /tmp/unload-flood.out)"

# Connected mode (RFC 4755) on both ends.
weft_on h0 sh -c "echo connected >/sys/class/net/$A/mode" || bad "mode connected ($A)"
weft_on h1 sh -c "echo connected >/sys/class/net/$B/mode" || bad "mode connected ($B)"
weft_reach h0 $ip4b || bad "no ping in connected mode"

# Under traffic: iperf3 and a ping flood, then rmmod.
weft_iperf_server h1 5203 || bad "no iperf3 server in h1"
weft_on h0 timeout 90 iperf3 -c $ip4b -p 5203 -t 60 >/dev/null 2>&1 &
load=$!
weft_on h1 timeout 90 ping -f $ip4a >/dev/null 2>&1 &
flood=$!
sleep 5
up=$(weft_on h0 ethtool -S "$A" | sed -n 's/^ *cm_connections: //p')
[ "${up:-0}" -ge 1 ] || bad "no RC connection up before the rmmod"
timeout 120 rmmod weft_ipoib || bad "rmmod weft_ipoib under traffic"
weft_on h0 test -e "/sys/class/net/$A" && bad "$A still there after rmmod"
weft_on h1 test -e "/sys/class/net/$B" && bad "$B still there after rmmod"
kill $load $flood 2>/dev/null
wait $load $flood 2>/dev/null
weft_on h1 pkill -x iperf3
ip netns del h0
ip netns del h1
weft_sm_stop
weft_unload || bad "unload"
exit $fail
