#!/bin/bash
# Integration: IPoIB datagram mode (RFC 4391, 4392) between two hosts of a
# Weft subnet managed by Debian's OpenSM: weft0's interface in the root
# namespace, weft1's moved into the namespace "h1" as the second host.
#   1. The netdevs: type, address, broadcast, MTU, carrier, ethtool.
#   2. ping and ping -6 both ways; don't-fragment pings at the MTU and one
#      byte over; iperf3 TCP and UDP both ways; IP multicast both ways,
#      a sender that does not listen joined as SendOnlyFullMember (the
#      SA's record, saquery);
#      GRO merges the received TCP segments; checksum and segmentation
#      offloads used, and TCP without them; interrupt coalescing
#      (ethtool -C rx-usecs holds a ping reply that long).
#   3. Cable down/up: carrier drops and returns, traffic resumes.
#   4. OpenSM restarted: traffic resumes; then with a 4 KiB broadcast group:
#      MTU 4092, DF pings at the limit and one byte over, iperf3; then with
#      another subnet prefix: the hardware addresses follow the GIDs.
#   5. rmmod weft_ipoib during traffic: interfaces gone, no splat, no leak.
#   6. weft_ipoib again (dest_idle_secs=1: idle destinations age out and
#      are looked up again); the HCA removed under traffic (its interface
#      goes with it, from inside the namespace too); then everything unloads.
set -u
fail=0
bad() { echo "ipoib: FAIL: $*"; fail=1; }
sys=/sys/class/infiniband
cfs=/sys/kernel/config/weft
ip4a=10.77.0.1 ip4b=10.77.0.2 ip6a=fd77::1 ip6b=fd77::2

port_state() { cat $sys/$1/ports/1/state; }

weft_kmemleak_clear
weft_load weft_hca:hcas=0 || exit 1
weft_star 2 || bad "switch, HCAs and cables"
weft_sm_start weft0
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM: $(port_state weft0) $(port_state weft1)"

# 1. The netdevs.
A=$(weft_ib_netdev weft0)
B=$(weft_ib_netdev weft1)
[ -n "$A" ] && [ -n "$B" ] || { bad "no IPoIB netdev for weft0 ($A) or weft1 ($B): $(ls /sys/class/net)"; weft_unload; exit 1; }
echo "ipoib: weft0 -> $A, weft1 -> $B"
weft_expect /sys/class/net/$A/type $'32\n' || bad "$A type is not ARPHRD_INFINIBAND"
weft_expect /sys/class/net/$A/addr_len $'20\n' || bad "$A addr_len"
weft_expect /sys/class/net/$A/dev_port $'0\n' || bad "$A dev_port"
weft_expect /sys/class/net/$A/dev_id $'0x0\n' || bad "$A dev_id"
weft_expect /sys/class/net/$A/broadcast $'00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff\n' ||
	bad "$A broadcast address"
gid=$(cat $sys/weft0/ports/1/gids/0 | tr -d ':')
addr=$(tr -d ':\n' </sys/class/net/$A/address)
[ "${addr:8}" = "$gid" ] || bad "$A address $addr does not end in the port GID $gid"
# The first byte is reserved, or 80 with the RFC 4755 C flag (connected mode offered: ipoib_cm.sh).
case ${addr:0:2} in 00 | 80) ;; *) bad "$A address $addr: reserved byte set" ;; esac
[ "${addr:2:6}" != 000000 ] || bad "$A address $addr: no QPN"
[ "$(cat /sys/class/net/$A/carrier 2>/dev/null)" != 1 ] || bad "$A has carrier while down"
weft_host_add h1 || bad "netns h1"
ip link set "$B" netns h1 || bad "moving $B into h1"
weft_on h1 test -e /sys/class/net/$B || bad "$B not in h1"
ip addr add $ip4a/24 dev "$A" && ip addr add $ip6a/64 dev "$A" nodad && ip link set "$A" up || bad "$A up"
weft_on h1 ip addr add $ip4b/24 dev "$B" && weft_on h1 ip addr add $ip6b/64 dev "$B" nodad &&
	weft_on h1 ip link set "$B" up || bad "$B up"
