#!/bin/bash
# Integration: IPoIB P_Key child interfaces and partitions (RFC 4391 §4,
# IBA 10.9) on a Weft subnet whose OpenSM has a partitions.conf: the
# default partition for all, 0x8001 for weft0 and weft1 only.  Three hosts:
# weft0's ibX in the root namespace, weft1's in namespace h1, weft2's in h2.
#   1. Children by create_child (weft0, h2) and by `ip link add ... type
#      ipoib` (h1): pkey, parent, umcast files, `ip -d link`, addresses.
#   2. Refused values (EINVAL), duplicates (ENOTUNIQ, as Linux's ipoib).
#   3. ping between the 0x8001 children; weft2's child has no carrier (0x8001
#      is not in its port's table) and h2 cannot reach 0x8001; h2 still reaches
#      the default partition.
#   4. OpenSM restarted with weft2 in 0x8001: the P_Key change brings h2's
#      child up and it reaches the others.
#   5. delete_child and `ip link del` (also under a ping flood).
#   6. rmmod weft_ipoib with children up under traffic; weft_ipoib again and
#      an HCA removed with a child: no splat, no leak.
set -u
fail=0
bad() { echo "ipoib_pkey: FAIL: $*"; fail=1; }
sys=/sys/class/infiniband
cfs=/sys/kernel/config/weft
net=/sys/class/net

# write HOST FILE VALUE: the error message of the write ("" if it succeeded).
write() {
	weft_on "$1" bash -c 'echo "$1" >"$2"' x "$3" "$2" 2>&1 | sed 's/.*: //'
}

# cached HOST IFACE: the receive pages IFACE's caches hold (ethtool -S).
cached() { weft_on "$1" ethtool -S "$2" | awk '/ rx_pages_cached:/ { print $2 }'; }

weft_kmemleak_clear
weft_load weft_hca:hcas=0 || exit 1
weft_star 3 || bad "switch, HCAs and cables"
g0=$(ibstat -p weft0 | head -1)
g1=$(ibstat -p weft1 | head -1)
g2=$(ibstat -p weft2 | head -1)
parts() { # the GUIDs of partition 0x8001
	local g
	{
		echo "Default=0x7fff, ipoib : ALL=full;"
		printf "P8001=0x8001, ipoib :"
		for g in "$@"; do printf " %s=full," "$g"; done
		echo
	} | sed 's/,$/;/' >/tmp/weft-partitions.conf
	cat /tmp/weft-partitions.conf
}
parts "$g0" "$g1"
weft_sm_start weft0 5 "-P /tmp/weft-partitions.conf"
weft_wait_active weft0 weft1 weft2 || bad "ports not ACTIVE under OpenSM"
for d in weft0 weft1 weft2; do
	echo "ipoib_pkey: $d P_Keys: $(cat $sys/$d/ports/1/pkeys/* 2>/dev/null | grep -v '^0x0000$' | tr '\n' ' ')"
done

A=$(weft_ib_netdev weft0)
B=$(weft_ib_netdev weft1)
C=$(weft_ib_netdev weft2)
[ -n "$A" ] && [ -n "$B" ] && [ -n "$C" ] || { bad "netdevs: $(ls $net)"; weft_unload; exit 1; }
echo "ipoib_pkey: weft0 -> $A, weft1 -> $B, weft2 -> $C"
weft_expect $net/$A/pkey $'0xffff\n' || bad "$A pkey"
weft_expect $net/$A/umcast $'0\n' || bad "$A umcast"
[ -e $net/$A/parent ] && bad "$A (a port's own interface) has a parent file"
ip -d link show "$A" | grep -Eq "ipoib pkey +0xffff mode +datagram umcast +0000" ||
	bad "ip -d link show $A: $(ip -d link show "$A")"
weft_host_add h1 && weft_host_add h2 || bad "netns"
ip link set "$B" netns h1 && ip link set "$C" netns h2 || bad "moving $B, $C"

# 2. Refused values.
for v in 0 0x8000 0x10000 -1 65536 garbage ""; do
	e=$(write - $net/$A/create_child "$v")
	[ "$e" = "Invalid argument" ] || bad "create_child '$v': '$e', want EINVAL"
done
e=$(write - $net/$A/create_child 0xffff)
[ "$e" = "Name not unique on network" ] || bad "create_child of the parent's P_Key: '$e', want ENOTUNIQ"
e=$(write - $net/$A/delete_child 0x8001)
[ "$e" = "No such device" ] || bad "delete_child with no child: '$e', want ENODEV"