weft_carrier - "$A" 1 || bad "$A: no carrier after up"
weft_carrier h1 "$B" 1 || bad "$B: no carrier after up"
mtu=$(cat /sys/class/net/$A/mtu)
[ "$mtu" = 2044 ] || bad "$A MTU $mtu, want 2044 (IB MTU 2048 - 4)"
out=$(ethtool "$A" 2>&1)
grep -q "Speed: 100000Mb/s" <<<"$out" || bad "ethtool $A: speed: $out"
grep -q "Link detected: yes" <<<"$out" || bad "ethtool $A: link: $out"
ethtool -i "$A" | grep -qx "driver: weft_ipoib" || bad "ethtool -i $A: $(ethtool -i "$A")"
ip link set "$A" mtu 1500 && [ "$(cat /sys/class/net/$A/mtu)" = 1500 ] || bad "ip link set mtu 1500"
ip link set "$A" mtu 9000 2>/dev/null && bad "MTU 9000 accepted on a datagram interface"
ip link set "$A" mtu 2044 || bad "ip link set mtu 2044"

# 2. Traffic.
weft_pings - $ip4b || bad "ping $ip4b from the root namespace"
weft_pings h1 $ip4a || bad "ping $ip4a from h1"
weft_pings - $ip6b -6 || bad "ping -6 $ip6b from the root namespace"
weft_pings h1 $ip6a -6 || bad "ping -6 $ip6a from h1"
ip neigh show dev "$A"
# IPv4 adds 28 bytes of headers: 2016 fills the MTU exactly, 2017 needs a fragment.
weft_pings - $ip4b -M do -s $((mtu - 28)) || bad "don't-fragment ping of $((mtu - 28)) bytes (MTU $mtu)"
weft_pings h1 $ip4a -M do -s $((mtu - 28)) || bad "don't-fragment ping of $((mtu - 28)) bytes from h1"
ping -c 1 -W 2 -M do -s $((mtu - 27)) $ip4b >/dev/null 2>&1 && bad "don't-fragment ping of $((mtu - 27)) bytes went through"
weft_pings - $ip6b -6 -M do -s $((mtu - 48)) || bad "IPv6 ping of $((mtu - 48)) bytes (MTU $mtu)"
ping -6 -c 1 -W 2 -M do -s $((mtu - 47)) $ip6b >/dev/null 2>&1 && bad "IPv6 ping of $((mtu - 47)) bytes went through"
rtt=$(ping -c 10 -i 0.2 -q $ip4b 2>&1 | sed -n 's|.*= [0-9.]*/\([0-9.]*\)/.*|\1|p')
echo "ipoib: ping RTT avg ${rtt:-?} ms"

# iperf3 CLIENT-HOST SERVER-HOST SERVER-ADDR [options]: a 10 s run; prints the receiver's rate.
iperf() {
	local c=$1 s=$2 a=$3 out
	shift 3
	weft_iperf_server "$s" 5201 -1 || return 1
	out=$(weft_on "$c" timeout 40 iperf3 -c "$a" -p 5201 -t 10 "$@" 2>&1)
	echo "$out" | tail -6
	grep -q "receiver" <<<"$out" || return 1
	echo "ipoib: iperf3 $c -> $a $*: $(grep receiver <<<"$out" | tail -1 | grep -o '[0-9.]* [KMG]bits/sec')"
}
# GRO: the receiver merges TCP segments into far fewer IP packets than
# the link delivered.  It compares hard_header_len bytes of MAC header per
# flow, so a received packet's MAC header must be that long.
ip_in() { weft_on h1 awk '/^Ip: [0-9]/ { print $4 }' /proc/net/snmp; }
link_in() { weft_on h1 cat /sys/class/net/"$B"/statistics/rx_packets; }
ip0=$(ip_in) rx0=$(link_in)
iperf - h1 $ip4b || bad "iperf3 TCP root -> h1"
ip1=$(ip_in) rx1=$(link_in)
echo "ipoib: GRO: $((rx1 - rx0)) packets received, $((ip1 - ip0)) IP packets up the stack"
[ $(((ip1 - ip0) * 4)) -lt $(((rx1 - rx0) * 3)) ] || bad "GRO merged less than a quarter of the packets"
iperf h1 - $ip4a || bad "iperf3 TCP h1 -> root"
iperf - h1 $ip4b -u -b 200M || bad "iperf3 UDP root -> h1"
iperf h1 - $ip4a -u -b 200M || bad "iperf3 UDP h1 -> root"
# What UDP lost at a full receive ring shows here (the netdev never sees it).
oob() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/out_of_buffer"; }
echo "ipoib: hw_counters/out_of_buffer weft0 $(oob weft0), weft1 $(oob weft1)"

# IP multicast: a receiver joins 239.77.0.1 (ndo_set_rx_mode -> an SA join),
# the other host sends until 5 datagrams arrived (at most 30 s: joins are
# SA round trips, slow on the debug kernel).
mcast() { # SENDER-HOST SENDER-ADDR RECEIVER-HOST RECEIVER-ADDR
	rm -f /tmp/mcast.out /tmp/mcast.done
	weft_on "$3" timeout 40 python3 - "$4" >/tmp/mcast.out 2>&1 <<'PY' &
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("239.77.0.1", 5400))
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
             socket.inet_aton("239.77.0.1") + socket.inet_aton(sys.argv[1]))
s.settimeout(35)
n = 0
try:
    while n < 5:
        data, _ = s.recvfrom(100)
        n += data == b"weft-mcast"
except socket.timeout:
    pass
print("received", n)
open("/tmp/mcast.done", "w").close()
PY
	local rx=$!
	weft_on "$1" timeout 40 python3 - "$2" <<'PY'
import os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(sys.argv[1]))
for _ in range(150):
    if os.path.exists("/tmp/mcast.done"):
        break
    s.sendto(b"weft-mcast", ("239.77.0.1", 5400))
    time.sleep(0.2)
PY
	wait $rx
	cat /tmp/mcast.out
	grep -q "received 5" /tmp/mcast.out
}
mcast - $ip4a h1 $ip4b || bad "IP multicast root -> h1"
# The root only sent to 239.77.0.1: its join is SendOnlyFullMember
# (JoinState 0x8 in ScopeState's low bits; OpenSM shows members to an
# SM_Key holder), not a full member's (0x1) that would draw the group's
# traffic to its port.
join_state() { # MGID PORT-GID: the ScopeState of that member in the SA
	saquery -C weft0 -P 1 --smkey 1 -m 2>/dev/null | python3 -c '
import ipaddress, sys
mgid, port = (ipaddress.ip_address(a) for a in sys.argv[1:3])
rec = {}
for line in sys.stdin:
    if "MCMemberRecord" in line:
        rec = {}
    elif "...." in line:
        k, v = line.split(".", 1)
        rec[k.strip()] = v.strip(". \n")
        if k.strip() == "ScopeState" and ipaddress.ip_address(rec.get("MGID", "::")) == mgid \
                and ipaddress.ip_address(rec.get("PortGid", "::")) == port:
            print(rec["ScopeState"])
' "$1" "$2"
}
gid_a=$(cat $sys/weft0/ports/1/gids/0)
st=$(join_state ff12:401b:ffff::f4d:1 "$gid_a")
echo "ipoib: SA member $gid_a of 239.77.0.1's group: ScopeState ${st:-none}"
[ "$st" = 0x28 ] || bad "the sending root is not a SendOnlyFullMember of 239.77.0.1's group: ScopeState ${st:-none}"
[ "$(ethtool -S "$A" | sed -n 's/^ *mcast_send_only: //p')" -gt 0 ] || bad "ethtool -S $A: mcast_send_only 0"
mcast h1 $ip4b - $ip4a || bad "IP multicast h1 -> root"
stats=$(ethtool -S "$A")
echo "$stats"
v() { sed -n "s/^ *$1: //p" <<<"$stats"; }
[ "$(v rx_multicast)" -gt 0 ] || bad "ethtool -S $A: rx_multicast $(v rx_multicast)"
[ "$(v tx_multicast)" -gt 0 ] || bad "ethtool -S $A: tx_multicast $(v tx_multicast)"
[ "$(v tx_packets)" -gt 1000 ] || bad "ethtool -S $A: tx_packets $(v tx_packets)"
ip -s link show "$A"
# Checksum offload: the HCA inserted TCP's checksums (the receiver's TCP
# took them); switched off both ways, the stack computes them again.
ethtool -k "$A" | grep -qx "	tx-checksum-ip-generic: on" || bad "ethtool -k $A: no tx-checksum-ip-generic"
ethtool -k "$A" | grep -qx "rx-checksumming: on" || bad "ethtool -k $A: rx-checksumming not on"
[ "$(v tx_csum_offload)" -gt 100 ] || bad "ethtool -S $A: tx_csum_offload $(v tx_csum_offload)"
# Segmentation offload: TCP handed over 64 KiB packets, the HCA cut them
# into datagrams (the GRO check above saw them arrive as segments).
ethtool -k "$A" | grep -qx "	tx-tcp-segmentation: on" || bad "ethtool -k $A: no tx-tcp-segmentation"
[ "$(v tx_lso)" -gt 100 ] || bad "ethtool -S $A: tx_lso $(v tx_lso)"
# Receive buffers are carved from pages that come round again once the
# stack has freed them, rather than fresh (zeroed) pages each time.
reused=$(weft_on h1 ethtool -S "$B" | sed -n 's/^ *rx_pages_reused: //p')
fresh=$(weft_on h1 ethtool -S "$B" | sed -n 's/^ *rx_pages_fresh: //p')
echo "ipoib: $B receive pages: reused ${reused:-missing}, fresh ${fresh:-missing}"
[ "${reused:-0}" -gt 10 ] || bad "ethtool -S $B: rx_pages_reused ${reused:-missing}"
# The ring's first pages at least were new.
[ "${fresh:-0}" -gt 0 ] || bad "ethtool -S $B: rx_pages_fresh ${fresh:-missing}"
ethtool -K "$A" tx off rx off && weft_on h1 ethtool -K "$B" tx off rx off || bad "ethtool -K tx off rx off"
now() { ethtool -S "$A" | sed -n "s/^ *$1: //p"; }
before=$(now tx_csum_offload) before_lso=$(now tx_lso)
iperf - h1 $ip4b -t 3 || bad "iperf3 TCP with checksum offload off"
[ "$(now tx_csum_offload)" = "$before" ] || bad "tx_csum_offload grew with tx off"
# TSO needs the checksum offload: the kernel took it away too.
[ "$(now tx_lso)" = "$before_lso" ] || bad "tx_lso grew with tx off"
ethtool -K "$A" tx on rx on && weft_on h1 ethtool -K "$B" tx on rx on || bad "ethtool -K tx on rx on"
ethtool -k "$A" | grep -qx "	tx-tcp-segmentation: on" || bad "ethtool -k $A: TSO not back with tx on"