# 1. Children.
e=$(write - $net/$A/create_child 0x8001)
[ -z "$e" ] || bad "create_child 0x8001 on $A: $e"
AC=$A.8001
[ -e $net/$AC ] || bad "no $AC after create_child: $(ls $net)"
e=$(write - $net/$A/create_child 0x8001)
[ "$e" = "Name not unique on network" ] || bad "duplicate create_child: '$e', want ENOTUNIQ"
e=$(write - $net/$A/create_child 0x0001)
[ "$e" = "Name not unique on network" ] || bad "create_child 0x0001 (0x8001 full): '$e', want ENOTUNIQ"
e=$(write - $net/$AC/create_child 0x8002)
[ "$e" = "No such file or directory" ] || [ "$e" = "Permission denied" ] || bad "create_child on a child: '$e'"
weft_expect $net/$AC/pkey $'0x8001\n' || bad "$AC pkey"
weft_expect $net/$AC/parent "$A"$'\n' || bad "$AC parent"
weft_expect $net/$AC/umcast $'0\n' || bad "$AC umcast"
echo 1 >$net/$AC/umcast && weft_expect $net/$AC/umcast $'1\n' || bad "umcast 1"
ip -d link show "$AC" | grep -Eq "ipoib pkey +0x8001 mode +datagram umcast +0001" ||
	bad "ip -d link show $AC: $(ip -d link show "$AC")"
echo 0 >$net/$AC/umcast
for f in dev_id dev_port type addr_len; do
	[ "$(cat $net/$AC/$f)" = "$(cat $net/$A/$f)" ] || bad "$AC $f differs from $A's"
done
weft_expect $net/$AC/broadcast $'00:ff:ff:ff:ff:12:40:1b:80:01:00:00:00:00:00:00:ff:ff:ff:ff\n' ||
	bad "$AC broadcast (RFC 4391 MGID of P_Key 0x8001)"
pa=$(cat $net/$A/address)
ca=$(cat $net/$AC/address)
[ "${ca:12}" = "${pa:12}" ] && [ "${ca:0:11}" != "${pa:0:11}" ] ||
	bad "$AC address $ca: not the GID of $A ($pa) with its own QPN"

BC=$B.8001
weft_on h1 ip link add link "$B" name "$BC" type ipoib pkey 0x8001 umcast 1 || bad "ip link add $BC"
weft_on h1 test -e $net/$BC || bad "no $BC in h1"
weft_on h1 ip -d link show "$BC" | grep -Eq "ipoib pkey +0x8001 mode +datagram umcast +0001" ||
	bad "ip -d link show $BC: $(weft_on h1 ip -d link show "$BC")"
weft_expect_on() { [ "$(weft_on "$1" cat "$2")" = "$3" ]; }
weft_expect_on h1 $net/$BC/umcast 1 || bad "$BC umcast after umcast 1"
weft_on h1 ip link set "$BC" type ipoib umcast 0 && weft_expect_on h1 $net/$BC/umcast 0 ||
	bad "ip link set $BC type ipoib umcast 0"
weft_expect_on h1 $net/$BC/parent "$B" || bad "$BC parent"
weft_on h1 ip link add link "$BC" name x.1 type ipoib pkey 0x8002 2>/dev/null && bad "a child of a child was made"
weft_on h1 ip link add link lo name x.2 type ipoib pkey 0x8002 2>/dev/null && bad "an ipoib child of lo was made"
weft_on h1 ip link add link "$B" name x.3 type ipoib pkey 0x8000 2>/dev/null && bad "pkey 0x8000 accepted by ip link add"
weft_on h1 ip link show x.3 >/dev/null 2>&1 && bad "x.3 left behind"
# IFLA_IPOIB_MODE: a child made connected (RFC 4755), switched back by changelink.
weft_on h1 ip link add link "$B" name x.4 type ipoib pkey 0x8003 mode connected || bad "ip link add ... mode connected"
weft_expect_on h1 $net/x.4/mode connected || bad "x.4 mode: $(weft_on h1 cat $net/x.4/mode)"
weft_expect_on h1 $net/x.4/mtu 65520 || bad "x.4 mtu in connected mode: $(weft_on h1 cat $net/x.4/mtu)"
weft_on h1 ip -d link show x.4 | grep -Eq "ipoib pkey +0x8003 mode +connected" || bad "ip -d link show x.4"
weft_on h1 ip link set x.4 type ipoib mode datagram && weft_expect_on h1 $net/x.4/mode datagram ||
	bad "ip link set x.4 type ipoib mode datagram"
weft_on h1 ip link del x.4 || bad "ip link del x.4"