# Interrupt coalescing (ethtool -c/-C: rx-usecs, rx-frames): the event of
# the first completion waits rx-usecs for rx-frames more, so a lone ping's
# reply is held about that long; out of range and unsupported values are
# refused; 0 puts it back.
rtt() { ping -c 4 -i 0.3 -W 2 "$@" $ip4b | sed -n 's|^rtt.* = [0-9.]*/\([0-9.]*\)/.*|\1|p'; }
coal() { ethtool -c "$A" | sed -n "s/^$1: *//p"; }
[ "$(coal rx-usecs)" = 0 ] && [ "$(coal rx-frames)" = 0 ] || bad "ethtool -c $A: not 0/0 at start: $(ethtool -c "$A")"
ethtool -C "$A" rx-usecs 30000 rx-frames 64 || bad "ethtool -C $A rx-usecs 30000 rx-frames 64"
[ "$(coal rx-usecs)" = 30000 ] && [ "$(coal rx-frames)" = 64 ] || bad "ethtool -c $A after -C: $(ethtool -c "$A")"
slow=$(rtt)
ethtool -C "$A" rx-usecs 70000 2>/dev/null && bad "ethtool -C took rx-usecs 70000 (> 0xffff)"
ethtool -C "$A" tx-usecs 5 2>/dev/null && bad "ethtool -C took tx-usecs (not supported)"
ethtool -C "$A" rx-usecs 0 rx-frames 0 || bad "ethtool -C $A rx-usecs 0 rx-frames 0"
fast=$(rtt)
echo "ipoib: ping rtt avg with rx-usecs 30000: ${slow:-none} ms, with 0: ${fast:-none} ms"
awk -v s="${slow:-0}" 'BEGIN { exit !(s >= 25) }' || bad "rx-usecs 30000 did not hold the reply's event (rtt ${slow:-none} ms)"
awk -v f="${fast:-99}" 'BEGIN { exit !(f < 25) }' || bad "rx-usecs 0: rtt ${fast:-none} ms"

# Administratively down and up again: carrier follows, the groups are joined
# again (IPv6 drops its addresses on down: given back).
ip link set "$A" down && ip link set "$A" up || bad "ip link set $A down/up"
weft_carrier - "$A" 1 || bad "$A: no carrier after down/up"
ip addr add $ip6a/64 dev "$A" nodad
weft_pings - $ip4b || bad "ping after down/up"
weft_pings h1 $ip6a -6 || bad "ping -6 to $ip6a after down/up"

# 3. Cable down and up: carrier follows the port, traffic resumes.
echo 0 >$cfs/cables/c1/up || bad "cutting c1"
weft_carrier h1 "$B" 0 10 || bad "$B kept its carrier with the cable cut"
ping -c 1 -W 1 $ip4b >/dev/null 2>&1 && bad "ping through a cut cable"
echo 1 >$cfs/cables/c1/up || bad "re-making c1"
weft_wait_active weft1 || bad "weft1 not ACTIVE after the cable came back"
weft_carrier h1 "$B" 1 || bad "$B: no carrier after the cable came back"
weft_pings - $ip4b || bad "ping after the cable came back"
weft_pings h1 $ip6a -6 || bad "ping -6 after the cable came back"

# 4. OpenSM restarted.
weft_sm_stop
weft_sm_start weft0
sleep 3
weft_wait_active weft0 weft1 || bad "not ACTIVE after the OpenSM restart"
weft_pings - $ip4b -w 30 || bad "ping after the OpenSM restart"
weft_pings h1 $ip4a || bad "ping from h1 after the OpenSM restart"
iperf h1 - $ip4a -t 3 || bad "iperf3 after the OpenSM restart"
# Again with the broadcast group at IB MTU 4096 (partitions.conf mtu=5):
# UD MTU 4092 (DF pings at the limit and one over), and the receive
# buffers sized for 2 KiB before are replaced by larger ones.
echo "Default=0x7fff, ipoib, mtu=5 : ALL=full;" >/tmp/ipoib-4k.conf
weft_sm_stop
weft_sm_start weft0 5 "-P /tmp/ipoib-4k.conf"
ok4k=
for _ in $(seq 1 150); do
	ip link set "$A" mtu 4092 2>/dev/null && weft_on h1 ip link set "$B" mtu 4092 2>/dev/null && { ok4k=1; break; }
	sleep 0.2
done
[ -n "$ok4k" ] || bad "MTU 4092 refused under a 4 KiB broadcast group (max $(ip -d link show "$A" | grep -o 'maxmtu [0-9]*'))"
weft_pings - $ip4b -w 30 -M do -s $((4092 - 28)) || bad "don't-fragment ping of $((4092 - 28)) bytes"
ping -c 1 -W 2 -M do -s $((4092 - 27)) $ip4b >/dev/null 2>&1 && bad "don't-fragment ping of $((4092 - 27)) went through"
iperf - h1 $ip4b -t 3 || bad "iperf3 at MTU 4092"
# A new subnet prefix (OpenSM --subnet_prefix): the port GIDs change, and
# with them the GID in each interface's hardware address (RFC 4391
# §9.1.1); once the neighbours are forgotten, traffic uses the new GIDs.
weft_sm_stop
weft_sm_start weft0 5 "-P /tmp/ipoib-4k.conf --subnet_prefix 0xfe80000000000077"
gid_hex() { tr -d ':\n' <$sys/$1/ports/1/gids/0; }
addr_gid() { weft_on "$1" cat "/sys/class/net/$2/address" | tr -d ':\n' | cut -c9-40; }
okp=
for _ in $(seq 1 150); do
	g0=$(gid_hex weft0) g1=$(gid_hex weft1)
	[ "${g0:0:16}" = fe80000000000077 ] && [ "${g1:0:16}" = fe80000000000077 ] &&
		[ "$(addr_gid - "$A")" = "$g0" ] && [ "$(addr_gid h1 "$B")" = "$g1" ] && { okp=1; break; }
	sleep 0.2