CC=$C.8001
e=$(write h2 $net/$C/create_child 0x8001)
[ -z "$e" ] || bad "create_child 0x8001 on $C in h2: $e"
weft_on h2 test -e $net/$CC || bad "no $CC in h2 (the parent's namespace)"

addrs() { # HOST IF ADDR
	weft_on "$1" ip addr add "$3"/24 dev "$2" && weft_on "$1" ip link set "$2" up || bad "$2 up with $3"
}
addrs - "$A" 10.77.0.1
addrs h1 "$B" 10.77.0.2
addrs h2 "$C" 10.77.0.3
addrs - "$AC" 10.78.0.1
addrs h1 "$BC" 10.78.0.2
addrs h2 "$CC" 10.78.0.3

# 3. Traffic.
weft_carrier - "$A" 1 && weft_carrier h1 "$B" 1 && weft_carrier h2 "$C" 1 || bad "no carrier on the port interfaces"
weft_carrier - "$AC" 1 || bad "$AC: no carrier"
weft_carrier h1 "$BC" 1 || bad "$BC: no carrier"
weft_pings - 10.78.0.2 || bad "ping $AC -> $BC"
weft_pings h1 10.78.0.1 || bad "ping $BC -> $AC"
weft_pings h2 10.77.0.1 || bad "ping on the default partition h2 -> $A"
weft_pings - 10.77.0.3 || bad "ping on the default partition -> h2"
weft_carrier h2 "$CC" 1 5 && bad "$CC has carrier without 0x8001 in its port's table"
weft_on h2 ping -c 2 -W 1 10.78.0.1 >/dev/null 2>&1 && bad "h2 reached 0x8001 ($AC)"
weft_on h2 ping -c 2 -W 1 10.78.0.2 >/dev/null 2>&1 && bad "h2 reached 0x8001 ($BC)"
ping -c 2 -W 1 10.78.0.3 >/dev/null 2>&1 && bad "$CC answered on 0x8001"
dmesg | grep -q "$CC: P_Key 0x8001 not in the port's table" || bad "no log of $CC waiting for its P_Key"
n=$(ethtool -S "$AC" | sed -n 's/^ *tx_packets: //p')
[ "${n:-0}" -gt 0 ] || bad "ethtool -S $AC tx_packets ${n:-?}"
echo "ipoib_pkey: $A rx_packets $(cat $net/$A/statistics/rx_packets), $AC rx_packets $(cat $net/$AC/statistics/rx_packets)"

# 4. The SM adds weft2 to 0x8001: P_Key change event, h2's child comes up.
weft_sm_stop
parts "$g0" "$g1" "$g2"
weft_sm_start weft0 5 "-P /tmp/weft-partitions.conf"
sleep 3
weft_wait_active weft0 weft1 weft2 || bad "not ACTIVE after the OpenSM restart"
weft_carrier h2 "$CC" 1 60 || bad "$CC: no carrier after the SM added 0x8001 ($(cat $sys/weft2/ports/1/pkeys/* | grep -v 0x0000 | tr '\n' ' '))"
weft_pings h2 10.78.0.1 -w 30 || bad "ping $CC -> $AC after the P_Key was added"
weft_pings h2 10.78.0.2 || bad "ping $CC -> $BC after the P_Key was added"
weft_pings h1 10.78.0.1 || bad "ping $BC -> $AC after the OpenSM restart"
weft_pings h2 10.77.0.1 || bad "ping on the default partition after the OpenSM restart"
dmesg | grep "P_Key 0x8001" | tail -4

# 5. Deleting children.
e=$(write h2 $net/$C/delete_child 0x8001)
[ -z "$e" ] || bad "delete_child 0x8001 on $C: $e"
weft_on h2 test -e $net/$CC && bad "$CC still there after delete_child"
weft_on h1 ip link del "$BC" || bad "ip link del $BC"
weft_on h1 test -e $net/$BC && bad "$BC still there after ip link del"
ip link del "$A" 2>/dev/null
[ -e $net/$A ] || bad "ip link del removed a port's own interface"
# An rtnl child is not delete_child's.
ip link add link "$A" name ib-r type ipoib pkey 0x8002 || bad "ip link add ib-r"
e=$(write - $net/$A/delete_child 0x8002)
[ "$e" = "No such device" ] || bad "delete_child of an rtnl child: '$e', want ENODEV"
ip link del ib-r || bad "ip link del ib-r"
# Under a ping flood, both ways.
weft_on h1 ip link add link "$B" name "$BC" type ipoib pkey 0x8001 && addrs h1 "$BC" 10.78.0.2
weft_carrier h1 "$BC" 1 || bad "$BC: no carrier the second time"
# The new child has a new QPN: what the neighbour tables hold is stale.
if ! weft_pings h1 10.78.0.1; then
	bad "ping from the new $BC"
	ip neigh show dev "$AC"
	weft_on h1 ip neigh show dev "$BC"
	ethtool -S "$AC" | grep -E "rx_packets|tx_packets|no_dest|path"
	weft_on h1 ethtool -S "$BC" | grep -E "rx_packets|tx_packets|no_dest|path|mcast"