done
echo "ipoib: subnet prefix 0xfe80000000000077: $A $(cat "/sys/class/net/$A/address")"
[ -n "$okp" ] || bad "hardware addresses $(addr_gid - "$A") $(addr_gid h1 "$B") not the new GIDs $g0 $g1"
ip neigh flush dev "$A"
weft_on h1 ip neigh flush dev "$B"
weft_pings - $ip4b -w 30 || bad "ping on the new subnet prefix"
weft_pings h1 $ip6a -6 -w 30 || bad "ping -6 on the new subnet prefix"
ip neigh show dev "$A" | grep -q "fe:80:00:00:00:00:00:77" || bad "the neighbour's address is not on the new prefix: $(ip neigh show dev "$A")"

# 5. rmmod weft_ipoib under traffic.
weft_iperf_server h1 5202 || bad "no iperf3 server in h1"
timeout 60 iperf3 -c $ip4b -p 5202 -t 30 >/dev/null 2>&1 &
load=$!
ping -f -w 30 $ip4b >/dev/null 2>&1 &
flood=$!
sleep 3
timeout 60 rmmod weft_ipoib || bad "rmmod weft_ipoib under traffic"
[ -e /sys/class/net/"$A" ] && bad "$A still there after rmmod"
weft_on h1 test -e /sys/class/net/"$B" && bad "$B still in h1 after rmmod"
kill $load $flood 2>/dev/null
wait $load $flood 2>/dev/null
weft_on h1 pkill -x iperf3

# 6. The HCA itself removed under traffic.
# (With destinations forgotten after 1 s without a send.)
insmod "$WEFT_MODDIR/ulp/ipoib/weft_ipoib.ko" dest_idle_secs=1 || bad "insmod weft_ipoib again"
sleep 1
A=$(weft_ib_netdev weft0)
B=$(weft_ib_netdev weft1)
if [ -n "$A" ] && [ -n "$B" ]; then
	ip link set "$B" netns h1
	ip addr add $ip4a/24 dev "$A" && ip link set "$A" up
	weft_on h1 ip addr add $ip4b/24 dev "$B" && weft_on h1 ip link set "$B" up
	weft_carrier - "$A" 1 && weft_carrier h1 "$B" 1 || bad "no carrier after loading weft_ipoib again"
	weft_pings - $ip4b || bad "ping after loading weft_ipoib again"
	# Idle destinations age out (their address handles and path with
	# them) and are looked up again by the next packet.
	aged() { ethtool -S "$A" | awk '/ dests_aged:/ { print $2 }'; }
	queries() { ethtool -S "$A" | awk '/ path_queries:/ { print $2 }'; }
	a0=$(aged) q0=$(queries)
	sleep 3
	a1=$(aged)
	weft_pings - $ip4b || bad "ping after the destinations aged"
	q1=$(queries)
	echo "ipoib: dest_idle_secs=1: $((a1 - a0)) destinations aged in 3 idle seconds, $((q1 - q0)) path queries since"
	[ "$a1" -gt "$a0" ] || bad "no destination aged after 3 idle seconds"
	[ "$q1" -gt "$q0" ] || bad "no path query after the destination aged"
	weft_on h1 ping -f -w 20 $ip4a >/dev/null 2>&1 &
	flood=$!
	ping -f -w 20 $ip4b >/dev/null 2>&1 &
	flood2=$!
	sleep 2
	t0=$(date +%s)
	rmdir $cfs/cables/c1 && timeout 60 rmdir $cfs/hcas/h1 || bad "removing weft1 under traffic"
	echo "ipoib: weft1 removed under traffic in $(($(date +%s) - t0)) s"
	weft_on h1 test -e /sys/class/net/"$B" && bad "$B still in h1 after its HCA went"
	ping -c 1 -W 1 $ip4b >/dev/null 2>&1 && bad "ping answered by a removed HCA"
	kill $flood $flood2 2>/dev/null
	wait $flood $flood2 2>/dev/null
	[ -e /sys/class/net/"$A" ] || bad "$A went with weft1"
else
	bad "no netdevs after loading weft_ipoib again: $(ls /sys/class/net)"
fi
ip netns del h1
weft_sm_stop
weft_unload || bad "unload"
weft_check_taint || fail=1
weft_kmemleak_check || bad "kmemleak found leaks"
exit $fail