fi
weft_pings - 10.78.0.2 || bad "ping $BC the second time"
weft_on h1 ping -f -w 20 10.78.0.1 >/dev/null 2>&1 &
f1=$!
ping -f -w 20 10.78.0.2 >/dev/null 2>&1 &
f2=$!
sleep 2
echo "ipoib_pkey: under the flood $AC caches $(cached - "$AC") pages, $BC $(cached h1 "$BC")"
t0=$(date +%s)
timeout 60 ip netns exec h1 ip link del "$BC" || bad "ip link del $BC under a ping flood"
e=$(timeout 60 sh -c "echo 0x8001 >$net/$A/delete_child" 2>&1)
[ -z "$e" ] || bad "delete_child under a ping flood: $e"
echo "ipoib_pkey: two children deleted under a ping flood in $(($(date +%s) - t0)) s"
[ -e $net/$AC ] && bad "$AC still there"
wait $f1 $f2 2>/dev/null
weft_pings h1 10.77.0.1 || bad "the port interfaces after their children went"
# Every receive page the module still holds is a live interface's: a
# deleted child's went back with it (they used to stay, counted nowhere).
for _ in 1 2 3 4 5 6; do
	want=$(($(cached - "$A") + $(cached h1 "$B") + $(cached h2 "$C")))
	have=$(cat /sys/kernel/debug/weft_ipoib/pages_cached)
	[ "$want" = "$have" ] && break
	sleep 0.5
done
echo "ipoib_pkey: after the children went, the module caches $have pages, $A $B $C hold $want"
[ "$want" = "$have" ] || bad "receive pages left behind by the deleted children"

# 6. rmmod with children up under traffic.
echo 0x8001 >$net/$A/create_child && addrs - "$AC" 10.78.0.1
weft_on h1 ip link add link "$B" name "$BC" type ipoib pkey 0x8001 && addrs h1 "$BC" 10.78.0.2
write h2 $net/$C/create_child 0x9 >/dev/null
weft_on h2 test -e $net/$C.0009 || bad "create_child 0x9: no $C.0009"
weft_expect_on h2 $net/$C.0009/pkey 0x8009 || bad "$C.0009 pkey (full member bit)"
weft_carrier h1 "$BC" 1 && weft_carrier - "$AC" 1 || bad "no carrier on the children before rmmod"
weft_pings - 10.78.0.2 || bad "ping before rmmod"
weft_on h1 ping -f -w 30 10.78.0.1 >/dev/null 2>&1 &
f1=$!
ping -f -w 30 10.78.0.2 >/dev/null 2>&1 &
f2=$!
sleep 3
timeout 90 rmmod weft_ipoib || bad "rmmod weft_ipoib with children under traffic"
for h in - h1 h2; do
	left=$(weft_on $h ls $net | grep '^ib')
	[ -z "$left" ] || bad "left after rmmod in ${h/-/root}: $left"
done
kill $f1 $f2 2>/dev/null
wait $f1 $f2 2>/dev/null

# The HCA removed with a child on it.
insmod "$WEFT_MODDIR/ulp/ipoib/weft_ipoib.ko" || bad "insmod weft_ipoib again"
sleep 1
B=$(weft_ib_netdev weft1)
if [ -n "$B" ]; then
	echo 0x8001 >$net/$B/create_child || bad "create_child on $B again"
	ip link set "$B" up && ip link set "$B.8001" up
	weft_carrier - "$B.8001" 1 || bad "$B.8001: no carrier"
	rmdir $cfs/cables/c1 && timeout 60 rmdir $cfs/hcas/h1 || bad "removing weft1 with a child"
	[ -e $net/$B.8001 ] && bad "$B.8001 still there after its HCA went"
	[ -e $net/"$B" ] && bad "$B still there after its HCA went"
else
	bad "no netdev for weft1 after loading weft_ipoib again"
fi
ip netns del h1
ip netns del h2
weft_sm_stop
weft_unload || bad "unload"
weft_check_taint || fail=1
weft_kmemleak_check || bad "kmemleak found leaks"
echo "ipoib_pkey: done in $SECONDS s"
exit $fail
